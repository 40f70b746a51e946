/**
 * Layer 2: the API server's semantic rules for a pod spec (SIDECARS.md §4) and the fields a
 * target release does not know. Schemas check shape only; these are the rules they miss.
 *
 * Every rule is a row of `POD_SPEC_RULES`: what it checks, the releases it applies to (as the
 * API server behaves with its default feature gates) and the upstream source it was read from,
 * so that a reader can re-check it. "validation.go" is kubernetes/kubernetes
 * `pkg/apis/core/validation/validation.go`; the rules were read at the tags named in each row.
 * Version facts come from the capabilities table in `src/target/capabilities.ts`; no rule compares versions.
 */
import { containerShapeErrors } from './container-shape';
import { EngineTarget } from './spec';
import { jobSpecIn, podTemplateIn } from '../facts/kinds';
import { KUBERNETES_DEFAULT_GRACE_SECONDS } from '../facts/pod-defaults';
import { parseQuantity } from '../facts/quantity';
import { Json } from '../private/json';
import { TargetCapabilities, capabilities } from '../target/capabilities';

// The timeline engine (80 kB) only for the pod-level resources rule: a synthesis loads it when a pod sets them (what importing the library costs).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const timeline = (): typeof import('./timeline') => require('./timeline');

/** What the rules need to know about the target: the engine's target. */
export type RuleTarget = EngineTarget;

/** What the rules need to know about the workload beyond its pod spec. */
export interface PodSpecContext {
  /** The workload's kind (what it changes: a StatefulSet's template is not validated on its own). */
  readonly kind?: string;
  /**
   * Volume names the workload's controller adds to every pod: a StatefulSet's
   * `volumeClaimTemplates` (the controller adds one volume per claim template, replacing a
   * template volume of the same name: kubernetes `pkg/controller/statefulset/stateful_set_utils.go`,
   * `updateStorage`).
   */
  readonly controllerVolumes?: string[];
  /**
   * Containers whose hooks the caller has already checked against the grace period (the
   * library's own sidecars: the engine's grace-period check covers their sleeps), so that a
   * too-short grace period is reported once, as its cause.
   */
  readonly graceCheckedContainers?: string[];
  /**
   * Container names whose clashes the caller has already reported with their cause (the
   * library's sidecars and tools: "already used by a container of ..."), so that a name is
   * reported once.
   */
  readonly namesReported?: string[];
}

/** One API-server rule, with where it comes from. */
export interface PodSpecRule {
  /** What it checks. */
  readonly name: string;
  /** The releases it applies to, e.g. `1.27-1.32` or `all` (the supported 1.27+). */
  readonly releases: string;
  /** The upstream source: file, function and the tags it was read at. */
  readonly source: string;
  /** One message per violation. */
  readonly check: (pod: PodUnderCheck) => string[];
}

/** The pod spec and its surroundings, as the rules see them. */
interface PodUnderCheck {
  readonly where: string;
  readonly kind?: string;
  readonly minor: number;
  readonly caps: TargetCapabilities;
  readonly init: Json[];
  readonly containers: Json[];
  /** `init`, then `containers` (one list for the rules that read every container; no rule changes it). */
  readonly all: Json[];
  readonly volumes: Json[];
  readonly controllerVolumes: string[];
  readonly graceCheckedContainers: string[];
  readonly namesReported: string[];
  /** `terminationGracePeriodSeconds` after defaulting (the API server defaults it to 30 before validating). */
  readonly graceSeconds: number;
  /** The whole pod spec, for the rules on pod-level fields (`os`, `resources`). */
  readonly spec: Json;
}

const PROBES_AND_HOOKS = ['lifecycle', 'livenessProbe', 'readinessProbe', 'startupProbe'];
const CONTAINER_RESTART_POLICIES = ['Always', 'OnFailure', 'Never'];

/** `k8s.io/apimachinery/pkg/util/validation` `IsDNS1123Label`: at most 63 characters of [a-z0-9-], alphanumeric at both ends. */
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
export const DNS1123_LABEL_MAX_LENGTH = 63;

/** True when `value` is a DNS-1123 label (what the API server requires of container and volume names). */
export function isDns1123Label(value: unknown): boolean {
  return typeof value === 'string' && value.length <= DNS1123_LABEL_MAX_LENGTH && DNS1123_LABEL.test(value);
}

function dnsLabelProblem(value: string): string {
  return value.length > DNS1123_LABEL_MAX_LENGTH
    ? `is ${value.length} characters, more than the ${DNS1123_LABEL_MAX_LENGTH} of a DNS-1123 label`
    : "is not a DNS-1123 label (lower-case letters, digits and '-', starting and ending with a letter or digit)";
}

