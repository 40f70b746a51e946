/**
 * Layer 2: shutdown handling per layout, the sidecar tools, and the grace-period arithmetic.
 */
import { defaultPullPolicy } from './pull-policy';
import { EngineTarget, SidecarSpec } from './spec';
import { DEFAULT_IMAGES } from '../facts/images';
import { KUBERNETES_DEFAULT_GRACE_SECONDS } from '../facts/pod-defaults';
import { Json } from '../private/json';
import { capabilities } from '../target/capabilities';

/**
 * Distroless agent images (most log agents', the OpenTelemetry Collector's) have no shell and no
 * `sleep`. Where a hook needs one (a legacy `preStop` delay before Kubernetes 1.30 has the
 * `sleep` action, Envoy's drain request, the legacy "hold the app" wait), a tiny init container
 * copies a static busybox into an emptyDir that those sidecars mount read-only.
 */
export const TOOLS = {
  containerName: 'sidecar-tools',
  volumeName: 'sidecar-tools',
  mountPath: '/sidecar-tools',
  // The musl build is static; the default (glibc) one is dynamic and cannot run in a FROM-scratch image.
  image: DEFAULT_IMAGES.busybox.image,
  /** the busybox binary inside the sidecars */
  busybox: '/sidecar-tools/busybox',
} as const;


/** The Pod Security Standard "restricted" container security context, for a non-root uid. */
export function restrictedSecurityContext(uid: number): Json {
  return {
    allowPrivilegeEscalation: false,
    capabilities: { drop: ['ALL'] },
    privileged: false,
    readOnlyRootFilesystem: true,
    runAsGroup: uid,
    runAsNonRoot: true,
    runAsUser: uid,
    seccompProfile: { type: 'RuntimeDefault' },
  };
}

/** The tools volume's sizeLimit: busybox 1.36.1-musl is about 1 MiB. */
const TOOLS_VOLUME_SIZE = '8Mi';

/** The init container that provides busybox to the hooks, from `image` (a mirror's copy, `toolsImage`). */
export function toolsInitContainer(image: string = TOOLS.image): Json {
  return {
    command: ['/bin/busybox', 'cp', '/bin/busybox', TOOLS.busybox],
    image,
    imagePullPolicy: defaultPullPolicy(image),
    name: TOOLS.containerName,
    // The busybox it copies stays on the pod's disk, in the tools volume (at most its sizeLimit):
    // requested, never limited (a limit on this one container would be the whole pod's disk limit
    // while it runs, docs/log-agents.md "Disk: an ephemeral-storage request, no limit").
    resources: {
      limits: { cpu: '50m', memory: '16Mi' },
      requests: { 'cpu': '10m', 'ephemeral-storage': TOOLS_VOLUME_SIZE, 'memory': '16Mi' },
    },
    securityContext: restrictedSecurityContext(65532),
    volumeMounts: [{ mountPath: TOOLS.mountPath, name: TOOLS.volumeName }],
  };
}

export function toolsVolume(): Json {
  return { emptyDir: { sizeLimit: TOOLS_VOLUME_SIZE }, name: TOOLS.volumeName };
}

/**
 * A `busybox sh -c` hook. The script is the library's own fixed text: every value (a URL, a
 * count) goes in as a positional parameter (`"$1"`, `"$2"`, ... with `sh` as `$0`), never spliced
 * into the script, so no character of a user's value (`;`, `&`, `$`, a quote) is read by the shell
 * (docs/security.md, "No user value in a shell").
 */
function shell(script: string, args: readonly string[] = []): Json {
  return { exec: { command: [TOOLS.busybox, 'sh', '-c', script, ...(args.length > 0 ? ['sh', ...args] : [])] } };
}

/** The stop time and read delay of an agent's shutdown model, as the engine takes them. */
export function shutdownOf(
  model: { readonly stopSeconds: number; readonly readAfterAppExitSeconds: number; readonly holdSigtermInNative?: boolean },
): { stopSeconds: number; readAfterAppExitSeconds?: number; holdSigtermInNative?: boolean } {
  return model.readAfterAppExitSeconds > 0
    ? {
      stopSeconds: model.stopSeconds,
      readAfterAppExitSeconds: model.readAfterAppExitSeconds,
      ...(model.holdSigtermInNative ? { holdSigtermInNative: true } : {}),
    }
    : { stopSeconds: model.stopSeconds };
}

/**
 * The wrapper that holds a native sidecar's SIGTERM back by its read delay (docs/shutdown.md,
 * the polling agent's last line), as a busybox shell script: the agent (the script's arguments, `"$@"`,
 * never spliced into it) runs as a child; the wrapper's SIGTERM (or SIGINT), which the kubelet
 * sends at the sidecar's turn right after the app's exit, starts a wait of `holdSeconds`, during
 * which the agent keeps reading; then the agent gets SIGTERM and the wrapper exits with its
 * status. An agent that exits by itself: its status, at once. The trap is set before the agent
 * starts (PID 1 ignores a signal it has no handler for). No `$$` or `$(NAME)`, which the kubelet
 * would expand.
 */
export function holdSigtermScript(holdSeconds: number): string {
  const B = TOOLS.busybox;
  return 't=0; trap \'t=1\' TERM INT; "$@" & c=$!; ' +
    'while :; do wait $c; s=$?; [ $t = 1 ] && break; kill -0 $c 2>/dev/null || exit $s; done; ' +
    `${B} sleep ${holdSeconds} & wait $!; kill -TERM $c 2>/dev/null; ` +
    'while :; do wait $c; s=$?; kill -0 $c 2>/dev/null || break; done; exit $s';
}

