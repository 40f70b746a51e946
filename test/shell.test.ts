/**
 * No user value reaches a shell (issue 24, point 2): the legacy hold's `postStart` and the
 * `preStop` POSTs are `busybox sh -c SCRIPT sh VALUE...`, the values positional parameters.
 *
 * Checked by RUNNING the emitted hook with a real busybox `sh` (the program the hook runs in the
 * pod: the `sidecar-tools` busybox) against a small HTTP server on 127.0.0.1: the path requested
 * must be exactly the user's path, nothing else may run, and the hold must retry its full count.
 * Needs busybox on PATH (Debian: `apt-get install busybox`; `.ci/run` installs it). Without it the
 * tests are skipped, but under CI=true they fail.
 */
import { execFile, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as http from 'http';
import { AddressInfo } from 'net';
import * as os from 'os';
import * as path from 'path';
import { ApiObject, Chart, Duration, Testing } from 'cdk8s';
import { SidecarTimeline } from '../src/timeline';
import { SidecarCheck, WithSidecar } from '../src/with-sidecar';

const IMAGE_FOR_TIMELINE = 'ghcr.io/example/app:1.0.0';

const BUSYBOX = (() => {
  const r = spawnSync('sh', ['-c', 'command -v busybox'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
})();
const onCi = process.env.CI === 'true' || process.env.CI === '1';
const withBusybox = BUSYBOX ? test : test.skip;

test('busybox is there to run the hooks with (apt-get install busybox; required under CI=true)', () => {
  if (!BUSYBOX && onCi) throw new Error('busybox not found on PATH: apt-get install busybox (.ci/run does)');
});

/** A server on 127.0.0.1 that records every request's method and path and answers `status`. */
async function server(status: number): Promise<{ port: number; requests: string[]; close: () => Promise<void> }> {
  const requests: string[] = [];
  const s = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    res.statusCode = status;
    res.end();
  });
  await new Promise<void>(resolve => s.listen(0, '127.0.0.1', resolve));
  return {
    port: (s.address() as AddressInfo).port,
    requests,
    close: () => new Promise<void>(resolve => s.close(() => resolve())),
  };
}

/** The legacy sidecar's postStart of a WithSidecar holding the app on an HTTP check of `port` `path`. */
function holdHook(port: number, checkPath: string, timeoutSeconds: number): string[] {
  const chart = new Chart(Testing.app(), 'test');
  const workload = new ApiObject(chart, 'raw', {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'raw' },
    spec: {
      selector: { matchLabels: { app: 'raw' } },
      template: { metadata: { labels: { app: 'raw' } }, spec: { containers: [{ name: 'app', image: 'ghcr.io/example/app:1.0.0' }] } },
    },
  });
  new WithSidecar(chart, 'proxy', {
    workload,
    containerName: 'proxy',
    image: 'ghcr.io/example/proxy:1.0.0',
    kubernetesVersion: '1.27',
    startupCheck: SidecarCheck.http(port, { path: checkPath, timeout: Duration.seconds(timeoutSeconds) }),
    holdApplicationUntilStarted: true,
  });
  const deployment = Testing.synth(chart).find((o: any) => o.kind === 'Deployment');
  const proxy = deployment.spec.template.spec.containers.find((c: any) => c.name === 'proxy');
  return proxy.lifecycle.postStart.exec.command;
}

/**
 * Runs a hook's command in `cwd`: its shell is the local busybox (`busybox sh -c SCRIPT sh ARGS`,
 * exactly as emitted), and inside the script `/sidecar-tools/busybox` is a wrapper that runs the
 * local busybox with the same arguments ("$@"), without `-T N`: Debian's busybox 1.35 wget
 * crashes (SIGSEGV, seen on bookworm's 1:1.35.0-4+deb12u1) whenever -T is given, while the pod's
 * busybox:1.36.1-musl has it.
 */
