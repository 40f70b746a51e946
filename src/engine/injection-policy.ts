/**
 * Layer 2: the same sidecars at admission. Turns what the engine wrote into a stand-in pod
 * (`applySidecars` on a pod with one bare app container) into the CEL of a
 * MutatingAdmissionPolicy: match conditions that keep it from injecting twice, variables that
 * work out the grace period from the admitted pod's own containers, and one JSON patch mutation.
 *
 * Why JSON patch and not ApplyConfiguration: the native sidecars must come BEFORE the user's own
 * init containers (they start in order, and the library's stop after the app), and a server-side
 * apply merge of the `initContainers` list (a map keyed by name) cannot put new entries in front;
 * a JSON patch adds at `/spec/initContainers/0`. Env entries the app already sets must win, which
 * an apply would overwrite. (kubernetes v1.37.2 staging/src/k8s.io/api/admissionregistration/v1/types.go,
 * `PatchTypeApplyConfiguration`: "merge lists ... cannot be used to ... reorder".)
 *
 * Plain JSON in and out: no cdk8s.
 */
import { APP_SHUTDOWN_ANNOTATION, NATIVE_SIDECARS_ANNOTATION, STOP_TIMES_ANNOTATION } from '../facts/annotations';
import { KUBERNETES_DEFAULT_GRACE_SECONDS } from '../facts/pod-defaults';
import { internalError } from '../private/errors';
import { Json } from '../private/json';
import { sortedKeys } from '../private/order';

/** What the engine added to the stand-in pod, and the shutdown numbers the grace period is made of. */
export interface InjectionPlan {
  /** The init containers the engine placed (tools first, then the native sidecars), in order. */
  readonly initContainers: Json[];
  /** The pod volumes it added. */
  readonly volumes: Json[];
  /** What every app container gets: mounts and env (an env the container sets wins). */
  readonly appMounts: Json[];
  readonly appEnv: Json[];
  /** The pod annotations it added (checksums, stop times, the guard's marker). */
  readonly annotations: Record<string, string>;
  /** `appShutdownTime` of the sidecars (the largest), whole seconds. */
  readonly appShutdownSeconds: number;
  /** Whether a construct gave `appShutdownTime` (else the pod's grace period may be the app's budget). */
  readonly appShutdownGiven: boolean;
  /** The native sidecars' stop times, summed (they stop one after another after the app). */
  readonly nativeStopSeconds: number;
  /** `userSidecarStopTime`: how long each of the pod's own native sidecars takes to stop; undefined: not given. */
  readonly userSidecarStopSeconds?: number;
  /** The ports the sidecars bind that they do not declare (an agent's localhost-only admin or receiver ports). */
  readonly localPorts?: number[];
}

/** A MutatingAdmissionPolicy's CEL, as its spec fields. */
export interface InjectionCel {
  readonly matchConditions: Array<{ name: string; expression: string }>;
  readonly variables: Array<{ name: string; expression: string }>;
  /** The expression of the one `JSONPatch` mutation. */
  readonly patch: string;
}

/**
 * The stand-in pod's name: where a sidecar's value is the workload's name (WithTracer's default
 * `OTEL_SERVICE_NAME`), the policy writes `variables.workloadName`, read from the admitted pod.
 */
export const STAND_IN_NAME = 'cdk8s-sidecars-stand-in';

/**
 * The admitted pod's workload name, in the order of the OpenTelemetry Operator's
 * `chooseServiceName` (open-telemetry/opentelemetry-operator internal/instrumentation/sdk.go
 * v0.158.0, as WithTracer's default: src/with-tracer.ts), the workload's name read from what its
 * controller writes on the pod (kubernetes v1.37.2): a Job's `batch.kubernetes.io/job-name` label
 * (pkg/controller/job/job_controller.go), a ReplicaSet's `generateName` `<deployment>-<pod-template-hash>-`
 * (pkg/controller/deployment/sync.go, controller_utils.go), a StatefulSet's `<name>-<ordinal>` with
 * the `apps.kubernetes.io/pod-index` label (pkg/controller/statefulset/stateful_set_utils.go),
 * else the generateName without its `-`, else the pod's name.
 */
