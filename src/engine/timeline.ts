/**
 * Layer 2: a pod's start and stop timeline, from the pod spec alone (plain JSON in, plain data
 * out; no cdk8s). `SidecarTimeline` (src/timeline.ts) is its public face.
 *
 * Written from the kubelet (kubernetes/kubernetes, v1.29.0 on, as SIDECARS.md §3 and §10 give it):
 * - Start (`pkg/kubelet/kuberuntime/kuberuntime_manager.go`, `computeInitContainerActions`): init
 *   containers one at a time, in order; a regular one must have completed, a restartable one
 *   (`restartPolicy: Always`, a native sidecar) must have *started* (its `postStart` returned and
 *   its `startupProbe` succeeded) before the next one starts; then `spec.containers`, in order,
 *   each one's `postStart` hook blocking the next (`startContainer` runs it before returning).
 *   A startup probe's worst case is `initialDelaySeconds + periodSeconds x failureThreshold`
 *   (defaults 0, 10, 3), after which the kubelet restarts the container.
 * - Stop (`kuberuntime_container.go` `killContainersWithSyncResult` / `killContainer`,
 *   `kuberuntime_termination_order.go`): every running container is killed at once, each in its
 *   own goroutine: `gp` = the pod's grace period; its `preStop` hook (at most `gp`), `gp -=` the
 *   whole seconds it took; from 1.29 a native sidecar then waits for its turn (every container of
 *   `spec.containers` and the next native sidecar in `initContainers` have exited; at most `gp`),
 *   `gp -=` the whole seconds waited; `gp = max(gp, 2)`; SIGTERM, and SIGKILL `gp` seconds later.
 *   The kubelet's reaction to a deletion, at the latest (`DELETION_REACTION_SECONDS`): the API
 *   server's graceful delete sets `deletionTimestamp`; the kubelet's pod config watch hands the
 *   update to the pod worker (`UpdatePod` marks it terminating), whose loop then waits, before
 *   `SyncTerminatingPod` (and so before the first `preStop` hook or SIGTERM), for a pod status in
 *   the PLEG's cache newer than the end of its previous sync (kubernetes v1.33.13
 *   `pkg/kubelet/pod_workers.go:1256`, v1.37.2 `:1288`, `podCache.GetNewerThan(uid, lastSyncTime)`;
 *   the cache's time moves on at each relist, `pkg/kubelet/pleg/generic.go:367` / `:325`
 *   `cache.UpdateTime`, every `genericPlegRelistPeriod` = 1 s, `pkg/kubelet/kubelet.go:207` /
 *   `:215`): 0 to 1 s. Every stop time above counts from that start of the termination.
 *   Between one container's exit and the SIGTERM of the native sidecar that waits for it there is
 *   no such wait: `waitForTurn` blocks on channels (`kuberuntime_termination_order.go:99-117`,
 *   `case <-c`), closed by `containerTerminated` (`:120`), which `killContainer` calls as soon as
 *   the runtime's `StopContainer` returned (v1.33.13 `kuberuntime_container.go:861` then `:871`,
 *   v1.37.2 `:915` then `:925`): the next SIGTERM follows the exit as fast as the container
 *   runtime reports it (containerd v1.6.20 answers `StopContainer` once it has deleted the task:
 *   `pkg/cri/server/events.go:387`, `cntr.Stop()` at `:413`, a delay that grows with the load).
 * - Completion (Job, CronJob, a Pod that completes): when every container of `spec.containers`
 *   has exited, the kubelet kills the native sidecars the same way (hooks, turn, SIGTERM), with the
 *   app already gone; a legacy sidecar never exits by itself, unless it runs under the library's
 *   exit-with-app wrapper (`exitWithAppReadSeconds`), which stops it after the app's exit.
 *   The kubelet's own latency, at the latest (measured on a real kubelet: docs/proof.md), one
 *   `KUBELET_SYNC_SECONDS` per pod sync, each of which waits for a container state newer than the
 *   previous sync, i.e. for the PLEG's next relist (`pkg/kubelet/pod_workers.go` `podWorkerLoop`,
 *   `podCache.GetNewerThan(..., lastSyncTime)`, whose TODO says it "adds ~1s of latency on all
 *   transitions from sync to terminating to terminated"; the relist runs every second,
 *   `genericPlegRelistPeriod`, `pkg/kubelet/kubelet.go`):
 *   1. the sync that sees the app's exit: with native sidecars running, `computePodActions` finds
 *      no container to keep and kills the pod (`changes.KillPod`, `kuberuntime_manager.go`): the
 *      native sidecars' stop starts here, up to 1 s after the app's exit;
 *   2. the sync that sees every container stopped: `getPhase` gives Succeeded only once no native
 *      sidecar runs (`kubelet_pods.go`), and `SyncPod` returns `isTerminal` (`kubelet.go`);
 *   3. `SyncTerminatingPod`, then 4. `SyncTerminatedPod`, each a phase transition of the pod
 *      worker (`completeWork`: requeued at once, run at the next relist); the status manager
 *      sends the terminal phase only once the pod worker has no running container left
 *      (`mergePodStatus`, `couldHaveRunningContainers`, `pkg/kubelet/status/status_manager.go`).
 *   Without a native sidecar, sync 1 is sync 2. The Job controller then takes a pod's update
 *   into its Job at most `SyncJobBatchPeriod` (1 s) later (`pkg/controller/job/job_controller.go`):
 *   `JOB_SYNC_SECONDS` from the pod's Succeeded to the Job's Complete.
 * - Resources (`pkg/api/v1/resource/helpers.go` `PodRequests`, with native sidecars): the pod's
 *   request is the larger of the init phase's peak, max over init containers i of (the native
 *   sidecars declared before i + i), and the steady state, the native sidecars + `spec.containers`.
 *   A container without a request has its limit as request (API defaulting), else none.
 */
