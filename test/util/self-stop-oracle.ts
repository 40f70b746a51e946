/**
 * The oracle of the self-stopping preStop check (src/engine/around.ts `selfStopOf`): a sidecar's
 * preStop hook is run for real, in the PID namespace of a fake program that is PID 1 there (as a
 * container's program is), and we look whether the program stopped.
 *
 * - The program (`bin/<name>`, a busybox sh script, so its process name is `<name>`) stops on SIGTERM,
 *   SIGINT or SIGQUIT, as the daemons the library runs do; it runs as PID 1 of a new PID namespace
 *   (`unshare --user --map-root-user --pid --fork --mount-proc`, util-linux), whose kernel rules for
 *   signals to PID 1 (pid_namespaces(7)) are the container's.
 * - The hook runs inside that namespace (`nsenter`), with busybox's kill, killall, pidof and wget
 *   first on the PATH (as in an image with busybox), and procps' pkill and pgrep.
 * - A quit endpoint is a loopback HTTP server of the test process: the hook "stops the program" when
 *   a POST reaches one of `quitPaths` there (Envoy's admin `/quitquitquit` exits on a POST only).
 *
 * Needs busybox and procps (Debian packages; `.ci/run` installs them) and unprivileged user
 * namespaces (util-linux `unshare`, `nsenter`), or root for a PID namespace alone; `unavailable()` says
 * what is missing.
 */
import { spawn, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as http from 'http';
import * as os from 'os';
import * as path from 'path';

const BUSYBOX = ['/usr/bin/busybox', '/bin/busybox'].find(p => fs.existsSync(p));
/** The tools a hook may call, from busybox where it has them (Debian's has no pkill/pgrep: those are procps'). */
const WANTED = ['kill', 'killall', 'pidof', 'wget', 'sleep'];

/** Why the oracle cannot run here, or undefined when it can. */
export function unavailable(): string | undefined {
  if (!BUSYBOX) return 'busybox is not installed (Debian: apt-get install busybox)';
  if (spawnSync('pkill', ['--version']).status !== 0) return 'pkill and pgrep are not installed (Debian: apt-get install procps)';
  const why = namespaces().why;
  return why === undefined ? undefined : `PID namespaces are not available (util-linux unshare: ${why})`;
}

/**
 * How to make the PID namespace: an unprivileged user namespace where the kernel allows one, else
 * (as root, e.g. in a CI container that forbids user namespaces) a PID namespace alone.
 */
let chosen: { unshare: string[]; nsenter: string[]; why?: string } | undefined;
function namespaces(): { unshare: string[]; nsenter: string[]; why?: string } {
  if (chosen) return chosen;
  const tries = [
    { unshare: ['--user', '--map-root-user', '--pid', '--fork', '--mount-proc'], nsenter: ['-U', '-p', '-m', '--preserve-credentials'] },
    ...(process.getuid?.() === 0 ? [{ unshare: ['--pid', '--fork', '--mount-proc'], nsenter: ['-p', '-m'] }] : []),
  ];
  const errors: string[] = [];
  for (const t of tries) {
    const r = spawnSync('unshare', [...t.unshare, BUSYBOX!, 'sh', '-c', 'echo $$'], { encoding: 'utf8' });
    if (r.status === 0 && r.stdout.trim() === '1') return (chosen = t);
    errors.push(`${t.unshare.join(' ')}: ${(r.stderr || r.error?.message || '').trim()}`);
  }
  return (chosen = { ...tries[0], why: errors.join('; ') });
}

const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms));

async function until(test: () => boolean, ms: number): Promise<boolean> {
  for (let waited = 0; waited < ms; waited += 50) {
    if (test()) return true;
    await sleep(50);
  }
  return test();
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: 'ignore', env });
    child.on('error', reject);
    child.on('close', code => resolve(code));
  });
}

/**
 * What running `hook` (a preStop exec command) did: whether the program `programName` stopped
 * (a signal it handles, or a POST to one of `quitPaths` on 127.0.0.1:`quitPort`), and those POSTs.
 */
export async function runHook(
  hook: string[], programName: string, quitPort: number, quitPaths: readonly string[],
): Promise<{ stopped: boolean; posts: string[] }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'selfstop-'));
  const posts: string[] = [];
  const server = http.createServer((req, res) => {
    if (req.method === 'POST' && quitPaths.includes((req.url ?? '').split('?')[0])) posts.push(req.url ?? '');
    req.resume();
    req.on('end', () => res.end('OK\n'));
  });
  let program: ReturnType<typeof spawn> | undefined;
  let init: number | undefined;
  try {
    fs.mkdirSync(path.join(dir, 'bin'));
    fs.mkdirSync(path.join(dir, 'tools'));
    const applets = spawnSync(BUSYBOX!, ['--list'], { encoding: 'utf8' }).stdout.split('\n');
    for (const a of WANTED.filter(x => applets.includes(x))) fs.symlinkSync(BUSYBOX!, path.join(dir, 'tools', a));
    fs.writeFileSync(path.join(dir, 'bin', programName), [
      `#!${BUSYBOX} sh`,
      `trap 'echo signal > ${dir}/out; exit 0' TERM INT QUIT`,
      `echo > ${dir}/ready`,
      `while :; do ${BUSYBOX} sleep 0.1; done`,
    ].join('\n') + '\n', { mode: 0o755 });
    await new Promise<void>(resolve => server.listen(quitPort, '127.0.0.1', resolve));
    // Spawned by node, so the program starts with the default signal dispositions (a shell's `&`
    // would have it ignore SIGINT and SIGQUIT, which a shell cannot then trap).
    program = spawn('unshare', [...namespaces().unshare, path.join(dir, 'bin', programName)], { stdio: 'ignore' });
    if (!(await until(() => fs.existsSync(path.join(dir, 'ready')), 5000))) throw new Error('the fake program did not start in its PID namespace');
    const child = spawnSync('pgrep', ['-P', String(program.pid)], { encoding: 'utf8' }).stdout.trim().split('\n')[0];
    if (!child) throw new Error('no process in the PID namespace');
    init = Number(child);
    const env = { ...process.env, PATH: `${path.join(dir, 'tools')}:${process.env.PATH}` };
    await run('timeout', ['5', 'nsenter', '-t', child, ...namespaces().nsenter, '-r', '-w', '--', ...hook], env);
    const stopped = await until(() => fs.existsSync(path.join(dir, 'out')), 1500);
    return { stopped: stopped || posts.length > 0, posts };
  } finally {
    // The namespace's init first: killing it ends every process of the namespace (a SIGKILL to
    // unshare alone would leave its child running, reparented).
    if (init !== undefined) {
      try {
        process.kill(init, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    if (program && program.exitCode === null) {
      const closed = new Promise(resolve => program!.on('close', resolve));
      program.kill('SIGKILL');
      await closed;
    }
    await new Promise<void>(resolve => server.close(() => resolve()));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