const WORKLOAD_NAME = [
  'has(object.metadata.annotations) && \'resource.opentelemetry.io/service.name\' in object.metadata.annotations ? object.metadata.annotations[\'resource.opentelemetry.io/service.name\'] :',
  'has(object.metadata.labels) && \'app.kubernetes.io/instance\' in object.metadata.labels ? object.metadata.labels[\'app.kubernetes.io/instance\'] :',
  'has(object.metadata.labels) && \'app.kubernetes.io/name\' in object.metadata.labels ? object.metadata.labels[\'app.kubernetes.io/name\'] :',
  'has(object.metadata.labels) && \'batch.kubernetes.io/job-name\' in object.metadata.labels ? object.metadata.labels[\'batch.kubernetes.io/job-name\'] :',
  'has(object.metadata.labels) && \'pod-template-hash\' in object.metadata.labels && has(object.metadata.generateName) && ' +
  'object.metadata.generateName.endsWith(\'-\' + object.metadata.labels[\'pod-template-hash\'] + \'-\') ' +
  '? object.metadata.generateName.substring(0, size(object.metadata.generateName) - size(object.metadata.labels[\'pod-template-hash\']) - 2) :',
  'has(object.metadata.labels) && \'apps.kubernetes.io/pod-index\' in object.metadata.labels && has(object.metadata.name) && ' +
  'object.metadata.name.endsWith(\'-\' + object.metadata.labels[\'apps.kubernetes.io/pod-index\']) ' +
  '? object.metadata.name.substring(0, size(object.metadata.name) - size(object.metadata.labels[\'apps.kubernetes.io/pod-index\']) - 1) :',
  'has(object.metadata.generateName) && object.metadata.generateName.endsWith(\'-\') ? object.metadata.generateName.substring(0, size(object.metadata.generateName) - 1) :',
  'has(object.metadata.name) ? object.metadata.name : \'\'',
].join(' ');

/** Kubernetes' default `terminationGracePeriodSeconds`, which the API server sets before admission (pkg/apis/core/v1/defaults.go, SetDefaults_PodSpec). */
const DEFAULT_GRACE = KUBERNETES_DEFAULT_GRACE_SECONDS;

/**
 * What the engine added: the rendered stand-in pod's spec and metadata against the stand-in's own
 * (one app container, nothing else). Refuses what it cannot reproduce at admission.
 */
export function planFromStandIn(rendered: Json, shutdown: Omit<InjectionPlan, 'initContainers' | 'volumes' | 'appMounts' | 'appEnv' | 'annotations'>): InjectionPlan {
  const spec = rendered.spec ?? {};
  const app = (spec.containers ?? [])[0] ?? {};
  const annotations: Record<string, string> = { ...(rendered.metadata?.annotations ?? {}) };
  return {
    initContainers: spec.initContainers ?? [],
    volumes: spec.volumes ?? [],
    appMounts: app.volumeMounts ?? [],
    appEnv: app.env ?? [],
    annotations,
    ...shutdown,
  };
}

/** The CEL of the policy for `plan`; `extraConditions` (the user's) are added after the library's. */
export function injectionCel(plan: InjectionPlan, extraConditions: Array<{ name: string; expression: string }> = []): InjectionCel {
  return { matchConditions: [...matchConditionsOf(plan), ...extraConditions], variables: variablesOf(plan), patch: patchOf(plan) };
}

/**
 * The pods the policy leaves alone: injected already, a name or port of the sidecars taken, Windows
 * or the host's network, native sidecars of their own that it cannot count.
 */