/** A user's init container that asks to be a native sidecar on a release that cannot run one. */
function nativeSidecarOnOldRelease(pod: PodUnderCheck, c: Json): string {
  const at = `${pod.where}: init container '${c.name}'`;
  const release = `Kubernetes 1.${pod.minor}`;
  const what = pod.minor === 28
    ? `${release} drops without the SidecarContainers feature gate`
    : `${release} does not know (its API server drops the field, or rejects the object under strict field validation)`;
  const blocked = PROBES_AND_HOOKS.filter(f => c[f] !== undefined);
  const consequence = blocked.length > 0
    // validation.go validateInitContainers (v1.27.0: "may not be set for init containers";
    // v1.28.0 with the gate off: "... without restartPolicy=Always"): probes and hooks are
    // refused on an init container once restartPolicy is gone.
    ? `without the field, ${blocked.join(', ')} ${blocked.length > 1 ? 'are' : 'is'} forbidden on an init container, so the API server ` +
      `rejects ${rejected(pod.kind)} ("may not be set for init containers${pod.minor === 28 ? ' without restartPolicy=Always' : ''}")`
    : 'without the field it runs as an ordinary init container; if it never exits (a sidecar does not), the pod hangs in Init';
  const fixes = [
    `move '${c.name}' to spec.containers (it then runs beside the app, but neither starts before nor stops after it)`,
    ...(pod.minor === 28 ? ['turn the SidecarContainers gate on in the API server and every kubelet and say so (`sidecarContainersGate: true`)'] : []),
    'target Kubernetes 1.29 or later if every node runs it',
  ];
  return `${at} has restartPolicy 'Always' (a native sidecar), which ${what}: ${consequence}. ` +
    `Either ${fixes.slice(0, -1).join(', ')}, or ${fixes[fixes.length - 1]}.`;
}

/**
 * What the API server rejects when a pod template is invalid: the workload itself, at
 * `kubectl apply`, since its template goes through the same field dropping and pod-spec
 * validation (ValidatePodTemplateSpec), except a StatefulSet's, whose template is not validated
 * (pkg/apis/apps/validation/validation.go ValidatePodTemplateSpecForStatefulSet): its pods are.
 */
function rejected(kind: string | undefined): string {
  if (kind === 'Pod') return 'the Pod';
  if (kind === 'StatefulSet') return 'each of its pods (FailedCreate events on the StatefulSet; the StatefulSet itself is accepted)';
  return `the ${kind ?? 'object'} at \`kubectl apply\``;
}

function hostPortKey(p: Json): string {
  // AccumulateUniqueHostPorts keys by protocol (defaulted to TCP before validation), hostIP and port.
  return `${p.hostIP ? `${p.hostIP}:` : ''}${p.hostPort}/${p.protocol ?? 'TCP'}`;
}

function sleepHooks(c: Json): Array<{ hook: string; seconds: number }> {
  const out: Array<{ hook: string; seconds: number }> = [];
  for (const hook of ['preStop', 'postStart']) {
    const sleep = c.lifecycle?.[hook]?.sleep;
    if (sleep !== undefined) out.push({ hook, seconds: sleep.seconds });
  }
  return out;
}

/**
 * The rules, one row each. Releases are those the library supports (1.27 and later); "all"
 * means every one of them.
 */