/** The container command of a native sidecar whose SIGTERM is held back (`ShutdownSpec.sigtermHoldSeconds`). */
export function holdSigtermCommand(spec: SidecarSpec): string[] | undefined {
  const argv = agentArgv(spec);
  const hold = spec.shutdown.sigtermHoldSeconds ?? 0;
  if (argv === undefined || hold <= 0) return undefined;
  return [TOOLS.busybox, 'sh', '-c', holdSigtermScript(hold), 'sh', ...argv];
}

/**
 * The user's own native sidecars (init containers with `restartPolicy: Always` that are not the
 * library's) sit after ours in `initContainers`, so from 1.29 they are stopped BEFORE ours, one
 * after another, and ours wait for them (`kuberuntime_termination_order.go`). How long one takes
 * from SIGTERM to its exit is the user's to say (`userSidecarStopTime`): the library cannot know
 * it, and one that ignores SIGTERM (e.g. `sh -c 'tail -F ...'` as PID 1) runs until it is killed,
 * holding ours until the grace period has run out. The kubelet's minimum grace
 * (`minimumGracePeriodInSeconds`, 2 s, `kuberuntime_container.go`) is what a container gets when
 * the budget has run out, not a stop time. See `userSidecarInference`.
 */
export interface UserSidecars {
  /** Their names, in `initContainers` order. */
  readonly names: string[];
  /** Seconds each takes from SIGTERM to exit, as the user gave it; undefined when not given. */
  readonly stopSeconds?: number;
}

/**
 * The user's native sidecars' stop time the budget counts: the largest `userSidecarStopSeconds`
 * any of the workload's sidecar specs gives, or undefined.
 */
export function userSidecarStopOf(sidecars: SidecarSpec[]): number | undefined {
  let most: number | undefined;
  for (const s of sidecars) {
    const x = s.shutdown.userSidecarStopSeconds;
    if (x !== undefined) most = Math.max(most ?? x, x);
  }
  return most;
}

/**
 * The stop time counted for each of the user's own native sidecars when no construct gives
 * `userSidecarStopTime`: 10 s, the library's default `appShutdownTime`, i.e. the time the library
 * already gives a container that handles SIGTERM. What a vendor ships as a native sidecar is a
 * proxy or agent that exits on SIGTERM (Cloud SQL Auth Proxy, Istio's proxy, ...); one that
 * ignores SIGTERM runs until it is killed at the end of the grace period whatever is budgeted, so
 * no default would help it (docs/target.md, "Inferred from the manifest").
 */
export const DEFAULT_USER_SIDECAR_STOP_SECONDS = 10;

/**
 * The user's native sidecars' stop time when the pod has native sidecars of the user's and at
 * least one of the library's native sidecars waits for them (1.29+): the one a construct gives,
 * else `DEFAULT_USER_SIDECAR_STOP_SECONDS` with a warning that says so. Undefined (and no
 * warning) where nothing waits for them.
 */
export function userSidecarInference(where: string, sidecars: SidecarSpec[], target: EngineTarget, userInit: Json[]):
{ stopSeconds?: number; warnings: string[] } {
  const given = userSidecarStopOf(sidecars);
  const ordered = capabilities(target.minor, target.gate).orderedTermination;
  // The library's own placed sidecars: those have the prop (a mesh's injected proxy, asGraceSpec,
  // has none to give, so it alone infers nothing and the user's sidecars count nothing for it).
  const ours: SidecarSpec[] = [];
  for (const s of sidecars) if (s.layout === 'NATIVE' && !s.kind.startsWith('mesh:')) ours.push(s);
  const users: string[] = [];
  for (const c of userInit) if (c.restartPolicy === 'Always') users.push(c.name);
  if (given !== undefined || !ordered || ours.length === 0 || users.length === 0) return { stopSeconds: given, warnings: [] };
  return {
    stopSeconds: DEFAULT_USER_SIDECAR_STOP_SECONDS,
    warnings: [
      `${where}: has native sidecars of its own (${users.map(n => `'${n}'`).join(', ')}), which Kubernetes 1.${target.minor} stops ` +
      `one at a time with the library's (${ours.map(s => `'${s.container.name}'`).join(', ')}), in reverse order of initContainers; ` +
      `how long each takes to stop after SIGTERM cannot be read from the manifest, so ${DEFAULT_USER_SIDECAR_STOP_SECONDS}s each is counted in ` +
      'terminationGracePeriodSeconds. Set `userSidecarStopTime` on one of the sidecar constructs to the longest time one of them takes.',
    ],
  };
}

/**
 * How long the app's own `preStop` hook takes, read from the hook, or undefined when it cannot be
 * read. The kubelet runs a container's `preStop` hook first and sends SIGTERM only when it has
 * returned (`killContainer`, `pkg/kubelet/kuberuntime/kuberuntime_container.go`, v1.29.0 on:
 * `gracePeriod -= executePreStopHook(...)`, then `waitForTurn`, then `StopContainer`), so the
 * app's shutdown starts only after it. Known: the `sleep` action (1.30+), and an exec hook that is
 * exactly `sleep N` (`sleep`, `/bin/sleep`, `/usr/bin/sleep`, N whole seconds). Anything else (an
 * exec of another program, `httpGet`: e.g. ingress-nginx's `/wait-shutdown`) takes as long as it
 * takes. No hook: 0.
 */