function matchConditionsOf(plan: InjectionPlan): Array<{ name: string; expression: string }> {
  const names = plan.initContainers.map(c => String(c.name));
  const volumes = plan.volumes.map(v => String(v.name));
  const ports = [...new Set([
    ...plan.initContainers.flatMap(c => (c.ports ?? []).map((p: Json) => Number(p.containerPort))),
    ...(plan.localPorts ?? []),
  ])].sort((a, b) => a - b);
  return [
    {
      // a pod the library synthesized (either layout) or that a policy already injected carries these
      name: 'not-injected-yet',
      expression: `!has(object.metadata.annotations) || !(${str(NATIVE_SIDECARS_ANNOTATION)} in object.metadata.annotations || ${str(STOP_TIMES_ANNOTATION)} in object.metadata.annotations)`,
    },
    {
      name: 'names-free',
      expression: [
        `!object.spec.containers.exists(c, c.name in ${strList(names)})`,
        `!(has(object.spec.initContainers) && object.spec.initContainers.exists(c, c.name in ${strList(names)}))`,
        ...(volumes.length > 0 ? [`!(has(object.spec.volumes) && object.spec.volumes.exists(v, v.name in ${strList(volumes)}))`] : []),
      ].join(' && '),
    },
    ...(ports.length > 0 ? [{
      // the library refuses a port of the app that a sidecar binds (src/engine/pod-template.ts, checkCollisions)
      name: 'ports-free',
      expression: `!object.spec.containers.exists(c, has(c.ports) && c.ports.exists(p, p.containerPort in ${intList(ports)})) && ` +
        `!(has(object.spec.initContainers) && object.spec.initContainers.exists(c, has(c.ports) && c.ports.exists(p, p.containerPort in ${intList(ports)})))`,
    }] : []),
    {
      // the library refuses both (src/engine/pod-template.ts): Linux images, ports on the pod's own network
      name: 'linux-pod-network',
      expression: '!(has(object.spec.os) && object.spec.os.name == \'windows\') && !(has(object.spec.hostNetwork) && object.spec.hostNetwork)',
    },
    ...(plan.userSidecarStopSeconds === undefined ? [{
      // without userSidecarStopTime the grace period cannot count the pod's own native sidecars
      name: 'no-own-native-sidecars',
      expression: '!has(object.spec.initContainers) || !object.spec.initContainers.exists(c, has(c.restartPolicy) && c.restartPolicy == \'Always\')',
    }] : []),
  ];
}

/** The policy's variables: the pod's hooks and grace, and the grace and app budget planGrace would write for it. */
function variablesOf(plan: InjectionPlan): Array<{ name: string; expression: string }> {
  const stops = Math.ceil(plan.nativeStopSeconds);
  const userStop = plan.userSidecarStopSeconds ?? 0;
  const users = plan.userSidecarStopSeconds === undefined ? '0'
    : `(has(object.spec.initContainers) ? size(object.spec.initContainers.filter(c, has(c.restartPolicy) && c.restartPolicy == 'Always')) : 0) * ${int(userStop)}`;
  const hookOf = 'has(c.lifecycle) && has(c.lifecycle.preStop) ? ' +
    '(has(c.lifecycle.preStop.sleep) ? c.lifecycle.preStop.sleep.seconds : ' +
    '(has(c.lifecycle.preStop.exec) && has(c.lifecycle.preStop.exec.command) && size(c.lifecycle.preStop.exec.command) == 2 && ' +
    'c.lifecycle.preStop.exec.command[0] in [\'sleep\', \'/bin/sleep\', \'/usr/bin/sleep\'] && c.lifecycle.preStop.exec.command[1].matches(\'^[0-9]+$\') ' +
    '? int(c.lifecycle.preStop.exec.command[1]) : -1)) : 0';
  // src/engine/shutdown.ts planGrace, for native sidecars from 1.29 (stopped one after another after the app)
  return [
    { name: 'workloadName', expression: WORKLOAD_NAME },
    // each app container's preStop hook in seconds (appPreStopSeconds), -1 where it cannot be read
    { name: 'hooks', expression: `object.spec.containers.map(c, ${hookOf})` },
    { name: 'hook', expression: '([0] + variables.hooks).filter(h, ([0] + variables.hooks).all(o, o <= h))[0]' },
    { name: 'grace', expression: `has(object.spec.terminationGracePeriodSeconds) ? object.spec.terminationGracePeriodSeconds : ${DEFAULT_GRACE}` },
    { name: 'sidecarStops', expression: `${int(stops)} + ${users}` },
    { name: 'need', expression: `variables.hook + ${int(plan.appShutdownSeconds)} + variables.sidecarStops` },
    {
      // no appShutdownTime given: an unreadable hook, or a grace set below the need on a pod that does not
      // complete, makes the pod's grace period the app's own budget (a grace of 30 counts as unset: defaulted)
      name: 'budgetFromGrace',
      expression: plan.appShutdownGiven ? 'false'
        : `variables.hooks.exists(h, h < 0) || (variables.grace != ${DEFAULT_GRACE} && variables.grace < variables.need && has(object.spec.restartPolicy) && object.spec.restartPolicy == 'Always')`,
    },
    {
      name: 'newGrace',
      expression: 'variables.budgetFromGrace ' +
        `? (variables.hook > 0 && variables.hook + ${int(plan.appShutdownSeconds)} > variables.grace ? variables.hook + ${int(plan.appShutdownSeconds)} : variables.grace) + variables.sidecarStops ` +
        ': (variables.need > variables.grace ? variables.need : variables.grace)',
    },
    {
      // the app's budget as synthesis writes it (APP_SHUTDOWN_ANNOTATION, planGrace in shutdown.ts): the
      // pod's grace less its readable hook where the grace is the budget, else the constructs' appShutdownTime
      name: 'appBudget',
      expression: 'variables.budgetFromGrace ' +
        `? (variables.hook > 0 && variables.hook + ${int(plan.appShutdownSeconds)} > variables.grace ? variables.hook + ${int(plan.appShutdownSeconds)} : variables.grace) - variables.hook ` +
        `: ${int(plan.appShutdownSeconds)}`,
    },
  ];
}

