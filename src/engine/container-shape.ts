/**
 * Layer 2 (pod-template engine): the JSON types of a container's fields, as the API server decodes
 * them (k8s.io/api core/v1 types.go `Container`, read with Go's encoding/json rules through
 * sigs.k8s.io/json): a field of the wrong JSON type makes the API server refuse the whole object
 * ("json: cannot unmarshal string into Go struct field Container...ports of type
 * []v1.ContainerPort"), and a `null` entry of a list of objects is read as an empty object that
 * validation refuses ("containerPort: Required value"). `containerShapeErrors` reports both, so
 * that no check or render reads `ports: "x"` or `volumeMounts: {}` as if it were a list (a raw
 * TypeError without the workload's name), and `check` refuses what the API server refuses.
 *
 * Go's rules: `null` is the zero value for every field (accepted); a string field takes a JSON
 * string, an integer field a JSON number without a fraction, a bool `true`/`false`, a list an
 * array, a struct or map an object; a `resource.Quantity` a string or a number; an
 * `intstr.IntOrString` an integer or a string. Fields not listed here are not checked (unknown
 * fields are the schema checks' business).
 */
import { Json } from '../private/json';

/** A field's type: a scalar, a list, a map, or a struct with its fields. */
type Shape =
  | { readonly t: 'string' | 'bool' | 'int32' | 'int64' | 'quantity' | 'intOrString'; readonly go?: string }
  | { readonly t: 'list'; readonly of: Shape; readonly go: string; readonly required?: string[] }
  | { readonly t: 'map'; readonly of: Shape; readonly go: string }
  | {
    readonly t: 'struct';
    readonly go: string;
    readonly fields: { readonly [name: string]: Shape };
    readonly entries: ReadonlyArray<readonly [string, Shape]>;
    readonly fieldMap: ReadonlyMap<string, Shape>;
  };

const str: Shape = { t: 'string' };
const bool: Shape = { t: 'bool' };
const int32: Shape = { t: 'int32' };
const int64: Shape = { t: 'int64' };
const intOrString: Shape = { t: 'intOrString', go: 'intstr.IntOrString' };
const strings: Shape = { t: 'list', of: str, go: '[]string' };
const struct = (go: string, fields: { [name: string]: Shape }): Shape =>
  ({ t: 'struct', go, fields, entries: Object.entries(fields), fieldMap: new Map(Object.entries(fields)) });
const list = (go: string, of: Shape, required?: string[]): Shape => ({ t: 'list', of, go, ...(required ? { required } : {}) });

const keyRef = (go: string) => struct(go, { name: str, key: str, optional: bool });
const httpGet = struct('*v1.HTTPGetAction', {
  path: str,
  port: intOrString,
  host: str,
  scheme: str,
  httpHeaders: list('[]v1.HTTPHeader', struct('v1.HTTPHeader', { name: str, value: str }), ['name']),
});
const handlerFields = {
  exec: struct('*v1.ExecAction', { command: strings }),
  httpGet,
  tcpSocket: struct('*v1.TCPSocketAction', { port: intOrString, host: str }),
};
const probe = struct('*v1.Probe', {
  ...handlerFields,
  grpc: struct('*v1.GRPCAction', { port: int32, service: str }),
  initialDelaySeconds: int32,
  timeoutSeconds: int32,
  periodSeconds: int32,
  successThreshold: int32,
  failureThreshold: int32,
  terminationGracePeriodSeconds: int64,
});
const handler = struct('*v1.LifecycleHandler', { ...handlerFields, sleep: struct('*v1.SleepAction', { seconds: int64 }) });
const quantities: Shape = { t: 'map', of: { t: 'quantity', go: 'resource.Quantity' }, go: 'v1.ResourceList' };