export function appPreStopSeconds(container: Json): number | undefined {
  const hook = container.lifecycle?.preStop;
  if (hook === undefined || hook === null) return 0;
  if (hook.sleep !== undefined) {
    const n = Number(hook.sleep.seconds);
    return Number.isInteger(n) && n >= 0 ? n : undefined;
  }
  const command = hook.exec?.command;
  if (Array.isArray(command) && command.length === 2 && ['sleep', '/bin/sleep', '/usr/bin/sleep'].includes(command[0]) && /^\d+$/.test(String(command[1]))) {
    return Number(command[1]);
  }
  return undefined;
}

/** When the app containers have exited, counted from the pod's termination. */
export interface AppEnd {
  /** Seconds from the pod's termination to the last app container's exit. */
  readonly seconds: number;
  /** How, for messages: `app 10s` or `web's preStop 20s + app 10s`. */
  readonly explanation: string;
  /** App containers whose `preStop` duration cannot be read (`appPreStopSeconds`). */
  readonly unknownHooks: string[];
}

/**
 * When the app has exited: its own `preStop` hook (if its duration can be read), then the
 * workload's `appShutdownSeconds`. For a hook whose duration cannot be read,
 * `appShutdownSeconds` is taken to cover the hook AND the app's shutdown when the user set
 * `appShutdownTime`; otherwise the workload's grace period bounds them (`planGrace`).
 */
export function appEndOf(appContainers: Json[], appShutdownSeconds: number): AppEnd {
  let seconds = appShutdownSeconds;
  let explanation = `app ${appShutdownSeconds}s`;
  const unknownHooks: string[] = [];
  for (const c of appContainers) {
    const hook = appPreStopSeconds(c);
    if (hook === undefined) {
      unknownHooks.push(c.name);
    } else if (hook + appShutdownSeconds > seconds) {
      seconds = hook + appShutdownSeconds;
      explanation = `${c.name}'s preStop ${hook}s + app ${appShutdownSeconds}s`;
    }
  }
  return { seconds, explanation, unknownHooks };
}

/**
 * How long a sidecar's `preStop` hook holds its SIGTERM back, counted from the pod's
 * termination: the kubelet runs every container's `preStop` at once when the pod starts
 * terminating, also a native sidecar's, NOT when its turn comes (`killContainer`,
 * `pkg/kubelet/kuberuntime/kuberuntime_container.go`, v1.29.0 on: preStop, then `waitForTurn`,
 * then SIGTERM). `appEndSeconds` is when the app has exited, counted from the pod's termination
 * (`appEndOf`: the app's own `preStop` hook, then its shutdown; with an explicit grace period
 * above the need, the time the app really has: `effectiveAppEnd`).
 * - stopped with the app (legacy, and native on 1.28 where the stop is not ordered): until the
 *   app has exited, plus the agent's read delay;
 * - native from 1.29 (stopped after every app container has exited): none. A `preStop` there
 *   starts at the pod's termination, so a sleep in it cannot stand in for "after the app": it
 *   only delays the sidecar's SIGTERM to max(sleep, its turn), i.e. every termination, and on a
 *   Job (whose sidecars are terminated when the app has completed) it is pure delay after the
 *   app's exit (with a 12 s sleep the real log agent got SIGTERM at 12.0 s in every run). The
 *   agent gets SIGTERM at its turn; what each agent reads in the moments after the
 *   app's exit is in docs/shutdown.md.
 */
export function preStopDelayOf(spec: SidecarSpec, target: EngineTarget, appEndSeconds: number): number {
  const ordered = spec.layout === 'NATIVE' && capabilities(target.minor, target.gate).orderedTermination;
  if (ordered) return 0;
  const read = spec.shutdown.readAfterAppExitSeconds ?? 0;
  return (spec.shutdown.outliveApp ?? true) ? appEndSeconds + read : read;
}

/**
 * Whether the sidecar's `preStop` wait for the app ends when the app's processes are gone
 * (`watchAppExit`): only where it is stopped together with the app and outlives it.
 */
export function watchesApp(spec: SidecarSpec, target: EngineTarget, appEndSeconds: number): boolean {
  const ordered = spec.layout === 'NATIVE' && capabilities(target.minor, target.gate).orderedTermination;
  return spec.shutdown.watchAppExit === true && !ordered && (spec.shutdown.outliveApp ?? true) && appEndSeconds > 0;
}

/**
 * The programs (`argv[0]`) of the library's sidecars of a pod: `watchAppExit` hooks take a
 * process whose container runs one of them for a sidecar's, any other for the app's.
 */
export function sidecarPrograms(sidecars: SidecarSpec[]): string[] {
  const programs = sidecars.map(s => s.container.command?.[0] ?? s.shutdown.entrypoint).filter((p): p is string => typeof p === 'string');
  return [...new Set(programs)].filter(p => /^[A-Za-z0-9_./-]+$/.test(p)).sort();
}

/**
 * The `watchAppExit` wait, as a busybox shell script that exits once no process is left in a
 * container other than this one, the pod's sandbox (PID 1 with `shareProcessNamespace`) and the
 * library's sidecars (a container whose process runs one of `programs`). Containers are told
 * apart by `/proc/<pid>/cgroup` (readable by every user, one cgroup per container); a process
 * that has gone between the listing and the read is skipped. `proc` is for the tests.
 */
