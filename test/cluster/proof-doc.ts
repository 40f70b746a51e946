/**
 * docs/proof.md: written by the cluster suite (`npm run test:cluster`) from what it measured, with
 * the model's predictions (`SidecarTimeline`) beside the measurements; checked by
 * test/proof-doc.test.ts against the code (a model change without a re-run fails `npm test`).
 */
import * as fs from 'fs';
import * as path from 'path';
import {
  jobApp, orderApp, EnvoyVariant, Layout, LinesEnd, LogAgentName, StartupVariant, StdoutEnd, StdoutSource,
  APP_RUN_SECONDS, ENVOY_APP_STOP_SECONDS, ENVOY_DRAIN_SECONDS,
  ENVOY_REQUEST_SECONDS, ENVOY_VARIANTS, LINES_WRITTEN, LOG_AGENTS, SIDECAR_STOP_SECONDS, SIDECAR_STOP_TIME, SLOW_START_SECONDS, STARTUP_VARIANTS,
  STDOUT_SHUTDOWN_LINES, STDOUT_VARIANTS,
} from './apps';

export const PROOF_DOC = path.join(__dirname, '..', '..', 'docs', 'proof.md');

/** One Job run: seconds from the app's exit (the app's own stamp). */
export interface JobRun {
  readonly layout: Layout;
  readonly kind: 'Job' | 'CronJob';
  readonly sigterm: number;
  readonly sidecarExit: number;
  readonly succeeded: number;
  readonly complete: number;
}

/** One pod deletion: seconds from the `kubectl delete`. */
export interface OrderRun {
  readonly appTerm: number;
  readonly appExit: number;
  readonly secondTerm: number;
  readonly secondExit: number;
  readonly firstTerm: number;
  readonly firstExit: number;
}

/** One run of the lost-lines experiment (`linesApp`). */
export interface LinesRun {
  readonly agent: LogAgentName;
  readonly layout: Layout;
  readonly end: LinesEnd;
  readonly written: number;
  readonly shipped: number;
}

/** One run of the seed's experiment (`stdoutApp`): lines printed to stdout, and distinct ones the agent output. */
export interface StdoutRun {
  readonly agent: string;
  readonly layout: Layout;
  readonly source: StdoutSource;
  readonly end: StdoutEnd;
  readonly written: number;
  readonly shipped: number;
}

/**
 * How many lines the library promises to lose in the lost-lines experiment (docs/shutdown.md,
 * "What is guaranteed"): with a backend that answers (stdout always does), a line written into
 * `logDirectory` up to the app's exit, in a file the agent already watches, is shipped, in the
 * legacy layout (the read delay) and the native one (Fluent Bit: inotify; Fluentd: reads to the
 * end at shutdown), whether the pod is deleted or the app dies.
 */
export function promisedLost(_agent: LogAgentName, _layout: Layout, _end: LinesEnd): number {
  return 0;
}

/**
 * One run of the Envoy drain experiment (`envoyDrainApp`): the requests of the load that started
 * by `ENVOY_DRAIN_SECONDS` after the delete and had not ended before it, and how many failed.
 */
export interface EnvoyRun {
  readonly variant: EnvoyVariant;
  readonly requests: number;
  readonly failed: number;
  /** Seconds from the delete to the start of the first failed request (of the whole load), if one failed. */
  readonly firstFailure?: number;
  /** The failures by kind (`503`, `ECONNREFUSED`, ...), in the window. */
  readonly kinds: Record<string, number>;
}

/** One run of the startup experiment (`startupApp`): did the app's first request through Envoy, and to the collector, succeed. */
export interface StartupRun {
  readonly variant: StartupVariant;
  readonly envoy: boolean;
  readonly otlp: boolean;
  /** wget's message when the request through Envoy failed. */
  readonly envoyError?: string;
  /** wget's message when the export to the collector failed. */
  readonly otlpError?: string;
}

/**
 * Failures per 1000 the library promises in the Envoy drain experiment: none, for an app that
 * answers for `drainTime` after its SIGTERM (docs/envoy.md, `drainTime`): legacy, Envoy's
 * preStop drains and keeps it running past the app; native, the kubelet stops it after the app.
 * No promise for Envoy written by hand.
 */
export function promisedEnvoyFailures(variant: EnvoyVariant): number | undefined {
  return variant === 'hand-written' ? undefined : 0;
}

/**
 * What the library promises at the app's start: native, both sidecars answer before the app
 * starts (their startup probes pass first); legacy, Envoy holds the app until it is ready
 * (`holdApplicationUntilProxyStarts`, the default), and the collector only with
 * `holdApplicationUntilCollectorStarts` (off by default).
 */
export function promisedStartup(variant: StartupVariant): { envoy: boolean; otlp: boolean } {
  return { envoy: variant !== 'legacy-no-hold', otlp: variant === 'native' || variant === 'legacy-collector-hold' };
}

export interface ReleaseResult {
  version: string;
  kubeletVersion: string;
  /** The release whose kube-controller-manager ran (its own does not build), if not its own. */
  controllerManager?: string;
  startSeconds: number;
  jobs: JobRun[];
  order: OrderRun[];
  /** StatefulSet of 3 replicas: seconds from the apply to 3 Ready replicas (absent in older runs). */
  rollout?: Array<{ layout: Layout; seconds: number }>;
  admission: Array<{ check: string; outcome: string; detail: string }>;
  /** The lost-lines experiment: lines the app wrote and distinct ones the agent output (absent in older runs). */
  lines?: LinesRun[];
  dryRun: Array<{ file: string; objects: number; ok: boolean; detail?: string }>;
  /** The Envoy drain experiment (absent in older runs). */
  envoy?: EnvoyRun[];
  /** The startup experiment (absent in older runs). */
  startup?: StartupRun[];
  /** The seed's experiment: lines printed to stdout (absent in older runs). */
  stdout?: StdoutRun[];
}

