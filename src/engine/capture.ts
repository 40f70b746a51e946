/**
 * Layer 2: what the app writes to stdout and stderr, made a log file the agent tails
 * (`WithLogAgent` `captureStdout`, docs/log-agents.md "Three ways in"), and the kubelet's own log
 * files of the pod (`podLogs`). Plain JSON in, plain JSON out.
 *
 * The capture runs the app's own command under a wrapper (busybox from `sidecar-tools`):
 * - the wrapper (the container's first process) starts one copier per stream, then the app as
 *   its child with the app's stdout and stderr on two FIFOs; each copier (busybox `awk`) writes
 *   every line it reads at once to the container's own stdout (or stderr), so `kubectl logs` is
 *   unchanged, and to `<dir>/stdout.<n>.log` (`stderr.<n>.log`), flushing both after each line;
 * - every signal the kubelet or a user sends to the wrapper (TERM, INT, HUP, QUIT, USR1, USR2) is
 *   forwarded to the app at once; the wrapper exits with the app's status (`137` for an app
 *   killed with SIGKILL), once the copiers have written the app's last lines (a last line without
 *   its newline is written with one), at most 2 s after the app's exit (a child of the app that
 *   keeps the pipes open would otherwise hold the container); deletions still waiting are not
 *   waited for (a restart in place deletes those files);
 * - a file is closed at `maxBytes` and the next number begun; a closed file is deleted
 *   `CAPTURE_DELETE_AFTER_SECONDS` after it was closed, never sooner: longer than every agent
 *   takes to find a new file (a scan every second, or a glob after an idle backoff: ~3 s at
 *   most; each agent's config.ts says its own), so no file goes before an agent has opened it, and an agent keeps
 *   reading a deleted file it has open to its end. At most `maxFiles` per stream exist at once
 *   (the current one included): a copier that would begin one more waits for the oldest deletion,
 *   the app's writes waiting meanwhile (an app that fills `maxFiles - 1` files within that time is
 *   slowed to that rate). No file is ever renamed or truncated: the agents find the new file by
 *   their glob. The files of an earlier run of the container (a restart in place) are deleted the
 *   same way and count towards `maxFiles`.
 * The app's stdin is kept (`9<&0`: an asynchronous command of a non-interactive shell otherwise
 * gets /dev/null). If the directory cannot be set up, the app runs as before, uncaptured, with a
 * line on stderr that says so.
 */
import { CAPTURE_DRAIN_SECONDS, TOOLS } from './shutdown';
import { Json } from '../private/json';

/**
 * The busybox of `sidecar-tools`, spelled apart from `TOOLS.busybox`: the exit-with-app wrapper of
 * a legacy Job's sidecar and the `watchAppExit` wait tell the sidecars' containers by the program
 * (`argv[0]`) of their processes (`appScan`, src/engine/shutdown.ts), and the capture's processes
 * are the app's.
 */
export const APP_BUSYBOX = '/sidecar-tools/./busybox';

/** The directory of one container's capture files, inside the log directory. */
export function captureDirectory(logDirectory: string, container: string): string {
  return `${logDirectory}/.stdout-${container}`;
}

/**
 * How long a closed capture file is kept before it is deleted: longer than every agent's scan for
 * new files (a 1 s scan, or a glob after an idle backoff of up to 2048 ms: ~3 s; each agent's
 * config.ts), with room for a loaded node.
 */
export const CAPTURE_DELETE_AFTER_SECONDS = 10;

/** The glob of every capture file of a log directory (what the agents tail). */
export function captureGlob(logDirectory: string): string {
  return `${logDirectory}/.stdout-*/*.log`;
}