export function appWatchScript(programs: string[], proc = '/proc'): string {
  const B = TOOLS.busybox;
  return `P=${proc}; own=$(${B} cat $P/self/cgroup); pause=$(${B} cat $P/1/cgroup); ` +
    `while :; do ${appScan(programs)}[ $alive = 0 ] && exit 0; ${B} sleep 1; done`;
}

/**
 * One look at the pod's processes (`$P` the proc directory, `$own` / `$pause` the cgroups of this
 * container and of the sandbox): sets `alive` to 1 when a process is left in a container that is
 * none of these and runs none of `programs` (the library's sidecars), else 0.
 */
function appScan(programs: string[]): string {
  const B = TOOLS.busybox;
  const sidecarScan = programs.length === 0 ? '' :
    `for p in $P/[0-9]*; do a=$(${B} cat $p/cmdline 2>/dev/null | ${B} tr "\\000" "\\n" | ${B} head -n 1); ` +
    `case "$a" in ${programs.join('|')}) side="$side$(${B} cat $p/cgroup 2>/dev/null)|";; esac; done; `;
  return 'side="|"; ' + sidecarScan +
    `alive=0; for p in $P/[0-9]*; do g=$(${B} cat $p/cgroup 2>/dev/null) || continue; ` +
    'case "|$own|$pause$side" in *"|$g|"*) continue;; esac; alive=1; break; done; ';
}

/**
 * The argv of a sidecar's agent, as its container runs it: `command` + `args`, or the image's
 * entrypoint (`shutdown.entrypoint`, when the construct knows it) + `args`; undefined when the
 * program is not known (an image whose entrypoint the library cannot read).
 */
export function agentArgv(spec: SidecarSpec): string[] | undefined {
  const c = spec.container;
  const args: string[] = Array.isArray(c.args) ? c.args.map(String) : [];
  if (Array.isArray(c.command) && c.command.length > 0) return [...c.command.map(String), ...args];
  if (spec.shutdown.entrypoint !== undefined) return [spec.shutdown.entrypoint, ...args];
  return undefined;
}

/**
 * The wrapper of a legacy sidecar that exits with the app (a Job's pod, `restartPolicy: Never`;
 * docs/shutdown.md, "A legacy sidecar on a Job"), as a busybox shell script: the agent (the
 * script's arguments, `"$@"`, never spliced into it) runs as a child; a SIGTERM (or SIGINT) to the
 * wrapper is forwarded to it at once (the wrapper then exits 143: the sidecar was stopped, not done); once no process is left in a container other than this one,
 * the sandbox and the library's sidecars (`programs`, the tools' busybox among them: a wrapped
 * sidecar's own first process), it waits `readSeconds` (the agent's read delay, so that the last
 * lines are read), sends the agent SIGTERM, waits for it (at most `stopSeconds`, rounded up: then
 * SIGKILL, as the kubelet ends a stop that outlasts its grace) and exits 0, so the pod completes with the
 * app's exit codes deciding its phase. An agent that exits by itself first: its exit status. The
 * wrapper looks once a second (`sleep 1 & wait`, so that a signal is handled at once); it starts
 * after the app containers (it is placed after them in `spec.containers`, which the kubelet starts
 * in order, each started before the next: `SyncPod`, `kuberuntime_manager.go`), so no app process
 * at its first look means the app has already exited. The script has no `$$` and no `$(NAME)`, which the
 * kubelet would expand in a container's command (`third_party/forked/golang/expansion/expand.go`).
 * `started`: the agent's startup check (`startedCheck`): an agent that has not started by the
 * app's exit (a slow start, an app that lived seconds) is waited for first: the URL is tried once a
 * second until it answers (at most `seconds` tries, its startup budget), so that it reads the app's files before
 * its SIGTERM; without it, such an agent was stopped before it had read a line (proven on the
 * cluster: a Ruby agent, legacy, an app killed in a Job 4 s after its start, 5000 of 5000 lines lost).
 * `proc` is for the tests.
 */
export function exitWithAppScript(
  programs: string[], readSeconds: number, proc = '/proc', stopSeconds?: number, started?: StartedCheck,
): string {
  const B = TOOLS.busybox;
  const wait = started === undefined ? '' :
    `i=0; while [ $t = 0 ] && [ $i -lt ${started.seconds} ] && kill -0 $c 2>/dev/null && ! ${B} wget -q -T 1 -O /dev/null '${started.url}' 2>/dev/null; ` +
    `do i=$((i+1)); ${B} sleep 1 & wait $!; done; `;
  const read = `${wait}${readSeconds > 0 ? `${B} sleep ${readSeconds} & wait $!; ` : ''}`;
  // the agent's stop after the app is bounded as the kubelet bounds a stop: SIGKILL once its stop
  // time has passed (an agent that hangs on its way out must not keep the Job from completing)
  const n = stopSeconds === undefined ? 0 : Math.max(1, Math.ceil(stopSeconds));
  const bound = stopSeconds === undefined ? '' :
    `(${B} sleep ${n}; kill -0 $c 2>/dev/null && echo "exit-with-app: the agent did not stop within ${n} s of its SIGTERM: SIGKILL" >&2; ` +
    'kill -KILL $c 2>/dev/null) & k=$!; ';
  // a SIGTERM from outside while the app runs (the pod is deleted, a failed startup probe) is the
  // sidecar stopped, not done: exit 143, so a pod whose agent was killed is not Succeeded; once the
  // app is gone (t=2) the stop is the wrapper's own and it exits 0
  return `P=${proc}; own=$(${B} cat $P/self/cgroup); pause=$(${B} cat $P/1/cgroup); t=0; k=; ` +
    '"$@" & c=$!; trap \'[ $t = 2 ] || t=1; kill -TERM $c 2>/dev/null\' TERM INT; ' +
    'while [ $t = 0 ]; do kill -0 $c 2>/dev/null || break; ' + appScan(programs) +
    `if [ $alive = 0 ]; then ${read}[ $t = 0 ] && kill -TERM $c 2>/dev/null; t=2; ${bound}break; fi; ` +
    `${B} sleep 1 & wait $!; done; ` +
    'while :; do wait $c; s=$?; kill -0 $c 2>/dev/null || break; done; [ -n "$k" ] && kill $k 2>/dev/null; [ $t = 2 ] && exit 0; [ $t = 1 ] && exit 143; exit $s';
}

