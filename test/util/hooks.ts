/**
 * What the lifecycle hooks of the containers the library adds may run, checked on the output
 * (not by restating when the library needs its hook tools):
 *
 * - The agents' images have nothing a hook could use: Fluent Bit's is distroless
 *   (fluent/fluent-bit dockerfiles/Dockerfile at v5.1.1: `FROM gcr.io/distroless/cc-debian13`,
 *   as src/facts/images.ts notes), Vector's `-distroless-libc` (vectordotdev/vector
 *   distribution/docker/distroless-libc/Dockerfile: `FROM gcr.io/distroless/cc-debian*`, only
 *   /usr/bin/vector copied in), the collector's `FROM scratch` with only /otelcol
 *   (open-telemetry/opentelemetry-collector-releases distributions/otelcol/Dockerfile; the
 *   Dockerfiles of Vector and the collector as stored, not read at the pinned tags). Envoy's and
 *   Fluentd's images are not distroless, but every image can be replaced by the user's
 *   (`image`), of which nothing is known: the hooks may rely on none of them. So a hook may run
 *   only what the library brings itself: a program under /sidecar-tools/ (docs/shutdown.md: a
 *   static busybox copied there by the `sidecar-tools` init container), or, inside a `sh -c` of
 *   that busybox, the shell's own builtins.
 * - The `sleep` action: kubernetes/kubernetes pkg/features/kube_features.go of the 1.30 line
 *   (as stored; the tag itself not read): PodLifecycleSleepAction "alpha: v1.29, beta: v1.30",
 *   `{Default: true, PreRelease: featuregate.Beta}`: off by default on 1.29, on from 1.30. A sleep of 0 s needs PodLifecycleSleepActionAllowZero
 *   (beta in 1.33) and does nothing anyway.
 */

export const TOOLS_NAME = 'sidecar-tools';
export const TOOLS_PATH = '/sidecar-tools';
const BUSYBOX = `${TOOLS_PATH}/busybox`;

/** One simple command of a hook: the program, the busybox applet it runs (if busybox), its arguments. */
export interface HookCommand {
  readonly program: string;
  /** `busybox sleep 5` -> 'sleep'; a program that is not busybox: its own name. */
  readonly applet: string;
  readonly args: string[];
  /** It is a builtin of the hook's shell (`[`, `exit`, ...). */
  readonly builtin: boolean;
}

/** Builtins of busybox's ash that the hook scripts may use. */
const SHELL_BUILTINS = new Set(['[', 'test', 'exit', 'true', 'false', ':', 'echo', 'return', 'break', 'continue']);
/** Shell keywords that start or end a compound command. */
const KEYWORDS = new Set(['if', 'then', 'else', 'elif', 'fi', 'until', 'while', 'do', 'done', '!']);

function command(parts: string[], inShell: boolean): HookCommand | undefined {
  let w = [...parts];
  while (w.length > 0 && (KEYWORDS.has(w[0]) || /^[A-Za-z_][A-Za-z0-9_]*=\S*$/.test(w[0]))) w = w.slice(1);
  if (w.length === 0) return undefined;
  const [program, ...args] = w;
  if (program === BUSYBOX && args.length > 0) return { program, applet: args[0], args: args.slice(1), builtin: false };
  return { program, applet: program.split('/').pop()!, args, builtin: inShell && SHELL_BUILTINS.has(program) };
}

/**
 * The simple commands an exec hook runs, in order: the command itself, or, for
 * `busybox sh -c '<script>' [sh ARG...]`, the commands of the script (split at `;`, `&&`, `||`, `|`
 * and new lines, after the keywords of `until`/`if`; quotes are not split; a word `"$N"` is the
 * script's Nth argument).
 */
export function hookCommands(exec: string[]): { shell: boolean; commands: HookCommand[] } {
  if (exec[0] === BUSYBOX && exec[1] === 'sh' && exec[2] === '-c' && (exec.length === 4 || exec[4] === 'sh')) {
    // `sh -c SCRIPT sh ARG1 ARG2 ...`: a word that is exactly "$N" is read as its argument
    const params = exec.slice(5);
    const segments = exec[3].split(/;|&&|\|\||\||\n/);
    const commands = segments
      .map(seg => command(wordsOf(seg).map(w => /^"\$[1-9]"$/.test(w) ? params[Number(w[2]) - 1] ?? w : w), true))
      .filter((c): c is HookCommand => c !== undefined);
    return { shell: true, commands };
  }
  const c = command(exec, false);
  return { shell: false, commands: c ? [c] : [] };
}

