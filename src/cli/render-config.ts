/**
 * The config of `cdk8s-sidecars render` (a YAML file): which workloads get which sidecars, with
 * the constructs' own props written as YAML. Read into the props the constructs take (Durations,
 * Sizes, `LogAgent`, `LogOutput`, `SidecarCheck`, ...); every key is checked, and an error names
 * the path of the bad key (`workloads[0].envoy.appPort`). The constructs then check the values
 * as they check a TypeScript app's.
 */
import { Duration, Size } from 'cdk8s';
import { ConfigError } from './errors';
import { FluentBitConfigFormat, FluentBitMultilineParser, LogAgent } from '../log-agent';
import { LogOutput } from '../log-output';
import { SidecarError, Where } from '../private/errors';
import { DEFAULT_KUBERNETES_VERSION, SidecarMode } from '../target/capabilities';
import { assembleTarget } from '../target/resolver';
import { EnvoyAppProtocol } from '../with-envoy';
import { SidecarCheck, SidecarQuit, SidecarVolume } from '../with-sidecar';
import { OtlpProtocol } from '../with-tracer';

// A bad config: exit 2, with the path of the bad key (in ./errors, which main.ts loads for every command).
export { ConfigError };

/** How one entry of `workloads` selects objects. */
export interface Selector {
  readonly kind?: string;
  readonly name?: string;
  readonly namespace?: string;
  /** Every label here must be on the object's `metadata.labels`. */
  readonly matchLabels?: Record<string, string>;
}

/** The sidecars of one entry, as construct props (without `workload`). */
export interface WorkloadEntry {
  readonly path: string;
  readonly select: Selector;
  readonly logAgent?: Record<string, any>;
  readonly envoy?: Record<string, any>;
  readonly tracer?: Record<string, any>;
  readonly adopt: Array<Record<string, any>>;
  /** One WithSidecar each (a new container of the user's own). */
  readonly sidecars: Array<Record<string, any>>;
}

/** The `admission` key: what `cdk8s-sidecars policy` makes (SidecarInjectionPolicy's props, and whose sidecars). */
export interface AdmissionEntry {
  /** The index of the `workloads` entry whose sidecars the policy gives (0 when there is one). */
  readonly workload: number;
  readonly props: Record<string, any>;
}

export interface RenderConfig {
  /** As written, or from the environment (one of them is required). */
  readonly kubernetesVersion: string;
  readonly sidecarContainersGate?: boolean;
  readonly workloads: WorkloadEntry[];
  /** For `cdk8s-sidecars policy` (render ignores it). */
  readonly admission?: AdmissionEntry;
}

export type Conv = ((value: unknown, path: string) => unknown) & { readonly shape?: Shape };

/**
 * What a reader accepts, for test/render-config.test.ts: it walks these next to the jsii assembly
 * (.jsii) and fails when a construct or factory has a prop that render does not take (or takes a
 * key no construct has), unless the prop is in its list of deliberate omissions.
 */
export type Shape =
  | { readonly kind: 'object'; readonly fields: Readonly<Record<string, Conv>> }
  | { readonly kind: 'variant'; readonly choices: Readonly<Record<string, Conv>> }
  | { readonly kind: 'list' | 'map'; readonly element: Conv };

const shaped = (shape: Shape, conv: (value: unknown, path: string) => unknown): Conv => Object.assign(conv, { shape });

const typeName = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'a list' : typeof v === 'object' ? 'a map' : `${typeof v} ${JSON.stringify(v)}`);

const str: Conv = (v, p) => {
  if (typeof v !== 'string') throw new ConfigError(p, `expected a string, got ${typeName(v)}`);
  return v;
};
const num: Conv = (v, p) => {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new ConfigError(p, `expected a number, got ${typeName(v)}`);
  return v;
};
const bool: Conv = (v, p) => {
  if (typeof v !== 'boolean') throw new ConfigError(p, `expected true or false, got ${typeName(v)}`);
  return v;
};
const strings: Conv = (v, p) => {
  if (!Array.isArray(v)) throw new ConfigError(p, `expected a list of strings, got ${typeName(v)}`);
  return v.map((x, i) => str(x, `${p}[${i}]`));
};
const nums: Conv = (v, p) => {
  if (!Array.isArray(v)) throw new ConfigError(p, `expected a list of numbers, got ${typeName(v)}`);
  return v.map((x, i) => num(x, `${p}[${i}]`));
};