/** How the exit-with-app wrapper tells that its agent has started: a URL on loopback, and its budget. */
export interface StartedCheck {
  readonly url: string;
  readonly seconds: number;
}

/**
 * Whether the sidecar has started, as a URL on loopback (the pod's containers share its network):
 * its HTTP liveness probe's (which a backend outage does not fail: an agent's health may fail after
 * output errors), else its HTTP startup probe's; the budget is the startup probe's
 * (`failureThreshold` x `periodSeconds`, as the kubelet gives it). Undefined: no HTTP probe, HTTPS
 * (busybox wget has no TLS here), a named port it does not declare, or a path with more than
 * `[A-Za-z0-9._~/-]` (never spliced into a shell script).
 */
export function startedCheck(container: Json): StartedCheck | undefined {
  const probe = container?.startupProbe;
  const get = container?.livenessProbe?.httpGet ?? probe?.httpGet;
  if (!get || (get.scheme !== undefined && get.scheme !== 'HTTP')) return undefined;
  const port = typeof get.port === 'number' ? get.port
    : (Array.isArray(container.ports) ? container.ports : []).find((p: Json) => p.name === get.port)?.containerPort;
  const path = get.path ?? '/';
  if (!Number.isInteger(port) || !/^\/[A-Za-z0-9._~/-]*$/.test(path)) return undefined;
  return { url: `http://127.0.0.1:${port}${path}`, seconds: (probe?.failureThreshold ?? 3) * (probe?.periodSeconds ?? 10) };
}

/** The programs a wrapper's look takes for the library's sidecars: theirs, and the tools' busybox. */
export function exitWithAppPrograms(sidecars: SidecarSpec[]): string[] {
  return [...new Set([...sidecarPrograms(sidecars), TOOLS.busybox])].sort();
}

/** The container command of a sidecar that exits with the app: the wrapper, then the agent's argv. */
export function exitWithAppCommand(spec: SidecarSpec, programs: string[]): string[] | undefined {
  const argv = agentArgv(spec);
  if (argv === undefined) return undefined;
  return [TOOLS.busybox, 'sh', '-c', exitWithAppScript(
    programs, spec.shutdown.readAfterAppExitSeconds ?? 0, '/proc', spec.shutdown.stopSeconds, startedCheck(spec.container),
  ), 'sh', ...argv];
}

/**
 * The lifecycle hooks of a sidecar in its layout, and whether they need the tools.
 * `appEndSeconds` is the workload's (`appEndOf`, `effectiveAppEnd`): every sidecar that is
 * stopped together with the app must outlive the app's whole shutdown, not its own guess.
 */
export function lifecycleFor(
  spec: SidecarSpec, target: EngineTarget, appEndSeconds: number, programs: string[] = [],
): { lifecycle?: Json; needsTools: boolean } {
  const caps = capabilities(target.minor, target.gate);
  const B = TOOLS.busybox;
  const urls = spec.shutdown.preStopPosts ?? [];
  // each URL is positional parameter i + 1 of the script (see `shell`)
  const posts = urls.map((_url, i) => `${B} wget -q -T 2 -O /dev/null --post-data '' "$${i + 1}"`);
  const lifecycle: Json = {};
  let needsTools = posts.length > 0;

  const delay = preStopDelayOf(spec, target, appEndSeconds);
  if (watchesApp(spec, target, appEndSeconds)) {
    // the wait for the app, bounded by the app's end (busybox timeout), then the read delay
    const read = spec.shutdown.readAfterAppExitSeconds ?? 0;
    const wait = `${B} timeout ${Math.ceil(appEndSeconds)} ${B} sh -c '${appWatchScript(programs)}' || true`;
    lifecycle.preStop = shell([...posts, wait, ...(read > 0 ? [`${B} sleep ${read}`] : [])].join('; '), urls);
    needsTools = true;
  } else if (posts.length === 0) {
    if (delay > 0 && caps.sleepAction) {
      lifecycle.preStop = { sleep: { seconds: delay } };
    } else if (delay > 0) {
      // No shell needed for a plain delay.
      lifecycle.preStop = { exec: { command: [B, 'sleep', String(delay)] } };
      needsTools = true;
    }
  } else {
    lifecycle.preStop = shell([...posts, ...(delay > 0 ? [`${B} sleep ${delay}`] : [])].join('; '), urls);
  }
  if (spec.hold && spec.layout === 'LEGACY') {
    // Regular containers start in order and a postStart hook blocks the next one.
    const { readyUrl, timeoutSeconds } = spec.hold;
    // the URL ($1) holds the user's path, and the count ($2) is passed the same way (see `shell`)
    lifecycle.postStart = shell(
      `i=0; until ${B} wget -q -T 1 -O /dev/null "$1"; do ` +
      `i=$((i+1)); if [ $i -ge "$2" ]; then exit 0; fi; ${B} sleep 1; done`,
      [readyUrl, String(timeoutSeconds)],
    );
    needsTools = true;
  }
  return { lifecycle: Object.keys(lifecycle).length > 0 ? lifecycle : undefined, needsTools };
}