import { EngineTarget } from './spec';
import { COMPLETING_KINDS, SUPPORTED_KINDS, podTemplateIn } from '../facts/kinds';
import { KUBERNETES_DEFAULT_GRACE_SECONDS } from '../facts/pod-defaults';
import { parseQuantity } from '../facts/quantity';
import { SidecarError } from '../private/errors';
import { Json } from '../private/json';
import { TargetCapabilities, capabilities } from '../target/capabilities';

/** What the timeline needs besides the manifest. */
export interface TimelineInput {
  readonly target: EngineTarget;
  /** Containers of `spec.containers` that are sidecars (the legacy layout), by name. */
  readonly legacySidecars: readonly string[];
  /**
   * Seconds from SIGTERM to exit, by container name. A container of `spec.containers` that is not
   * a sidecar and is not named: `appShutdownSeconds`. Any other: it runs until it is killed.
   */
  readonly stopSeconds: Readonly<Record<string, number>>;
  /** The app containers' time from SIGTERM to exit. */
  readonly appShutdownSeconds: number;
  /** How long a `preStop` hook takes whose duration cannot be read from it, by container name. */
  readonly hookSeconds?: Readonly<Record<string, number>>;
  /** Init containers known to complete at once (the library's `sidecar-tools`: a `cp`), by name. */
  readonly quickInit?: readonly string[];
}

export type TimelineRole = 'app' | 'init' | 'native sidecar' | 'legacy sidecar';

export interface StartStep {
  readonly name: string;
  readonly role: TimelineRole;
  /** When it starts, at the latest (seconds from the pod's start). */
  readonly startSeconds: number;
  /** When the next one may start, at the latest. */
  readonly startedSeconds: number;
  /** Why, for the table. */
  readonly how: string;
}

export interface StopStep {
  readonly name: string;
  readonly role: TimelineRole;
  /** Its `preStop` hook: start and end (seconds from the pod's termination); undefined without one. */
  readonly hookStartSeconds?: number;
  readonly hookEndSeconds?: number;
  /** A native sidecar from 1.29: when every container it waits for has exited. */
  readonly turnSeconds?: number;
  readonly sigtermSeconds: number;
  /** When the kubelet kills it if it is still running. */
  readonly sigkillSeconds: number;
  readonly exitSeconds: number;
  /** It is killed before it exits by itself (or its stop time is unknown). */
  readonly killed: boolean;
  /** The grace period ran out before its turn. */
  readonly early: boolean;
}