/** `10s`, `500ms`, `2m`, `1h` or a number of seconds (also the timeline's duration flags). */
export const duration = (v: unknown, p: string): Duration => {
  if (typeof v === 'number' && Number.isFinite(v) && v >= 0) return Duration.seconds(v);
  const m = typeof v === 'string' ? /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(v) : null;
  if (!m) throw new ConfigError(p, `expected a duration such as 10s, 500ms, 2m or 1h (or a number of seconds), got ${typeName(v)}`);
  const n = Number(m[1]);
  return m[2] === 'ms' ? Duration.millis(n) : m[2] === 's' ? Duration.seconds(n) : m[2] === 'm' ? Duration.minutes(n) : Duration.hours(n);
};

/** `64Mi`, `1Gi`, `512Ki`: the binary units of cdk8s' Size. */
const size: Conv = (v, p) => {
  const m = typeof v === 'string' ? /^(\d+)(Ki|Mi|Gi|Ti)$/.exec(v) : null;
  if (!m) throw new ConfigError(p, `expected a size such as 64Mi or 1Gi (Ki, Mi, Gi or Ti), got ${typeName(v)}`);
  const n = Number(m[1]);
  return { Ki: Size.kibibytes, Mi: Size.mebibytes, Gi: Size.gibibytes, Ti: Size.tebibytes }[m[2] as 'Ki']!(n);
};

/** A CPU quantity as Kubernetes writes it (`250m`, `1`): the constructs' `{ amount }`. */
const cpu: Conv = (v, p) => {
  if (typeof v === 'number') return { amount: String(v) };
  return { amount: str(v, p) };
};

const oneOf = (values: readonly string[]): Conv => (v, p) => {
  if (typeof v !== 'string' || !values.includes(v)) throw new ConfigError(p, `expected one of ${values.join(', ')}, got ${typeName(v)}`);
  return v;
};

function object(fields: Record<string, Conv>, required: readonly string[] = []): Conv {
  return shaped({ kind: 'object', fields }, (v, p) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new ConfigError(p, `expected a map, got ${typeName(v)}`);
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      const conv = own(fields, k); // (`__proto__`, `constructor`: unknown keys, not Object's)
      if (!conv) throw new ConfigError(join(p, k), `unknown key; known keys here: ${Object.keys(fields).join(', ')}`);
      if (x === null || x === undefined) continue;
      out[k] = conv(x, join(p, k));
    }
    for (const k of required) {
      if (out[k] === undefined) throw new ConfigError(join(p, k), 'required key is missing');
    }
    return out;
  });
}

const join = (p: string, k: string) => (p === '' ? k : `${p}.${k}`);

/** `table[key]` when the table itself has it (never a property of Object.prototype). */
function own<T>(table: Record<string, T>, key: string): T | undefined {
  return Object.prototype.hasOwnProperty.call(table, key) ? table[key] : undefined;
}

const mapOf = (conv: Conv): Conv => shaped({ kind: 'map', element: conv }, (v, p) => {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new ConfigError(p, `expected a map, got ${typeName(v)}`);
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, conv(x, `${p}.${k}`)]));
});

const listOf = (conv: Conv): Conv => shaped({ kind: 'list', element: conv }, (v, p) => {
  if (!Array.isArray(v)) throw new ConfigError(p, `expected a list, got ${typeName(v)}`);
  return v.map((x, i) => conv(x, `${p}[${i}]`));
});

/** A choice written as a string (no options) or as a one-key map `{ choice: options }`. */
function variant(choices: Record<string, { conv: Conv; make: (options: any) => unknown; bare?: boolean }>): Conv {
  const shape: Shape = { kind: 'variant', choices: Object.fromEntries(Object.entries(choices).map(([k, c]) => [k, c.conv])) };
  return shaped(shape, (v, p) => {
    const names = Object.keys(choices);
    if (typeof v === 'string') {
      const c = own(choices, v);
      if (!c || c.bare === false) throw new ConfigError(p, `expected one of ${names.filter(n => choices[n].bare !== false).join(', ')} or a map with one of ${names.join(', ')}, got ${typeName(v)}`);
      return guard(p, () => c.make({}));
    }
    if (v === null || typeof v !== 'object' || Array.isArray(v) || Object.keys(v).length !== 1) {
      throw new ConfigError(p, `expected a map with exactly one of ${names.join(', ')}, got ${typeName(v)}`);
    }
    const [name, options] = Object.entries(v)[0];
    const c = own(choices, name);
    if (!c) throw new ConfigError(join(p, name), `unknown key; expected one of ${names.join(', ')}`);
    const converted = c.conv(options ?? {}, join(p, name));
    return guard(join(p, name), () => c.make(converted));
  });
}