/** What the pod needs, and why (for messages). */
export interface GraceNeed {
  readonly seconds: number;
  readonly explanation: string;
}

/**
 * The grace period the pod needs, in the kubelet's termination order
 * (`pkg/kubelet/kuberuntime/kuberuntime_termination_order.go`, 1.29+; SIDECARS.md §3), with
 * `app` when the app has exited (`appEndOf`: its own `preStop`, then its shutdown). Every
 * sidecar's time runs from the pod's termination: its `preStop` delay (`preStopDelayOf`), then
 * SIGTERM, then its stop time.
 * - Stopped with the app (legacy; native on 1.28, where the stop is not ordered): at once,
 *   each ends at its delay + its stop time.
 * - Native from 1.29: a native sidecar waits for EVERY entry of `spec.containers` (the app and
 *   the legacy sidecars) and for the next native sidecar after it in `initContainers` (the
 *   user's, then ours in reverse order), then for its own `preStop`: app end + longest legacy
 *   stop + the sum of the native stops (the user's at `users.stopSeconds` each), when no
 *   `preStop` delay is longer.
 */
export function graceNeed(
  sidecars: SidecarSpec[], target: EngineTarget, userInit: Json[] = [], app?: AppEnd, initOrder?: string[], userStopSeconds?: number,
): GraceNeed {
  const appEnd = app ?? appEndOf([], appShutdownOf(sidecars));
  const appSeconds = appEnd.seconds;
  const ordered = capabilities(target.minor, target.gate).orderedTermination;
  // (loops, not callbacks: a closure made per call is compiled anew once the collector frees it, bench/README.md)
  const natives: SidecarSpec[] = [];
  const parts: string[] = [];
  // Everything in spec.containers, and the sidecars stopped with the app.
  let mainEnd = appSeconds;
  let end = appSeconds;
  for (const s of sidecars) {
    // stopped one at a time after the app (native from 1.29), below
    if (s.layout === 'NATIVE' && ordered) {
      natives.push(s);
      continue;
    }
    const delay = preStopDelayOf(s, target, appSeconds);
    const done = delay + s.shutdown.stopSeconds;
    end = Math.max(end, done);
    if (s.layout === 'LEGACY') mainEnd = Math.max(mainEnd, done);
    const label = s.layout === 'LEGACY' ? 'legacy' : 'native on 1.28 (unordered stop)';
    parts.push(`${label} ${s.container.name}: preStop delay ${delay}s + stop ${s.shutdown.stopSeconds}s`);
  }
  // The user's native sidecars wait for our legacy ones too; without a stop time of theirs
  // (given, or inferred where ours wait for them: userSidecarInference) they count nothing.
  const users: Json[] = [];
  if (ordered) for (const c of userInit) if (c.restartPolicy === 'Always') users.push(c);
  const userStop = userStopSeconds ?? userSidecarStopOf(sidecars) ?? 0;
  if (natives.length > 0 || users.length > 0) {
    const steps: string[] = [mainEnd === appSeconds ? appEnd.explanation : `every container of spec.containers ${mainEnd}s`];
    let t = mainEnd;
    // Stopped in reverse order of initContainers: by default ours (in rank order) come before
    // the user's; `initOrder` (the names as placed) says otherwise where a sidecar was
    // positioned after a user init container. Names it does not hold (an injected proxy) stay first.
    const chain: ChainLink[] = [];
    for (const s of natives) chain.push(chainLink(chain, initOrder, s.container.name, s.shutdown.stopSeconds, preStopDelayOf(s, target, appSeconds)));
    for (const c of users) chain.push(chainLink(chain, initOrder, c.name, userStop, 0));
    if (initOrder) chain.sort(byInitOrder);
    for (let k = chain.length - 1; k >= 0; k--) {
      const n = chain[k];
      if (n.delay > t) {
        // its own preStop delay (counted from the termination's start) outlasts everything before it
        t = n.delay;
        steps.splice(0, steps.length, `${n.name}'s preStop delay ${n.delay}s`);
      }
      t += n.stop;
      steps.push(`${n.name} ${n.stop}s`);
    }
    end = Math.max(end, t);
    parts.unshift(`native: ${steps.join(' + ')}`);
  } else if (appEnd.explanation !== `app ${appSeconds}s`) {
    parts.unshift(appEnd.explanation);
  }
  return { seconds: Math.ceil(end), explanation: parts.join('; ') };
}

/** A native sidecar in the stop chain of `graceNeed`: its stop time, its preStop delay, its place in initContainers. */
interface ChainLink { readonly name: string; readonly stop: number; readonly delay: number; readonly at: number; readonly i: number }