/** A shell segment's words (single-quoted words kept whole, quotes removed). */
function wordsOf(segment: string): string[] {
  return [...segment.matchAll(/'([^']*)'|(\S+)/g)].map(m => m[1] ?? m[2]);
}

/** The exec hooks of a container: `[hook name, command]`. */
export function execHooks(c: any): Array<[string, string[]]> {
  return ['preStop', 'postStart']
    .filter(h => Array.isArray(c.lifecycle?.[h]?.exec?.command))
    .map(h => [h, c.lifecycle[h].exec.command]);
}

/** The container runs something under /sidecar-tools/ in a hook. */
export function usesTools(c: any): boolean {
  return execHooks(c).some(([, exec]) => hookCommands(exec).commands.some(x => x.program.startsWith(`${TOOLS_PATH}/`)));
}

/** A sleep of the hook (the `sleep` action, or `sleep N` in the exec), in seconds; undefined without one. */
export function hookSleep(hook: any): number | undefined {
  if (hook?.sleep) return Number(hook.sleep.seconds);
  if (!hook?.exec) return undefined;
  const sleeps = hookCommands(hook.exec.command).commands.filter(c => c.applet === 'sleep');
  return sleeps.length > 0 ? Number(sleeps[sleeps.length - 1].args[0]) : undefined;
}

/** The same hook with its (last) sleep `by` seconds shorter. */
export function shortenedSleep(hook: any, by: number): any {
  if (hook.sleep) return { ...hook, sleep: { ...hook.sleep, seconds: hook.sleep.seconds - by } };
  const cmd: string[] = [...hook.exec.command];
  const n = hookSleep(hook)!;
  // in a shell hook the sleep is in the script (index 3; its arguments follow it)
  const shell = hookCommands(cmd).shell;
  const at = shell ? 3 : cmd.length - 1;
  cmd[at] = shell
    ? cmd[at].replace(new RegExp(`(sleep )${n}(?![0-9])(?![^]*sleep [0-9])`), `$1${n - by}`)
    : String(n - by);
  return { ...hook, exec: { ...hook.exec, command: cmd } };
}

/**
 * The hooks of a container the library added, on Kubernetes 1.`minor`: each runs only what exists
 * (see above); a sleep action only where the target has it, never of 0 s; a plain delay without a
 * shell around it (docs/shutdown.md: "A plain delay runs `busybox sleep N` directly"), and as the
 * sleep action where the target has one (the tools are there for what the sleep action cannot
 * do); a preStop whose duration the termination simulation can read: sleeps, and requests to
 * the container's own localhost with a timeout.
 */
export function hookViolations(c: any, minor: number): string[] {
  const v: string[] = [];
  const at = `container '${c.name}'`;
  for (const hook of ['preStop', 'postStart']) {
    const h = c.lifecycle?.[hook];
    if (!h) continue;
    if (h.sleep) {
      if (minor < 30) v.push(`${at}: ${hook} sleep action on 1.${minor}, where PodLifecycleSleepAction is off`);
      if (!(Number(h.sleep.seconds) > 0)) v.push(`${at}: ${hook} sleeps ${h.sleep.seconds} s`);
    }
    if (!h.exec) continue;
    const { shell, commands } = hookCommands(h.exec.command);
    for (const x of commands) {
      if (!x.builtin && !x.program.startsWith(`${TOOLS_PATH}/`)) v.push(`${at}: ${hook} runs '${x.program}', which the agent's image need not have`);
      if (x.applet === 'sleep' && !(Number(x.args[0]) > 0) && hook === 'preStop') v.push(`${at}: ${hook} sleeps ${x.args[0]} s`);
    }
    const onlySleep = commands.length === 1 && commands[0].applet === 'sleep';
    if (shell && onlySleep) v.push(`${at}: ${hook} wraps a plain sleep in a shell: ${JSON.stringify(h.exec.command)}`);
    if (onlySleep && minor >= 30) v.push(`${at}: ${hook} runs a plain sleep through busybox on 1.${minor}, which has the sleep action`);
    if (hook === 'preStop') {
      for (const x of commands) {
        const local = x.applet === 'wget' && x.args.includes('-T') && x.args.some(a => /^http:\/\/127\.0\.0\.1:\d+\//.test(a));
        if (x.applet !== 'sleep' && !local) v.push(`${at}: preStop runs '${x.applet}', whose duration the termination simulation cannot read`);
      }
    }
  }
  return v;
}