export const POD_SPEC_RULES: readonly PodSpecRule[] = [
  {
    name: 'container names are DNS-1123 labels',
    releases: 'all',
    source: 'validation.go validateContainerCommon -> ValidateDNS1123Label (v1.27.0, v1.33.0)',
    check: pod => each(pod, pod.all, containerNameProblem),
  },
  {
    name: 'container names are unique across initContainers and containers',
    releases: 'all',
    source: 'validation.go validateInitContainers / validateContainers, allNames (v1.27.0, v1.33.0)',
    check: duplicateContainerNames,
  },
  {
    name: 'volume names are unique DNS-1123 labels',
    releases: 'all',
    source: 'validation.go ValidateVolumes (v1.27.0, v1.33.0)',
    check: volumeNameProblems,
  },
  {
    name: 'every volume mount names a volume of the pod (a StatefulSet\'s claim templates count)',
    releases: 'all',
    source: 'validation.go ValidateVolumeMounts (v1.27.0, v1.33.0); a StatefulSet\'s template is not checked at all ' +
      '(pkg/apis/apps/validation/validation.go ValidatePodTemplateSpecForStatefulSet, v1.27.0, v1.33.0), its pods get ' +
      'the claim volumes from the controller (pkg/controller/statefulset/stateful_set_utils.go updateStorage)',
    check: unknownVolumeMounts,
  },
  {
    name: 'init container restartPolicy values',
    releases: '1.27-1.34: Always only; 1.35+: Always, OnFailure, Never',
    source: 'validation.go validateInitContainerRestartPolicy (v1.28.0, v1.33.0); ContainerRestartRules beta and on ' +
      'in 1.35 (pkg/features/kube_features.go)',
    check: pod => each(pod, pod.init, initRestartPolicyProblem),
  },
  {
    name: 'native sidecars (init containers with restartPolicy Always) need 1.29+, or 1.28 with the gate',
    releases: '1.27; 1.28 without the SidecarContainers gate',
    source: 'v1.27.0 has no Container.restartPolicy; v1.28.0 pkg/api/pod/util.go dropDisabledFields drops it while ' +
      'SidecarContainers (alpha) is off, then validation.go validateInitContainers refuses probes and hooks',
    check: pod => pod.caps.nativeSidecars ? [] : each(pod, pod.init, nativeOnOldRelease),
  },
  {
    name: 'probes and lifecycle hooks only on native sidecars among init containers',
    releases: 'all',
    source: 'validation.go validateInitContainers (v1.27.0: "may not be set for init containers"; v1.28.0+: ' +
      '"may not be set for init containers without restartPolicy=Always")',
    check: pod => each(pod, pod.init, initProbesAndHooks),
  },
  {
    name: 'resizePolicy on init containers',
    releases: '1.27-1.32: refused; 1.33+: allowed',
    source: 'validation.go validateInitContainers, "must not be set for init containers" unless ' +
      'AllowSidecarResizePolicy, which pkg/api/pod/util.go sets from InPlacePodVerticalScaling (beta and on in v1.33.0)',
    check: pod => pod.caps.initContainerResizePolicy ? [] : each(pod, pod.init, initResizePolicy),
  },
  {
    name: 'restartPolicy on regular containers',
    releases: '1.27-1.34: refused; 1.35+: Always, OnFailure, Never',
    source: 'validation.go validateContainers, "may not be set for non-init containers" (v1.28.0, v1.33.0); ' +
      'ContainerRestartRules: alpha and off in 1.34, beta and on in 1.35 (pkg/features/kube_features.go)',
    check: pod => each(pod, pod.containers, containerRestartPolicyProblem),
  },
  {
    name: 'restartPolicyRules on containers',
    releases: '1.27-1.34: refused; 1.35: action Restart; 1.36+: Restart or RestartAllContainers (also on native sidecars)',
    source: 'ContainerRestartRules: alpha and off 1.34, beta and on 1.35; RestartAllContainersOnContainerExits: alpha 1.35, ' +
      'beta and on 1.36 (pkg/features/kube_features.go, v1.35.0, v1.36.0, v1.37.2); pkg/api/pod/util.go dropContainerRestartRules ' +
      'while off; validation.go validateInitContainerRestartPolicy / validateContainerRestartPolicy (v1.37.2)',
    check: pod => [...each(pod, pod.init, initRestartRules), ...each(pod, pod.containers, containerRestartRules)],
  },
  {
    name: 'lifecycle.stopSignal',
    releases: 'none with the default feature gates (ContainerStopSignals alpha and off 1.33-1.37; no field before 1.33)',
    source: 'pkg/features/kube_features.go ContainerStopSignals (v1.35.0, v1.36.0, v1.37.2: alpha only); pkg/api/pod/util.go ' +
      'dropContainerStopSignals while off; with the gate on, validation.go validateStopSignal: "may not be set for containers ' +
      'with empty `spec.os.name`" (v1.37.2)',
    check: pod => pod.caps.stopSignal ? [] : each(pod, pod.all, stopSignalProblem),
  },
  {
    name: 'pod-level resources cover the containers',
    releases: '1.27-1.33: refused; 1.34+: requests >= the aggregate container requests, container limits <= pod limits',
    source: 'PodLevelResources: alpha and off 1.32-1.33, beta and on 1.34 (still beta in v1.37.2, pkg/features/kube_features.go); ' +
      'pkg/api/pod/util.go dropDisabledPodLevelResources while off; validation.go validatePodResourceConsistency with ' +
      'resourcehelper.AggregateContainerRequests (native sidecars count with the app, v1.37.2); a pod-level limit without a ' +
      'request: the Pod\'s request defaults to the containers\' aggregate (v1/defaults.go SetDefaults_Pod, Pods only, not templates), ' +
      'which validateResourceRequirements then holds to the limit ("must be less than or equal to cpu limit of ...")',
    check: pod => podLevelResourceProblems(pod),
  },
  {
    name: 'resizePolicy RestartContainer on init containers that are not native sidecars',
    releases: '1.27-1.35: not refused (1.27-1.32 refuse any init resizePolicy, rule above); 1.36+: refused',
    source: 'kubernetes#137458, validation.go validateInitContainers: "must not be set to \'RestartContainer\' for non-sidecar ' +
      'initContainers" (v1.36.0, v1.37.2; not in v1.35.0)',
    check: pod => !pod.caps.initResizeRestartContainerRefused ? [] : each(pod, pod.init, initResizeRestartContainer),
  },
  {
    name: 'podCertificate and clusterTrustBundle projected volume sources',
    releases: '1.27-1.36: dropped (podCertificate absent before 1.34, clusterTrustBundle before 1.29); 1.37+: kept',
    source: 'PodCertificateRequest: alpha 1.34, beta and off 1.35-1.36, GA 1.37; ClusterTrustBundleProjection: alpha 1.29, beta ' +
      'and off 1.33-1.36, GA 1.37 (pkg/features/kube_features.go v1.37.2); pkg/api/pod/util.go dropDisabledPodCertificateProjection, ' +
      'dropDisabledClusterTrustBundleProjection',
    check: pod => each(pod, pod.volumes, droppedProjections),
  },
  {
    name: 'the sleep lifecycle action exists',
    releases: '1.27-1.29: no (the field is dropped, the hook then has no handler); 1.30+: yes',
    source: 'PodLifecycleSleepAction: alpha 1.29, beta and on 1.30 (pkg/features/kube_features.go); pkg/api/pod/util.go ' +
      'drops it while off, validation.go validateHandler then requires a handler',
    check: pod => pod.caps.sleepAction ? [] : each(pod, pod.all, sleepWithoutAction),
  },
  {
    name: 'a sleep action is at least 1 second',
    releases: '1.30-1.32 (0 allowed from 1.33)',
    source: 'validation.go validateSleepAction (v1.30.0); PodLifecycleSleepActionAllowZero beta and on in v1.33.0',
    check: pod => !pod.caps.sleepAction || pod.caps.sleepZero ? [] : each(pod, pod.all, zeroSleeps),
  },
  {
    name: 'a sleep action is no longer than terminationGracePeriodSeconds',
    releases: '1.30+',
    source: 'validation.go validateSleepAction, sleep.Seconds > gracePeriod is invalid (v1.30.0, v1.33.0); ' +
      `the grace period defaults to ${KUBERNETES_DEFAULT_GRACE_SECONDS} before validation`,
    check: pod => !pod.caps.sleepAction ? [] : each(pod, pod.all, sleepsBeyondGrace),
  },
  {
    name: 'host ports: unique among regular containers, and within each init container',
    releases: 'all',
    source: 'validation.go validateContainers / validateInitContainers -> checkHostPortConflicts -> AccumulateUniqueHostPorts, ' +
      'keyed by protocol, hostIP and port (v1.27.0, v1.33.0)',
    check: hostPortConflicts,
  },
];

