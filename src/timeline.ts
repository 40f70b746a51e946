import { ApiObject, Duration } from 'cdk8s';
import { IConstruct } from 'constructs';
import { WorkloadBinding, renderErrors, workloadApiObject } from './bind/binding';
import { withInjectedContainers } from './engine/injected';
import { TOOLS, appShutdownOf, userSidecarStopOf } from './engine/shutdown';
import { StopStep, Timeline, computeTimeline } from './engine/timeline';
import { APP_SHUTDOWN_ANNOTATION, STOP_TIMES_ANNOTATION } from './facts/annotations';
import { SUPPORTED_KINDS, podTemplateCopy, podTemplateOf } from './facts/kinds';
import { SidecarError, Where } from './private/errors';
import { Json } from './private/json';
import { capabilities } from './target/capabilities';
import { SidecarTargetOptions, assembleTarget } from './target/resolver';

/** One container in the pod's start order. */
export interface TimelineStartEntry {
  /** The container's name. */
  readonly name: string;
  /** `init`, `native sidecar`, `legacy sidecar` or `app`. */
  readonly role: string;
  /** When it starts, at the latest, in seconds from the pod's start. */
  readonly startSeconds: number;
  /**
   * When the next container may start, at the latest: a native sidecar once its startup probe
   * succeeded (worst case `initialDelaySeconds + periodSeconds x failureThreshold`), a container
   * of `spec.containers` once its `postStart` hook returned (the legacy hold).
   */
  readonly startedSeconds: number;
  /** Why, in words. */
  readonly how: string;
}

/** One container in the pod's termination, in seconds from the pod's termination (or, for a completion, from the app's exit). */
export interface TimelineStopEntry {
  /** The container's name. */
  readonly name: string;
  /** `native sidecar`, `legacy sidecar` or `app`. */
  readonly role: string;
  /**
   * When its `preStop` hook starts (the kubelet runs every container's hook at once).
   * @default - no preStop hook
   */
  readonly hookStartSeconds?: number;
  /**
   * When its `preStop` hook has returned.
   * @default - no preStop hook
   */
  readonly hookEndSeconds?: number;
  /**
   * A native sidecar from Kubernetes 1.29: when every container it waits for has exited.
   * @default - it waits for nobody
   */
  readonly turnSeconds?: number;
  /** When it gets SIGTERM. */
  readonly sigtermSeconds: number;
  /**
   * When the kubelet kills it (SIGKILL) if it is still running. In a completion, a legacy sidecar
   * that exits with the app (its wrapper stops it; the kubelet kills nothing): its exit.
   */
  readonly sigkillSeconds: number;
  /** When it has exited: SIGTERM plus its stop time, or its SIGKILL. */
  readonly exitSeconds: number;
  /** It is killed before it exits by itself (also when its stop time is not known). */
  readonly killed: boolean;
  /** The grace period ran out before its turn came. */
  readonly early: boolean;
}

/** The pod's resource request as the scheduler computes it (with native sidecars). */
export interface TimelineRequests {
  /** Init phase: max over init containers i of (the native sidecars declared before i + i), millicores. */
  readonly initPeakCpuMillis: number;
  /** Init phase peak, bytes. */
  readonly initPeakMemoryBytes: number;
  /** Steady state: the native sidecars + every container of `spec.containers`, millicores. */
  readonly steadyCpuMillis: number;
  /** Steady state, bytes. */
  readonly steadyMemoryBytes: number;
  /** What the scheduler reserves: the larger of the two, millicores. */
  readonly effectiveCpuMillis: number;
  /** What the scheduler reserves, bytes. */
  readonly effectiveMemoryBytes: number;
}

