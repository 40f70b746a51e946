/**
 * The SIGTERM hold of a native sidecar, read from its container as the manifest has it
 * (src/engine/shutdown.ts `holdSigtermScript`; test/exit-with-app.test.ts runs the script under a
 * real busybox sh and measures the hold): `busybox sh -c SCRIPT sh ARGV...`, the script waiting
 * `sleep N` after its SIGTERM before it sends the agent its own.
 */
const HOLD = /^t=0; trap 't=1' TERM INT; "\$@" & c=\$!; .* sleep (\d+) & wait \$!; kill -TERM \$c /;

/** Seconds the container's wrapper holds SIGTERM back from the agent; 0 without the wrapper. */
export function sigtermHoldOf(container: any): number {
  const cmd = container?.command;
  if (!Array.isArray(cmd) || cmd[0] !== '/sidecar-tools/busybox' || cmd[1] !== 'sh' || cmd[2] !== '-c') return 0;
  const m = HOLD.exec(String(cmd[3]));
  return m ? Number(m[1]) : 0;
}

/** The agent's own argv: the wrapper's arguments when it is held, else command + args. */
export function agentArgvOf(container: any): string[] {
  if (sigtermHoldOf(container) > 0) return container.command.slice(5);
  return [...(container.command ?? []), ...(container.args ?? [])];
}