export interface RequestPair {
  readonly cpuMillis: number;
  readonly memoryBytes: number;
}

export interface PodRequests {
  readonly initPeak: RequestPair;
  readonly steady: RequestPair;
  /** What the scheduler reserves: the larger of the two, per resource. */
  readonly effective: RequestPair;
}

export interface Timeline {
  readonly workload: string;
  readonly ordered: boolean;
  readonly completes: boolean;
  readonly start: StartStep[];
  /** When the first app container starts, at the latest. */
  readonly appStartSeconds: number;
  readonly stop: StopStep[];
  readonly graceSeconds: number;
  /** `terminationGracePeriodSeconds` is in the manifest (else Kubernetes' 30 s). */
  readonly graceSet: boolean;
  /**
   * Seconds from the API delete until the kubelet starts the pod's termination (every `stop` time
   * counts from there), at the latest; 0 at the earliest.
   */
  readonly deletionReactionSeconds: number;
  /** When the last app container has exited (seconds from the pod's termination). */
  readonly appExitSeconds: number;
  /** When the last container has exited. */
  readonly endSeconds: number;
  /** The latest SIGTERM of a sidecar minus the app's exit (0 without sidecars). */
  readonly lastSidecarSigtermAfterAppSeconds: number;
  /**
   * A pod that completes: the native sidecars' stop once the app has completed (times from the
   * app's exit); empty when the pod does not complete.
   */
  readonly completion: StopStep[];
  /**
   * Seconds from the app's exit until the kubelet reports the pod Succeeded, at the latest (its
   * pod syncs included); undefined: it does not complete, or never (a legacy sidecar).
   */
  readonly completionSeconds?: number;
  /** A Job's or CronJob's: seconds from the app's exit until the Job is Complete, at the latest. */
  readonly jobCompleteSeconds?: number;
  readonly requests: PodRequests;
  /** What the timeline could not read and assumed (hooks, init containers' run time, stop times). */
  readonly assumptions: string[];
  /**
   * The containers whose exit restarts the whole pod in place (a `restartPolicyRules` entry with
   * the `RestartAllContainers` action, kept from 1.36), one line each: who, on which exit codes,
   * and what the kubelet does then.
   */
  readonly podRestarts: string[];
}

const MINIMUM_GRACE = 2;
/** One pod sync of the kubelet: it waits for the PLEG's next relist (every 1 s), see above. */
export const KUBELET_SYNC_SECONDS = 1;
/**
 * From the API delete to the start of the pod's termination (its first `preStop` hook or SIGTERM),
 * at the latest: one wait of the pod worker for the PLEG's next relist, see above.
 */
export const DELETION_REACTION_SECONDS = KUBELET_SYNC_SECONDS;
/** The Job controller's batch period for pod updates (`SyncJobBatchPeriod`). */
export const JOB_SYNC_SECONDS = 1;

/**
 * Seconds a hook takes, read from it: the `sleep` action, or an exec made of `sleep N` commands
 * and bounded requests to localhost (the library's drain: they return at once), also inside
 * `sh -c`; undefined when it cannot be read (any other program, `httpGet`).
 */
export function hookDuration(hook: Json | undefined): number | undefined {
  if (hook === undefined || hook === null) return 0;
  if (hook.sleep !== undefined) {
    const n = Number(hook.sleep.seconds);
    return Number.isFinite(n) && n >= 0 ? n : undefined;
  }
  const command = hook.exec?.command;
  if (!Array.isArray(command) || command.length === 0) return undefined;
  const words = command.map(String);
  const shell = shellOf(words);
  // (a single-quoted inner script, e.g. the watchAppExit wait, is one word of its command; the
  // values are the script's arguments, read in place of "$1", "$2"... after the split)
  const parts = shell
    ? shell.script.replace(/( sh -c )'[^']*'/g, "$1''").split(/;|&&|\n/).map(x => shell.withArgs(x.trim())).filter(x => x !== '')
    : [words.join(' ')];
  let total = 0;
  for (const part of parts) {
    const sleep = /^(?:\S*\/)?(?:busybox )?sleep (\d+(?:\.\d+)?)$/.exec(part);
    // the watchAppExit wait: at most its bound
    const bounded = /^\S*busybox timeout (\d+) \S*busybox sh -c '' \|\| true$/.exec(part);
    if (sleep || bounded) {
      total += Number((sleep ?? bounded)![1]);
    } else if (!/^\S*busybox wget -q -T \d+ .*'?http:\/\/127\.0\.0\.1:\d+\//.test(part)) {
      return undefined;
    }
  }
  return total;
}