// The rules' checks, each a function of the module: the engine checks every render, and a closure
// made per check (a `filter` callback) is compiled anew once the garbage collector has freed the
// last one (bench/README.md, "The optimizing compiler").

/** The messages `problem` finds in each of `list`, in order (a string, a list of them, or none). */
function each(pod: PodUnderCheck, list: readonly Json[], problem: (pod: PodUnderCheck, x: Json) => string | string[] | undefined): string[] {
  let out: string[] | undefined;
  for (const x of list) {
    const found = problem(pod, x);
    if (found === undefined || found.length === 0) continue;
    out ??= [];
    if (typeof found === 'string') out.push(found);
    else out.push(...found);
  }
  return out ?? [];
}

/** How many times each `name` occurs in `list`, in the order of first occurrence. */
function countNames(list: readonly Json[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const x of list) m.set(x.name, (m.get(x.name) ?? 0) + 1);
  return m;
}

function containerNameProblem(pod: PodUnderCheck, c: Json): string | undefined {
  if (isDns1123Label(c.name)) return undefined;
  return `${pod.where}: container name '${c.name}' ${dnsLabelProblem(String(c.name))}; the API server rejects it.`;
}

function duplicateContainerNames(pod: PodUnderCheck): string[] {
  const out: string[] = [];
  for (const [name, n] of countNames(pod.all)) {
    if (n > 1 && !pod.namesReported.includes(name)) {
      out.push(`${pod.where}: container name '${name}' is used ${n} times; names must be unique across initContainers and containers: rename all but one of them.`);
    }
  }
  return out;
}

function volumeNameProblems(pod: PodUnderCheck): string[] {
  const out: string[] = [];
  for (const v of pod.volumes) {
    if (!isDns1123Label(v.name)) out.push(`${pod.where}: volume name '${v.name}' ${dnsLabelProblem(String(v.name))}; the API server rejects it.`);
  }
  for (const [name, n] of countNames(pod.volumes)) {
    if (n > 1) out.push(`${pod.where}: volume name '${name}' is used ${n} times; volume names must be unique.`);
  }
  return out;
}

function unknownVolumeMounts(pod: PodUnderCheck): string[] {
  const known = new Set<unknown>(pod.controllerVolumes);
  for (const v of pod.volumes) known.add(v.name);
  const out: string[] = [];
  for (const c of pod.all) {
    for (const m of (c.volumeMounts ?? []) as Json[]) {
      if (!known.has(m.name)) out.push(`${pod.where}: container '${c.name}' mounts volume '${m.name}', which is not a volume of the pod.`);
    }
  }
  return out;
}

function nativeOnOldRelease(pod: PodUnderCheck, c: Json): string | undefined {
  return c.restartPolicy === 'Always' ? nativeSidecarOnOldRelease(pod, c) : undefined;
}

const ALWAYS_ONLY = ['Always'];

function initRestartPolicyProblem(pod: PodUnderCheck, c: Json): string | undefined {
  const allowed = pod.caps.containerRestartPolicy ? CONTAINER_RESTART_POLICIES : ALWAYS_ONLY;
  if (c.restartPolicy === undefined || allowed.includes(c.restartPolicy)) return undefined;
  return `${pod.where}: init container '${c.name}' has restartPolicy '${c.restartPolicy}': only ` +
    `${allowed.map(x => `'${x}'`).join(', ')} ${allowed.length > 1 ? 'are' : 'is'} allowed on init containers` +
    (allowed.length > 1
      ? '; use one of them.'
      : ` in Kubernetes 1.${pod.minor} (OnFailure and Never from 1.35). Remove restartPolicy for an init container that runs once ` +
        "before the app (its own restarts follow the pod's restartPolicy), set 'Always' for a sidecar that runs beside it, or target 1.35+.");
}

function initProbesAndHooks(pod: PodUnderCheck, c: Json): string[] | undefined {
  // An init container with restartPolicy Always is reported by the rule above where it is dropped.
  if (c.restartPolicy === 'Always') return undefined;
  let out: string[] | undefined;
  for (const f of PROBES_AND_HOOKS) {
    if (c[f] !== undefined) (out ??= []).push(`${pod.where}: init container '${c.name}' sets ${f}, which is forbidden on init containers without restartPolicy 'Always'.`);
  }
  return out;
}

function initResizePolicy(pod: PodUnderCheck, c: Json): string | undefined {
  if (c.resizePolicy === undefined || (Array.isArray(c.resizePolicy) && c.resizePolicy.length === 0)) return undefined;
  return `${pod.where}: init container '${c.name}' sets resizePolicy, which Kubernetes 1.${pod.minor} refuses on init containers ` +
    '(allowed from 1.33). Remove it or target 1.33+.';
}

function containerRestartPolicyProblem(pod: PodUnderCheck, c: Json): string | undefined {
  if (c.restartPolicy === undefined || (pod.caps.containerRestartPolicy && CONTAINER_RESTART_POLICIES.includes(c.restartPolicy))) return undefined;
  return pod.caps.containerRestartPolicy
    ? `${pod.where}: container '${c.name}' has restartPolicy '${c.restartPolicy}': only 'Always', 'OnFailure' and 'Never' are allowed.`
    : `${pod.where}: container '${c.name}' sets restartPolicy '${c.restartPolicy}': restartPolicy may not be set for ` +
      `non-init containers in Kubernetes 1.${pod.minor} (allowed from 1.35). Remove it.`;
}