/** A factory's own check (e.g. `SidecarCheck.http()` on a bad port) becomes a config error at `path`. */
function guard<T>(path: string, make: () => T): T {
  try {
    return make();
  } catch (e) {
    throw new ConfigError(path, (e as Error).message);
  }
}

const secretKey = object({ secret: object({ name: str }, ['name']), key: str }, ['secret', 'key']);
const basicAuth = object({ username: secretKey, password: secretKey }, ['username', 'password']);
const destination = { host: str, port: num, tls: bool };

const multilineParsers = listOf(oneOf(Object.values(FluentBitMultilineParser)));
const configFormat = oneOf(Object.values(FluentBitConfigFormat));

const logAgent = variant({
  fluentBit: {
    conv: object({
      image: str, flushInterval: duration, grace: duration, httpPort: num, multilineParsers, configFormat,
    }),
    make: o => LogAgent.fluentBit(o),
  },
  vector: { conv: object({ image: str, gracefulShutdownLimit: duration, apiPort: num, exposeGrpcApi: bool }), make: o => LogAgent.vector(o) },
  fluentd: {
    conv: object({
      image: str, flushInterval: duration, shutdownGrace: duration, requestTimeout: duration, monitorPort: num, allowMonitorDebugInfo: bool,
    }),
    make: o => LogAgent.fluentd(o),
  },
});

const logOutput = variant({
  stdout: { conv: object({}), make: () => LogOutput.stdout() },
  forward: { conv: object(destination, ['host']), make: o => LogOutput.forward(o), bare: false },
  http: { conv: object({ ...destination, uri: str, secretHeaders: mapOf(secretKey), basicAuth }, ['host']), make: o => LogOutput.http(o), bare: false },
  loki: {
    conv: object({ ...destination, labels: mapOf(str), tenantId: str, basicAuth }, ['host']), make: o => LogOutput.loki(o), bare: false,
  },
  elasticsearch: { conv: object({ ...destination, index: str, indexDateFormat: str, basicAuth }, ['host']), make: o => LogOutput.elasticsearch(o), bare: false },
  opensearch: { conv: object({ ...destination, index: str, indexDateFormat: str, basicAuth }, ['host']), make: o => LogOutput.opensearch(o), bare: false },
});

const checkOptions = { period: duration, timeout: duration };
const sidecarCheck = variant({
  http: { conv: object({ port: num, path: str, ...checkOptions }, ['port']), make: ({ port, ...o }) => SidecarCheck.http(port, o), bare: false },
  tcp: { conv: object({ port: num, ...checkOptions }, ['port']), make: ({ port, ...o }) => SidecarCheck.tcp(port, o), bare: false },
  exec: { conv: object({ command: strings, ...checkOptions }, ['command']), make: ({ command, ...o }) => SidecarCheck.exec(command, o), bare: false },
});
const sidecarQuit = variant({
  http: { conv: object({ port: num, path: str, envName: str }, ['port', 'path']), make: o => SidecarQuit.http(o.port, o.path, o.envName), bare: false },
});

const sizeResources = object({ request: size, limit: size });
/** SidecarProps but `workload` and the target (one target for the whole render: the top-level keys). */
const common = {
  containerName: str,
  mode: oneOf(Object.values(SidecarMode)),
  resources: object({ cpu: object({ request: cpu, limit: cpu }), memory: sizeResources, ephemeralStorage: sizeResources }),
  appShutdownTime: duration,
  userSidecarStopTime: duration,
  allowLegacyOnJob: bool,
  after: str,
  serveInitContainers: bool,
  restartPodOnExitCodes: nums,
  toolsImage: str,
  watchAppExit: bool,
};