/**
 * The admission-policy experiment (test/cluster/admission-policy.cluster-test.ts): SidecarInjectionPolicy
 * applied to the API server of one release (etcd, kube-apiserver, kube-controller-manager; no node).
 */
export interface AdmissionPolicyResult {
  readonly version: string;
  /** The policy's API version, and whether the API server accepted the policy, binding, guard and ConfigMaps. */
  readonly apiVersion: string;
  /** Per workload kind: the controller's pod compared with the synthesized workload's pod, and what differed beyond the documented differences. */
  readonly pods: Array<{ kind: string; sidecars: number; equal: boolean; differences: string[] }>;
  /** Injected once: a second identical policy (reinvocation), a pod the library synthesized, `kubectl apply --dry-run=server` of a Deployment. */
  readonly once: Array<{ check: string; ok: boolean; detail: string }>;
  /** The policy broken at run time (a variable that fails): what happened to a pod per failurePolicy. */
  readonly failurePolicy: Array<{ policy: string; outcome: string; sidecars: number; detail: string }>;
  /** Per pod create (the API server's latency as kubectl -v=6 reports it), ms: without and with the policy. */
  readonly latency: { pods: number; withoutMs: { median: number; p90: number }; withMs: { median: number; p90: number } };
}

/** A Job whose app writes numbered lines to its log file, then exits 0, on a node. */
export interface AdmittedJobRun {
  /** `admitted`: the plain Job in the policy's namespace; `synthesized`: the same Job synthesized by the library. */
  readonly variant: 'admitted' | 'synthesized';
  /** The pod's native sidecars, in their order. */
  readonly sidecars: string[];
  readonly complete: boolean;
  /** Seconds from the app's exit (its own stamp) to the Job's Complete condition (the watch). */
  readonly appExitToComplete: number;
  readonly written: number;
  /** Distinct numbered lines in the log agent's output (its stdout). */
  readonly shipped: number;
  /** Whether the app's last line is among them. */
  readonly lastLine: boolean;
}

/** A Deployment of one replica on a node. */
export interface AdmittedDeploymentRun {
  readonly variant: 'admitted' | 'synthesized';
  readonly sidecars: string[];
  /** Seconds from the pod's creation to its Ready condition (the API server's stamps, whole seconds). */
  readonly createdToReady: number;
  /** Every native sidecar started (its startup probe passed) no later than the app container (the kubelet's startedAt, 1 s resolution). */
  readonly sidecarsFirst: boolean;
  /** What the app found at its very start: the log agent's health port, a request through Envoy, an OTLP export to the collector. */
  readonly atAppStart: { logAgent: boolean; envoy: boolean; otlp: boolean };
  /** A request from the node to Envoy's pod-facing listener, answered by the app. */
  readonly throughEnvoy: boolean;
}

/**
 * The node part of the admission policy (test/cluster/admission-policy-node.cluster-test.ts,
 * `CLUSTER_EXPERIMENTS=admission-policy-node`): pods admitted under SidecarInjectionPolicy running
 * on a real one-node cluster of the release, beside the same workloads synthesized by the library.
 */
export interface AdmissionPolicyNodeResult {
  readonly version: string;
  readonly kubeletVersion: string;
  /** The policy's API version. */
  readonly apiVersion: string;
  readonly job: AdmittedJobRun[];
  readonly deployment: AdmittedDeploymentRun[];
  /** Pods the policy does not select, running: what they hold. */
  readonly untouched: Array<{ pod: string; ready: boolean; containers: string[]; initContainers: number; libraryAnnotations: number }>;
}

export interface ProofResults {
  readonly machine: Record<string, string | number>;
  readonly runs: number;
  readonly releases: ReleaseResult[];
  /** The admission-policy experiment per release (absent in older runs). */
  readonly admissionPolicy?: AdmissionPolicyResult[];
  /** The admission policy's pods on a real node, per release (absent in older runs). */
  readonly admissionPolicyNode?: AdmissionPolicyNodeResult[];
  /** The releases the suite wants that did not run, and why. */
  readonly notRun: Array<{ version: string; why: string }>;
}

/** The experiments of test/cluster/proof.cluster-test.ts whose figures a release keeps (`CLUSTER_EXPERIMENTS`). */
export type ReleaseExperiment = 'jobs' | 'order' | 'rollout' | 'admission' | 'lines' | 'envoy' | 'startup' | 'stdout';

/**
 * A release's results of this run laid over its previous ones: an experiment not run this time
 * (`CLUSTER_EXPERIMENTS`) keeps its previous figures, and so, in the lines and stdout experiments,
 * do the agents not run (`CLUSTER_AGENTS`): their runs first, this run's after them.
 */
export function mergeRelease(now: ReleaseResult, before: ReleaseResult | undefined, ran: {
  readonly experiment: (e: ReleaseExperiment) => boolean;
  readonly agent: (a: string) => boolean;
}): ReleaseResult {
  if (!before) return now;
  const keep = <K extends keyof ReleaseResult>(e: ReleaseExperiment, ...keys: K[]) =>
    ran.experiment(e) ? {} : Object.fromEntries(keys.map(k => [k, before[k]])) as Pick<ReleaseResult, K>;
  const byAgent = <T extends { agent: string }>(e: ReleaseExperiment, b: T[] | undefined, n: T[] | undefined): T[] | undefined =>
    ran.experiment(e) ? [...(b ?? []).filter(x => !ran.agent(x.agent)), ...(n ?? [])] : b;
  return {
    ...now,
    ...keep('jobs', 'jobs'),
    ...keep('order', 'order'),
    ...keep('rollout', 'rollout'),
    ...keep('admission', 'admission', 'dryRun'),
    ...keep('envoy', 'envoy'),
    ...keep('startup', 'startup'),
    lines: byAgent('lines', before.lines, now.lines),
    stdout: byAgent('stdout', before.stdout, now.stdout),
  };
}