/** The JSON patch: the sidecars and volumes in front, the app wiring per container, the annotations and the grace period. */
function patchOf(plan: InjectionPlan): string {
  const parts: string[] = [];
  // Every value the patch writes is a literal of the library's: Object.* initializers exist only in a
  // mutation's expression (kubernetes v1.37.2 staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/
  // mutating/compilation.go compiles variables without HasPatchTypes), and a value read from the pod
  // (`object.spec...`) cannot be written back: the API server's `object` holds typed values that do not
  // convert to JSON (json_patch.go: "could not marshal to JSON: unsupported conversion to ref.Val:
  // (v1.Container)", measured with its own patcher). So a list the pod lacks is added empty first,
  // then each entry is added on its own (all in one patch, which the API server applies whole).
  if (plan.initContainers.length > 0) {
    const lits = plan.initContainers.map(c => celLiteral(c, 'Object.spec.initContainers'));
    parts.push(`(has(object.spec.initContainers) ? [] : [${patch('add', '/spec/initContainers', '[]')}])`);
    // in front of the pod's own, in the engine's order: each at index 0, the last first
    parts.push(`[${[...lits].reverse().map(l => patch('add', '/spec/initContainers/0', l)).join(', ')}]`);
  }
  if (plan.volumes.length > 0) {
    const lits = plan.volumes.map(v => celLiteral(v, 'Object.spec.volumes'));
    parts.push(`(has(object.spec.volumes) ? [] : [${patch('add', '/spec/volumes', '[]')}])`);
    parts.push(`[${lits.map(l => patch('add', '/spec/volumes/-', l)).join(', ')}]`);
  }
  // every app container (an index each: cel-go's two-variable comprehension `transformList(i, c, filter,
  // value)`, Kubernetes 1.32+), the library's rule of withAppWiring: an env the container sets wins,
  // a mount it has already is not added again
  const perContainer = (field: string, filter: string, value: string, append: boolean) =>
    `object.spec.containers.transformList(i, c, ${filter}, ${patch('add', `'/spec/containers/' + string(i) + '/${field}${append ? '/-' : ''}'`, value, true)})`;
  if (plan.appEnv.length > 0) {
    parts.push(perContainer('env', '!has(c.env)', '[]', false));
    for (const e of plan.appEnv) {
      parts.push(perContainer('env', `!(has(c.env) && c.env.exists(x, x.name == ${str(e.name)}))`, celLiteral(e, 'Object.spec.containers.env'), true));
    }
  }
  if (plan.appMounts.length > 0) {
    parts.push(perContainer('volumeMounts', '!has(c.volumeMounts)', '[]', false));
    for (const m of plan.appMounts) {
      parts.push(perContainer('volumeMounts', `!(has(c.volumeMounts) && c.volumeMounts.exists(x, x.mountPath == ${str(m.mountPath)} && x.name == ${str(m.name)}))`,
        celLiteral(m, 'Object.spec.containers.volumeMounts'), true));
    }
  }
  // the app's budget depends on the admitted pod (its grace, its hooks): computed, not a literal
  const budgetGiven = APP_SHUTDOWN_ANNOTATION in plan.annotations;
  const keys = sortedKeys(plan.annotations).filter(k => k !== APP_SHUTDOWN_ANNOTATION);
  if (keys.length > 0) {
    parts.push(
      `(has(object.metadata.annotations) ? [${keys.map(k => patch('add', str(`/metadata/annotations/${escapeKey(k)}`), str(plan.annotations[k]), true)).join(', ')}] ` +
      `: [${patch('add', '/metadata/annotations', `{${keys.map(k => `${str(k)}: ${str(plan.annotations[k])}`).join(', ')}}`)}])`,
    );
  }
  if (budgetGiven) {
    parts.push(`[${patch('add', str(`/metadata/annotations/${escapeKey(APP_SHUTDOWN_ANNOTATION)}`), 'string(variables.appBudget) + "s"', true)}]`);
  }
  parts.push(`(variables.newGrace != variables.grace ? [${patch('add', '/spec/terminationGracePeriodSeconds', 'variables.newGrace')}] : [])`);
  return parts.join(' +\n');
}