/** What the engine is asked to do for `captureStdout` (SidecarSpec.capture). */
export interface CaptureSpec {
  /** The shared log directory (mounted in every app container). */
  readonly logDirectory: string;
  /** The app containers to wrap; undefined: every app container. */
  readonly containers?: string[];
  /**
   * The program for an app container that has no `command` (the image's ENTRYPOINT): `captureStdout.command`.
   * Each `$` is doubled by the engine: the kubelet expands `$(NAME)` in the wrapper's arguments.
   */
  readonly command?: string[];
  /** Size at which a file is closed and the next begun. */
  readonly maxFileBytes: number;
  /** Files kept per stream (the current one included). */
  readonly maxFiles: number;
}

/**
 * The copier of one stream: every line read, to stdout and to the stream's current file, each
 * flushed at once; the size counted in characters of the line plus its newline (busybox awk's
 * `length`: bytes, or characters in a UTF-8 build, so a file can pass `m` by up to 4x on non-ASCII
 * text); at `m` the file is closed, named on the `r` FIFO for deletion (`p` files are then
 * waiting for theirs) and the next number begun, once fewer than `n` files exist: else it first
 * reads one deletion's line from the stream's `a` FIFO (at BEGIN too, where `p` is the count of an
 * earlier run's files); `end` there (the app has exited: what is left is in the pipe) lifts the
 * bound, so the app's last lines are not held back by a deletion. A last line without a newline is a record too (`print` adds one). Its
 * values come as `-v` assignments of the library's own checked text (a path of letters, digits,
 * `.`, `_`, `-`, `/`; numbers). No `system()` nor pipe: they would need a `/bin/sh` in the image.
 */
const COPIER = 'function room() { while (p >= n) { if ((getline x < a) <= 0 || x == "end") { n = p + 1e9; break } p-- } } ' +
  'BEGIN { i = last + 1; f = d "/" s "." i ".log"; b = 0; room() } ' +
  '{ print; fflush(); print >> f; fflush(f); b += length($0) + 1; ' +
  'if (b >= m) { close(f); print f > r; fflush(r); p++; i++; f = d "/" s "." i ".log"; b = 0; room() } }';

/**
 * The wrapper as a busybox shell script: `sh -c SCRIPT sh <dir> <maxBytes> <maxFiles> <app argv...>`.
 * Every value is a positional parameter, never spliced into the text (docs/security.md, "No user
 * value in a shell"); no `$$` and no `$(`, which the kubelet would read in a container's command
 * (`third_party/forked/golang/expansion/expand.go`). `busybox` and `deleteAfterSeconds` are for the tests.
 */