const hasRestartRules = (c: Json): boolean => Array.isArray(c.restartPolicyRules) && c.restartPolicyRules.length > 0;
const initRestartRules = (pod: PodUnderCheck, c: Json) => hasRestartRules(c) ? restartRulesProblems(pod, c, true) : undefined;
const containerRestartRules = (pod: PodUnderCheck, c: Json) => hasRestartRules(c) ? restartRulesProblems(pod, c, false) : undefined;

function stopSignalProblem(pod: PodUnderCheck, c: Json): string | undefined {
  if (c.lifecycle?.stopSignal === undefined) return undefined;
  return `${pod.where}: container '${c.name}' sets lifecycle.stopSignal ${JSON.stringify(c.lifecycle.stopSignal)}, which Kubernetes ` +
    `1.${pod.minor} ${pod.minor >= 33 ? 'drops with its default feature gates (ContainerStopSignals is alpha and off through 1.37)' : 'does not have (the field is new in 1.33, alpha)'}, ` +
    'so the container would be stopped with its image\'s STOPSIGNAL instead' +
    `${pod.spec.os?.name === undefined ? '; where the gate is on, it also needs spec.os.name ("may not be set for containers with empty `spec.os.name`")' : ''}. ` +
    'Set the signal in the image (STOPSIGNAL), or remove lifecycle.stopSignal.';
}

function initResizeRestartContainer(pod: PodUnderCheck, c: Json): string | undefined {
  if (c.restartPolicy === 'Always' || !Array.isArray(c.resizePolicy)) return undefined;
  let restarts = false;
  for (const p of c.resizePolicy as Json[]) if (p?.restartPolicy === 'RestartContainer') restarts = true;
  if (!restarts) return undefined;
  return `${pod.where}: init container '${c.name}' has a resizePolicy with restartPolicy 'RestartContainer', which Kubernetes 1.${pod.minor} ` +
    'refuses on an init container that is not a native sidecar ("must not be set to \'RestartContainer\' for non-sidecar initContainers"; ' +
    'such a container is never resized). Use \'NotRequired\' or remove the resizePolicy.';
}

function droppedProjections(pod: PodUnderCheck, v: Json): string[] | undefined {
  let out: string[] | undefined;
  for (const src of (v.projected?.sources ?? []) as Json[]) {
    for (const what of ['podCertificate', 'clusterTrustBundle'] as const) {
      const allowed = what === 'podCertificate' ? pod.caps.podCertificateProjection : pod.caps.clusterTrustBundleProjection;
      if (src?.[what] === undefined || allowed) continue;
      (out ??= []).push(`${pod.where}: volume '${v.name}' projects a ${what} source, which Kubernetes 1.${pod.minor} drops with its default ` +
        `feature gates (on by default from 1.37), so the files it should hold are missing. Target 1.37+, or use a Secret${what === 'clusterTrustBundle' ? ' or ConfigMap' : ''}.`);
    }
  }
  return out;
}

function sleepWithoutAction(pod: PodUnderCheck, c: Json): string[] | undefined {
  let out: string[] | undefined;
  for (const { hook } of sleepHooks(c)) {
    (out ??= []).push(`${pod.where}: container '${c.name}' uses the ${hook} sleep action, which Kubernetes 1.${pod.minor} ` +
      'does not have (beta from 1.30). Use an exec hook or target 1.30+.');
  }
  return out;
}

function zeroSleeps(pod: PodUnderCheck, c: Json): string[] | undefined {
  let out: string[] | undefined;
  for (const { hook, seconds } of sleepHooks(c)) {
    if (seconds !== 0) continue;
    (out ??= []).push(`${pod.where}: container '${c.name}' has a ${hook} sleep of 0 seconds, which Kubernetes 1.${pod.minor} ` +
      'rejects (allowed from 1.33). Sleep at least 1 second or drop the hook.');
  }
  return out;
}

function sleepsBeyondGrace(pod: PodUnderCheck, c: Json): string[] | undefined {
  if (pod.graceCheckedContainers.includes(c.name)) return undefined;
  let out: string[] | undefined;
  for (const { hook, seconds } of sleepHooks(c)) {
    if (typeof seconds !== 'number' || seconds <= pod.graceSeconds) continue;
    (out ??= []).push(`${pod.where}: container '${c.name}' has a ${hook} sleep of ${seconds} seconds, longer than the pod's ` +
      `terminationGracePeriodSeconds (${pod.graceSeconds}), which the API server rejects. Shorten the sleep or raise terminationGracePeriodSeconds.`);
  }
  return out;
}

function hostPortConflicts(pod: PodUnderCheck): string[] {
  const errors: string[] = [];
  // Regular containers run together: one host port for all of them.
  const owners = new Map<string, string>();
  for (const c of pod.containers) {
    for (const p of Array.isArray(c.ports) ? c.ports : []) {
      if (!p.hostPort) continue;
      const key = hostPortKey(p);
      const first = owners.get(key);
      if (first !== undefined) {
        errors.push(`${pod.where}: hostPort ${key} is used by both '${first}' and '${c.name}', which the API server rejects (one host port per pod); ` +
          `give '${c.name}' another hostPort, or drop hostPort (the pod IP and Services reach containerPort without it).`);
      } else {
        owners.set(key, c.name);
      }
    }
  }
  // Init containers run one by one (the API server checks each alone, even native sidecars).
  for (const c of pod.init) {
    const keys = new Map<string, number>();
    for (const p of (c.ports ?? []) as Json[]) if (p.hostPort) keys.set(hostPortKey(p), (keys.get(hostPortKey(p)) ?? 0) + 1);
    for (const [key, n] of keys) {
      if (n > 1) errors.push(`${pod.where}: init container '${c.name}' declares hostPort ${key} ${n} times, which the API server rejects; declare it once.`);
    }
  }
  return errors;
}