/** `JSONPatch{...}`; `path` is a literal path, or a CEL expression when `pathIsCel`. */
function patch(op: string, path: string, value: string, pathIsCel = false): string {
  return `JSONPatch{op: ${str(op)}, path: ${pathIsCel ? path : str(path)}, value: ${value}}`;
}

/** RFC 6901 escaping of one path segment (what Kubernetes' `jsonpatch.escapeKey` does). */
export function escapeKey(k: string): string {
  return k.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** A CEL string literal (double-quoted, JSON escapes are CEL escapes for these characters). */
function str(s: unknown): string {
  return JSON.stringify(String(s)).replace(/[\u2028\u2029]/g, c => `\\u${c.charCodeAt(0).toString(16)}`);
}

function strList(list: string[]): string {
  return `[${list.map(str).join(', ')}]`;
}

function intList(list: number[]): string {
  return `[${list.map(int).join(', ')}]`;
}

function int(n: number): string {
  if (!Number.isInteger(n)) throw internalError(`${n} is not a whole number of seconds`);
  return String(n);
}

/**
 * The fields of a pod that are maps of strings (not objects with fields): written as CEL map
 * literals. Everything else that is a JSON object is an `Object.<path>{...}` of the Kubernetes CEL
 * mutation library (kubernetes v1.37.2 staging/src/k8s.io/apiserver/pkg/cel/mutation/dynamic/objects.go:
 * the type name must be the field path, `CheckTypeNamesMatchFieldPathNames`).
 */
const STRING_MAPS = new Set(['limits', 'requests', 'annotations', 'labels', 'nodeSelector', 'volumeAttributes']);

/** CEL's reserved words, which cannot be a field name of an object literal. */
const RESERVED = new Set(['as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if', 'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while', 'in', 'true', 'false', 'null']);

/** `value` as a CEL literal of the object type `typePath` (e.g. `Object.spec.initContainers`). */
export function celLiteral(value: unknown, typePath: string): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return value === STAND_IN_NAME ? 'variables.workloadName' : str(value);
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'number') {
    if (!Number.isInteger(value)) throw internalError(`${value} at ${typePath} is not an integer (Kubernetes pod fields are)`);
    return String(value);
  }
  if (Array.isArray(value)) return `[${value.map(v => celLiteral(v, typePath)).join(', ')}]`;
  const field = typePath.slice(typePath.lastIndexOf('.') + 1);
  const o = value as Json;
  if (STRING_MAPS.has(field)) return `{${sortedKeys(o).map(k => `${str(k)}: ${str(o[k])}`).join(', ')}}`;
  const entries = sortedKeys(o).map(k => {
    if (RESERVED.has(k) || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) throw internalError(`field '${k}' at ${typePath} cannot be a CEL field name`);
    return `${k}: ${celLiteral(o[k], `${typePath}.${k}`)}`;
  });
  return `${typePath}{${entries.join(', ')}}`;
}