/** The releases the suite runs when built: the newest the module proxy serves, 1.33, the oldest it serves. */
export const WANTED_RELEASES = ['1.37.2', '1.33.13', '1.29.6'];

/** Why a wanted release did not run: its binaries are not (all) built. */
export function whyNotRun(version: string): string {
  const build = `its binaries were not built when the suite ran (\`bash scripts/cluster/build-kubernetes.sh ${version}\`: 15-30 min each on this machine)`;
  return version.startsWith('1.29.')
    ? `${build}; 1.29.6 needs \`STAGING_OVERRIDES\` (the proxy refuses v0.29.x of k8s.io/legacy-cloud-providers, kube-controller-manager and endpointslice) and its controller-manager does not compile (a newer one stands in)`
    : build;
}

/** What the model says, seconds from the app's exit (a Job) or from the previous container's exit (a deletion). */
export interface Prediction {
  readonly sigterm: number;
  readonly sidecarExit: number;
  readonly succeeded: number;
  readonly complete: number;
}

/**
 * How far below the model's figure (at the latest) a measured one may be, per value: the kubelet's
 * pod syncs before it (each waits up to 1 s for the PLEG's next relist, 0 when it comes at once:
 * src/engine/timeline.ts), the legacy wrapper's look (up to 1 s), and the budget's slack (the
 * sidecar's `stopTime` less its real stop). Above it, a measured value may be `TOLERANCE` late:
 * the API server's write and the watch's delivery, and the 10 ms stamps.
 */
export const TOLERANCE = 0.25;
export function earliest(_layout: Layout): Prediction {
  const slack = SIDECAR_STOP_TIME - SIDECAR_STOP_SECONDS;
  // native: 1 sync before the stop, 3 after the exit; legacy: the wrapper's look (up to 1 s), 3
  // syncs after the exit; the Job controller's batch period is a fixed delay, not a wait
  return { sigterm: 1, sidecarExit: 1 + slack, succeeded: 4 + slack, complete: 4 + slack };
}

/** The model's prediction for the suite's Job (or CronJob) of one layout on one release. */
export function predictJob(version: string, layout: Layout, kind: 'Job' | 'CronJob'): Prediction {
  const t = jobApp(minorOf(version), layout, kind).timeline;
  const side = t.completion.find(s => s.name === 'sidecar');
  if (!side || t.completionSeconds === undefined || t.jobCompleteSeconds === undefined) {
    throw new Error(`the model gives no completion for the ${layout} ${kind} on ${version}`);
  }
  return { sigterm: side.sigtermSeconds, sidecarExit: side.exitSeconds, succeeded: t.completionSeconds, complete: t.jobCompleteSeconds };
}

/**
 * The model's prediction for the deletion, at the latest: the app's SIGTERM after the delete (the
 * kubelet's reaction, `deletionReactionSeconds`: 0 at the earliest), and the delay between a
 * container's exit and the SIGTERM of the native sidecar that waits for it (0: the kubelet's
 * `waitForTurn` returns as soon as the runtime reports the exit).
 */
export function predictOrder(version: string): { appTerm: number; secondAfterApp: number; firstAfterSecond: number } {
  const t = orderApp(minorOf(version)).timeline;
  const by = (n: string) => t.termination.find(s => s.name === n)!;
  return {
    appTerm: t.deletionReactionSeconds + by('app').sigtermSeconds,
    secondAfterApp: by('second').sigtermSeconds - by('app').exitSeconds,
    firstAfterSecond: by('first').sigtermSeconds - by('second').exitSeconds,
  };
}

function minorOf(version: string): string {
  return version.split('.').slice(0, 2).join('.');
}

const fmt = (x: number) => x.toFixed(2);
const range = (xs: number[]) => xs.length === 0 ? '-' : (Math.min(...xs) === Math.max(...xs) ? fmt(xs[0]) : `${fmt(Math.min(...xs))}-${fmt(Math.max(...xs))}`);

/** Releases the suite cannot run here, and why (the module proxy, the build). */
export const NOT_RUN: Array<[string, string]> = [
  ['1.27, 1.28', 'the Go module proxy does not serve `k8s.io/kubernetes` below v1.29.6 (`go list -m -versions k8s.io/kubernetes`), so no binaries can be built here'],
];

