/**
 * Layer 2 (cdk8s-free): checks of what surrounds a native sidecar that do not depend on the target
 * release: a sidecar's own `preStop` hook that stops its process, a readiness probe on a sidecar
 * that no Service sends traffic to, and a VerticalPodAutoscaler of a pod with native sidecars.
 * The per-workload one (`checkSelfStoppingPreStops`) runs in the binding and in
 * `checkManifestSet`; the app-wide ones (`checkSidecarReadiness`, `checkVerticalAutoscaler`) need
 * the app's Services and autoscalers and run in `checkManifestSet` only (SidecarValidation.addTo
 * and `cdk8s-sidecars check`).
 */
import { describeObject } from './pod-template';
import { COMPLETING_KINDS, podTemplateView } from '../facts/kinds';
import { serviceSelects } from '../facts/services';
import { SelectorIndex, WorkloadIndex } from '../facts/workload-index';
import { Json } from '../private/json';

/** Errors (the outcome is certain) and warnings (it depends on the cluster or the case). */
export interface AroundFindings {
  readonly errors: string[];
  readonly warnings: string[];
}

const quoted = (names: readonly string[]) => names.map(n => `'${n}'`).join(', ');

function nativeSidecarsOf(spec: Json): Json[] {
  const init = spec?.initContainers;
  const out: Json[] = [];
  if (!Array.isArray(init)) return out;
  for (const c of init) if (c && typeof c === 'object' && c.restartPolicy === 'Always' && typeof c.name === 'string') out.push(c);
  return out;
}

// ------------------------------------------------------------------------------------------
// A preStop hook that stops the sidecar's own process

