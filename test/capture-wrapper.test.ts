/**
 * The capture wrapper (`captureStdout`, src/engine/capture.ts) run under a real busybox: the
 * program the pod runs it with (`sidecar-tools`' busybox; here Debian's busybox or busybox-static,
 * the same applets: sh, awk, mkfifo, rm, sleep). The "app" is a busybox shell script.
 * Checked: every line reaches the file AND the wrapper's own stdout/stderr, in order; a last line
 * without its newline is written; SIGTERM reaches the app at once and its own handler runs; the
 * exit codes 0, 3 and 137 (the app killed with SIGKILL) are the wrapper's; the files rotate at the
 * size given, at most `maxFiles` exist at once, and a rotated file stays until an agent that scans
 * once a second has found it; a restart in place continues the numbering; a
 * container without a command is refused with the prop to set.
 */
import { ChildProcess, spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { noteSkipped } from './util/skips';
import { APP_BUSYBOX, captureScript } from '../src/engine/capture';
import { TOOLS, exitWithAppScript } from '../src/engine/shutdown';

const BUSYBOX = ['/usr/bin/busybox', '/bin/busybox'].find(p => fs.existsSync(p));
const runIt = BUSYBOX ? describe : describe.skip;
if (!BUSYBOX) {
  const message = 'busybox not found (Debian: apt-get install busybox-static); the capture wrapper is not run';
  if (process.env.CI === 'true') throw new Error(`test/capture-wrapper.test.ts: ${message}`);
  noteSkipped(message);
}

const started: ChildProcess[] = [];
afterEach(() => {
  // stopped also when a test failed
  for (const p of started.splice(0)) {
    // the whole group: also the deletions still waiting after a wrapper has exited
    if (p.pid !== undefined) {
      try { process.kill(-p.pid, 'SIGKILL'); } catch { /* gone */ }
    }
  }
});

interface Run {
  readonly child: ChildProcess;
  readonly dir: string;
  stdout: string;
  stderr: string;
  readonly done: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Runs `app` (a busybox sh script) under the wrapper, as the container command would. */
function run(app: string, opts: { maxBytes?: number; maxFiles?: number; dir?: string; deleteAfterSeconds?: number } = {}): Run {
  const dir = opts.dir ?? path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sidecars-capture-')), '.stdout-app');
  const child = spawn(BUSYBOX!, ['sh', '-c', captureScript(BUSYBOX!, opts.deleteAfterSeconds), 'sh', dir, String(opts.maxBytes ?? 10 * 1024 * 1024),
    String(opts.maxFiles ?? 5), BUSYBOX!, 'sh', '-c', app], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  started.push(child);
  const r: Run = {
    child,
    dir,
    stdout: '',
    stderr: '',
    done: new Promise(resolve => child.on('close', (code, signal) => resolve({ code, signal }))),
  };
  child.stdout!.on('data', d => { r.stdout += d; });
  child.stderr!.on('data', d => { r.stderr += d; });
  return r;
}

/** The lines of every `<stream>.<n>.log` in `dir`, in file-number order. */
function fileLines(dir: string, stream: string): string[] {
  const files = fs.readdirSync(dir).filter(f => new RegExp(`^${stream}\\.\\d+\\.log$`).test(f))
    .sort((a, b) => Number(a.split('.')[1]) - Number(b.split('.')[1]));
  return files.flatMap(f => fs.readFileSync(path.join(dir, f), 'utf8').split('\n').slice(0, -1));
}

const waitFor = async (what: () => boolean, ms = 10000) => {
  const until = Date.now() + ms;
  while (!what()) {
    if (Date.now() > until) throw new Error('timed out');
    await new Promise(r => setTimeout(r, 20));
  }
};

runIt('the capture wrapper under a real busybox', () => {
  jest.setTimeout(60000);

  test('every line in the file and on stdout, in order; stderr kept apart; a last line without newline written; exit 0', async () => {
    const r = run('i=1; while [ $i -le 2000 ]; do echo "line $i"; i=$((i+1)); done; echo "oops" >&2; printf "partial"');
    const { code } = await r.done;
    expect(code).toBe(0);
    const want = [...Array.from({ length: 2000 }, (_, i) => `line ${i + 1}`), 'partial'];
    expect(fileLines(r.dir, 'stdout')).toEqual(want);
    expect(r.stdout.split('\n').slice(0, -1)).toEqual(want);
    expect(fileLines(r.dir, 'stderr')).toEqual(['oops']);
    expect(r.stderr).toBe('oops\n');
  });

  test('a line is in the file at once (unbuffered), while the app still runs', async () => {
    const r = run('echo first; sleep 30');
    await waitFor(() => fs.existsSync(path.join(r.dir, 'stdout.0.log')) && fs.readFileSync(path.join(r.dir, 'stdout.0.log'), 'utf8') === 'first\n');
    await waitFor(() => r.stdout === 'first\n');
    process.kill(r.child.pid!, 'SIGTERM');
    await r.done;
  });

  test('SIGTERM goes to the app at once; its own handler runs and its exit code is kept (3)', async () => {
    // (the app's own children write elsewhere: one that holds the app's stdout open is waited for up to 2 s)
    const r = run('trap \'echo "got TERM"; exit 3\' TERM; echo ready; while :; do sleep 1 >/dev/null 2>&1 & wait $!; done');
    await waitFor(() => r.stdout.includes('ready'));
    const at = Date.now();
    process.kill(r.child.pid!, 'SIGTERM');
    const { code } = await r.done;
    expect(Date.now() - at).toBeLessThan(1500);
    expect(code).toBe(3);
    expect(fileLines(r.dir, 'stdout')).toEqual(['ready', 'got TERM']);
    expect(r.stdout).toBe('ready\ngot TERM\n');
  });

  test('the app killed with SIGKILL: the wrapper exits 137, with every line the app wrote', async () => {
    const r = run('i=1; while [ $i -le 500 ]; do echo "n $i"; i=$((i+1)); done; echo "pid $$"; exec sleep 60');
    await waitFor(() => /pid \d+\n/.test(r.stdout));
    const app = /pid (\d+)\n/.exec(r.stdout)![1];
    process.kill(Number(app), 'SIGKILL');
    const { code } = await r.done;
    expect(code).toBe(137);
    expect(fileLines(r.dir, 'stdout')).toEqual([...Array.from({ length: 500 }, (_, i) => `n ${i + 1}`), `pid ${app}`]);
  });

  test('rotation: files of maxBytes, each line in one of them, at most maxFiles at once', async () => {
    // 400 lines of 10 bytes ("ln 100001\n"), files of 1000 bytes: 4 files, at most 3 at once
    const r = run('i=100001; while [ $i -le 100400 ]; do echo "ln $i"; i=$((i+1)); done; sleep 2', { maxBytes: 1000, maxFiles: 3, deleteAfterSeconds: 1 });
    let most = 0;
    const seen = new Map<string, string>();
    const ended = r.done.then(() => true);
    while (!await Promise.race([ended, new Promise<boolean>(res => setTimeout(() => res(false), 20))])) {
      // (the wrapper creates the directory: not there yet on a loaded machine)
      const files = fs.existsSync(r.dir) ? fs.readdirSync(r.dir).filter(f => /^stdout\.\d+\.log$/.test(f)) : [];
      most = Math.max(most, files.length);
      for (const f of files) {
        try { seen.set(f, fs.readFileSync(path.join(r.dir, f), 'utf8')); } catch { /* deleted meanwhile */ }
      }
    }
    expect((await r.done).code).toBe(0);
    expect(most).toBeLessThanOrEqual(3);
    const names = [...seen.keys()].sort((a, b) => Number(a.split('.')[1]) - Number(b.split('.')[1]));
    expect(names).toEqual(['stdout.0.log', 'stdout.1.log', 'stdout.2.log', 'stdout.3.log']);
    for (const f of names) expect(seen.get(f)!.length).toBeLessThanOrEqual(1000 + 10);
    expect(names.flatMap(f => seen.get(f)!.split('\n').slice(0, -1))).toEqual(Array.from({ length: 400 }, (_, i) => `ln ${100001 + i}`));
    expect(r.stdout.split('\n').length - 1).toBe(400);
  });

  test('(fails with deletion by count) an agent that looks for new files once a second reads every line of every rotated file', async () => {
    // a file of 100 lines every 0.3 s, 3 at most: deleted by count, stdout.0.log would be gone at
    // 0.9 s, before the agent's first scan; kept 2 s after it was closed, every file is found
    // (the copier waits for a deletion instead, and the app's writes with it)
    const r = run('j=0; while [ $j -lt 8 ]; do i=1; while [ $i -le 100 ]; do echo "f$j $i"; i=$((i+1)); done; j=$((j+1)); sleep 0.3; done; sleep 3',
      { maxBytes: 100 * 6, maxFiles: 3, deleteAfterSeconds: 2 });
    const open = new Map<string, { fd: number; text: string }>();
    const readAll = () => {
      for (const o of open.values()) {
        const buf = Buffer.alloc(65536);
        for (let n = fs.readSync(o.fd, buf); n > 0; n = fs.readSync(o.fd, buf)) o.text += buf.toString('utf8', 0, n);
      }
    };
    const ended = r.done.then(() => true);
    let scan = Date.now() + 1000;
    try {
      while (!await Promise.race([ended, new Promise<boolean>(res => setTimeout(() => res(false), 100))])) {
        if (Date.now() >= scan) {
          // the agent's scan: new files opened (an open file is read to its end, deleted or not)
          scan += 1000;
          for (const f of fs.readdirSync(r.dir).filter(x => /^stdout\.\d+\.log$/.test(x) && !open.has(x))) {
            try { open.set(f, { fd: fs.openSync(path.join(r.dir, f), 'r'), text: '' }); } catch { /* deleted meanwhile */ }
          }
        }
        readAll();
      }
      readAll();
      expect((await r.done).code).toBe(0);
      const names = [...open.keys()].sort((a, b) => Number(a.split('.')[1]) - Number(b.split('.')[1]));
      const want = Array.from({ length: 800 }, (_, k) => `f${Math.floor(k / 100)} ${k % 100 + 1}`);
      expect(names.flatMap(f => open.get(f)!.text.split('\n').slice(0, -1))).toEqual(want);
    } finally {
      for (const o of open.values()) fs.closeSync(o.fd);
    }
  });

  test('a restart in place continues the numbering (the earlier files are not overwritten)', async () => {
    const first = run('echo one');
    await first.done;
    const second = run('echo two', { dir: first.dir });
    await second.done;
    expect(fs.readFileSync(path.join(first.dir, 'stdout.0.log'), 'utf8')).toBe('one\n');
    expect(fs.readFileSync(path.join(first.dir, 'stdout.1.log'), 'utf8')).toBe('two\n');
  });

  test('a directory that cannot be made: the app runs uncaptured, with its exit code', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sidecars-capture-')), 'file');
    fs.writeFileSync(file, '');
    const r = run('echo still; exit 4', { dir: path.join(file, 'sub') });
    expect((await r.done).code).toBe(4);
    expect(r.stdout).toBe('still\n');
    expect(r.stderr).toMatch(/capture: cannot set up .*: the app runs without its stdout captured/);
  });
});

/**
 * A legacy Job's agent runs under the exit-with-app wrapper, which stops it once no process of the
 * app containers is left, telling the sidecars' containers by their program (`appScan`): a container
 * with a process run from the tools' busybox counts as a sidecar's. The capture's processes run from
 * `APP_BUSYBOX`, the same file spelled apart: the app container counts as the app's until the
 * copiers are done. Run on a fake /proc (pid -> argv, cgroup), as test/exit-with-app.test.ts does.
 */
runIt('the exit-with-app wrapper of a legacy Job with the capture in the app container', () => {
  const made: string[] = [];
  afterEach(() => {
    for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });

  function fakeProc(processes: Record<string, [string[], string]>): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecars-capture-proc-'));
    made.push(dir);
    for (const [pid, [argv, cgroup]] of Object.entries({ ...processes, self: [['sh'], '/../agent.scope'] as [string[], string] })) {
      fs.mkdirSync(path.join(dir, pid));
      fs.writeFileSync(path.join(dir, pid, 'cmdline'), argv.map(a => `${a}\0`).join(''));
      fs.writeFileSync(path.join(dir, pid, 'cgroup'), `0::${cgroup}\n`);
    }
    return dir;
  }

  /** The wrapper with a read delay of 0 and an agent that records its SIGTERM; `term()` the seconds from the start to it, waiting up to `seconds`. */
  function wrapper(proc: string): { term: (seconds: number) => Promise<number | undefined> } {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecars-capture-agent-'));
    made.push(work);
    const script = exitWithAppScript(['/fluent-bit/bin/fluent-bit', TOOLS.busybox], 0, proc, 2).split(TOOLS.busybox).join(BUSYBOX!);
    const agent = [BUSYBOX!, 'sh', '-c', `trap '${BUSYBOX} touch "$1/term"; exit 0' TERM; while :; do ${BUSYBOX} sleep 0.1 & wait $!; done`, 'agent', work];
    const child = spawn(BUSYBOX!, ['sh', '-c', script, 'sh', ...agent], { stdio: 'ignore', detached: true });
    started.push(child);
    const t0 = Date.now();
    return {
      term: async (seconds: number) => {
        const until = Date.now() + seconds * 1000;
        while (Date.now() < until) {
          if (fs.existsSync(path.join(work, 'term'))) return (Date.now() - t0) / 1000;
          await new Promise(r => setTimeout(r, 50));
        }
        return undefined;
      },
    };
  }

  const pod = (captureArgv0: string): Record<string, [string[], string]> => ({
    1: [['/pause'], '/../pause.scope'],
    // the app container: the capture wrapper and a copier (spelled as emitted), and the app, gone
    30: [[captureArgv0, 'sh', '-c', 'capture'], '/../app.scope'],
    31: [[captureArgv0, 'awk', '-v', 'd=/var/log/app/.stdout-app'], '/../app.scope'],
  });

  test('the app has exited but its copiers run: the agent is not stopped; once they are gone, it is', async () => {
    const proc = fakeProc(pod(APP_BUSYBOX));
    const w = wrapper(proc);
    expect(await w.term(3)).toBeUndefined();
    fs.rmSync(path.join(proc, '30'), { recursive: true });
    fs.rmSync(path.join(proc, '31'), { recursive: true });
    // the wrapper looks once a second
    expect(await w.term(4)).toBeDefined();
  });

  test('(the check can fail) the copiers run from the tools\' busybox as spelled for the sidecars: the agent would be stopped at once', async () => {
    const proc = fakeProc({ ...pod(BUSYBOX!), 32: [['/app/server'], '/../app.scope'] });
    // the app itself (pid 32) still runs, yet its container is taken for a sidecar's
    expect(await wrapper(proc).term(3)).toBeDefined();
  });
});