/** validation.go (v1.37.2) validateInitContainerRestartPolicy / validateContainerRestartPolicy, for one container with rules. */
function restartRulesProblems(pod: PodUnderCheck, c: Json, init: boolean): string[] {
  const at = `${pod.where}: ${init ? 'init ' : ''}container '${c.name}'`;
  if (!pod.caps.containerRestartRules) {
    return [`${at} sets restartPolicyRules, which Kubernetes 1.${pod.minor} ${pod.minor === 34
      ? 'drops (ContainerRestartRules is alpha and off in 1.34)' : 'does not have (the field is new in 1.34)'}; ` +
      'the container would then restart by the pod\'s restartPolicy alone. Remove restartPolicyRules or target 1.35+ (on by default).'];
  }
  const out: string[] = [];
  if (c.restartPolicy === undefined) out.push(`${at}: restartPolicyRules need a container restartPolicy ("must specify restartPolicy when restart rules are used").`);
  const rules: Json[] = c.restartPolicyRules;
  const allAction = rules.some(r => r?.action === 'RestartAllContainers');
  if (init && c.restartPolicy === 'Always' && !pod.caps.restartAllContainers) {
    out.push(`${at} is a native sidecar with restartPolicyRules, which Kubernetes 1.${pod.minor} refuses ("restartPolicyRules are not allowed ` +
      'for init containers with restart policy Always"; allowed from 1.36 for the RestartAllContainers action). Remove them or target 1.36+.');
    return out;
  }
  const allowed = pod.caps.restartAllContainers ? ['Restart', 'RestartAllContainers'] : ['Restart'];
  if (rules.length > 20) out.push(`${at}: restartPolicyRules has ${rules.length} rules; at most 20 are allowed.`);
  rules.forEach((r, i) => {
    if (!allowed.includes(r?.action)) {
      out.push(`${at}: restartPolicyRules[${i}].action ${JSON.stringify(r?.action)} is not supported by Kubernetes 1.${pod.minor}: ` +
        `supported values: ${allowed.map(a => `"${a}"`).join(', ')}${allAction && !pod.caps.restartAllContainers ? ' (RestartAllContainers from 1.36)' : ''}.`);
    }
    const codes = r?.exitCodes;
    if (codes === undefined || codes === null) {
      out.push(`${at}: restartPolicyRules[${i}].exitCodes must be specified.`);
    } else {
      if (codes.operator !== 'In' && codes.operator !== 'NotIn') {
        out.push(`${at}: restartPolicyRules[${i}].exitCodes.operator ${JSON.stringify(codes.operator)}: supported values: "In", "NotIn".`);
      }
      if (Array.isArray(codes.values) && codes.values.length > 255) out.push(`${at}: restartPolicyRules[${i}].exitCodes.values has ${codes.values.length} values; at most 255.`);
    }
  });
  return out;
}

/** validation.go (v1.37.2) validatePodResources / validatePodResourceConsistency, for cpu and memory. */
function podLevelResourceProblems(pod: PodUnderCheck): string[] {
  const r = pod.spec.resources;
  if (r === undefined || r === null) return [];
  if (!pod.caps.podLevelResources) {
    return [`${pod.where}: sets pod-level spec.resources, which Kubernetes 1.${pod.minor} ${pod.minor >= 32
      ? 'drops (PodLevelResources is alpha and off in 1.32-1.33)' : 'does not have (the field is new in 1.32)'}, so the pod would have no ` +
      'pod-level budget. Give each container its resources, or target 1.34+ (on by default).'];
  }
  const aggregate = timeline().podRequests(pod.spec).effective;
  const out: string[] = [];
  const sidecars = pod.init.filter(c => c.restartPolicy === 'Always').map(c => `'${c.name}'`);
  const who = `the app containers${sidecars.length > 0 ? ` and the native sidecars ${sidecars.join(', ')}` : ''}`;
  for (const [res, have, show] of [
    ['cpu', aggregate.cpuMillis / 1000, `${aggregate.cpuMillis}m`],
    ['memory', aggregate.memoryBytes, `${Math.ceil(aggregate.memoryBytes / 2 ** 20)}Mi`],
  ] as Array<[string, number, string]>) {
    // a pod-level limit without a request must cover the aggregate too: the Pod's request defaults to it
    const field = r.requests?.[res] !== undefined ? 'requests' : r.limits?.[res] !== undefined ? 'limits' : undefined;
    if (field === undefined) continue;
    const budget = parseQuantity(r[field][res]);
    if (budget === undefined || have <= budget + 1e-9) continue;
    // limits only: validation of the template has no pod request to compare; the Pod's defaulting
    // (v1.37.2 pkg/apis/core/v1/defaults.go SetDefaults_Pod/defaultPodRequests, Pods only, not
    // templates) makes the request the containers' aggregate, which the limit then refuses
    // (validation.go validateResourceRequirements: "must be less than or equal to cpu limit of 450m")
    const quote = field === 'requests'
      ? `the API server: "must be greater than or equal to aggregate container requests of ${show}"`
      : `the pod's request defaults to that aggregate, and the API server: "must be less than or equal to ${res} limit of ${r.limits[res]}"; ` +
        (pod.kind === 'Pod' ? 'the Pod is refused' : `the ${pod.kind ?? 'workload'} is accepted but its Pods are refused (FailedCreate)`);
    out.push(`${pod.where}: pod-level spec.resources.${field}.${res} ${r[field][res]} is below the ${show} that ${who} request together ` +
      `(${quote}). Raise spec.resources.${field}.${res} ` +
      'to at least that, or give the sidecars smaller requests (their resources prop).');
  }
  for (const c of pod.containers) {
    for (const [res, q] of Object.entries((c.resources?.limits ?? {}) as Record<string, unknown>)) {
      const podLimit = r.limits?.[res];
      if (podLimit === undefined) continue;
      const a = parseQuantity(q);
      const b = parseQuantity(podLimit);
      if (a !== undefined && b !== undefined && a > b + 1e-9) {
        out.push(`${pod.where}: container '${c.name}' limits ${res} to ${q}, above the pod-level limit ${podLimit} ("must be less than or equal to pod limits"). ` +
          `Lower the container's limit or raise spec.resources.limits.${res}.`);
      }
    }
  }
  return out;
}