const SHELLS = new Set(['sh', 'bash', 'ash', 'dash', 'ksh', 'zsh']);
/** Signals that stop a daemon that handles them (the default of kill, pkill and killall is TERM). */
const STOP_SIGNALS = new Set(['TERM', 'INT', 'QUIT', '15', '2', '3']);
/** Quit endpoints that end the process on a POST: Envoy's and Istio pilot-agent's `/quitquitquit`, Linkerd's `/shutdown`, ... */
const QUIT_PATH = /(^|\/\/[^/\s]*|^[^/\s]*)\/(quitquitquit|quit|shutdown|graceful_shutdown|exit|terminate|abortabortabort)(\?|$|\s|["'])/;
const LOOPBACK_URL = /^(https?:\/\/)?(localhost|127\.0\.0\.1|\[::1\]|0\.0\.0\.0)(:\d+)?\//;

const base = (s: string) => s.split('/').pop() ?? s;
const unquote = (s: string) => s.replace(/^["']|["']$/g, '');

/** The shell script an exec hook runs (`sh -c '...'`, `busybox sh -c '...'`), or the command itself as one line. */
function scriptOf(command: unknown[]): string {
  const argv: string[] = [];
  for (const a of command) argv.push(String(a));
  let i = 0;
  if (base(argv[0] ?? '') === 'busybox' && SHELLS.has(argv[1] ?? '')) i = 1;
  if (SHELLS.has(base(argv[i] ?? ''))) {
    const c = argv.indexOf('-c', i + 1);
    if (c >= 0 && c + 1 < argv.length) return argv[c + 1];
  }
  return argv.join(' ');
}

/** The names the container's program may have: its command's (or first arg's) file name, and its image's name. */
function programNamesOf(c: Json): string[] {
  const names: string[] = [];
  const first = Array.isArray(c.command) && c.command.length > 0 ? String(c.command[0]) : undefined;
  if (first !== undefined && !SHELLS.has(base(first))) names.push(base(first));
  if (typeof c.image === 'string') {
    const repo = c.image.split('@')[0].split('/').pop() ?? '';
    const name = repo.split(':')[0];
    if (name) names.push(name);
  }
  return names.filter(n => n.length >= 3);
}

/** The signal of a kill/pkill/killall option list, TERM when none is given; undefined when the options say "do not signal" (`-0`, `-l`). */
function signalOf(args: string[]): { signal: string; rest: string[] } | undefined {
  let signal = 'TERM';
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '-l' || a === '-L' || a === '--list') return undefined;
    if (a === '-s' || a === '-n' || a === '--signal') {
      signal = (args[++i] ?? '').toUpperCase().replace(/^SIG/, '');
    } else if (/^--signal=/.test(a)) {
      signal = a.slice('--signal='.length).toUpperCase().replace(/^SIG/, '');
    } else if (/^-([A-Za-z][A-Za-z0-9+]*|\d+)$/.test(a) && !/^-[fxoanvwiue]+$/.test(a)) {
      signal = a.slice(1).toUpperCase().replace(/^SIG/, '');
    } else if (a !== '--' && !a.startsWith('-')) {
      rest.push(a);
    }
  }
  return signal === '0' ? undefined : { signal, rest };
}

/** A program name of the sidecar's own in `pattern` (or the other way round). */
function matchesOwn(own: readonly string[], pattern: string): boolean {
  for (const n of own) if (n.includes(pattern) || pattern.includes(n)) return true;
  return false;
}

/** The words of one simple command, unquoted, without empty ones. */
function wordsOf(simple: string): string[] {
  const out: string[] = [];
  for (const word of simple.trim().split(/\s+/)) {
    const w = unquote(word);
    if (w !== '') out.push(w);
  }
  return out;
}

/**
 * What a sidecar's preStop hook does to stop its own process, or undefined. Read from the hook's
 * exec command (a shell script is split into its simple commands): `kill [-TERM|-INT|-QUIT] 1`
 * (PID 1 of the container: the program, unless it runs under an init or the pod shares one process
 * namespace), `kill` of `$(pidof <program>)` / `$(pgrep <program>)`, `pkill` / `killall` of the
 * program's name, and a POST (curl `-X POST`/`-d`, wget `--post-data`) to a loopback quit endpoint.
 * SIGKILL (`kill -9 1`, `pkill -9`) is not counted: the kernel drops a signal without a handler sent
 * to the namespace's init from inside it (pid_namespaces(7)), and the program is PID 1 in most images;
 * nor a signal the program keeps running on (`-HUP`, `-0`), nor a GET hook (`httpGet`), which those
 * endpoints refuse. test/util/self-stop-oracle.ts runs hooks for real to check this.
 */
export function selfStopOf(c: Json): string | undefined {
  const command = c?.lifecycle?.preStop?.exec?.command;
  if (!Array.isArray(command) || command.length === 0) return undefined;
  const script = scriptOf(command);
  const own = programNamesOf(c);
  for (const simple of script.split(/\|\||&&|[;&|\n]/)) {
    const words = wordsOf(simple);
    let skip = 0; // the prefix words, counted (slicing once per word was quadratic on a long hook)
    while (skip < words.length && (words[skip] === 'exec' || words[skip] === 'sudo' || /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[skip]) || words[skip] === 'busybox' || words[skip] === 'timeout' || /^\d+[smh]?$/.test(words[skip]))) skip++;
    const w = skip === 0 ? words : words.slice(skip);
    if (w.length === 0) continue;
    const cmd = base(w[0]);
    const text = simple.trim();
    if (cmd === 'kill') {
      const s = signalOf(w.slice(1));
      if (!s) continue;
      const byName = /\$\((?:pidof|pgrep)(?:\s+-\S+)*\s+([^\s)]+)\)|`(?:pidof|pgrep)(?:\s+-\S+)*\s+([^\s`]+)`/.exec(simple);
      if (byName && matchesOwn(own, byName[1] ?? byName[2]) && STOP_SIGNALS.has(s.signal)) return `'${text}'`;
      if (s.rest.includes('1') && STOP_SIGNALS.has(s.signal)) return `'${text}'`;
      continue;
    }
    if (cmd === 'pkill' || cmd === 'killall') {
      const s = signalOf(w.slice(1));
      if (!s || !STOP_SIGNALS.has(s.signal)) continue;
      if (s.rest.some(r => matchesOwn(own, r))) return `'${text}'`;
      continue;
    }
    if (cmd === 'curl' || cmd === 'wget') {
      const post = cmd === 'curl'
        ? w.some((a, i) => ((a === '-X' || a === '--request') && /^POST$/i.test(w[i + 1] ?? '')) || /^-XPOST$/i.test(a) || /^(-d|--data.*|-F|--form|--json)$/.test(a) || /^--request=POST$/i.test(a))
        : w.some(a => /^--post-(data|file)/.test(a) || /^--method=POST$/i.test(a));
      const url = w.slice(1).find(a => LOOPBACK_URL.test(a) && QUIT_PATH.test(a.replace(LOOPBACK_URL, '/')));
      if (post && url) return `'${text}'`;
    }
  }
  return undefined;
}

/**
 * Native sidecars whose `preStop` stops their own process (`selfStopOf`).
 *
 * Sources: the kubelet runs every container's `preStop` as soon as the pod starts terminating, a
 * native sidecar's included, and only then waits for its turn (after the app containers) to send
 * SIGTERM (`pkg/kubelet/kuberuntime/kuberuntime_container.go` `killContainer` and
 * `kuberuntime_termination_order.go`, v1.29.0 on; SIDECARS.md §10 measured it); a hook that stops
 * the process therefore stops the sidecar while the app still runs. KEP-753
 * (`keps/sig-node/753-sidecar-containers/README.md`, kubernetes/enhancements at 64765b4b, "Failure
 * modes"): "Sidecar container uses a preStop hook that make the container exit during Pod shutdown,
 * sidecar is restarted, leading to a CrashLoopBackOff"; KEP-4438 (restarting sidecars during
 * termination, `SidecarsRestartableDuringPodTermination`) runs the preStop of every restarted instance
 * again. An error where the pod is torn down while its app runs (Deployments and the other
 * long-running kinds: every rollout); a warning on a Job or CronJob, whose sidecars are normally
 * stopped after the app has completed (the hook then only stops them early).
 */
export function checkSelfStoppingPreStops(manifest: Json, where: string = describeObject(manifest)): AroundFindings {
  const template = podTemplateView(manifest);
  if (!template) return { errors: [], warnings: [] };
  const completes = COMPLETING_KINDS.has(manifest.kind);
  const errors: string[] = [];
  const warnings: string[] = [];
  for (const c of nativeSidecarsOf(template.spec)) {
    const what = selfStopOf(c);
    if (!what) continue;
    const head = `${where}: native sidecar '${c.name}' has a preStop hook that stops its own process (${what}); the kubelet runs a native sidecar's ` +
      'preStop as soon as the pod starts terminating and sends SIGTERM only at its turn, after the app containers have exited (kuberuntime_container.go ' +
      'killContainer), so this hook stops the sidecar while the app still runs, and where the kubelet restarts it, it crash-loops until the grace period ' +
      'ends (KEP-753 "Failure modes": "sidecar is restarted, leading to a CrashLoopBackOff")';
    const fix = 'Remove the preStop hook (the kubelet stops the sidecar with SIGTERM at its turn), or make it wait or drain without stopping the process.';
    if (completes) {
      warnings.push(`${head}. On a ${manifest.kind} the sidecars are normally stopped after the app has completed, but a pod deleted while its app runs ` +
        `(activeDeadlineSeconds, a drain, preemption) loses the sidecar first. ${fix}`);
    } else {
      errors.push(`${head}. ${fix}`);
    }
  }
  return { errors, warnings };
}