/**
 * A `sh -c SCRIPT [NAME ARG...]` command (busybox's `sh` or a `sh`): the script, and a function
 * that reads a part of it with each `"$N"` replaced by its argument (the library passes every
 * value as an argument, never in the script: src/engine/shutdown.ts `shell`).
 */
function shellOf(words: string[]): { script: string; withArgs: (part: string) => string } | undefined {
  if (!/(^|\/)(busybox|sh)$/.test(words[0] ?? '')) return undefined;
  const c = words[1] === '-c' ? 1 : words[1] === 'sh' && words[2] === '-c' ? 2 : -1;
  if (c < 0 || words.length < c + 2) return undefined;
  const args = words.slice(c + 3);
  return {
    script: words[c + 1],
    withArgs: part => part.replace(/"\$([1-9])"/g, (whole, n) => args[Number(n) - 1] ?? whole),
  };
}

/** The legacy hold's worst case: `N` tries of a 1 s request and a 1 s sleep between them. */
function holdSeconds(postStart: Json | undefined): number | undefined {
  if (postStart === undefined || postStart === null) return 0;
  const shell = shellOf((postStart.exec?.command ?? []).map(String));
  const script: string = shell ? shell.withArgs(shell.script) : '';
  const tries = holdTries(script);
  return tries === undefined ? undefined : 2 * tries - 1;
}

/**
 * The N of the legacy hold's script `i=0; until ... wget -q -T 1 ...if [ $i -ge N ]; then exit 0;
 * fi; ... sleep 1; done` (the last such N, as a greedy pattern would take it), in linear time: a
 * regular expression with three `.*` took minutes on a 90 KB hook.
 */
export function holdTries(script: string): number | undefined {
  const HEAD = 'i=0; until ';
  const WGET = ' wget -q -T 1 ';
  const IF = 'if [ $i -ge ';
  const FI = ' ]; then exit 0; fi; ';
  const TAIL = ' sleep 1; done';
  if (!script.startsWith(HEAD) || !script.endsWith(TAIL) || /[\n\r\u2028\u2029]/.test(script)) return undefined;
  const wget = script.indexOf(WGET, HEAD.length);
  if (wget < 0) return undefined;
  const limit = script.length - TAIL.length; // the `fi; ` must end at or before the tail starts (`.*` may be empty)
  let found: number | undefined;
  for (let at = script.indexOf(IF, wget + WGET.length); at >= 0; at = script.indexOf(IF, at + 1)) {
    let end = at + IF.length;
    while (end < script.length && script.charCodeAt(end) >= 48 && script.charCodeAt(end) <= 57) end++;
    if (end === at + IF.length || !script.startsWith(FI, end) || end + FI.length > limit) continue;
    found = Number(script.slice(at + IF.length, end));
  }
  return found;
}

function probeWorst(probe: Json | undefined): number {
  if (!probe) return 0;
  return (probe.initialDelaySeconds ?? 0) + (probe.periodSeconds ?? 10) * (probe.failureThreshold ?? 3);
}

function requestOf(c: Json): RequestPair {
  const get = (r: string): number => parseQuantity(c.resources?.requests?.[r] ?? c.resources?.limits?.[r]) ?? 0;
  return { cpuMillis: Math.round(get('cpu') * 1000), memoryBytes: Math.round(get('memory')) };
}

const add = (a: RequestPair, b: RequestPair): RequestPair => ({ cpuMillis: a.cpuMillis + b.cpuMillis, memoryBytes: a.memoryBytes + b.memoryBytes });
const max = (a: RequestPair, b: RequestPair): RequestPair => ({
  cpuMillis: Math.max(a.cpuMillis, b.cpuMillis), memoryBytes: Math.max(a.memoryBytes, b.memoryBytes),
});
const ZERO: RequestPair = { cpuMillis: 0, memoryBytes: 0 };