/** How to read a plain manifest (`SidecarTimeline.ofManifest`). */
export interface SidecarTimelineOptions extends SidecarTargetOptions {
  /**
   * How long the app containers take from SIGTERM to their exit. The library records the budget
   * it planned the grace period with in the pod template (annotation
   * `sidecars.cdk8s.io/app-shutdown-time`); a value given here wins over it.
   * @default - the budget the pod template's `sidecars.cdk8s.io/app-shutdown-time` records, else 10 s (the sidecar constructs' default `appShutdownTime`)
   */
  readonly appShutdownTime?: Duration;
  /**
   * How long each other container takes from SIGTERM to its exit, by name. The library records
   * its own sidecars' stop times in the pod template (annotation `sidecars.cdk8s.io/stop-times`);
   * a name given here wins over it. A sidecar in neither is taken to run until it is killed.
   * @default - the stop times the pod template's `sidecars.cdk8s.io/stop-times` records, none else
   */
  readonly stopTimes?: { [name: string]: Duration };
  /**
   * The containers of `spec.containers` that are sidecars (the legacy layout), by name, besides
   * those that the pod template's `sidecars.cdk8s.io/stop-times` names.
   * @default - the containers of `spec.containers` that `sidecars.cdk8s.io/stop-times` names; every other one is an app container
   */
  readonly legacySidecars?: string[];
}

const WHO = 'SidecarTimeline.ofManifest';

/**
 * A workload's start and stop timeline, computed from its pod spec in the kubelet's order for the
 * target release: the start order and the worst-case time until the app starts, each container's
 * `preStop` hook, SIGTERM and SIGKILL deadline, the grace arithmetic, a completing pod's time from
 * the app's exit to its completion, and the pod's effective resource request. See
 * docs/shutdown.md.
 *
 * @example
 * const logs = new WithLogAgent(chart, 'logs', { workload: deployment });
 * console.error(SidecarTimeline.of(deployment).toTable());
 */
export class SidecarTimeline {
  /**
   * The timeline of a workload the library attached sidecars to (a cdk8s-plus workload or an
   * ApiObject): its manifest as it will be synthesized, the sidecars' stop times and the
   * workload's `appShutdownTime`, for the sidecars' target. Throws the workload's errors.
   */
  public static of(workload: IConstruct): SidecarTimeline {
    const who = new Where(`SidecarTimeline.of('${workload.node.path}')`);
    const obj = workloadApiObject(who, workload);
    const binding = WorkloadBinding.existing(obj);
    if (!binding) {
      throw who.error('no sidecar of cdk8s-sidecars is attached to this workload', workload,
        'Attach one (WithLogAgent, WithEnvoy, WithTracer, ...), or read any manifest with SidecarTimeline.ofManifest(manifest, options)', '. ');
    }
    // The manifest as toJson() emits it, with the plan the binding placed the sidecars by: the
    // app's budget is the one the binding used (inferred from the manifest where no prop says it).
    const rendered = binding.render();
    if (rendered.errors.length > 0) throw renderErrors(rendered.errors);
    const { specs, injected, minor, gate } = binding.sidecarSpecs();
    const stopSeconds: Record<string, number> = {};
    for (const s of specs) stopSeconds[s.container.name] = s.shutdown.stopSeconds;
    // the containers the injectors will add, where they add them, with their stop times
    const plan = rendered.grace;
    const app = plan?.appShutdownSeconds ?? Math.max(appShutdownOf(specs), ...injected.map(p => p.appShutdownSeconds));
    const admitted = withInjectedContainers(rendered.manifest, injected, { minor, gate }, app);
    const manifest = admitted.manifest;
    Object.assign(stopSeconds, admitted.stopSeconds);
    // the user's own native sidecars: the userSidecarStopTime a construct gives
    const users = userSidecarStopOf(specs);
    const init: Json[] = podTemplateOf(manifest)?.spec.initContainers ?? [];
    for (const c of init) {
      if (c.restartPolicy === 'Always' && stopSeconds[c.name] === undefined && users !== undefined) stopSeconds[c.name] = users;
    }
    const legacySidecars = [...specs.filter(s => s.layout === 'LEGACY').map(s => s.container.name as string), ...admitted.legacy];
    const t = computeTimeline(manifest, {
      target: { minor, gate }, legacySidecars, stopSeconds, appShutdownSeconds: app, quickInit: [TOOLS.containerName],
    });
    const notes = admitted.notes;
    return new SidecarTimeline(t, minor, gate, notes, plan?.budgetSource ?? `appShutdownTime ${app}s`, app);
  }

