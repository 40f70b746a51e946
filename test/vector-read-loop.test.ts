/**
 * Vector's last line (issue 39): its file source polls, and reads nothing more after SIGTERM.
 *
 * A Rust build of Vector takes over an hour on this project's machines, so the real binary is not
 * run here. Instead its read loop is modelled exactly as the source has it, and the model decides
 * whether a line is read: `lib/file-source/src/file_server.rs` `FileServer::run`, vectordotdev/vector
 * v0.57.0 (the pinned image), the same loop at v0.54.0 (the lowest release the config is written for):
 * - line 101: `let mut backoff_cap: usize = 1;`
 * - lines 168-173: each pass globs for new files only when `next_glob_time <= now`, then schedules the
 *   next glob `glob_minimum_cooldown` later (`glob_minimum_cooldown_ms`, default 1000 ms:
 *   `src/sources/file.rs` line 260);
 * - lines 283-337: each watched file is read line by line to its end, or until more than
 *   `max_read_bytes` (default 2048: `src/sources/file.rs` line 268) were read from it in this pass;
 * - lines 395-400: `backoff_cap` doubles (at most 2048) after a pass that read nothing, is 1 after
 *   one that read something; the sleep is `backoff_cap - global_bytes_read` ms (saturating);
 * - lines 407-429: `select(shutdown_data, sleep)`: the shutdown signal ends the sleep (and is taken
 *   first when it is already there): the source closes its channel and returns, without another pass.
 *
 * The engine runs a native Vector under a wrapper that holds its SIGTERM back by its read delay
 * (src/engine/shutdown.ts `holdSigtermScript`, read from the manifest here); the wrapper itself is
 * run under a real busybox below.
 */
import { ChildProcess, spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Testing } from 'cdk8s';
import * as fc from 'fast-check';
import { VECTOR_SHUTDOWN } from '../src/agents/vector/config';
import { TOOLS, holdSigtermScript } from '../src/engine/shutdown';
import { LogAgent } from '../src/log-agent';
import { WithLogAgent } from '../src/with-log-agent';
import { kplusWorkload, manifestOf, newChart, podSpecOf } from './util/fixtures';
import { sigtermHoldOf } from './util/sigterm-hold';

/** `src/sources/file.rs` defaults (v0.57.0 as v0.54.0), which the library's vector.yaml leaves as they are. */
const GLOB_MINIMUM_COOLDOWN_MS = 1000;
const MAX_READ_BYTES = 2048;
const BACKOFF_CAP_MAX = 2048;

/** A line the app writes: into `file`, at `at` ms, `bytes` long (newline included). */
interface Write { readonly file: string; readonly at: number; readonly bytes: number }

interface Run {
  /** The lines read, by index into the writes. */
  readonly read: Set<number>;
  /** When the source returned (the shutdown was taken). */
  readonly stoppedAt: number;
}

/**
 * `FileServer::run` over a history of writes: the app's files are created by their first write
 * (`read_from: beginning`, so a new file is read from its start); `passMs` is how long one pass
 * takes (glob, reads, send), `shutdownAt` when Vector gets SIGTERM (its shutdown signal).
 */
function runFileServer(writes: readonly Write[], shutdownAt: number, passMs: number, startAt = 0): Run {
  let now = startAt;
  let backoffCap = 1; // line 101
  let nextGlobTime = startAt;
  const watched = new Set<string>();
  const position = new Map<string, number>(); // index of the next unread write of each file
  const read = new Set<number>();
  const byFile = new Map<string, number[]>();
  writes.forEach((w, i) => byFile.set(w.file, [...byFile.get(w.file) ?? [], i]));
  for (;;) {
    // lines 168-173: glob, but not more often than the cooldown
    if (nextGlobTime <= now) {
      nextGlobTime = now + GLOB_MINIMUM_COOLDOWN_MS;
      for (const [file, idx] of byFile) if (writes[idx[0]].at <= now) watched.add(file);
    }
    // lines 283-337: each watched file, line by line, to its end or past max_read_bytes
    let globalBytesRead = 0;
    for (const file of watched) {
      const idx = byFile.get(file)!;
      let at = position.get(file) ?? 0;
      let bytesRead = 0;
      while (at < idx.length && writes[idx[at]].at <= now) {
        read.add(idx[at]);
        bytesRead += writes[idx[at]].bytes;
        at++;
        if (bytesRead > MAX_READ_BYTES) break;
      }
      position.set(file, at);
      globalBytesRead += bytesRead;
    }
    now += passMs;
    // lines 395-400
    backoffCap = globalBytesRead === 0 ? Math.min(BACKOFF_CAP_MAX, backoffCap * 2) : 1;
    const backoff = Math.max(0, backoffCap - globalBytesRead);
    // lines 407-429: select(shutdown, sleep), the shutdown polled first
    if (shutdownAt <= now + backoff) return { read, stoppedAt: Math.max(now, shutdownAt) };
    now += backoff;
  }
}