export function podRequests(spec: Json): PodRequests {
  const init: Json[] = spec.initContainers ?? [];
  let sidecars = ZERO;
  let initPeak = ZERO;
  for (const c of init) {
    initPeak = max(initPeak, add(sidecars, requestOf(c)));
    if (c.restartPolicy === 'Always') sidecars = add(sidecars, requestOf(c));
  }
  const steady = (spec.containers ?? []).reduce((acc: RequestPair, c: Json) => add(acc, requestOf(c)), sidecars);
  return { initPeak, steady, effective: max(initPeak, steady) };
}

interface Killing {
  readonly c: Json;
  readonly role: TimelineRole;
  readonly stop: number | undefined;
}

/** One container's stop in the kubelet's `killContainer`, with `prereqs` when its turn comes (ordered natives). */
function kill(k: Killing, grace: number, hook: number | undefined, prereqs: number | undefined): StopStep {
  let gp = grace;
  let t = 0;
  let hookStart: number | undefined;
  let hookEnd: number | undefined;
  if (k.c.lifecycle?.preStop && gp > 0) {
    const took = Math.min(hook ?? 0, gp);
    hookStart = 0;
    t = took;
    hookEnd = t;
    gp -= Math.floor(took);
  }
  let early = false;
  if (prereqs !== undefined) {
    if (gp > 0) {
      const wait = Math.max(0, prereqs - t);
      const waited = Math.min(wait, gp);
      early = waited < wait;
      t += waited;
      gp -= Math.floor(waited);
    } else {
      early = prereqs > t;
    }
  }
  gp = Math.max(gp, MINIMUM_GRACE);
  const sigkill = t + gp;
  const wanted = k.stop === undefined ? Infinity : t + k.stop;
  return {
    name: k.c.name,
    role: k.role,
    ...(hookStart !== undefined ? { hookStartSeconds: hookStart, hookEndSeconds: hookEnd } : {}),
    ...(prereqs !== undefined ? { turnSeconds: prereqs } : {}),
    sigtermSeconds: t,
    sigkillSeconds: sigkill,
    exitSeconds: Math.min(wanted, sigkill),
    killed: wanted > sigkill,
    early,
  };
}

/** The stop of `main` (spec.containers) and `natives`, from the kubelet's order. */
function stopOf(main: Killing[], natives: Killing[], grace: number, ordered: boolean, hooks: (c: Json) => number | undefined): StopStep[] {
  const out: StopStep[] = main.map(k => kill(k, grace, hooks(k.c), undefined));
  const mainDone = Math.max(0, ...out.map(s => s.exitSeconds));
  const nativeSteps: StopStep[] = [];
  let next: number | undefined;
  for (const k of [...natives].reverse()) {
    const step = kill(k, grace, hooks(k.c), ordered ? Math.max(mainDone, next ?? 0) : undefined);
    nativeSteps.unshift(step);
    next = step.exitSeconds;
  }
  return [...out, ...nativeSteps];
}

/**
 * The read delay of a legacy sidecar run under the library's exit-with-app wrapper (its container's
 * command is `busybox sh -c SCRIPT sh ARGV...`, src/engine/shutdown.ts `exitWithAppScript`: it stops
 * its agent at its first look after the app's exit, once a second, after `busybox sleep N & wait`),
 * or undefined when the container is not wrapped. For a completion the kubelet sends no SIGKILL (it
 * kills nothing of a pod whose app has completed); the wrapper's own SIGKILL comes at the agent's stop
 * time after its SIGTERM, which is the entry's exit: its `sigkillSeconds` is its exit.
 */