const logAgentProps = object({
  ...common,
  agent: logAgent,
  output: logOutput,
  logDirectory: str,
  filePattern: str,
  logVolumeSizeLimit: size,
  agentUser: num,
  agentGroup: num,
  captureStdout: object({ containers: strings, command: strings, maxFileSize: size, maxFiles: num }),
  podLogs: object({ container: str, exemptFromPodSecurity: bool }),
});
const envoyProps = object({
  ...common,
  appPort: num,
  appListensOnPodIp: bool,
  trustedProxyHops: num,
  streamIdleTimeout: duration,
  appIdleTimeout: duration,
  appProtocol: oneOf(Object.values(EnvoyAppProtocol)),
  listenerPort: num,
  tls: object({
    secret: object({ name: str }, ['name']),
    clientCaSecret: object({ name: str }, ['name']),
    podCertificateSigner: str,
    podCertificateKeyType: str,
    clientCaTrustBundleSigner: str,
  }),
  upstreams: listOf(object({ name: str, localPort: num, host: str, port: num, tls: bool }, ['name', 'localPort', 'host'])),
  image: str,
  drainTime: duration,
  holdApplicationUntilProxyStarts: bool,
  adminPort: num,
  healthPort: num,
  concurrency: num,
  accessLog: bool,
  user: num,
  group: num,
}, ['appPort']);
const tracerProps = object({
  ...common,
  exporterEndpoint: str,
  exporterTls: bool,
  exporterHeaders: mapOf(secretKey),
  serviceName: str,
  resourceAttributes: mapOf(str),
  samplingRatio: num,
  protocol: oneOf(Object.values(OtlpProtocol)),
  image: str,
  drainTime: duration,
  healthPort: num,
  holdApplicationUntilCollectorStarts: bool,
  user: num,
  group: num,
}, ['exporterEndpoint']);
/** SidecarRunOptions: how a sidecar runs (AdoptSidecar and WithSidecar). */
const runOptions = {
  startupCheck: sidecarCheck,
  livenessCheck: sidecarCheck,
  holdApplicationUntilStarted: bool,
  stopTime: duration,
  outliveApp: bool,
  jobQuit: sidecarQuit,
};
const adoptProps = object({ ...common, ...runOptions }, ['containerName']);

const sidecarVolume = variant({
  emptyDir: {
    conv: object({ name: str, mountPath: str, appMountPath: str, appReadOnly: bool, memory: bool, sizeLimit: size }, ['name', 'mountPath']),
    make: ({ name, mountPath, ...o }) => SidecarVolume.emptyDir(name, mountPath, o),
    bare: false,
  },
  secret: {
    conv: object({ name: str, secret: object({ name: str }, ['name']), mountPath: str }, ['name', 'secret', 'mountPath']),
    make: o => SidecarVolume.secret(o.name, o.secret, o.mountPath),
    bare: false,
  },
  configMap: {
    conv: object({ name: str, configMapName: str, mountPath: str }, ['name', 'configMapName', 'mountPath']),
    make: o => SidecarVolume.configMap(o.name, o.configMapName, o.mountPath),
    bare: false,
  },
  fromPod: {
    conv: object({ volumeName: str, mountPath: str, readOnly: bool }, ['volumeName', 'mountPath']),
    make: o => SidecarVolume.fromPod(o.volumeName, o.mountPath, o.readOnly),
    bare: false,
  },
});
const sidecarProps = object({
  ...common,
  ...runOptions,
  image: str,
  command: strings,
  args: strings,
  env: mapOf(str),
  secretEnv: mapOf(secretKey),
  appEnv: mapOf(str),
  ports: listOf(object({ number: num, name: str }, ['number'])),
  localPorts: nums,
  volumes: listOf(sidecarVolume),
  configFiles: mapOf(str),
  configDirectory: str,
  user: num,
  group: num,
  readOnlyRootFilesystem: bool,
  readinessCheck: sidecarCheck,
}, ['image']);

/** The constructs render makes, with the reader of each one's props (a workload entry's key). */
export const RENDERED_CONSTRUCTS: Readonly<Record<string, { readonly key: string; readonly props: Conv }>> = {
  WithLogAgent: { key: 'logAgent', props: logAgentProps },
  WithEnvoy: { key: 'envoy', props: envoyProps },
  WithTracer: { key: 'tracer', props: tracerProps },
  AdoptSidecar: { key: 'adopt', props: adoptProps },
  WithSidecar: { key: 'sidecars', props: sidecarProps },
};