/** Vector's SIGTERM hold in the manifest the library writes, in ms (native, 1.29+). */
function manifestHoldMs(version: string): number {
  const { chart } = newChart();
  new WithLogAgent(chart, 'logs', { workload: kplusWorkload(chart, 'Deployment'), kubernetesVersion: version, agent: LogAgent.vector() });
  const spec = podSpecOf(manifestOf(Testing.synth(chart), 'Deployment'));
  return 1000 * sigtermHoldOf([...spec.initContainers ?? [], ...spec.containers].find((c: any) => c.name === 'log-agent'));
}

/**
 * A history: the app idles `idle` ms (Vector's backoff grows to its cap), writes lines into one or
 * two files (the second possibly created late), and exits at its last write. The kubelet sends the
 * sidecar's SIGTERM `turn` ms after the app's exit (0 to 1 s, test/timeline.test.ts); the agent
 * gets it `hold` ms later.
 */
interface History { idle: number; gaps: number[]; files: string[]; sizes: number[]; passMs: number; turn: number }
const history: fc.Arbitrary<History> = fc.record({
  idle: fc.integer({ min: 0, max: 60_000 }),
  gaps: fc.array(fc.integer({ min: 0, max: 5_000 }), { minLength: 1, maxLength: 8 }),
  files: fc.array(fc.constantFrom('app.log', 'late.log'), { minLength: 8, maxLength: 8 }),
  sizes: fc.array(fc.integer({ min: 1, max: 3_000 }), { minLength: 8, maxLength: 8 }),
  // a pass that reads a few KiB (glob, reads, send into the topology): well under 100 ms
  passMs: fc.integer({ min: 0, max: 100 }),
  turn: fc.integer({ min: 0, max: 1_000 }),
});

function writesOf(h: History): { writes: Write[]; appExit: number } {
  let at = h.idle;
  const writes = h.gaps.map((gap, i) => {
    at += gap;
    return { file: h.files[i], at, bytes: h.sizes[i] };
  });
  return { writes, appExit: at };
}

describe('Vector\'s file server (file_server.rs v0.57.0, modelled): the app\'s last line in the native layout', () => {
  test('the model reads what it should: lines written while it polls are read at its next pass', () => {
    const writes: Write[] = [{ file: 'app.log', at: 0, bytes: 10 }, { file: 'app.log', at: 500, bytes: 10 }];
    expect([...runFileServer(writes, 100_000, 0).read]).toEqual([0, 1]);
    // a shutdown before the next pass loses the line written after the last one
    expect([...runFileServer(writes, 501, 0).read]).toEqual([0]);
  });

  test('without a hold (the old native layout: SIGTERM at the sidecar\'s turn, 0-1 s after the app): the last line can be lost', () => {
    // idle for a minute (backoff at 2048 ms), one line, the app exits at once
    const lost = fc.sample(history, { numRuns: 2000, seed: 39 }).filter(h => {
      const { writes, appExit } = writesOf(h);
      return runFileServer(writes, appExit + h.turn, h.passMs).read.size < writes.length;
    });
    expect(lost.length).toBeGreaterThan(100);
    const { read } = runFileServer([{ file: 'app.log', at: 60_000, bytes: 20 }], 60_000 + 500, 10);
    expect(read.size).toBe(0);
  });

  test('the worst delay from a write to the pass that reads it is the backoff cap plus a pass (and a glob cooldown for a new file): under the hold', () => {
    expect(VECTOR_SHUTDOWN.pollBackoffMillis).toBe(BACKOFF_CAP_MAX);
    expect(manifestHoldMs('1.29')).toBeGreaterThanOrEqual(BACKOFF_CAP_MAX + 900);
    expect(manifestHoldMs('1.29')).toBeGreaterThanOrEqual(GLOB_MINIMUM_COOLDOWN_MS + 900);
  });

  test.each(['1.29', '1.30', '1.33'])('with the manifest\'s hold (%s): every line the app wrote is read, whatever the history', (version) => {
    const hold = manifestHoldMs(version);
    expect(hold).toBe(3000);
    fc.assert(fc.property(history, h => {
      const { writes, appExit } = writesOf(h);
      const { read } = runFileServer(writes, appExit + h.turn + hold, h.passMs);
      return read.size === writes.length;
    }), {
      numRuns: process.env.FC_NUM_RUNS ? Number(process.env.FC_NUM_RUNS) : 3000,
      seed: process.env.FC_SEED ? Number(process.env.FC_SEED) : undefined,
    });
  });

  test('legacy (1.27) has no hold: its preStop delay waits the same read delay after the app (docs/shutdown.md)', () => {
    expect(manifestHoldMs('1.27')).toBe(0);
  });
});

