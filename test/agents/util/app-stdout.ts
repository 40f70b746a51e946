/**
 * The app of issue 51's agent tests, shared by every agent's module: the app container's command
 * as `WithLogAgent` `captureStdout` synthesized it (the capture wrapper, run by this machine's
 * busybox), around a shell loop that prints numbered lines (`lnum=<i>;`, then `lnum=last;`), and
 * the count of the numbers an agent's records carry.
 */
import { ChildProcess, spawn } from 'child_process';
import * as fs from 'fs';
import { LogPod } from './pod';
import { APP_BUSYBOX } from '../../../src/engine/capture';

/** This machine's busybox (Debian: busybox-static), or undefined. */
export const BUSYBOX = ['/usr/bin/busybox', '/bin/busybox'].find(p => fs.existsSync(p));

/** The script that prints `n` numbered lines of 70 bytes each, then `lnum=last;` without a newline. */
export const numberedLines = (n: number) => `i=1; while [ $i -le ${n} ]; do echo "lnum=$i; ${'x'.repeat(60)}"; i=$((i+1)); done; printf "lnum=last;"`;

/**
 * The synthesized command of the app container, its busybox this machine's, its `/app/run` (the
 * image's command, the last word) replaced by `script` under `sh -c`. `maxFileBytes` overrides the
 * wrapper's own size argument (the prop's least is 1 MiB) to rotate faster than the prop allows.
 */
export function capturedArgv(pod: LogPod, busybox: string, script: string, maxFileBytes?: number): string[] {
  const command: string[] = pod.app.command.map((a: string) => a === APP_BUSYBOX ? busybox : a.split(APP_BUSYBOX).join(busybox));
  if (command[command.length - 1] !== '/app/run') throw new Error(`the app's command does not end with its own: ${JSON.stringify(pod.app.command)}`);
  if (maxFileBytes !== undefined) command[6] = String(maxFileBytes);
  return [...command.slice(0, -1), busybox, 'sh', '-c', script];
}

/** The capture files' directory on this machine (the wrapper's argument, under the test's log directory). */
export const captureDirectory = (pod: LogPod): string => pod.app.command[5].replace('/var/log/app', pod.logDirectory);

/**
 * Runs the captured app to its exit in its own process group (the deletions the wrapper still
 * waits on are stopped with it by `stopGroup`); `onStdout` gets the container's stdout.
 */
export function runCaptured(argv: string[], onStdout?: (chunk: Buffer) => void): { child: ChildProcess; exit: Promise<number | null> } {
  const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', onStdout ? 'pipe' : 'ignore', 'inherit'], detached: true });
  if (onStdout) child.stdout!.on('data', onStdout);
  return { child, exit: new Promise(resolve => child.on('close', c => resolve(c))) };
}

/** Stops what is left of a `runCaptured` app's process group. */
export function stopGroup(child: ChildProcess | undefined): void {
  if (child?.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // gone
  }
}

/** How often each `lnum=<i|last>;` occurs in the texts (an agent's records' line fields). */
export function lineCounts(texts: Array<string | undefined>): Map<string, number> {
  const seen = new Map<string, number>();
  for (const t of texts) {
    const m = /lnum=(\d+|last);/.exec(t ?? '');
    if (m) seen.set(m[1], (seen.get(m[1]) ?? 0) + 1);
  }
  return seen;
}

/** The numbers 1 to `n` that `seen` does not have. */
export function missingOf(seen: Map<string, number>, n: number): string[] {
  return Array.from({ length: n }, (_, i) => String(i + 1)).filter(k => !seen.has(k));
}