  /**
   * The timelines of every workload inside `scope` that the library attached sidecars to, in
   * the order of the construct tree.
   */
  public static ofAll(scope: IConstruct): SidecarTimeline[] {
    return scope.node.findAll()
      .filter((c): c is ApiObject => ApiObject.isApiObject(c) && SUPPORTED_KINDS.includes(c.kind) && WorkloadBinding.existing(c) !== undefined)
      .map(obj => SidecarTimeline.of(obj));
  }

  /**
   * The timeline of any pod-bearing object as plain JSON (Pod, Deployment, StatefulSet,
   * DaemonSet, ReplicaSet, Job, CronJob; e.g. parsed from a YAML file). The target is
   * `options.kubernetesVersion`, else `CDK8S_SIDECARS_KUBERNETES_VERSION`, else 1.27 (no
   * `Sidecars.configure()`: there is no scope); `mode` does not matter (the manifest's layout is
   * what it is).
   *
   * @param manifest a Kubernetes object as plain JSON
   * @param options the target, and what the manifest cannot say (stop times, legacy sidecars)
   */
  public static ofManifest(manifest: any, options: SidecarTimelineOptions = {}): SidecarTimeline {
    if (manifest === null || typeof manifest !== 'object' || Array.isArray(manifest) || !SUPPORTED_KINDS.includes(manifest.kind)) {
      const what = manifest === null || typeof manifest !== 'object' ? JSON.stringify(manifest) : `kind ${JSON.stringify(manifest.kind)}`;
      throw new Where(WHO).error(`${what} is not an object with a pod template`, manifest,
        `Pass one Kubernetes object of kind ${SUPPORTED_KINDS.join(', ')} (a List: one item at a time)`, '. ');
    }
    // The one assembly of a target (src/target/resolver.ts): the option, then the environment, then the default.
    const { version, gate } = assembleTarget({
      version: options.kubernetesVersion, gate: options.sidecarContainersGate, where: new Where(WHO), fail: (e: SidecarError) => e.placedAt(WHO),
    });
    // What the library recorded in the pod template (STOP_TIMES_ANNOTATION); the options win.
    const recorded = recordedStopTimes(manifest);
    const stopSeconds: Record<string, number> = { ...recorded };
    for (const [name, d] of Object.entries(options.stopTimes ?? {})) stopSeconds[name] = seconds(`stopTimes['${name}']`, d);
    // the app's budget: given, else the one the library placed the sidecars by (APP_SHUTDOWN_ANNOTATION), else 10 s
    const recordedApp = recordedAppShutdown(manifest);
    const app = options.appShutdownTime !== undefined ? seconds('appShutdownTime', options.appShutdownTime) : recordedApp ?? 10;
    for (const n of options.legacySidecars ?? []) {
      if (typeof n !== 'string') throw new Where(WHO).error(`legacySidecars holds ${JSON.stringify(n)}`, n, 'give container names (strings)');
    }
    // a recorded sidecar in spec.containers is a legacy sidecar
    const containers: Json[] = podTemplateCopy(manifest)?.spec?.containers ?? [];
    const legacySidecars = [...new Set([
      ...options.legacySidecars ?? [],
      ...Object.keys(recorded).filter(n => Array.isArray(containers) && containers.some(c => c?.name === n)),
    ])];
    // the library's own output (it recorded its stop times): its tools init container only copies busybox
    const quickInit = Object.keys(recorded).length > 0 ? [TOOLS.containerName] : [];
    const t = computeTimeline(manifest as Json, {
      target: { minor: version.minor, gate }, legacySidecars, stopSeconds, appShutdownSeconds: app, quickInit,
    });
    const source = options.appShutdownTime !== undefined ? `appShutdownTime ${app}s (given)`
      : recordedApp !== undefined ? `appShutdownTime ${app}s (recorded by cdk8s-sidecars in the pod template, annotation ${APP_SHUTDOWN_ANNOTATION})`
        : `appShutdownTime ${app}s (the default of SidecarTimelineOptions)`;
    const notes = Object.keys(recorded).length === 0 ? [] : [
      `the stop times of ${Object.entries(recorded).map(([n, v]) => `'${n}' (${v} s)`).join(', ')} are the ones cdk8s-sidecars recorded ` +
      `in the pod template (annotation ${STOP_TIMES_ANNOTATION})`,
    ];
    return new SidecarTimeline(t, version.minor, gate, notes, source, app);
  }