export function captureScript(busybox: string = APP_BUSYBOX, deleteAfterSeconds: number = CAPTURE_DELETE_AFTER_SECONDS): string {
  const B = busybox;
  const copier = (stream: string) =>
    `( exec 9<&-; umask 022; exec $B awk -v d="$d" -v s=${stream} -v last=$l -v p=\${#c} -v m="$m" -v n="$n" -v r="$d/.rm" -v a="$d/.ack-${stream}" '${COPIER}' )`;
  return [
    `B=${B}; d=$1; m=$2; n=$3; shift 3`,
    // set up, or run the app uncaptured
    'if ! { $B mkdir -p "$d" && $B rm -f "$d/.out" "$d/.err" "$d/.rm" "$d/.ack-stdout" "$d/.ack-stderr" && ' +
    '$B mkfifo "$d/.out" "$d/.err" "$d/.rm" "$d/.ack-stdout" "$d/.ack-stderr"; }; then ' +
    'echo "capture: cannot set up $d: the app runs without its stdout captured" >&2; exec "$@"; fi',
    // deletions: each file named on .rm is deleted that long after, then a line on its stream's
    // .ack FIFO lets its copier begin one more file. The loop holds .rm open for writing too (it
    // never sees an end) and each .ack FIFO (its copier never sees one either).
    '( exec 9<&- >/dev/null 2>&1 7<> "$d/.ack-stdout" 8<> "$d/.ack-stderr"; while IFS= read -r f && [ -n "$f" ]; do ' +
    `case $f in */stdout.*) ( $B sleep ${deleteAfterSeconds}; $B rm -f "$f"; echo >&7 ) & ;; *) ( $B sleep ${deleteAfterSeconds}; $B rm -f "$f"; echo >&8 ) & ;; esac; ` +
    'done ) <> "$d/.rm" & r=$!',
    // a stream's files of an earlier run of this container (a restart in place): named for deletion
    // and counted (`c` has a character each), and the last number used
    'old() { l=-1; c=; for f in "$d/$1".*.log; do k=${f##*/}; k=${k#"$1".}; k=${k%.log}; ' +
    'case $k in ""|*[!0-9]*) ;; *) [ "$k" -gt $l ] && l=$k; echo "$f" >> "$d/.rm"; c="$c.";; esac; done; }',
    'exec 9<&0',
    `old stdout; ${copier('stdout')} < "$d/.out" & o=$!`,
    `old stderr; ${copier('stderr')} < "$d/.err" >&2 & e=$!`,
    '"$@" <&9 9<&- > "$d/.out" 2> "$d/.err" & a=$!',
    'exec 9<&-',
    ...['TERM', 'INT', 'HUP', 'QUIT', 'USR1', 'USR2'].map(sig => `trap 'g=1; kill -${sig} $a 2>/dev/null' ${sig}`),
    // a trapped signal ends `wait` with 128+n before the app has exited: wait again. The shell may
    // have reaped the app meanwhile; `wait` then answers its kept status, once (127 after that:
    // the status already taken stays). `kill -0` cannot tell: it fails for an app already reaped.
    's=; while :; do g=; wait $a; w=$?; [ $w = 127 ] && [ -n "$s" ] && break; s=$w; [ -n "$g" ] && [ $s -gt 128 ] || break; done',
    // the app has exited: a copier waiting for a deletion goes on at once (what is left is in the
    // pipe); the copiers end when the app's end of the pipes closes; a child of the app that keeps them open is not waited for
    'echo end >> "$d/.ack-stdout"; echo end >> "$d/.ack-stderr"',
    `( exec >/dev/null 2>&1; $B sleep ${CAPTURE_DRAIN_SECONDS}; kill $o $e ) & t=$!`,
    'for p in $o $e; do while kill -0 $p 2>/dev/null; do wait $p; done; done',
    // the deletion loop ends (its waiting deletions end with the container; a restart in place names those files again)
    'echo >> "$d/.rm"; kill $t 2>/dev/null; exit $s',
  ].join('\n');
}

/** The container command that runs `argv` under the capture wrapper. */
export function captureCommand(dir: string, maxBytes: number, maxFiles: number, argv: string[]): string[] {
  return [APP_BUSYBOX, 'sh', '-c', captureScript(), 'sh', dir, String(maxBytes), String(maxFiles), ...argv];
}

/**
 * The app containers with the capture in place: each chosen container runs its own command
 * (`command` + `args`, or `spec.command` + `args` where the container has no command) under the
 * wrapper, with the tools mounted read-only. Errors name the prop to set.
 */