/** The API's shape of `restartPolicyRules`: a list of objects, `exitCodes` an object, its `values` a list of integers. */
function restartRulesShaped(rules: unknown): boolean {
  const isObject = (x: unknown): x is Json => x !== null && typeof x === 'object' && !Array.isArray(x);
  return Array.isArray(rules) && rules.every(r => isObject(r) && (r.exitCodes === undefined || (isObject(r.exitCodes) &&
    (r.exitCodes.values === undefined || (Array.isArray(r.exitCodes.values) && r.exitCodes.values.every((v: unknown) => Number.isInteger(v)))))));
}

/**
 * The shape of a pod spec as the checks read it: each list that is given is an array of objects
 * (no `null`, no hole), every container has a string name and
 * `restartPolicyRules` of the API's shape. Anything else is reported here, so
 * that no check reads a field of `null` (a raw TypeError without the workload's name).
 */
export function podSpecShapeErrors(where: string, spec: Json): string[] {
  if (spec === null || typeof spec !== 'object' || Array.isArray(spec)) return [`${where}: the pod spec is not an object; give spec.template.spec as an object.`];
  const errors: string[] = [];
  for (const list of ['containers', 'initContainers', 'ephemeralContainers', 'volumes']) {
    const value = spec[list];
    if (value === undefined) continue;
    if (!Array.isArray(value)) {
      errors.push(`${where}: spec.${list} is not a list (got ${typeof value}); give a list of objects.`);
      continue;
    }
    for (let i = 0; i < value.length; i++) {
      const entry = value[i];
      if (entry === null || entry === undefined || typeof entry !== 'object' || Array.isArray(entry)) {
        errors.push(`${where}: spec.${list}[${i}] is ${i in value ? JSON.stringify(entry) ?? String(entry) : 'a hole (an empty slot)'}, not an object; remove it or give the ${list === 'volumes' ? 'volume' : 'container'}.`);
      } else if (typeof entry.name !== 'string') {
        errors.push(`${where}: spec.${list}[${i}] has no name (got ${JSON.stringify(entry.name) ?? 'none'}); give it a name.`);
      } else if (list !== 'volumes' && entry.restartPolicyRules !== undefined && !restartRulesShaped(entry.restartPolicyRules)) {
        errors.push(`${where}: spec.${list}[${i}] ('${entry.name}') has restartPolicyRules ${JSON.stringify(entry.restartPolicyRules)}, which is not a ` +
          'list of rules; give a list like [{ action: \'Restart\', exitCodes: { operator: \'In\', values: [42] } }] (values: whole numbers), or remove it.');
      }
      // every other field in the JSON type the API server decodes (src/engine/container-shape.ts)
      if (list !== 'volumes' && entry !== null && typeof entry === 'object' && !Array.isArray(entry) && typeof entry.name === 'string') {
        errors.push(...containerShapeErrors(where, list, i, entry));
      }
    }
  }
  return errors;
}

/**
 * Checks a final pod spec. Returns one message per violation; `where` names the workload.
 */
export function checkPodSpec(spec: Json, target: RuleTarget, where: string, context: PodSpecContext = {}): string[] {
  const shape = podSpecShapeErrors(where, spec);
  if (shape.length > 0) return shape;
  // (checkPodSpecByRule's messages without an object per message: the engine checks every render)
  const pod = podUnderCheck(spec, target, where, context);
  const out: string[] = [];
  for (const rule of POD_SPEC_RULES) {
    for (const message of rule.check(pod)) out.push(message);
  }
  return out;
}

/** `POD_SPEC_SHAPE_RULE`: the `rule` of a pod spec that is not the shape the rules read (podSpecShapeErrors). */
export const POD_SPEC_SHAPE_RULE = 'the pod spec is an object of lists of named objects';

/**
 * `checkPodSpec`, each message with the `name` of the rule (a row of `POD_SPEC_RULES`, or
 * `POD_SPEC_SHAPE_RULE`) that found it: what `cdk8s-sidecars check` gives each finding its rule id by.
 */