// ------------------------------------------------------------------------------------------
// Readiness probes on sidecars that no Service sends traffic to

/**
 * Whether a Service port's target (targetPort, defaulting to port) is a port of the container `c`:
 * a name it declares, or a number it declares or probes (a numeric targetPort needs no declaration:
 * the traffic goes to that port of the pod, so the readiness probe's own port counts).
 */
function targets(port: Json, c: Json): boolean {
  const target = port?.targetPort ?? port?.port;
  const ports: Json[] = Array.isArray(c.ports) ? c.ports : [];
  if (typeof target === 'number' || (typeof target === 'string' && /^\d+$/.test(target))) {
    const probe = c.readinessProbe?.httpGet?.port ?? c.readinessProbe?.tcpSocket?.port ?? c.readinessProbe?.grpc?.port;
    return ports.some(p => p && p.containerPort === Number(target)) || probe === Number(target);
  }
  return typeof target === 'string' && ports.some(p => p && p.name === target);
}

/**
 * Native sidecars with a readinessProbe in the pods of a workload that no Service of the set sends
 * traffic to (no selecting Service has a port whose targetPort is one of the sidecar's ports): a
 * warning each, under the workload's index.
 *
 * Sources: the kubelet's pod Ready condition requires every container ready, the restartable init
 * containers included (`pkg/kubelet/status/generate.go` `GeneratePodReadyCondition`, as
 * kubernetes#142145 cites it at 1d54bff3; KEP-753 "Readiness probes of sidecars will contribute to
 * determine the whole Pod readiness"); kubernetes#142145 (open, 2026) asks for a way out. A NotReady
 * pod leaves every Service's endpoints and counts as unavailable in rollouts and disruption budgets,
 * so a sidecar's failing probe takes the app out although the app could serve. A sidecar that serves
 * the Service's targetPort (a proxy in front of the app) is in the request path: its readiness is
 * the pod's.
 */