export function exitWithAppReadSeconds(c: Json): number | undefined {
  const w: unknown[] = Array.isArray(c.command) ? c.command : [];
  if (w.length < 6 || !/(^|\/)busybox$/.test(String(w[0])) || w[1] !== 'sh' || w[2] !== '-c' || w[4] !== 'sh') return undefined;
  const script = String(w[3]);
  if (!/^P=\S+; own=.*; t=0; (?:k=; )?"\$@" & c=\$!; trap '(?:\[ \$t = 2 \] \|\| )?t=1; kill -TERM \$c 2>\/dev\/null' TERM INT; .*; \[ \$t = 2 \] && exit 0; (?:\[ \$t = 1 \] && exit 143; )?exit \$s$/.test(script)) return undefined;
  // (the wait for an agent that has not started yet, `i=0; while ... done; `, counts 0 s: a started agent answers at once)
  const read = /if \[ \$alive = 0 \]; then (?:i=0; while .*? done; )?(?:\S*busybox sleep (\d+) & wait \$!; )?\[ \$t = 0 \]/.exec(script);
  return read ? Number(read[1] ?? 0) : undefined;
}

function shifted(step: StopStep, by: number): StopStep {
  if (by === 0) return step;
  const at = (n: number | undefined) => (n === undefined ? undefined : n + by);
  return {
    ...step,
    ...(step.hookStartSeconds !== undefined ? { hookStartSeconds: at(step.hookStartSeconds), hookEndSeconds: at(step.hookEndSeconds) } : {}),
    ...(step.turnSeconds !== undefined ? { turnSeconds: at(step.turnSeconds) } : {}),
    sigtermSeconds: step.sigtermSeconds + by,
    sigkillSeconds: step.sigkillSeconds + by,
    exitSeconds: step.exitSeconds + by,
  };
}

export function computeTimeline(manifest: Json, input: TimelineInput): Timeline {
  const spec = podTemplateIn(manifest)?.spec;
  if (!spec) {
    // unplaced: the caller (SidecarTimeline, the CLI) names the object
    throw new SidecarError({ problem: `kind ${manifest?.kind} has no pod template`, value: manifest?.kind, fix: `the timeline reads ${SUPPORTED_KINDS.join(', ')}` });
  }
  const caps = capabilities(input.target.minor, input.target.gate);
  const ordered = caps.orderedTermination;
  const assumptions: string[] = [];
  const legacy = new Set(input.legacySidecars);
  const pod: PodUnderTimeline = {
    containers: spec.containers ?? [],
    init: spec.initContainers ?? [],
    roleOf: (c: Json): TimelineRole => legacy.has(c.name) ? 'legacy sidecar' : 'app',
  };
  const started = startSteps(pod, input, assumptions);
  stopSignalAssumptions(pod, caps, input.target.minor, assumptions);
  const podRestarts = caps.restartAllContainers ? podRestartLines(pod) : [];

  // Stop
  const graceSet = typeof spec.terminationGracePeriodSeconds === 'number';
  const grace: number = graceSet ? spec.terminationGracePeriodSeconds : KUBERNETES_DEFAULT_GRACE_SECONDS;
  const hooks = preStopSeconds(input, assumptions);
  const stopOfContainer = (c: Json, role: TimelineRole): number | undefined => {
    const s = input.stopSeconds[c.name];
    if (s !== undefined) return s;
    if (role === 'app') return input.appShutdownSeconds;
    assumptions.push(`'${c.name}': its stop time is not known: it runs until it is killed`);
    return undefined;
  };
  const main: Killing[] = pod.containers.map(c => ({ c, role: pod.roleOf(c), stop: stopOfContainer(c, pod.roleOf(c)) }));
  const natives: Killing[] = pod.init.filter(c => c.restartPolicy === 'Always')
    .map(c => ({ c, role: 'native sidecar' as TimelineRole, stop: stopOfContainer(c, 'native sidecar') }));
  const stop = stopOf(main, natives, grace, ordered, hooks);
  const appSteps = stop.filter(s => s.role === 'app');
  const appExit = Math.max(0, ...appSteps.map(s => s.exitSeconds));
  const sidecarSteps = stop.filter(s => s.role !== 'app');
  const end = Math.max(0, ...stop.map(s => s.exitSeconds));

  const podCompletes = manifest.kind === 'Pod' && spec.restartPolicy !== undefined && spec.restartPolicy !== 'Always';
  const completes = COMPLETING_KINDS.has(manifest.kind) || podCompletes;
  const { completion, completionSeconds } = completes
    ? completionSteps(main, natives, grace, ordered, hooks) : { completion: [], completionSeconds: undefined };
  const jobCompleteSeconds = completionSeconds !== undefined && COMPLETING_KINDS.has(manifest.kind)
    ? completionSeconds + JOB_SYNC_SECONDS : undefined;

  return {
    workload: `${manifest.kind} '${manifest.metadata?.name ?? ''}'`,
    ordered,
    completes,
    start: started.start,
    appStartSeconds: started.appStart ?? started.end,
    stop,
    graceSeconds: grace,
    graceSet,
    deletionReactionSeconds: DELETION_REACTION_SECONDS,
    appExitSeconds: appExit,
    endSeconds: end,
    lastSidecarSigtermAfterAppSeconds: sidecarSteps.length === 0 ? 0 : Math.max(...sidecarSteps.map(s => s.sigtermSeconds)) - appExit,
    completion,
    ...(completionSeconds !== undefined ? { completionSeconds } : {}),
    ...(jobCompleteSeconds !== undefined ? { jobCompleteSeconds } : {}),
    requests: podRequests(spec),
    assumptions: [...new Set(assumptions)],
    podRestarts,
  };
}