export function checkPodSpecByRule(
  spec: Json, target: RuleTarget, where: string, context: PodSpecContext = {},
): Array<{ rule: string; message: string }> {
  const shape = podSpecShapeErrors(where, spec);
  if (shape.length > 0) return shape.map(message => ({ rule: POD_SPEC_SHAPE_RULE, message }));
  const pod = podUnderCheck(spec, target, where, context);
  const out: Array<{ rule: string; message: string }> = [];
  for (const rule of POD_SPEC_RULES) {
    for (const message of rule.check(pod)) out.push({ rule: rule.name, message });
  }
  return out;
}

/** The pod spec (of the shape `podSpecShapeErrors` accepts) as the rules see it. */
function podUnderCheck(spec: Json, target: RuleTarget, where: string, context: PodSpecContext): PodUnderCheck {
  const init: Json[] = spec.initContainers ?? [];
  const containers: Json[] = spec.containers ?? [];
  return {
    where,
    kind: context.kind,
    minor: target.minor,
    caps: capabilities(target.minor, target.gate),
    init,
    containers,
    all: [...init, ...containers],
    volumes: spec.volumes ?? [],
    controllerVolumes: context.controllerVolumes ?? [],
    graceCheckedContainers: context.graceCheckedContainers ?? [],
    namesReported: context.namesReported ?? [],
    graceSeconds: spec.terminationGracePeriodSeconds ?? KUBERNETES_DEFAULT_GRACE_SECONDS,
    spec,
  };
}

/**
 * The exit codes a native sidecar has when the pod is torn down: 143 (128 + SIGTERM, the usual
 * graceful stop) and 137 (128 + SIGKILL, at the end of the grace period).
 */
export const SIDECAR_TEARDOWN_EXIT_CODES: readonly number[] = [137, 143];

/** What `checkJobPodFailurePolicy` found: errors (the Job fails for nothing) and warnings. */
export interface JobRuleFindings {
  readonly errors: string[];
  readonly warnings: string[];
}

/**
 * A Job's (or a CronJob's job template's) `podFailurePolicy` rules with `onExitCodes` and no
 * `containerName`, on a pod with native sidecars.
 *
 * Source: kubernetes/kubernetes `pkg/controller/job/pod_failure_policy.go` (read at commit
 * 2b02db1be88b): `matchOnExitCodes` looks at `ContainerStatuses`, then at
 * `InitContainerStatuses`; `getMatchingContainerFromList` takes every terminated container with a
 * non-zero exit code when `requirement.ContainerName == nil`, native sidecars included; and
 * `isOnExitCodesOperatorMatching` is `In` (the code is one of the values) or `NotIn` (it is none
 * of them). When the app fails, the sidecars are stopped with SIGTERM (143) or SIGKILL (137), and
 * such a rule then matches the sidecar's code: an error when the operator and values match 137 or
 * 143 (the rule's action is taken for the teardown, not for the app's failure), a warning otherwise
 * (a sidecar that crashes with one of the rule's codes is taken as the app's failure).
 */
export function checkJobPodFailurePolicy(manifest: Json, where: string): JobRuleFindings {
  const none = { errors: [], warnings: [] };
  if (manifest === null || typeof manifest !== 'object') return none;
  const job = jobSpecIn(manifest);
  const field = `${job?.path}.podFailurePolicy`;
  const rules = job?.spec.podFailurePolicy?.rules;
  if (!Array.isArray(rules)) return none;
  const podSpec = podTemplateIn(manifest)?.spec;
  const init = podSpec?.initContainers;
  const natives: string[] = Array.isArray(init) ? init.filter((c: Json) => c && c.restartPolicy === 'Always').map((c: Json) => String(c.name)) : [];
  if (natives.length === 0) return none;
  const containers = podSpec?.containers;
  const apps: string[] = Array.isArray(containers) ? containers.filter((c: Json) => c && typeof c.name === 'string').map((c: Json) => c.name) : [];
  const errors: string[] = [];
  const warnings: string[] = [];
  rules.forEach((rule: Json, i: number) => {
    const req = rule?.onExitCodes;
    if (!req || typeof req !== 'object' || (req.containerName !== undefined && req.containerName !== null)) return;
    const values: unknown[] = Array.isArray(req.values) ? req.values : [];
    const matching = SIDECAR_TEARDOWN_EXIT_CODES.filter(code =>
      req.operator === 'In' ? values.includes(code) : req.operator === 'NotIn' ? !values.includes(code) : false);
    const fix = `Set ${field}.rules[${i}].onExitCodes.containerName to the app container` +
      (apps.length > 0 ? ` (${apps.map(n => `'${n}'`).join(', ')}; one rule per container)` : '') +
      ', so that the sidecars\' exit codes are not matched.';
    const rule0 = `${where}: ${field}.rules[${i}] (action ${JSON.stringify(rule.action)}, onExitCodes ${JSON.stringify(req.operator)} ${JSON.stringify(values)}) ` +
      'has no containerName, so the Job controller matches it against every container of a failed pod, native sidecars ' +
      `${natives.map(n => `'${n}'`).join(', ')} included (pod_failure_policy.go getMatchingContainerFromList)`;
    if (matching.length > 0) {
      errors.push(`${rule0}; when the app fails, the sidecars are stopped and exit with ${matching.join(' or ')} ` +
        `(${matching.map(c => (c === 137 ? 'SIGKILL' : 'SIGTERM')).join(', ')}), which this rule matches: its action is taken for the teardown, ` +
        `not for the app's exit code. ${fix}`);
    } else {
      warnings.push(`${rule0}; a sidecar that crashes with one of these codes is taken as the app's failure. ${fix}`);
    }
  });
  return { errors, warnings };
}