const selector = object({ kind: str, name: str, namespace: str, matchLabels: mapOf(str) });
const entry = object({
  select: selector, logAgent: logAgentProps, envoy: envoyProps, tracer: tracerProps, adopt: listOf(adoptProps), sidecars: listOf(sidecarProps),
}, ['select']);
/** SidecarInjectionPolicy's props but the target (the top-level keys), and `workload`: whose sidecars. */
export const admissionProps = object({
  workload: num,
  namespaces: strings,
  podLabels: mapOf(str),
  matchConditions: listOf(object({ name: str, expression: str }, ['name', 'expression'])),
  name: str,
  failurePolicy: oneOf(['Fail', 'Ignore']),
  allowBetaApi: bool,
}, ['namespaces']);
const top = object({ kubernetesVersion: str, sidecarContainersGate: bool, workloads: listOf(entry), admission: admissionProps }, ['workloads']);

/** The error of a config without a target (and no CDK8S_SIDECARS_KUBERNETES_VERSION). */
export const RENDER_TARGET_MISSING = 'not set, and CDK8S_SIDECARS_KUBERNETES_VERSION is not set either: give the lowest release of the ' +
  `cluster's API server and kubelets at the top of the config, quoted (kubernetesVersion: "1.29"; "${DEFAULT_KUBERNETES_VERSION}" keeps the legacy layout), ` +
  'or set the variable (`cdk8s-sidecars target` prints it for the cluster kubectl points at)';

/** Reads a parsed config (one YAML document). Throws ConfigError. */
export function readRenderConfig(doc: unknown): RenderConfig {
  if (typeof (doc as any)?.kubernetesVersion === 'number') {
    // YAML reads an unquoted 1.30 as the number 1.3.
    throw new ConfigError('kubernetesVersion', `expected a string, got the number ${(doc as any).kubernetesVersion}: quote the version ('1.30'), YAML reads 1.30 as 1.3`);
  }
  const c = top(doc, '') as any;
  const workloads: WorkloadEntry[] = c.workloads.map((w: any, i: number) => {
    const path = `workloads[${i}]`;
    if (Object.keys(w.select).length === 0) throw new ConfigError(`${path}.select`, 'give at least one of kind, name, namespace, matchLabels');
    if (!w.logAgent && !w.envoy && !w.tracer && !(w.adopt?.length > 0) && !(w.sidecars?.length > 0)) {
      throw new ConfigError(path, 'no sidecar: give at least one of logAgent, envoy, tracer, adopt, sidecars');
    }
    return { path, select: w.select, logAgent: w.logAgent, envoy: w.envoy, tracer: w.tracer, adopt: w.adopt ?? [], sidecars: w.sidecars ?? [] };
  });
  // The one assembly of a target (src/target/resolver.ts): the config's keys, then the environment.
  // No target is an error, as for `check` and `timeline` (docs/cli.md, "The target"); a bad version
  // names the key (the constructs would name their own paths).
  const key = 'kubernetesVersion';
  const target = assembleTarget({
    version: c.kubernetesVersion,
    gate: c.sidecarContainersGate,
    where: new Where(key),
    fail: (e: SidecarError) => new ConfigError('(environment)', e.text),
    failGiven: (e: SidecarError) => new ConfigError(key, e.message.replace(`${key}: `, '')),
    unset: () => new ConfigError(key, RENDER_TARGET_MISSING),
    versionName: 'the config\'s kubernetesVersion',
  });
  const version = target.raw;
  const gate = target.gateSet ? target.gate : undefined;
  let admission: AdmissionEntry | undefined;
  if (c.admission !== undefined) {
    const { workload, ...props } = c.admission;
    const index = workload ?? 0;
    if (workload === undefined && workloads.length !== 1) {
      throw new ConfigError('admission.workload', `required when workloads has ${workloads.length} entries: the index of the entry whose sidecars the policy gives`);
    }
    if (!Number.isInteger(index) || index < 0 || index >= workloads.length) {
      throw new ConfigError('admission.workload', `expected the index of a workloads entry (0 to ${workloads.length - 1}), got ${index}`);
    }
    admission = { workload: index, props };
  }
  return { kubernetesVersion: version, sidecarContainersGate: gate, workloads, ...(admission ? { admission } : {}) };
}

/** Whether `obj` (a parsed manifest) is selected by `s`. */
export function selects(s: Selector, obj: any): boolean {
  if (s.kind !== undefined && obj?.kind !== s.kind) return false;
  if (s.name !== undefined && obj?.metadata?.name !== s.name) return false;
  if (s.namespace !== undefined && obj?.metadata?.namespace !== s.namespace) return false;
  const labels = obj?.metadata?.labels ?? {};
  return Object.entries(s.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
}