  /**
   * One line per timeline, under a header: the workload, the release, the worst-case time until
   * the app starts, the app's exit, the sidecars' last SIGTERM after it, the pod's end, the grace
   * period, a completing pod's completion after its app, the effective request.
   */
  public static summaryTable(timelines: SidecarTimeline[]): string {
    const rows = [
      ['workload', 'k8s', 'app starts by (worst)', 'app exits', 'last sidecar SIGTERM', 'pod gone', 'grace', 'completes after app (worst)', 'requests (effective)'],
      ...timelines.map(t => t.summaryRow()),
    ];
    return table(rows);
  }

  /** The workload, e.g. `Deployment 'web'`. */
  public readonly workload: string;
  /** The release the timeline is for, e.g. `1.29`. */
  public readonly kubernetesVersion: string;
  /** Native sidecars are stopped after the app, one at a time (1.29+). */
  public readonly orderedTermination: boolean;
  /** The release runs native sidecars (1.29+, or 1.28 with the SidecarContainers gate). */
  private readonly nativeSidecars: boolean;
  /** Init containers, then `spec.containers`, in the order they start. */
  public readonly startOrder: TimelineStartEntry[];
  /** When the first app container starts, at the latest (seconds from the pod's start). */
  public readonly appStartSeconds: number;
  /** Every container's termination, in seconds from the pod's termination: `spec.containers`, then the native sidecars in `initContainers` order. */
  public readonly termination: TimelineStopEntry[];
  /** The grace period the pod has. */
  public readonly graceSeconds: number;
  /** `terminationGracePeriodSeconds` is in the manifest (else it is Kubernetes' 30 s). */
  public readonly graceSet: boolean;
  /**
   * Seconds from the API delete (`kubectl delete`, a rollout, a scale-down) until the kubelet starts
   * the pod's termination, at the latest (0 at the earliest): its pod worker waits for the next
   * relist of its PLEG, which runs every second, before it runs the first `preStop` hook or sends
   * the first SIGTERM. The times of `termination` count from that start (docs/shutdown.md,
   * measured in docs/proof.md).
   */
  public readonly deletionReactionSeconds: number;
  /** When the last app container has exited. */
  public readonly appExitSeconds: number;
  /** When the last container has exited: the pod is gone. */
  public readonly endSeconds: number;
  /** The latest SIGTERM of a sidecar, in seconds after the app's exit. */
  public readonly sidecarSigtermAfterAppSeconds: number;
  /** The pod completes (a Job's, a CronJob's, a Pod with restartPolicy Never / OnFailure). */
  public readonly completes: boolean;
  /** A completing pod: the native sidecars' stop once the app has exited, in seconds from the app's exit. */
  public readonly completion: TimelineStopEntry[];
  /**
   * A completing pod: seconds from the app's exit until the kubelet reports the pod Succeeded, at
   * the latest: the sidecars' stop plus the kubelet's own pod syncs, up to 1 s each (one before it
   * stops the native sidecars, three after the last container's exit; docs/shutdown.md, measured
   * in docs/proof.md).
   * @default - the pod does not complete, or never does (a legacy sidecar outlives the app)
   */
  public readonly completionSeconds?: number;
  /**
   * A Job's or a CronJob's: seconds from the app's exit until the Job is Complete, at the latest
   * (`completionSeconds` + the Job controller's 1 s batch period for pod updates).
   * @default - not a Job or CronJob, or its pod never completes
   */
  public readonly jobCompleteSeconds?: number;
  /** The pod's resource request as the scheduler computes it. */
  public readonly requests: TimelineRequests;
  /** What the manifest did not say and the timeline assumed. */
  public readonly assumptions: string[];
  /**
   * The containers whose exit restarts the whole pod in place (`restartPolicyRules` with the
   * `RestartAllContainers` action, Kubernetes 1.36+, e.g. a sidecar's `restartPodOnExitCodes`),
   * one line each: the kubelet then stops every other container with no preStop; SIGTERM with the
   * kubelet's 2 s minimum, one container after another, app containers first.
   */
  public readonly podRestarts: string[];
  /**
   * The app containers' time from SIGTERM to their exit, as the timeline counts it (after their
   * own `preStop` hook, where its duration can be read).
   */
  public readonly appShutdownSeconds: number;
  /**
   * Where the app's budget comes from, in words: `appShutdownTime` (given, or the default), or,
   * for `SidecarTimeline.of`, what the sidecars' binding inferred from the manifest (an explicit
   * `terminationGracePeriodSeconds` below the sidecars' need, or an app `preStop` hook whose
   * duration cannot be read, taken as the app's own budget: docs/target.md, "Inferred from the
   * manifest").
   */
  public readonly budgetSource: string;