function run(command: string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecars-bin-'));
  const wrapper = path.join(bin, 'busybox');
  fs.writeFileSync(wrapper, [
    '#!/bin/sh',
    'if [ "$1" = wget ]; then',
    '  shift; set -- wget "$@"; n=$#; i=0',
    // rebuild the arguments without "-T N" (a POSIX sh has no arrays)
    '  skip=0; for a in "$@"; do i=$((i+1)); if [ $skip = 1 ]; then skip=0; elif [ "$a" = -T ]; then skip=1; else set -- "$@" "$a"; fi; done',
    '  shift $n',
    'fi',
    `exec ${BUSYBOX} "$@"`,
    '',
  ].join('\n'), { mode: 0o755 });
  expect(command.slice(0, 3)).toEqual(['/sidecar-tools/busybox', 'sh', '-c']);
  const local = [BUSYBOX!, 'sh', '-c', command[3].split('/sidecar-tools/busybox').join(wrapper), ...command.slice(4)];
  return new Promise(resolve => {
    execFile(local[0], local.slice(1), { cwd, timeout: 30_000 }, (error, stdout, stderr) => {
      fs.rmSync(bin, { recursive: true, force: true });
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
    });
  });
}

describe('the legacy hold, run with a real busybox sh', () => {
  let dir: string;
  beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecars-shell-')); });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  withBusybox("a path with ';' and '${IFS}': requested exactly, the command after ';' never runs, every retry made", async () => {
    const marker = path.join(dir, 'pwned');
    const userPath = `/x;touch\${IFS}${marker}`;
    const srv = await server(503);
    try {
      const r = await run(holdHook(srv.port, userPath, 3), dir);
      expect(r.code).toBe(0); // the hold gives up (exit 0) and lets the app start
      // i = 0, 1, 2: three tries before `[ 3 -ge 3 ]` ends the hold
      expect(srv.requests).toEqual([`GET ${userPath}`, `GET ${userPath}`, `GET ${userPath}`]);
      expect(fs.existsSync(marker)).toBe(false);
      expect(fs.readdirSync(dir)).toEqual([]);
    } finally {
      await srv.close();
    }
  });

  withBusybox("a query with '&': not backgrounded, requested whole, the full count of retries", async () => {
    const userPath = '/ready?a=1&b=2';
    const srv = await server(503);
    try {
      const r = await run(holdHook(srv.port, userPath, 4), dir);
      expect(r.code).toBe(0);
      expect(srv.requests).toEqual(Array(4).fill(`GET ${userPath}`));
    } finally {
      await srv.close();
    }
  });

  withBusybox('a ready sidecar: one request, then the hold ends', async () => {
    const userPath = "/ready?q='a'\"b\"$(id)`id`";
    const srv = await server(200);
    try {
      const r = await run(holdHook(srv.port, userPath, 5), dir);
      expect(r.code).toBe(0);
      // the request line as the client sent it (Node's server keeps the raw target): only
      // characters no HTTP client sends raw may be escaped by busybox wget
      expect(srv.requests).toHaveLength(1);
      expect(decodeURIComponent(srv.requests[0])).toBe(`GET ${userPath}`);
    } finally {
      await srv.close();
    }
  });
});

describe('the hooks with their values as arguments, read back', () => {
  test('SidecarTimeline reads the hold\'s count from its argument (the worst case: N tries of 1 s and the sleeps between)', () => {
    const command = holdHook(9090, '/ready?a=1&b=2', 7);
    const manifest = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p' },
      spec: {
        containers: [
          { name: 'proxy', image: IMAGE_FOR_TIMELINE, lifecycle: { postStart: { exec: { command } } } },
          { name: 'app', image: IMAGE_FOR_TIMELINE },
        ],
      },
    };
    const t = SidecarTimeline.ofManifest(manifest, { kubernetesVersion: '1.27', legacySidecars: ['proxy'] });
    expect(t.startOrder.find(e => e.name === 'proxy')).toMatchObject({ startSeconds: 0, startedSeconds: 2 * 7 - 1 });
    expect(t.appStartSeconds).toBe(13);
  });
});