/** k8s.io/api core/v1 `Container` (the fields whose type a check or a render reads, and their neighbours). */
const CONTAINER: { readonly [name: string]: Shape } = {
  name: str,
  image: str,
  command: strings,
  args: strings,
  workingDir: str,
  ports: list('[]v1.ContainerPort', struct('v1.ContainerPort', { name: str, hostPort: int32, containerPort: int32, protocol: str, hostIP: str }), ['containerPort']),
  envFrom: list('[]v1.EnvFromSource', struct('v1.EnvFromSource', {
    prefix: str, configMapRef: struct('*v1.ConfigMapEnvSource', { name: str, optional: bool }), secretRef: struct('*v1.SecretEnvSource', { name: str, optional: bool }),
  }), ['configMapRef or secretRef']),
  env: list('[]v1.EnvVar', struct('v1.EnvVar', {
    name: str,
    value: str,
    valueFrom: struct('*v1.EnvVarSource', {
      fieldRef: struct('*v1.ObjectFieldSelector', { apiVersion: str, fieldPath: str }),
      resourceFieldRef: struct('*v1.ResourceFieldSelector', { containerName: str, resource: str, divisor: { t: 'quantity', go: 'resource.Quantity' } }),
      configMapKeyRef: keyRef('*v1.ConfigMapKeySelector'),
      secretKeyRef: keyRef('*v1.SecretKeySelector'),
    }),
  }), ['name']),
  resources: struct('v1.ResourceRequirements', {
    limits: quantities,
    requests: quantities,
    claims: list('[]v1.ResourceClaim', struct('v1.ResourceClaim', { name: str, request: str }), ['name']),
  }),
  resizePolicy: list('[]v1.ContainerResizePolicy', struct('v1.ContainerResizePolicy', { resourceName: str, restartPolicy: str }), ['resourceName', 'restartPolicy']),
  restartPolicy: str,
  volumeMounts: list('[]v1.VolumeMount', struct('v1.VolumeMount', {
    name: str, readOnly: bool, recursiveReadOnly: str, mountPath: str, subPath: str, mountPropagation: str, subPathExpr: str,
  }), ['name', 'mountPath']),
  volumeDevices: list('[]v1.VolumeDevice', struct('v1.VolumeDevice', { name: str, devicePath: str }), ['name', 'devicePath']),
  livenessProbe: probe,
  readinessProbe: probe,
  startupProbe: probe,
  lifecycle: struct('*v1.Lifecycle', { postStart: handler, preStop: handler, stopSignal: str }),
  terminationMessagePath: str,
  terminationMessagePolicy: str,
  imagePullPolicy: str,
  securityContext: struct('*v1.SecurityContext', {
    capabilities: struct('*v1.Capabilities', { add: strings, drop: strings }),
    privileged: bool,
    runAsUser: int64,
    runAsGroup: int64,
    runAsNonRoot: bool,
    readOnlyRootFilesystem: bool,
    allowPrivilegeEscalation: bool,
    procMount: str,
    seLinuxOptions: struct('*v1.SELinuxOptions', { user: str, role: str, type: str, level: str }),
    windowsOptions: struct('*v1.WindowsSecurityContextOptions', { gmsaCredentialSpecName: str, gmsaCredentialSpec: str, runAsUserName: str, hostProcess: bool }),
    seccompProfile: struct('*v1.SeccompProfile', { type: str, localhostProfile: str }),
    appArmorProfile: struct('*v1.AppArmorProfile', { type: str, localhostProfile: str }),
  }),
  stdin: bool,
  stdinOnce: bool,
  tty: bool,
};

const CONTAINER_ENTRIES = Object.entries(CONTAINER);
/** The container itself as a struct (for the question `fits` answers of it as a whole). */
const CONTAINER_SHAPE = struct('v1.Container', CONTAINER);
const hasOwn = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);

/**
 * Whether `value` decodes as `shape` without a problem: the question every render asks of every
 * container, answered without a message or a path (the engine checks each render; `check` below
 * writes the messages only for a container that has a problem).
 */
function fits(value: unknown, shape: Shape): boolean {
  if (value === null || value === undefined) return true;
  switch (shape.t) {
    case 'string': return typeof value === 'string';
    case 'bool': return typeof value === 'boolean';
    case 'int32': return typeof value === 'number' && Number.isSafeInteger(value) && value < INT32 && value >= -INT32;
    case 'int64': return typeof value === 'number' && Number.isSafeInteger(value);
    case 'quantity': return typeof value === 'string' || typeof value === 'number';
    case 'intOrString': return typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value) && value < INT32 && value >= -INT32);
    case 'list':
      if (!Array.isArray(value)) return false;
      for (let i = 0; i < value.length; i++) {
        const entry = value[i];
        if ((entry === null || entry === undefined) && shape.of.t === 'struct') return false;
        if (!fits(entry, shape.of)) return false;
      }
      return true;
    case 'map':
      if (!isObject(value)) return false;
      for (const k in value) if (hasOwn(value, k) && !fits(value[k], shape.of)) return false;
      return true;
    case 'struct':
      if (!isObject(value)) return false;
      // (the value's own keys, usually far fewer than the struct's fields; a key the struct has not
      // is not checked). Own keys, non-enumerable ones too, as `check` asks hasOwn of each field: a
      // for-in walk would skip a non-enumerable field that `check` refuses.
      for (const k of Object.getOwnPropertyNames(value)) {
        const s = shape.fieldMap.get(k);
        if (s !== undefined && !fits(value[k], s)) return false;
      }
      return true;
  }
}

/** The JSON type of a value as Go's decoder names it in "cannot unmarshal <type>". */
function jsonType(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return 'number';
  if (typeof v === 'string') return 'string';
  return typeof v === 'object' ? 'object' : typeof v;
}