  private constructor(t: Timeline, minor: number, gate: boolean, notes: string[], budgetSource: string, appShutdownSeconds: number) {
    this.workload = t.workload;
    this.kubernetesVersion = `1.${minor}`;
    this.orderedTermination = capabilities(minor, gate).orderedTermination;
    this.nativeSidecars = capabilities(minor, gate).nativeSidecars;
    this.startOrder = t.start.map(s => ({ ...s }));
    this.appStartSeconds = t.appStartSeconds;
    this.termination = t.stop.map(stopEntry);
    this.graceSeconds = t.graceSeconds;
    this.graceSet = t.graceSet;
    this.deletionReactionSeconds = t.deletionReactionSeconds;
    this.appExitSeconds = t.appExitSeconds;
    this.endSeconds = t.endSeconds;
    this.sidecarSigtermAfterAppSeconds = t.lastSidecarSigtermAfterAppSeconds;
    this.completes = t.completes;
    this.completion = t.completion.map(stopEntry);
    if (t.completionSeconds !== undefined) this.completionSeconds = t.completionSeconds;
    if (t.jobCompleteSeconds !== undefined) this.jobCompleteSeconds = t.jobCompleteSeconds;
    const r = t.requests;
    this.requests = {
      initPeakCpuMillis: r.initPeak.cpuMillis,
      initPeakMemoryBytes: r.initPeak.memoryBytes,
      steadyCpuMillis: r.steady.cpuMillis,
      steadyMemoryBytes: r.steady.memoryBytes,
      effectiveCpuMillis: r.effective.cpuMillis,
      effectiveMemoryBytes: r.effective.memoryBytes,
    };
    this.assumptions = [...t.assumptions, ...notes];
    this.podRestarts = [...t.podRestarts];
    this.budgetSource = budgetSource;
    this.appShutdownSeconds = appShutdownSeconds;
  }