/** The containers of the pod a timeline reads, and the role of each of `spec.containers`. */
interface PodUnderTimeline {
  readonly containers: Json[];
  readonly init: Json[];
  readonly roleOf: (c: Json) => TimelineRole;
}

/** The start: each init container in turn (a native one until its startup probe passes), then the containers (each postStart holds the next). */
function startSteps(pod: PodUnderTimeline, input: TimelineInput, assumptions: string[]): { start: StartStep[]; appStart?: number; end: number } {
  const start: StartStep[] = [];
  let t = 0;
  for (const c of pod.init) {
    const native = c.restartPolicy === 'Always';
    const post = holdSeconds(c.lifecycle?.postStart);
    if (post === undefined) assumptions.push(`'${c.name}': its postStart hook counts 0 s (its duration cannot be read)`);
    const took = native ? (post ?? 0) + probeWorst(c.startupProbe) : 0;
    const quick = (input.quickInit ?? []).includes(c.name);
    if (!native && !quick) assumptions.push(`init container '${c.name}': its run time counts 0 s`);
    const how = native
      ? (c.startupProbe ? `startupProbe worst case ${probeWorst(c.startupProbe)}s` : 'no startupProbe: started at once')
      : quick ? 'copies busybox (at once)' : 'runs to completion (time not known)';
    start.push({ name: c.name, role: native ? 'native sidecar' : 'init', startSeconds: t, startedSeconds: t + took, how });
    t += took;
  }
  let appStart: number | undefined;
  for (const c of pod.containers) {
    const post = holdSeconds(c.lifecycle?.postStart);
    if (post === undefined) assumptions.push(`'${c.name}': its postStart hook counts 0 s (its duration cannot be read)`);
    const role = pod.roleOf(c);
    if (role === 'app' && appStart === undefined) appStart = t;
    const how = post ? `postStart holds the next container up to ${post}s` : 'started at once';
    start.push({ name: c.name, role, startSeconds: t, startedSeconds: t + (post ?? 0), how });
    t += post ?? 0;
  }
  return { start, appStart, end: t };
}

/**
 * What the kubelet sends: SIGTERM, unless lifecycle.stopSignal is kept (ContainerStopSignals: alpha
 * and off through 1.37, so never with the default gates), then the image's STOPSIGNAL stands.
 */
function stopSignalAssumptions(pod: PodUnderTimeline, caps: TargetCapabilities, minor: number, assumptions: string[]): void {
  for (const c of [...pod.init, ...pod.containers].filter(x => x.lifecycle?.stopSignal !== undefined && !caps.stopSignal)) {
    assumptions.push(`'${c.name}': its lifecycle.stopSignal ${c.lifecycle.stopSignal} is dropped by Kubernetes 1.${minor} ` +
      '(ContainerStopSignals is alpha and off): it is stopped with SIGTERM (or its image\'s STOPSIGNAL) as shown');
  }
}