/** The value as a message shows it (short). */
function show(v: unknown): string {
  if (v === undefined) return 'undefined';
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const INT32 = 2 ** 31;

/** What to give instead, by shape. */
function wanted(s: Shape): string {
  switch (s.t) {
    case 'string': return 'a string';
    case 'bool': return 'true or false';
    case 'int32': case 'int64': return 'a whole number';
    case 'quantity': return "a quantity such as '100m' or '64Mi'";
    case 'intOrString': return 'a port number or a port name';
    case 'list': return s.of.t === 'struct' ? 'a list of objects' : s.of.t === 'string' ? 'a list of strings' : 'a list';
    case 'map': return 'an object (a map)';
    case 'struct': return 'an object';
  }
}

function goType(s: Shape): string {
  if (s.t === 'int32' || s.t === 'int64' || s.t === 'string' || s.t === 'bool') return s.go ?? s.t;
  return s.go!;
}

/** Problems of `value` (given) against `shape`, at `path` (e.g. `ports[0].containerPort`), each as "<path> is <value> ...". */
function check(value: unknown, shape: Shape, path: string, out: string[], structName: string): void {
  if (value === null || value === undefined) return; // Go: the zero value
  const refuse = (how: string): void => {
    out.push(`${path} is ${show(value)}, not ${wanted(shape)}: the API server refuses the object (${how})`);
  };
  const unmarshal = () => refuse(`"json: cannot unmarshal ${jsonType(value)} into Go struct field ${structName}.${path.replace(/\[\d+\]/g, '')} of type ${goType(shape)}"`);
  switch (shape.t) {
    case 'string':
      if (typeof value !== 'string') unmarshal();
      return;
    case 'bool':
      if (typeof value !== 'boolean') unmarshal();
      return;
    case 'int32':
    case 'int64':
      if (typeof value !== 'number') return unmarshal();
      if (!Number.isInteger(value) || (shape.t === 'int32' && (value >= INT32 || value < -INT32)) || !Number.isSafeInteger(value)) {
        refuse(`"json: cannot unmarshal number ${value} into Go struct field ${structName}.${path.replace(/\[\d+\]/g, '')} of type ${shape.t}"`);
      }
      return;
    case 'quantity':
      if (typeof value !== 'string' && typeof value !== 'number') {
        refuse('"quantities must match the regular expression \'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$\'"');
      }
      return;
    case 'intOrString':
      if (typeof value === 'string') return;
      if (typeof value !== 'number' || !Number.isInteger(value) || value >= INT32 || value < -INT32) {
        refuse(`"json: cannot unmarshal ${jsonType(value)} into Go value of type int32"`);
      }
      return;
    case 'list':
      if (!Array.isArray(value)) return unmarshal();
      for (let i = 0; i < value.length; i++) {
        const entry = value[i];
        if ((entry === null || entry === undefined) && shape.of.t === 'struct') {
          // Go reads a null entry as the zero struct, which validation refuses
          const req = (shape.required ?? []).map(f => `${path}[${i}].${f}: Required value`).join(', ');
          out.push(`${path}[${i}] is ${i in value ? 'null' : 'a hole (an empty slot)'}, not an object: the API server reads it as an empty ` +
            `${shape.of.go.replace(/^\*/, '')}${req ? ` and refuses it ("${req}")` : ''}`);
          continue;
        }
        check(entry, shape.of, `${path}[${i}]`, out, structName);
      }
      return;
    case 'map':
      if (!isObject(value)) return unmarshal();
      for (const [k, v] of Object.entries(value)) check(v, shape.of, `${path}.${k}`, out, structName);
      return;
    case 'struct':
      if (!isObject(value)) return unmarshal();
      for (const [k, s] of shape.entries) {
        if (hasOwn(value, k)) check(value[k], s, `${path}.${k}`, out, structName);
      }
      return;
  }
}

/** What to do, by field: remove the field, or give it in the right type. */
function fixFor(path: string): string {
  return `give ${path.split(/[.[]/)[0]} as the Kubernetes API defines it (kubectl explain pod.spec.containers.${path.split(/[.[]/)[0]}) or remove it`;
}

/**
 * The fields of one container (an object with a string name, already checked) whose JSON type the
 * API server refuses: one message per problem, `<where>: spec.<list>[<i>] ('<name>'): <path> is
 * <value>, not <what>: the API server refuses the object (<its message>); <fix>.`
 */
export function containerShapeErrors(where: string, listName: string, index: number, container: Json): string[] {
  const found: string[] = [];
  if (fits(container, CONTAINER_SHAPE)) return found;
  for (const [field, shape] of CONTAINER_ENTRIES) {
    if (!hasOwn(container, field) || fits(container[field], shape)) continue;
    const before = found.length;
    check(container[field], shape, field, found, 'Container');
    for (let i = before; i < found.length; i++) {
      found[i] = `${where}: spec.${listName}[${index}] ('${container.name}'): ${found[i]}; ${fixFor(field)}.`;
    }
  }
  return found;
}