export function renderProof(p: ProofResults): string {
  const out: string[] = [];
  out.push('# Proven on Kubernetes itself');
  out.push('');
  out.push('<!-- GENERATED by `npm run test:cluster` (test/cluster/proof.cluster-test.ts): do not edit by hand. -->');
  out.push('');
  out.push('`npm run test:cluster` starts a real one-node cluster of every release whose binaries are');
  out.push('built, runs small cdk8s apps made with the library\'s constructs on it (their manifests applied');
  out.push('as synthesized, unmodified) and writes this page. Every container stamps its own lines with the');
  out.push('machine\'s uptime (`/proc/uptime`, 10 ms), the same clock the suite stamps the API\'s watch');
  out.push('events with. How to run it, what it needs and how long it takes: [CONTRIBUTING.md](https://github.com/cdk8s-sidecars/cdk8s-sidecars/blob/main/CONTRIBUTING.md#the-cluster-suite).');
  out.push('`test/proof-doc.test.ts` (in `npm test`) recomputes the model\'s predictions below from the code');
  out.push('and checks every measured value against them: a change of the model without a re-run fails.');
  out.push('');
  out.push('## Releases');
  out.push('');
  out.push('| release | kubelet | cluster start (s) | ran |');
  out.push('|---|---|---|---|');
  for (const r of p.releases) {
    const skew = r.controllerManager ? `, with the kube-controller-manager of ${r.controllerManager} (its own does not compile from the module proxy: an unsupported skew; the Job controller's figures are ${r.controllerManager}'s)` : '';
    out.push(`| ${r.version} | ${r.kubeletVersion} | ${fmt(r.startSeconds)} | yes${skew} |`);
  }
  for (const n of p.notRun) out.push(`| ${n.version} | - | - | no: ${n.why} |`);
  for (const [v, why] of NOT_RUN) out.push(`| ${v} | - | - | no: ${why} |`);
  out.push('');
  out.push(`Machine: ${Object.entries(p.machine).map(([k, v]) => `${k} ${v}`).join(', ')}. The suite\'s`);
  out.push('cluster: etcd, kube-apiserver, kube-controller-manager, kube-scheduler, containerd (runc,');
  out.push('`restrict_oom_score_adj`), kubelet (cgroupfs), a CNI bridge, in network, PID and mount');
  out.push('namespaces of its own with no route out. Timings are from a shared machine under load: they');
  out.push('are upper bounds of what an idle node does, not averages.');
  out.push('');
  out.push(`## A Job and a CronJob: from the app's exit to Complete (${p.runs} runs each, CronJob ${Math.max(1, p.runs - 1)})`);
  out.push('');
  out.push(`The app runs ${APP_RUN_SECONDS} s and exits 0; one sidecar of \`WithSidecar\` takes ${SIDECAR_STOP_SECONDS} s`);
  out.push(`from SIGTERM to its exit (its \`stopTime\`, the model's figure: ${SIDECAR_STOP_TIME} s). Native: an init container with \`restartPolicy: Always\`, stopped by the`);
  out.push('kubelet once the app has exited; legacy (the same release, `mode: LEGACY`): the library\'s');
  out.push('exit-with-app wrapper stops it. A CronJob\'s run is a Job created from its `jobTemplate`');
  out.push('(`kubectl create job --from=cronjob/...`). Seconds from the app\'s exit, measured (min-max),');
  out.push('and the model: `SidecarTimeline`\'s figure (`completion`, `completionSeconds`, `jobCompleteSeconds`:');
  out.push('at the latest) and, before it, the earliest the same steps allow (each of the kubelet\'s pod');
  out.push('syncs waits 0 to 1 s for its PLEG\'s next relist, the wrapper looks once a second, the sidecar');
  out.push(`stops ${SIDECAR_STOP_TIME - SIDECAR_STOP_SECONDS} s within its budget: [A Job's completion](shutdown.md#a-jobs-completion-what-the-kubelet-adds)).`);
  out.push(`\`test/proof-doc.test.ts\` checks every run against that range (${TOLERANCE} s late allowed for the API`);
  out.push('server\'s write and the watch\'s delivery).');
  out.push('');
  out.push('| release | workload | layout | sidecar SIGTERM | model | sidecar exit | model | pod Succeeded | model | Job Complete | model |');
  out.push('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of p.releases) {
    for (const kind of ['Job', 'CronJob'] as const) {
      for (const layout of ['native', 'legacy'] as const) {
        const runs = r.jobs.filter(j => j.kind === kind && j.layout === layout);
        if (runs.length === 0) continue;
        const m = predictJob(r.version, layout, kind);
        const e = earliest(layout);
        const model = (k: keyof Prediction) => `${fmt(m[k] - e[k])}-${fmt(m[k])}`;
        out.push(`| ${r.version} | ${kind} | ${layout} | ${range(runs.map(x => x.sigterm))} | ${model('sigterm')} | ${range(runs.map(x => x.sidecarExit))} | ${model('sidecarExit')} | ${range(runs.map(x => x.succeeded))} | ${model('succeeded')} | ${range(runs.map(x => x.complete))} | ${model('complete')} |`);
      }
    }
  }
  out.push('');
  out.push('## Pod deletion: the native sidecars\' SIGTERM order');
  out.push('');
  out.push('A Deployment\'s pod with two native sidecars of `WithSidecar` (`first`, `second`, in that');
  out.push('order) and an app, each taking 1 s from SIGTERM to its exit, is deleted. The kubelet stops the');
  out.push('app, then `second`, then `first`, each once the one before it has exited. The app\'s SIGTERM');
  out.push('comes once the kubelet\'s pod worker has seen the PLEG\'s next relist (every second: 0 to 1 s,');
  out.push('[what the kubelet adds](shutdown.md#a-deletion-what-the-kubelet-adds)); each next SIGTERM as soon');
  out.push('as the container runtime reports the exit the sidecar waits for. Seconds, measured (min-max) and');
  out.push('predicted (at the latest).');
  out.push('');
  out.push('| release | app SIGTERM after the delete | predicted | `second` SIGTERM after the app\'s exit | predicted | `first` SIGTERM after `second`\'s exit | predicted |');
  out.push('|---|---|---|---|---|---|---|');
  for (const r of p.releases) {
    if (r.order.length === 0) continue;
    const m = predictOrder(r.version);
    out.push(`| ${r.version} | ${range(r.order.map(o => o.appTerm))} | ${fmt(m.appTerm)} | ${range(r.order.map(o => o.secondTerm - o.appExit))} | ${fmt(m.secondAfterApp)} | ${range(r.order.map(o => o.firstTerm - o.secondExit))} | ${fmt(m.firstAfterSecond)} |`);
  }
  out.push('');
  if (p.releases.some(r => (r.rollout ?? []).length > 0)) {
    out.push('## A StatefulSet of 3 replicas with a slow-starting sidecar');
    out.push('');
    out.push(`The sidecar of \`WithSidecar\` listens only ${SLOW_START_SECONDS} s after its start; its TCP startup check runs every`);
    out.push('second. The StatefulSet makes each pod once the one before it is Ready (OrderedReady). Native:');
    out.push('the app starts once the sidecar\'s check passed; legacy: both start at once (the app may run');
    out.push('before its sidecar listens), the pod Ready once the check passed. Seconds from the apply to 3');
    out.push('Ready replicas (min-max):');
    out.push('');
    out.push('| release | native | legacy |');
    out.push('|---|---|---|');
    for (const r of p.releases) {
      const of = (l: Layout) => range((r.rollout ?? []).filter(x => x.layout === l).map(x => x.seconds));
      if ((r.rollout ?? []).length > 0) out.push(`| ${r.version} | ${of('native')} | ${of('legacy')} |`);
    }
    out.push('');
  }
  if (p.releases.some(r => (r.lines ?? []).length > 0)) {
    out.push('## Lines lost when the pod is deleted or the app is killed');
    out.push('');
    out.push('The app creates its log file in the log directory of `WithLogAgent`, waits 3 s (the agents');
    out.push(`scan for new files every second), writes ${LINES_WRITTEN} numbered lines as fast as busybox \`sh\` writes`);
    out.push('them (one `write` each) and prints that it has. **Deleted**: a Deployment of one replica; the');
    out.push('suite deletes the pod once it has seen that print (0.1-0.5 s after the last line), the app exits');
    out.push('at its SIGTERM. **Killed**: a Job (`backoffLimit: 0`) whose writer kills itself with `kill -9`');
    out.push('after its last line; its container exits 137 at once and the pod is Failed. The output is');
    out.push('`LogOutput.stdout()`: the agent\'s own log (`kubectl logs -c log-agent`, followed to its end),');
    out.push('whose distinct line numbers are counted. Lines lost per run; the library promises 0 for a file');
    out.push('the agent watches with a backend that answers ([Shutdown](shutdown.md), \'What is guaranteed\'), and');
    out.push('`test/proof-doc.test.ts` checks every run against it.');
    out.push('');
    out.push('| release | agent | layout | pod deleted: lines lost | app killed: lines lost | promised |');
    out.push('|---|---|---|---|---|---|');
    for (const r of p.releases) {
      for (const agent of LOG_AGENTS) {
        for (const layout of ['native', 'legacy'] as const) {
          const of = (end: LinesEnd) => (r.lines ?? []).filter(l => l.agent === agent && l.layout === layout && l.end === end)
            .map(l => String(l.written - l.shipped)).join(', ') || '-';
          if ((r.lines ?? []).some(l => l.agent === agent && l.layout === layout)) {
            out.push(`| ${r.version} | ${agent} | ${layout} | ${of('delete')} | ${of('kill')} | ${promisedLost(agent, layout, 'delete')} |`);
          }
        }
      }
    }
    out.push('');
  }
  if (p.releases.some(r => (r.stdout ?? []).length > 0)) {
    out.push('## The seed\'s experiment: lines the app prints to stdout');
    out.push('');
    out.push('The app waits 3 s, then prints numbered lines to its **stdout** (no file). **Deleted**: a Deployment of one');
    out.push('replica whose app prints 50 lines every 0.1 s; the suite deletes the pod once the app has begun, so it is still');
    out.push(`printing at its SIGTERM, and then logs its shutdown (${STDOUT_SHUTDOWN_LINES} more lines) and exits; the lines written are`);
    out.push(`counted in the app's own log. **Killed (Job)**: a Job whose writer prints ${LINES_WRITTEN} lines as fast as busybox \`sh\``);
    out.push('prints them and kills itself with `kill -9` (exit 137). **Killed (Deployment)**: the same in a Deployment: the');
    out.push('kubelet restarts the container in place (the restarted app prints nothing more), the agent runs on. The');
    out.push('library reads the lines with `captureStdout` (the app\'s command under the capture wrapper) or `podLogs` (the');
    out.push('kubelet\'s log files of the app container). The baseline is the seed\'s: a Fluent Bit sidecar written by hand');
    out.push('beside the app in `spec.containers` (the same image, the kubelet\'s files with the `cri` parser from the head,');
    out.push('Fluent Bit\'s defaults otherwise, no `preStop`): at the pod\'s deletion it gets SIGTERM with the app, pauses its');
    out.push('input at once, and the app\'s shutdown lines come after; killed apps it outlives. Output: `LogOutput.stdout()`,');
    out.push('the agent\'s own log, whose distinct line numbers are counted. Lines lost per run.');
    out.push('');
    out.push('| release | agent | layout | source | pod deleted | app killed (Job) | app killed (Deployment) |');
    out.push('|---|---|---|---|---|---|---|');
    for (const r of p.releases) {
      const cells = new Map<string, StdoutRun[]>();
      for (const x of r.stdout ?? []) {
        const k = `${x.agent}|${x.layout}|${x.source}`;
        cells.set(k, [...cells.get(k) ?? [], x]);
      }
      // the cells in the order of STDOUT_VARIANTS (a cell the suite no longer runs last), whatever the order of the runs
      const order = (k: string) => {
        const i = STDOUT_VARIANTS.findIndex(v => `${v.agent}|${v.layout}|${v.source}` === k);
        return i < 0 ? STDOUT_VARIANTS.length : i;
      };
      for (const [k, runs] of [...cells].sort((a, b) => order(a[0]) - order(b[0]))) {
        const [agent, layout, source] = k.split('|');
        const of = (end: StdoutEnd) => runs.filter(x => x.end === end).map(x => String(x.written - x.shipped)).join(', ') || '-';
        out.push(`| ${r.version} | ${agent} | ${layout} | ${source} | ${of('delete')} | ${of('kill-job')} | ${of('kill-deployment')} |`);
      }
    }
    out.push('');
  }
  if (p.releases.some(r => (r.envoy ?? []).length > 0)) {
    out.push('## Envoy: requests in flight while the pod is deleted');
    out.push('');
    out.push('A Deployment of one replica: the app (busybox `httpd` on 127.0.0.1, each request answered after');
    out.push(`${ENVOY_REQUEST_SECONDS} s by a CGI, so requests are in flight at any moment; at SIGTERM it keeps answering for ${ENVOY_APP_STOP_SECONDS} s,`);
    out.push('what `drainTime` asks of an app, then exits) behind Envoy. **native**, **legacy**: `WithEnvoy` with its');
    out.push(`defaults (\`drainTime\` ${ENVOY_DRAIN_SECONDS} s); **hand-written**: the same image and the same config (the library's ConfigMap) in a`);
    out.push('plain container, as a manifest written by hand has it: no `preStop` hook, no drain, SIGTERM with the app.');
    out.push('Six clients in the cluster\'s network namespace send requests to Envoy\'s listener on the pod IP,');
    out.push(`one at a time each, at most one per ${ENVOY_REQUEST_SECONDS} s, on keep-alive connections as a load balancer does; the pod is`);
    out.push('deleted once every client has been answered. Counted: the requests not ended before the delete and');
    out.push(`started at most ${ENVOY_DRAIN_SECONDS} s after it (the time \`drainTime\` gives the clients' load balancers to stop sending to a`);
    out.push('deleted pod); a request fails when it is not answered 200 within 5 s. Every request before the');
    out.push('delete was answered. The library promises none fails; `test/proof-doc.test.ts` checks every run');
    out.push('against it, and that the hand-written Envoy does fail (the experiment tells them apart).');
    out.push('');
    out.push('| release | variant | requests per run | failed per run | failures per 1000 | how they failed | first failure after the delete (s) | promised per 1000 |');
    out.push('|---|---|---|---|---|---|---|---|');
    for (const r of p.releases) {
      for (const variant of ENVOY_VARIANTS) {
        const runs = (r.envoy ?? []).filter(e => e.variant === variant);
        if (runs.length === 0) continue;
        const total = runs.reduce((a, e) => a + e.requests, 0);
        const failed = runs.reduce((a, e) => a + e.failed, 0);
        const kinds: Record<string, number> = {};
        for (const e of runs) for (const [k, v] of Object.entries(e.kinds)) kinds[k] = (kinds[k] ?? 0) + v;
        const how = Object.keys(kinds).sort().map(k => `${k} ${kinds[k]}`).join(', ') || '-';
        const first = runs.filter(e => e.firstFailure !== undefined).map(e => e.firstFailure!);
        const promised = promisedEnvoyFailures(variant);
        out.push(`| ${r.version} | ${variant} | ${runs.map(e => e.requests).join(', ')} | ${runs.map(e => e.failed).join(', ')} | ${Math.round(1000 * failed / total)} | ${how} | ${first.length === runs.length ? range(first) : `${range(first)} (${runs.length - first.length} of ${runs.length} runs: none in ${ENVOY_DRAIN_SECONDS + 6} s)`} | ${promised ?? '-'} |`);
      }
    }
    out.push('');
  }
  if (p.releases.some(r => (r.startup ?? []).length > 0)) {
    out.push('## Startup: the app\'s first request through Envoy and to the collector');
    out.push('');
    out.push('A Deployment whose app, at its very start, starts its own server on 127.0.0.1 and sends one');
    out.push('request through Envoy (`WithEnvoy`, an upstream on a local port routed to that server) and one');
    out.push('OTLP/HTTP export to the collector of `WithTracer` (`$OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces`), each once');
    out.push('with a 2 s timeout. **native**: both sidecars are init containers with a startup probe;');
    out.push('**legacy-hold**: Envoy first in `containers` with its `postStart` wait (`holdApplicationUntilProxyStarts`,');
    out.push('the default); **legacy-no-hold**: the same, turned off. By default nothing holds a legacy app for the');
    out.push('collector (the container order puts it after the app); **legacy-collector-hold**: Envoy\'s hold and');
    out.push('`WithTracer`\'s `holdApplicationUntilCollectorStarts` (the collector first in `containers` with a `postStart`');
    out.push('wait on its health endpoint). First requests that succeeded, of the runs (wget\'s message after a');
    out.push('failure); `test/proof-doc.test.ts` checks the runs against the promise.');
    out.push('');
    out.push('| release | variant | through Envoy | to the collector | promised |');
    out.push('|---|---|---|---|---|');
    for (const r of p.releases) {
      for (const variant of STARTUP_VARIANTS) {
        const runs = (r.startup ?? []).filter(x => x.variant === variant);
        if (runs.length === 0) continue;
        const pr = promisedStartup(variant);
        const promise = [pr.envoy ? 'Envoy' : '', pr.otlp ? 'collector' : ''].filter(Boolean).join(' and ') || 'nothing';
        const errors = (xs: Array<string | undefined>) => {
          const distinct = [...new Set(xs.filter((x): x is string => x !== undefined).map(x => x.replace(/\|/g, '\\|')))].sort();
          return distinct.length > 0 ? ` (${distinct.map(x => `\`${x}\``).join(', ')})` : '';
        };
        out.push(`| ${r.version} | ${variant} | ${runs.filter(x => x.envoy).length} of ${runs.length}${errors(runs.map(x => x.envoyError))} | ${runs.filter(x => x.otlp).length} of ${runs.length}${errors(runs.map(x => x.otlpError))} | ${promise} |`);
      }
    }
    out.push('');
  }
  out.push('## Admission by the real API server');
  out.push('');
  out.push('| release | check | outcome | the API server said |');
  out.push('|---|---|---|---|');
  for (const r of p.releases) for (const a of r.admission) out.push(`| ${r.version} | ${a.check} | ${a.outcome} | ${a.detail.replace(/\|/g, '\\|') || '-'} |`);
  out.push('');
  out.push('`kubectl apply --dry-run=server --validate=strict` of every file of the example app (`npm run');
  out.push('synth:example`, both clusters, each in a namespace under the restricted profile, enforced and');
  out.push('warned: a Pod Security warning counts as a failure) and of test/fixtures/vendor:');
  out.push('');
  out.push('| release | files | objects | passed |');
  out.push('|---|---|---|---|');
  for (const r of p.releases) {
    if (r.dryRun.length === 0) continue;
    out.push(`| ${r.version} | ${r.dryRun.length} | ${r.dryRun.reduce((a, d) => a + d.objects, 0)} | ${r.dryRun.filter(d => d.ok).length} of ${r.dryRun.length}${r.dryRun.some(d => !d.ok) ? ': ' + r.dryRun.filter(d => !d.ok).map(d => `${d.file} (${d.detail})`).join('; ') : ''} |`);
  }
  out.push('');
  if ((p.admissionPolicy ?? []).length > 0) {
    out.push('## The same sidecars at admission: SidecarInjectionPolicy');
    out.push('');
    out.push('`CLUSTER_EXPERIMENTS=admission-policy` (test/cluster/admission-policy.cluster-test.ts) starts etcd,');
    out.push('kube-apiserver and kube-controller-manager of the release (no node: the pods stay Pending), applies');
    out.push('the policy of [admission.md](admission.md) (log agent, tracer and Envoy), its ConfigMaps and');
    out.push('`NativeSidecarGuard` to a namespace under the restricted profile, then plain workloads (no sidecar in');
    out.push('their manifests); the pods their controllers create are compared, field by field, with the pods of');
    out.push('the same workloads synthesized by the library, in a namespace the policy does not select, after the');
    out.push('differences [admission.md](admission.md#what-differs-from-synthesis-and-why) lists.');
    out.push('');
    out.push('| release | policy API | kind | sidecars injected | equal to the synthesized pod | other differences |');
    out.push('|---|---|---|---|---|---|');
    for (const a of p.admissionPolicy!) {
      for (const pod of a.pods) out.push(`| ${a.version} | ${a.apiVersion} | ${pod.kind} | ${pod.sidecars} | ${pod.equal ? 'yes' : 'no'} | ${pod.differences.map(d => `\`${d.replace(/\|/g, '\\|')}\``).join(', ') || '-'} |`);
    }
    out.push('');
    out.push('| release | check | ok | detail |');
    out.push('|---|---|---|---|');
    for (const a of p.admissionPolicy!) for (const o of a.once) out.push(`| ${a.version} | ${o.check} | ${o.ok ? 'yes' : 'no'} | ${o.detail.replace(/\|/g, '\\|') || '-'} |`);
    out.push('');
    out.push('The policy broken at run time (its `hooks` variable replaced by one that fails on every pod):');
    out.push('');
    out.push('| release | failurePolicy | pod create | sidecars in the pod | the API server said |');
    out.push('|---|---|---|---|---|');
    for (const a of p.admissionPolicy!) for (const f of a.failurePolicy) out.push(`| ${a.version} | ${f.policy} | ${f.outcome} | ${f.sidecars} | ${f.detail.replace(/\|/g, '\\|') || '-'} |`);
    out.push('');
    out.push('The cost: the API server\'s latency per pod create (`kubectl create -v=6`), the same pod, one at a time:');
    out.push('');
    out.push('| release | pods | without the policy, median / p90 | with it, median / p90 |');
    out.push('|---|---|---|---|');
    for (const a of p.admissionPolicy!) {
      const l = a.latency;
      out.push(`| ${a.version} | ${l.pods} | ${l.withoutMs.median} / ${l.withoutMs.p90} ms | ${l.withMs.median} / ${l.withMs.p90} ms |`);
    }
    out.push('');
  }
  if ((p.admissionPolicyNode ?? []).length > 0) {
    const yes = (b: boolean) => (b ? 'yes' : 'no');
    out.push('### The admitted pods on a node');
    out.push('');
    out.push('`CLUSTER_EXPERIMENTS=admission-policy-node` (test/cluster/admission-policy-node.cluster-test.ts) starts');
    out.push('the one-node cluster of the release and applies a policy (Fluent Bit writing to its stdout, the');
    out.push('collector, Envoy) to the namespace `teams`, and `NativeSidecarGuard` to `teams` and `synth`, both');
    out.push('under the restricted profile (enforced). Each workload runs twice: *admitted*, its plain manifest');
    out.push('(no sidecar) in `teams`; *synthesized*, the same workload with the same constructs, synthesized by');
    out.push('the library, in `synth`. A Job whose app writes numbered lines to its log file, then exits 0: it');
    out.push('must complete (the native sidecars do not hold it) and the log agent\'s output must hold every');
    out.push('line, the last one included. A Deployment: its pod must be Ready, and its app, at its very start,');
    out.push('finds the log agent\'s health port, a request through Envoy and an OTLP export to the collector');
    out.push('answered. Pods the policy does not select (another namespace; a `matchConditions` opt-out label)');
    out.push('must run as written.');
    out.push('');
    out.push('| release | kubelet | policy API | Job | sidecars | Complete | app exit -> Complete | lines shipped | last line |');
    out.push('|---|---|---|---|---|---|---|---|---|');
    for (const a of p.admissionPolicyNode!) {
      for (const j of a.job) {
        out.push(`| ${a.version} | ${a.kubeletVersion} | ${a.apiVersion} | ${j.variant} | ${j.sidecars.join(', ')} | ${yes(j.complete)} | ${j.appExitToComplete.toFixed(2)} s | ${j.shipped} of ${j.written} | ${yes(j.lastLine)} |`);
      }
    }
    out.push('');
    out.push('| release | Deployment | sidecars | pod created -> Ready | sidecars started before the app | at the app\'s start: log agent / Envoy / collector | a request through Envoy |');
    out.push('|---|---|---|---|---|---|---|');
    for (const a of p.admissionPolicyNode!) {
      for (const d of a.deployment) {
        out.push(`| ${a.version} | ${d.variant} | ${d.sidecars.join(', ')} | ${d.createdToReady} s | ${yes(d.sidecarsFirst)} | ${yes(d.atAppStart.logAgent)} / ${yes(d.atAppStart.envoy)} / ${yes(d.atAppStart.otlp)} | ${yes(d.throughEnvoy)} |`);
      }
    }
    out.push('');
    out.push('| release | pod not selected | Ready | containers | init containers | annotations of the library |');
    out.push('|---|---|---|---|---|---|');
    for (const a of p.admissionPolicyNode!) {
      for (const u of a.untouched) out.push(`| ${a.version} | ${u.pod} | ${yes(u.ready)} | ${u.containers.join(', ')} | ${u.initContainers} | ${u.libraryAnnotations} |`);
    }
    out.push('');
  }
  out.push('## Found on the cluster');
  out.push('');
  out.push('- The model said a Job whose sidecar stops in 1 s is Complete at most 3 s after its app; a real');
  out.push('  kubelet takes longer: it notices the app\'s exit at a pod sync, and reports the pod Succeeded');
  out.push('  three syncs after the last exit, each waiting up to 1 s for its PLEG\'s next relist; the Job');
  out.push('  controller adds its 1 s batch. The model counts these now ([A Job\'s completion](shutdown.md#a-jobs-completion-what-the-kubelet-adds)).');
  out.push('- The exit-with-app wrapper of a legacy sidecar tells the app\'s processes from the sidecars\' by');
  out.push('  their program (`argv[0]`): a `WithSidecar` whose `command` starts with `sh`, beside an app that');
  out.push('  runs `sh`, takes the app for a sidecar and stops its agent at once (measured: SIGTERM 1.8-1.9 s');
  out.push('  BEFORE the app\'s exit). The suite\'s sidecar runs `/bin/busybox sh` instead; the library now');
  out.push('  refuses a pod whose app container runs a wrapped sidecar\'s program, naming the fix.');
  out.push('- The model started a deletion\'s stop at the API delete; the kubelet starts it once its pod');
  out.push('  worker has seen the PLEG\'s next relist, up to 1 s later (1.02 s measured on 1.33.13). The');
  out.push('  model counts it now ([A deletion](shutdown.md#a-deletion-what-the-kubelet-adds)).');
  out.push('- The suite\'s busybox image (Debian\'s busybox-static) crashed (SIGSEGV) on `wget -T`, which the');
  out.push('  library\'s Envoy hooks run (the legacy hold `wget -q -T 1`, the drain POSTs `-T 2`): Debian\'s build');
  out.push('  leaves `CONFIG_FEATURE_WGET_TIMEOUT` out (until 1.36.1-5). On it the legacy hold waited its whole');
  out.push('  60 s and the drain never ran. The image is Debian\'s busybox rebuilt with the option now, as');
  out.push('  `busybox:1.36.1-musl` has it; [Shutdown](shutdown.md) says a `toolsImage` needs it.');
  out.push('- Nothing holds a legacy app for the collector of `WithTracer` (it comes after the app): the app\'s');
  out.push('  first export at its start was refused in every legacy run; [the tracer\'s page](tracer.md) says so.');
  out.push('- The kubelet runs a native sidecar\'s `preStop` at the start of the termination ([Shutdown](shutdown.md)):');
  out.push('  native Envoy\'s drain starts at the delete as the legacy one does, and its listeners stop accepting');
  out.push(`  \`drainTime\` later although the app answers ${ENVOY_APP_STOP_SECONDS - ENVOY_DRAIN_SECONDS} s longer: the first failures of the native runs come`);
  out.push('  just after `drainTime`, not after the app\'s exit. What [Envoy\'s page](envoy.md) says: `drainTime`');
  out.push('  is within `appShutdownTime`, and the app must answer for `drainTime` after its SIGTERM.');
  out.push('- A vendor fixture (test/fixtures/vendor/gitops.yaml) was not readable by the API server\'s YAML');
  out.push('  reader (`?` in a plain scalar of a flow mapping, `{ path: /healthz?full=true }`); quoted now.');
  out.push('');
  out.push('<!-- proof-data');
  out.push(JSON.stringify(p, null, 1));
  out.push('-->');
  out.push('');
  return out.join('\n');
}

export function writeProof(p: ProofResults): void {
  fs.writeFileSync(PROOF_DOC, renderProof(p));
}

/** The measurements docs/proof.md was generated from. */
export function readProofData(text: string): ProofResults {
  const m = /<!-- proof-data\n([\s\S]*?)\n-->/.exec(text);
  if (!m) throw new Error('docs/proof.md has no proof-data block: regenerate it with npm run test:cluster');
  return JSON.parse(m[1]);
}