export function checkSidecarReadiness(workloads: WorkloadIndex, services: readonly Json[]): Array<{ workload: number; message: string }> {
  const out: Array<{ workload: number; message: string }> = [];
  // each workload looks its Services up (the candidates, in the order given; serviceSelects() decides)
  const byLabels = new SelectorIndex(services, s => s?.spec?.selector, s => s?.metadata?.namespace);
  workloads.workloads.forEach((w, index) => {
    const template = w.template;
    if (!template) return;
    const probed = nativeSidecarsOf(template.spec).filter(c => c.readinessProbe !== undefined && c.readinessProbe !== null);
    if (probed.length === 0) return;
    const labels = template.metadata?.labels ?? {};
    const selecting = byLabels.candidatesFor(w.manifest?.metadata?.namespace ?? '', labels).filter(s => serviceSelects(s, w.manifest?.metadata?.namespace, labels));
    // No Service of the set selects the pods: the Service that does (a Helm chart's, another app's,
    // a Gateway's) is not here to judge, so nothing is said (a proxy such as WithEnvoy is in the
    // request path of a Service this app does not declare).
    if (selecting.length === 0) return;
    for (const c of probed) {
      if (selecting.some(s => (Array.isArray(s.spec?.ports) ? s.spec.ports : []).some((p: Json) => targets(p, c)))) continue;
      const context = `the Service(s) ${quoted(selecting.map(s => String(s.metadata?.name ?? '?')))} that select these pods target none of its ports`;
      out.push({
        workload: index,
        message:
          `${describeObject(w.manifest)}: native sidecar '${c.name}' has a readinessProbe, but it is not in the request path (${context}); the kubelet counts a native ` +
          'sidecar\'s readiness in the pod\'s Ready condition (pkg/kubelet/status/generate.go; KEP-753; kubernetes#142145, open), so when this probe fails ' +
          'the whole pod goes NotReady: it leaves every Service\'s endpoints and counts as unavailable in rollouts, although the app could still serve. ' +
          'Drop the readiness probe (WithSidecar: readinessCheck; a startup check still holds the app until the sidecar is up), or keep it only on a ' +
          'sidecar that serves the Service\'s targetPort.',
      });
    }
  });
  return out;
}

// ------------------------------------------------------------------------------------------
// A VerticalPodAutoscaler of a pod with native sidecars

/**
 * A VerticalPodAutoscaler (autoscaling.k8s.io) of the set whose targetRef is a workload of the set
 * (same namespace, kind and name) whose pod has native sidecars without a containerPolicy of their
 * own (a `'*'` policy counts only with mode `Off`): one warning per VPA and workload.
 *
 * Sources: the VPA recommender ignores init containers, native sidecars included
 * (kubernetes/autoscaler#7229, open; `vertical-pod-autoscaler/pkg/recommender/input/cluster_feeder.go`),
 * so it neither recommends nor sets their requests; native sidecar support is kubernetes/autoscaler#8498
 * (open, read 2026) after AEP-8905 (`vertical-pod-autoscaler/enhancements/8905-native-sidecar-support`,
 * merged): behind a `NativeSidecar` feature gate, alpha and off by default, from VPA 1.8.0 (tentative),
 * after which the recommender, updater and admission controller resize native sidecars like app
 * containers. Either way the sidecars' sizing should be explicit: a warning, whatever the VPA release.
 */
export function checkVerticalAutoscaler(vpa: Json, workloads: WorkloadIndex): string[] {
  if (!vpa || vpa.kind !== 'VerticalPodAutoscaler' || typeof vpa.spec !== 'object' || vpa.spec === null) return [];
  const ref = vpa.spec.targetRef;
  if (!ref || typeof ref !== 'object') return [];
  const ns = vpa.metadata?.namespace ?? '';
  const policies: Json[] = Array.isArray(vpa.spec.resourcePolicy?.containerPolicies) ? vpa.spec.resourcePolicy.containerPolicies : [];
  const ownPolicy = (name: string) => policies.some(p => p?.containerName === name);
  const policyOf = (name: string) => policies.find(p => p?.containerName === name) ?? policies.find(p => p?.containerName === '*');
  const mode = vpa.spec.updatePolicy?.updateMode ?? 'Auto';
  const out: string[] = [];
  for (const w of workloads.candidatesNamed(ns, ref.kind, ref.name)) {
    const m = w.manifest;
    if (m?.kind !== ref.kind || m?.metadata?.name !== ref.name || (m?.metadata?.namespace ?? '') !== ns) continue;
    const template = w.template;
    if (!template) continue;
    const unpinned = nativeSidecarsOf(template.spec).filter(c => !ownPolicy(c.name) && policyOf(c.name)?.mode !== 'Off').map(c => String(c.name));
    if (unpinned.length === 0) continue;
    out.push(
      `VerticalPodAutoscaler '${vpa.metadata?.name ?? '?'}' (updateMode ${mode}) targets '${w.path}', whose pod has native sidecar(s) ${quoted(unpinned)} ` +
      'without a containerPolicy of their own: today\'s VPA ignores init containers, native sidecars included (kubernetes/autoscaler#7229), so it neither ' +
      'recommends nor sets their requests while it resizes the app\'s containers; native sidecar support (kubernetes/autoscaler#8498, open; AEP-8905: ' +
      'the NativeSidecar feature gate, alpha, off by default) will resize them like app containers once its gate is on. Size the sidecars\' requests ' +
      `and limits yourself and give each a containerPolicy in spec.resourcePolicy.containerPolicies, e.g. { containerName: '${unpinned[0]}', mode: 'Off' } ` +
      '(the library\'s agents derive settings from their limits, e.g. the collector\'s memory_limiter); to let VPA size one where it can, give it ' +
      'a containerPolicy with controlledResources and minAllowed/maxAllowed instead.',
    );
  }
  return out;
}