  /** The whole timeline as a human-readable table (several lines). */
  public toTable(): string {
    const out: string[] = [];
    out.push(`${this.workload}, Kubernetes ${this.kubernetesVersion}${this.headerNote()}`);
    out.push(`start (worst case, seconds from the pod's start): the app starts by ${fmt(this.appStartSeconds)} s`);
    out.push(indent(table([
      ['container', 'role', 'starts', 'started', 'how'],
      ...this.startOrder.map(s => [s.name, s.role, fmt(s.startSeconds), fmt(s.startedSeconds), s.how]),
    ])));
    const grace = `grace ${this.graceSeconds} s${this.graceSet ? '' : ' (unset: Kubernetes\' default)'}`;
    const after = this.sidecarSigtermAfterAppSeconds;
    const sidecars = this.termination.some(s => s.role !== 'app');
    const last = !sidecars ? '' : after >= 0 ? `the last sidecar gets SIGTERM ${fmt(after)} s after it, `
      : `the last sidecar gets SIGTERM ${fmt(-after)} s before it (while the app still runs), `;
    out.push(`stop (seconds from the pod's termination, which starts up to ${fmt(this.deletionReactionSeconds)} s after the delete; ${grace}): the app exits at ${fmt(this.appExitSeconds)} s, ` +
      `${last}the pod is gone at ${fmt(this.endSeconds)} s`);
    out.push(indent(stopTable(this.termination)));
    out.push(`app budget: ${fmt(this.appShutdownSeconds)} s from SIGTERM to exit; ${this.budgetSource}`);
    if (this.completes) {
      out.push(this.completionSeconds === undefined
        ? 'completion: never by itself (a legacy sidecar outlives the app)'
        : `completion (seconds from the app's exit): the pod completes ${fmt(this.completionSeconds)} s after its app` +
          (this.jobCompleteSeconds === undefined ? '' : `, the Job at ${fmt(this.jobCompleteSeconds)} s`));
      if (this.completion.length > 0) out.push(indent(stopTable(this.completion, true)));
    }
    const r = this.requests;
    out.push(`requests: init phase peak ${cpu(r.initPeakCpuMillis)} / ${mem(r.initPeakMemoryBytes)}, steady ${cpu(r.steadyCpuMillis)} / ${mem(r.steadyMemoryBytes)}, ` +
      `effective ${cpu(r.effectiveCpuMillis)} / ${mem(r.effectiveMemoryBytes)}`);
    for (const restart of this.podRestarts) out.push(`pod restart: ${restart}`);
    for (const a of this.assumptions) out.push(`assumed: ${a}`);
    return out.join('\n');
  }

  /**
   * What the header says of the release's native sidecars: nothing where they are stopped in order
   * (1.29+) or the pod has none (the legacy layout); else that the release does not stop them in
   * order (1.28 with the gate) or does not run them at all.
   */
  private headerNote(): string {
    if (this.orderedTermination) return '';
    const native = this.termination.filter(s => s.role === 'native sidecar').map(s => `'${s.name}'`);
    if (native.length === 0) return '';
    return this.kubernetesVersion === '1.28' && this.nativeSidecars
      ? ` (native sidecars ${native.join(', ')} are not stopped in order before 1.29)`
      : ` (init containers ${native.join(', ')} have restartPolicy Always, which Kubernetes ${this.kubernetesVersion} drops: no native sidecars here; see \`cdk8s-sidecars check\`)`;
  }

  /** The cells of this timeline's line in `summaryTable`. */
  public summaryRow(): string[] {
    const r = this.requests;
    return [
      this.workload, this.kubernetesVersion, `${fmt(this.appStartSeconds)}s`, `${fmt(this.appExitSeconds)}s`,
      `+${fmt(this.sidecarSigtermAfterAppSeconds)}s`, `${fmt(this.endSeconds)}s`, `${this.graceSeconds}s`,
      this.completes ? (this.completionSeconds === undefined ? 'never' : `${fmt(this.completionSeconds)}s`) : '-',
      `${cpu(r.effectiveCpuMillis)} / ${mem(r.effectiveMemoryBytes)}`,
    ];
  }
}

function stopEntry(s: StopStep): TimelineStopEntry {
  return { ...s };
}