/**
 * RestartAllContainers (KEP-5532, 1.36+; kubernetes v1.37.2 pkg/kubelet/kuberuntime): the app
 * containers first, then the init containers, the triggering one last (kuberuntime_manager.go:
 * 1294-1303), each running one killed in turn with grace 0 (:1632-1646): no preStop
 * (kuberuntime_container.go:896), SIGTERM and the 2 s minimumGracePeriodInSeconds (:907-909)
 * before SIGKILL; then the pod starts again from its init containers.
 */
function podRestartLines(pod: PodUnderTimeline): string[] {
  const { init, containers } = pod;
  const rulesOf = (c: Json): Json[] => Array.isArray(c.restartPolicyRules) ? c.restartPolicyRules : [];
  const codesOf = (r: Json): unknown[] => Array.isArray(r.exitCodes?.values) ? r.exitCodes.values : [];
  return [...init, ...containers].flatMap(c => rulesOf(c)
    .filter(r => r?.action === 'RestartAllContainers')
    .map(r => ({ r, others: [...init.filter(x => x.restartPolicy === 'Always'), ...containers].filter(x => x !== c).length }))
    .map(({ r, others }) => `'${c.name}' exiting with ${r.exitCodes?.operator === 'NotIn' ? 'a code not in' : 'a code in'} [${codesOf(r).join(', ')}] ` +
      'restarts every container in place: no preStop; SIGTERM with the kubelet\'s 2 s minimum, one container after another, app containers first ' +
      `(up to ${2 * others}s for the ${others} running other${others === 1 ? '' : 's'}), then the init containers and the app start again`));
}

/** The seconds a container's preStop hook holds its SIGTERM (given, else read; unreadable: 0 s, said once). */
function preStopSeconds(input: TimelineInput, assumptions: string[]): (c: Json) => number | undefined {
  return (c: Json): number | undefined => {
    if (!c.lifecycle?.preStop) return undefined;
    const given = input.hookSeconds?.[c.name];
    if (given !== undefined) return given;
    const read = hookDuration(c.lifecycle.preStop);
    if (read === undefined) assumptions.push(`'${c.name}': its preStop hook counts 0 s (its duration cannot be read)`);
    return read ?? 0;
  };
}

/**
 * A completing pod's end: the legacy sidecars under the exit-with-app wrapper exit by themselves,
 * the native ones are stopped by the kubelet's next sync once every container has exited, and
 * Succeeded reaches the API server three syncs after the last exit.
 */
function completionSteps(main: Killing[], natives: Killing[], grace: number, ordered: boolean, hooks: (c: Json) => number | undefined):
{ completion: StopStep[]; completionSeconds?: number } {
  // a legacy sidecar exits by itself only under the library's exit-with-app wrapper
  const legacyMain = main.filter(k => k.role === 'legacy sidecar');
  const exiting = legacyMain.map(k => ({ k, read: exitWithAppReadSeconds(k.c) }));
  const neverExits = exiting.some(x => x.read === undefined || x.k.stop === undefined);
  const selfExits: StopStep[] = exiting.filter(x => x.read !== undefined && x.k.stop !== undefined).map(({ k, read }) => {
    // its look at the pod's processes comes at most 1 s after the app's exit, then the read delay
    const sigterm = 1 + read!;
    const exit = sigterm + k.stop!;
    return { name: k.c.name, role: k.role, sigtermSeconds: sigterm, sigkillSeconds: exit, exitSeconds: exit, killed: false, early: false };
  });
  // the native sidecars are stopped once every container of spec.containers has exited, by
  // the kubelet's next pod sync (1. above)
  const mainDone = Math.max(0, ...selfExits.map(x => x.exitSeconds));
  const killAt = natives.length > 0 ? mainDone + KUBELET_SYNC_SECONDS : mainDone;
  const completion = [...selfExits, ...stopOf([], natives, grace, ordered, hooks).map(x => shifted(x, killAt))];
  // then 2. to 4.: Succeeded reaches the API server three syncs after the last exit
  const completionSeconds = neverExits ? undefined : Math.max(killAt, ...completion.map(x => x.exitSeconds)) + 3 * KUBELET_SYNC_SECONDS;
  return { completion, ...(completionSeconds !== undefined ? { completionSeconds } : {}) };
}