// ---------------------------------------------------------------------------
// The hold, run under a real busybox sh
// ---------------------------------------------------------------------------

const BUSYBOX = ['/usr/bin/busybox', '/bin/busybox'].find(p => fs.existsSync(p));
const runIt = BUSYBOX ? describe : describe.skip;
if (!BUSYBOX) {
  const message = 'test/vector-read-loop.test.ts: busybox not found (Debian: apt-get install busybox); the SIGTERM hold is not run';
  if (process.env.CI === 'true') throw new Error(message);
  // eslint-disable-next-line no-console
  console.warn(message);
}

runIt('the SIGTERM hold under busybox sh (holdSigtermScript)', () => {
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const c of children) {
      try {
        process.kill(-c.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });

  /** The wrapper (hold `hold` s) around an "agent" that records its SIGTERM, then exits `code`; or exits by itself after `exitAfter` s. */
  function start(dir: string, hold: number, code: number, exitAfter?: number) {
    const B = BUSYBOX!;
    const body = exitAfter === undefined ? `while :; do ${B} sleep 0.1 & wait $!; done` : `${B} sleep ${exitAfter} & wait $!; exit ${code}`;
    const agent = [B, 'sh', '-c', `trap '${B} touch "$1/term"; exit ${code}' TERM; ${body}`, 'agent', dir];
    const script = holdSigtermScript(hold).split(TOOLS.busybox).join(B);
    const started = Date.now();
    const child = spawn(B, ['sh', '-c', script, 'sh', ...agent], { stdio: 'ignore', detached: true });
    children.push(child);
    const exited = new Promise<{ code: number | null; seconds: number }>(resolve =>
      child.on('exit', c => resolve({ code: c, seconds: (Date.now() - started) / 1000 })));
    return { child, exited, started };
  }

  test('a SIGTERM reaches the agent only after the hold; the wrapper exits with the agent\'s status', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecars-hold-'));
    const run = start(dir, 2, 0);
    await new Promise(r => setTimeout(r, 300));
    const sent = Date.now();
    run.child.kill('SIGTERM');
    let termAt: number | undefined;
    while (termAt === undefined && Date.now() - sent < 10_000) {
      if (fs.existsSync(path.join(dir, 'term'))) termAt = Date.now();
      else await new Promise(r => setTimeout(r, 50));
    }
    const { code } = await run.exited;
    expect(termAt).toBeDefined();
    // the agent kept running (reading) for the hold after the wrapper's SIGTERM
    expect((termAt! - sent) / 1000).toBeGreaterThanOrEqual(1.9);
    expect(code).toBe(0);
  }, 20_000);

  test('an agent that exits by itself: the wrapper exits at once with its status', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecars-hold-'));
    const { code, seconds } = await start(dir, 5, 3, 0.3).exited;
    expect(code).toBe(3);
    expect(seconds).toBeLessThan(3);
    expect(fs.existsSync(path.join(dir, 'term'))).toBe(false);
  }, 20_000);
});