function chainLink(chain: ChainLink[], initOrder: string[] | undefined, name: string, stop: number, delay: number): ChainLink {
  return { name, stop, delay, at: initOrder?.indexOf(name) ?? 0, i: chain.length };
}

/** initContainers order (`at`), then the order given (`i`). */
function byInitOrder(a: ChainLink, b: ChainLink): number {
  return a.at - b.at || a.i - b.i;
}

/**
 * When the app has exited, at the latest, with the grace period the pod will have: a workload
 * whose own explicit `terminationGracePeriodSeconds` is above what its sidecars need lets the app
 * run that much longer before the kubelet kills it, so the sidecars must outlive that too. Every
 * term of the need grows with the app's end one for one, so the app's end that makes the need
 * equal to the grace is `app + (grace - need)`: the sidecars' delays then use all of the grace,
 * and a sidecar stopped at its end still fits before the kill. With the grace unset (or at least
 * the need) the app has what `appShutdownTime` says; the caller passes no grace for a pod that
 * completes (a Job's: a native agent's delay, which also runs when the app completes, would hold
 * every completed run that long).
 */
export function effectiveAppEnd(app: AppEnd, need: GraceNeed, explicitGrace: number | undefined): AppEnd {
  if (explicitGrace === undefined || explicitGrace <= need.seconds) return app;
  const seconds = app.seconds + (explicitGrace - need.seconds);
  return { ...app, seconds, explanation: `the app, within terminationGracePeriodSeconds ${explicitGrace}, ${seconds}s` };
}

/**
 * How long the capture wrapper (`captureStdout`, src/engine/capture.ts) waits for its copiers after
 * the app's exit, at most: the app container exits that much after the app.
 */
export const CAPTURE_DRAIN_SECONDS = 2;

/** The capture's drain when one of the sidecars wraps the app containers (`captureStdout`), else 0. */
export function captureDrainOf(sidecars: SidecarSpec[]): number {
  for (const s of sidecars) if (s.capture !== undefined) return CAPTURE_DRAIN_SECONDS;
  return 0;
}

/**
 * The workload's app shutdown time: the largest of its sidecars' `appShutdownSeconds`, and the
 * capture's drain after the app's exit (`captureDrainOf`): when the app container has exited.
 */
export function appShutdownOf(sidecars: SidecarSpec[]): number {
  let most = 0;
  for (const s of sidecars) most = Math.max(most, s.shutdown.appShutdownSeconds);
  return most + captureDrainOf(sidecars);
}

/** What the pod's termination comes to: see `planGrace`. */
export interface GracePlan {
  /** When the app has exited, as the sidecars' hooks count it. */
  readonly appEndSeconds: number;
  /**
   * The app containers' time from SIGTERM to exit, for `SidecarTimeline`: `appShutdownTime`, or
   * the budget inferred from the grace (the app's end less its longest readable `preStop` hook).
   */
  readonly appShutdownSeconds: number;
  /** Where the app's budget comes from, in words (`appShutdownTime`, or the manifest's grace). */
  readonly budgetSource: string;
  /** The grace period the pod needs with that app end. */
  readonly need: GraceNeed;
  /** The `terminationGracePeriodSeconds` to write, or undefined to leave the field as it is. */
  readonly write?: number;
  readonly errors: string[];
  /** What was inferred from the manifest, for the user to see. */
  readonly warnings: string[];
}

/**
 * The app's end and the grace period, with what the manifest says where no prop says it
 * (docs/target.md, "Inferred from the manifest"); `explicitGrace` is the workload's own
 * `terminationGracePeriodSeconds` (undefined when unset or cdk8s-plus' written-by-default 30).
 * - No construct gave `appShutdownTime` and the app has a `preStop` hook that cannot be read, or
 *   the explicit grace is below the need (not on a pod that completes): the workload's grace
 *   (Kubernetes' 30 s when unset) is the app's own budget, hook and shutdown included (the kubelet
 *   runs the hook within the grace period, `killContainer`, `kuberuntime_container.go` v1.29.0),
 *   and the sidecars' time is added on top.
 * - A pod that completes with an explicit grace below the need: raised to the need, the app
 *   keeping `appShutdownTime` (a native agent's delay also runs when the app completes: a budget
 *   of the whole grace would hold every completed run that long).
 * - `appShutdownTime` given: an explicit grace below the need is an error (the user said how long
 *   the app takes; the grace then contradicts it).
 * - An explicit grace above the need is given to the app (`effectiveAppEnd`).
 */