export function applyCapture(where: string, owner: string, capture: CaptureSpec, containers: Json[]): { containers: Json[]; errors: string[] } {
  const errors: string[] = [];
  const names = containers.map(c => c.name);
  const chosen = capture.containers ?? names;
  for (const n of chosen) {
    if (!names.includes(n)) {
      errors.push(
        `${owner}: captureStdout.containers names '${n}', which is not an app container of ${where} ` +
        `(${names.map(x => `'${x}'`).join(', ') || 'none'}); name app containers of spec.containers.`,
      );
    }
  }
  const out = containers.map(c => {
    if (!chosen.includes(c.name)) return c;
    const own: string[] | undefined = Array.isArray(c.command) && c.command.length > 0 ? c.command.map(String) : undefined;
    if (own === undefined && (capture.command === undefined || capture.command.length === 0)) {
      errors.push(
        `${owner}: captureStdout runs the app's command under a wrapper, but container '${c.name}' of ${where} has no command ` +
        '(it runs its image\'s entrypoint, which the library cannot read and does not guess). Set captureStdout.command to the ' +
        'image\'s ENTRYPOINT (and its CMD when the container has no args), e.g. from `docker inspect`, or give the container a command.',
      );
      return c;
    }
    if (c.name.length > 0 && c.command?.[0] === APP_BUSYBOX) return c;
    // the kubelet expands `$(NAME)` in command and args alike; an image's entrypoint is not expanded: `$` doubled
    const program = own ?? capture.command!.map(x => x.split('$').join('$$'));
    const args: string[] = Array.isArray(c.args) ? c.args.map(String) : [];
    const wrapped: Json = {};
    const dir = captureDirectory(capture.logDirectory, c.name);
    for (const k of Object.keys(c)) if (k !== 'args') wrapped[k] = c[k];
    wrapped.command = captureCommand(dir, capture.maxFileBytes, capture.maxFiles, [...program, ...args]);
    const mounts: Json[] = Array.isArray(c.volumeMounts) ? [...c.volumeMounts] : [];
    if (!mounts.some(m => m.mountPath === TOOLS.mountPath)) mounts.push({ mountPath: TOOLS.mountPath, name: TOOLS.volumeName, readOnly: true });
    wrapped.volumeMounts = mounts;
    return sortKeysShallow(wrapped);
  });
  return { containers: out, errors };
}

function sortKeysShallow(o: Json): Json {
  const out: Json = {};
  for (const k of Object.keys(o).sort()) out[k] = o[k];
  return out;
}

/** What the engine is asked to do for `podLogs` (SidecarSpec.podLogs). */
export interface PodLogsSpec {
  /** The app container whose kubelet log files the agent reads; undefined: the only app container. */
  readonly container?: string;
  /** The agent's env var that gets the path (the agent's config reads it). */
  readonly envName: string;
}

/** Where the kubelet keeps the pod's container logs (kubernetes pkg/kubelet/kuberuntime/kuberuntime_manager.go, `podLogsRootDirectory`). */
export const POD_LOGS_ROOT = '/var/log/pods';

/**
 * The env var of the agent that holds the glob of the app container's log files:
 * `/var/log/pods/<namespace>_<name>_<uid>/<container>/*.log` (kubelet `BuildPodLogsDirectory` and
 * `BuildContainerLogsDirectory`, pkg/kubelet/kuberuntime/helpers.go, v1.37.2), built by the kubelet
 * from the downward API variables before it in the container's env (`$(POD_NAMESPACE)`, ...: a
 * hostPath cannot take the downward API, an env value can).
 */
export function podLogsEnv(spec: PodLogsSpec, container: string): Json {
  return { name: spec.envName, value: `${POD_LOGS_ROOT}/$(POD_NAMESPACE)_$(POD_NAME)_$(POD_UID)/${container}/*.log` };
}

/** The app container the pod-logs source reads, or an error naming `podLogs.container`. */
export function podLogsContainer(where: string, owner: string, spec: PodLogsSpec, containers: Json[]): { container?: string; error?: string } {
  const names = containers.map(c => String(c.name));
  if (spec.container !== undefined) {
    if (names.includes(spec.container)) return { container: spec.container };
    return {
      error: `${owner}: podLogs.container is '${spec.container}', which is not an app container of ${where} ` +
        `(${names.map(x => `'${x}'`).join(', ') || 'none'}); name the app container whose logs the agent reads.`,
    };
  }
  if (names.length === 1) return { container: names[0] };
  return {
    error: `${owner}: podLogs reads the kubelet's log files of one app container, and ${where} has ${names.length} ` +
      `(${names.map(x => `'${x}'`).join(', ')}); set podLogs.container to the one to read (the library does not guess).`,
  };
}