function seconds(what: string, d: Duration): number {
  if (!(d instanceof Duration)) throw new Where(WHO).error(`${what} is ${JSON.stringify(d)}, not a Duration`, d, 'give e.g. Duration.seconds(10)');
  const ms = d.toMilliseconds();
  if (!(ms >= 0)) throw new Where(WHO).error(`${what} is ${ms} ms`, d, 'give a duration of 0 or more');
  return ms / 1000;
}

/** `completion`: a legacy sidecar there exits with the app (no SIGKILL: shown as `-`). */
function stopTable(steps: TimelineStopEntry[], completion = false): string {
  return table([
    ['container', 'role', 'preStop', 'turn', 'SIGTERM', 'SIGKILL at', 'exit'],
    ...steps.map(s => [
      s.name, s.role,
      s.hookStartSeconds === undefined ? '-' : `${fmt(s.hookStartSeconds)}-${fmt(s.hookEndSeconds!)}`,
      s.turnSeconds === undefined ? '-' : fmt(s.turnSeconds),
      fmt(s.sigtermSeconds) + (s.early ? ' (early)' : ''), completion && s.role === 'legacy sidecar' ? '-' : fmt(s.sigkillSeconds),
      fmt(s.exitSeconds) + (s.killed ? ' (killed)' : ''),
    ]),
  ]);
}

function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map(r => (r[i] ?? '').length)));
  return rows.map(r => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]))).join('  ')).join('\n');
}

function indent(s: string): string {
  return s.split('\n').map(l => `  ${l}`).join('\n');
}

function fmt(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(2).replace(/0+$/, '');
}

function cpu(millis: number): string {
  return `${millis}m`;
}

function mem(bytes: number): string {
  return bytes % 2 ** 20 === 0 ? `${bytes / 2 ** 20}Mi` : `${(bytes / 2 ** 20).toFixed(1)}Mi`;
}

/**
 * The app's budget the library recorded in a manifest's pod template (APP_SHUTDOWN_ANNOTATION,
 * `Ns`), or undefined when the annotation is absent; any other value is an error naming it.
 */
function recordedAppShutdown(manifest: Json): number | undefined {
  const value = podTemplateCopy(manifest)?.metadata?.annotations?.[APP_SHUTDOWN_ANNOTATION];
  if (value === undefined) return undefined;
  const m = typeof value === 'string' ? /^(\d+(?:\.\d+)?)s$/.exec(value) : null;
  if (m === null) {
    throw new Where(WHO).error(`the pod template's annotation ${APP_SHUTDOWN_ANNOTATION} is ${JSON.stringify(value)}; ` +
      'cdk8s-sidecars writes it as a number of seconds (e.g. "20s")', value, 'Fix or remove it, or give appShutdownTime', '. ');
  }
  return Number(m[1]);
}

/**
 * The stop times the library recorded in a manifest's pod template (STOP_TIMES_ANNOTATION,
 * `name=Ns,...`), by container name; none when the annotation is absent. A value that is not in
 * that form is an error naming the annotation (a hand-edited manifest), not a guess.
 */
function recordedStopTimes(manifest: Json): Record<string, number> {
  const value = podTemplateCopy(manifest)?.metadata?.annotations?.[STOP_TIMES_ANNOTATION];
  if (value === undefined) return {};
  const entries = typeof value === 'string' ? value.split(',').map(e => /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)=(\d+(?:\.\d+)?)s$/.exec(e)) : [null];
  if (entries.some(m => m === null)) {
    throw new Where(WHO).error(`the pod template's annotation ${STOP_TIMES_ANNOTATION} is ${JSON.stringify(value)}; ` +
      'cdk8s-sidecars writes it as name=Ns entries separated by commas (e.g. "log-agent=7s,envoy=20s")', value, 'Fix or remove it', '. ');
  }
  const out: Record<string, number> = {};
  for (const m of entries) out[m![1]] = Number(m![3]);
  return out;
}