export function planGrace(
  where: string, sidecars: SidecarSpec[], target: EngineTarget, userInit: Json[], appContainers: Json[],
  options: { initOrder?: string[]; current?: number; explicitGrace?: number; completes: boolean },
): GracePlan {
  const errors: string[] = [];
  const warnings: string[] = [];
  const users = userSidecarInference(where, sidecars, target, userInit);
  warnings.push(...users.warnings);
  let app = appEndOf(appContainers, appShutdownOf(sidecars));
  let need = graceNeed(sidecars, target, userInit, app, options.initOrder, users.stopSeconds);
  // the library's placed sidecars (a mesh's injected proxy has no appShutdownTime to give)
  let ours = 0;
  let given = false;
  for (const s of sidecars) {
    if (s.shutdown.appShutdownGiven === undefined) continue;
    ours++;
    if (s.shutdown.appShutdownGiven === true) given = true;
  }
  const explicit = options.explicitGrace;
  const hooks = app.unknownHooks.map(n => `'${n}'`).join(', ');
  const budgetFromGrace = ours > 0 && !given &&
    (app.unknownHooks.length > 0 || (explicit !== undefined && explicit < need.seconds && !options.completes));
  let appEnd: number;
  let budgetSource: string;
  if (budgetFromGrace) {
    const budget = explicit ?? KUBERNETES_DEFAULT_GRACE_SECONDS;
    const why = explicit !== undefined ? `terminationGracePeriodSeconds ${budget}` : `Kubernetes' default terminationGracePeriodSeconds ${budget}`;
    // The vendor's number stands for the library's default appShutdownTime; a readable app preStop
    // hook still runs in full (the raised grace no longer cuts it short), then the app's shutdown.
    const hookEnd = app.seconds - appShutdownOf(sidecars);
    const seconds = hookEnd > 0 ? Math.max(app.seconds, budget) : budget;
    app = { ...app, seconds, explanation: seconds === budget ? `the app within its ${why}s` : app.explanation };
    need = graceNeed(sidecars, target, userInit, app, options.initOrder, users.stopSeconds);
    appEnd = app.seconds;
    budgetSource = `inferred from the manifest: no appShutdownTime given, so the workload's ${why}s is the app's own budget` +
      (app.unknownHooks.length > 0 ? ` (its preStop hook included: ${hooks})` : '') +
      `, the sidecars' time added on top (terminationGracePeriodSeconds ${need.seconds})`;
    warnings.push(
      `${where}: no appShutdownTime given, so the workload's ${why}s is taken as the app's own budget` +
      (app.unknownHooks.length > 0 ? ` (its preStop hook included: container(s) ${hooks} have one whose duration the library cannot read, ` +
        'and the kubelet runs it within the grace period)' : '') +
      `; the sidecars' time is added on top: terminationGracePeriodSeconds ${need.seconds} (${need.explanation}). ` +
      'Set appShutdownTime on the sidecar constructs to say how long the app takes instead.',
    );
  } else {
    appEnd = effectiveAppEnd(app, need, options.completes ? undefined : explicit).seconds;
    const drain = captureDrainOf(sidecars);
    const shutdown = appShutdownOf(sidecars) - drain;
    budgetSource = `appShutdownTime ${shutdown}s${given ? '' : ' (the default)'}` +
      (drain > 0 ? ` + captureStdout's drain ${drain}s (the app container exits once the copiers have written the app's last lines)` : '') +
      (appEnd > app.seconds ? `; the workload's terminationGracePeriodSeconds ${explicit} is above the sidecars' need, so the sidecars are kept until the app's end at ${appEnd}s at the latest` : '');
  }
  // The app's shutdown: the inferred budget after its own readable preStop hook (appEndOf: the
  // longest hook + shutdown); else appShutdownTime (a grace above the need lets the app run
  // longer before it is killed, and the sidecars' hooks count that, but it is no stop time).
  const readHooks = appContainers.map(appPreStopSeconds).filter((x): x is number => x !== undefined);
  const appShutdownSeconds = budgetFromGrace ? Math.max(0, appEnd - Math.max(0, ...readHooks)) : appShutdownOf(sidecars);
  const write = graceToWrite(where, need,
    { explicit, current: options.current, given, ours, budgetFromGrace, appShutdown: appShutdownOf(sidecars) }, errors, warnings);
  return { appEndSeconds: appEnd, appShutdownSeconds, budgetSource, need, write, errors, warnings };
}

/**
 * The terminationGracePeriodSeconds to write: raised where the sidecars need more than the pod
 * gets (unset: Kubernetes' 30 s); a grace set below the need is an error where appShutdownTime is
 * given or no sidecar of the library's is there to own the raise, else raised with a warning.
 */
function graceToWrite(
  where: string, need: { seconds: number; explanation: string },
  facts: { explicit?: number; current?: number; given: boolean; ours: number; budgetFromGrace: boolean; appShutdown: number },
  errors: string[], warnings: string[],
): number | undefined {
  const { explicit, current, given, ours, budgetFromGrace, appShutdown } = facts;
  let write: number | undefined;
  if (explicit === undefined) {
    // raised only where the sidecars need more than the pod gets anyway (unset: Kubernetes' 30 s)
    if (need.seconds > (current ?? KUBERNETES_DEFAULT_GRACE_SECONDS)) write = need.seconds;
  } else if (explicit < need.seconds) {
    if (given) {
      errors.push(
        `${where}: terminationGracePeriodSeconds is ${explicit}, but its sidecars need ${need.seconds} ` +
        `(${need.explanation}). Raise terminationGracePeriodSeconds to at least ${need.seconds}, ` +
        'or shorten appShutdownTime or the agents\' drain/flush times.',
      );
    } else if (ours === 0) {
      errors.push(
        `${where}: terminationGracePeriodSeconds is ${explicit}, but its sidecars need ${need.seconds} ` +
        `(${need.explanation}). Raise terminationGracePeriodSeconds to at least ${need.seconds}.`,
      );
    } else {
      write = need.seconds;
      if (!budgetFromGrace) {
        warnings.push(
          `${where}: terminationGracePeriodSeconds ${explicit} is below what its sidecars need, raised to ${need.seconds} ` +
          `(${need.explanation}); its pods complete, so the app keeps appShutdownTime (${appShutdown}s) rather than the whole grace period. ` +
          'Set appShutdownTime on the sidecar constructs to say how long the app takes.',
        );
      }
    }
  }
  return write;
}
