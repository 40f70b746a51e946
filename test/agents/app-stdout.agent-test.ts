/**
 * Issue 51 with the real Fluent Bit (`FLUENT_BIT=/path/to/fluent-bit npm run test:agents`): the
 * two sources of the app's stdout, each read to the last line.
 * - captureStdout: the app container's command as synthesized (the capture wrapper, run by the
 *   local busybox) prints numbered lines fast enough to rotate its files several times (files of
 *   1 MiB, at most 2 at once: each deleted 10 s after its close, the app waiting meanwhile); the agent, started first
 *   as in a pod, must ship every line once, with the record's `file` naming the capture file.
 * - podLogs: the kubelet's files of the app container in the CRI format (`<time> <stream> <P|F> <log>`)
 *   under the path the agent's env builds from the downward API: full lines, a long line split
 *   into partial (P) lines that must arrive joined, and the kubelet's rotation (`0.log` renamed to
 *   `0.log.<time>`, a new `0.log`): every line once.
 * Without FLUENT_BIT or busybox, one test says "skipped: ..." and passes.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { Size } from 'cdk8s';
import { LogAgent, LogOutput } from '../../src';
import { POD_FIELDS, cleanup, freePort, sleep, startAgent, synthLogPod, waitFor, LogPod } from './util/pod';
import { agentArgvOf } from '../util/sigterm-hold';
import { BUSYBOX, captureDirectory, capturedArgv, lineCounts, missingOf, numberedLines, runCaptured, stopGroup } from './util/app-stdout';

const BIN = process.env.FLUENT_BIT;
const report = (line: string) => process.stdout.write(`[app-stdout] ${line}\n`);

/** The run's copy listens on loopback only (as fluent-bit.agent-test.ts does). */
async function localize(pod: LogPod): Promise<LogPod> {
  const file = path.join(pod.configDirectory, 'fluent-bit.conf');
  const port = await freePort();
  fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(/^( +HTTP_Listen +)0\.0\.0\.0$/m, '$1127.0.0.1').replace(/^( +HTTP_Port +)\d+$/m, `$1${port}`));
  // the agent's own argv: native from 1.29 the manifest runs it under the SIGTERM hold, which these tests stand for
  const argv = agentArgvOf(pod.container);
  return { ...pod, container: { ...pod.container, command: [argv[0]], args: argv.slice(1) } };
}

/** The agent's complete records so far: a line still being written (no newline yet) is not one. */
function records(text: string): any[] {
  return text.slice(0, text.lastIndexOf('\n') + 1).split('\n').filter(l => l.startsWith('{')).map(l => JSON.parse(l));
}

if (!BIN || !BUSYBOX) {
  test('skipped: set FLUENT_BIT=/path/to/fluent-bit and install busybox (see CONTRIBUTING.md)', () => {
    report(`skipped: ${!BIN ? 'FLUENT_BIT is not set' : 'busybox not found'}`);
  });
} else {
  const bin = BIN;
  const busybox = BUSYBOX;
  jest.setTimeout(120_000);

  test('captureStdout: every line the app prints reaches the agent once, across rotations', async () => {
    const pod = await localize(synthLogPod({
      agent: LogAgent.fluentBit(), output: () => LogOutput.stdout(), captureStdout: { maxFileSize: Size.mebibytes(1), maxFiles: 2 },
    }));
    let agent: ReturnType<typeof startAgent> | undefined;
    let app: ReturnType<typeof runCaptured> | undefined;
    try {
      agent = startAgent(pod, bin);
      await sleep(1500);
      const n = 40000;
      // the app container's command as synthesized; its busybox is the local one
      let appOut = 0;
      app = runCaptured(capturedArgv(pod, busybox, numberedLines(n)), d => { appOut += d.toString().split('\n').length - 1; });
      expect(await app.exit).toBe(0);
      const kept = fs.readdirSync(captureDirectory(pod)).filter(f => f.endsWith('.log'));
      // the agent's read delay after the app's exit (Fluent Bit: 2 s), then SIGTERM
      const running = agent;
      await waitFor(() => records(running.stdout()).some(r => /lnum=last;/.test(r.log)), 20_000);
      await sleep(2000);
      running.child.kill('SIGTERM');
      await running.exited;
      const shipped = records(running.stdout()).filter(r => /lnum=/.test(r.log ?? ''));
      for (const r of shipped) expect(r.file).toMatch(/\/\.stdout-web\/stdout\.\d+\.log$/);
      const seen = lineCounts(shipped.map(r => r.log));
      const missing = missingOf(seen, n);
      report(`captureStdout: ${n + 1} lines printed (${appOut} on the container's stdout), ${seen.size} shipped, ${missing.length} missing, ` +
        `${[...seen.values()].filter(c => c > 1).length} twice; capture files left: ${kept.sort().join(', ')}`);
      expect(appOut).toBe(n + 1);
      expect(missing).toEqual([]);
      expect(seen.get('last')).toBe(1);
      expect([...seen.values()].every(c => c === 1)).toBe(true);
      expect(kept.filter(f => f.startsWith('stdout.')).length).toBeLessThanOrEqual(2);
    } finally {
      stopGroup(app?.child);
      if (agent && agent.child.exitCode === null && agent.child.signalCode === null) agent.child.kill('SIGKILL');
      cleanup(pod);
    }
  });

  /**
   * Issue 51, found on the cluster: files that the app fills within a second. Deleting the oldest
   * at each rotation (by count) deleted files before Fluent Bit's 1 s scan had found them; each is
   * now deleted 10 s after its close. The synthesized command with files of 16 KiB (the wrapper's
   * own argument; the prop's least is 1 MiB), 3 at once: 1000 lines make 5 files in well under a
   * second, and every line must be shipped (fails with the deletion by count).
   */
  test('(fails with deletion by count) captureStdout: files the app fills within a second are all read', async () => {
    const pod = await localize(synthLogPod({
      agent: LogAgent.fluentBit(), output: () => LogOutput.stdout(), captureStdout: { maxFiles: 3 },
    }));
    let agent: ReturnType<typeof startAgent> | undefined;
    let app: ReturnType<typeof runCaptured> | undefined;
    try {
      agent = startAgent(pod, bin);
      await sleep(1500);
      const n = 1000;
      expect(pod.app.command.slice(6, 8)).toEqual([String(10 * 2 ** 20), '3']);
      // its own process group: the deletions still waiting after its exit are stopped with it
      const started = Date.now();
      app = runCaptured(capturedArgv(pod, busybox, numberedLines(n), 16 * 1024));
      expect(await app.exit).toBe(0);
      const running = agent;
      await waitFor(() => records(running.stdout()).some(r => /lnum=last;/.test(r.log)), 30_000);
      await sleep(2000);
      running.child.kill('SIGTERM');
      await running.exited;
      const seen = new Set<string>();
      const files = new Set<string>();
      for (const r of records(running.stdout())) {
        const m = /lnum=(\d+|last);/.exec(r.log ?? '');
        if (m) seen.add(m[1]);
        if (m) files.add(r.file);
      }
      const missing = Array.from({ length: n }, (_, i) => String(i + 1)).filter(k => !seen.has(k));
      report(`captureStdout, files of 16 KiB, 3 at once: ${n + 1} lines in ${files.size} files, ${missing.length} missing ` +
        `(the app ran ${((Date.now() - started) / 1000).toFixed(1)} s to the agent's stop)`);
      expect(missing).toEqual([]);
      expect(files.size).toBeGreaterThanOrEqual(5);
      expect(seen.has('last')).toBe(true);
    } finally {
      stopGroup(app?.child);
      if (agent && agent.child.exitCode === null && agent.child.signalCode === null) agent.child.kill('SIGKILL');
      cleanup(pod);
    }
  });

  test('podLogs: CRI lines of this pod\'s app container, partial lines joined, the kubelet\'s rotation followed', async () => {
    const pod = await localize(synthLogPod({ agent: LogAgent.fluentBit(), output: () => LogOutput.stdout(), podLogs: {} }));
    let agent: ReturnType<typeof startAgent> | undefined;
    try {
      const dir = path.join(pod.podLogsRoot, `${POD_FIELDS['metadata.namespace']}_${POD_FIELDS['metadata.name']}_${POD_FIELDS['metadata.uid']}`, 'web');
      expect(pod.env.POD_LOG_PATH).toBe(`${dir}/*.log`);
      fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
      // another pod's file beside it: never read
      const other = path.join(pod.podLogsRoot, 'shop_other-pod_0000', 'web');
      fs.mkdirSync(other, { recursive: true });
      fs.writeFileSync(path.join(other, '0.log'), '2026-12-07T04:00:00.000000000Z stdout F lnum=999999;\n');
      const t = () => new Date().toISOString().replace('Z', '000000Z');
      const cri = (stream: string, tag: string, text: string) => `${t()} ${stream} ${tag} ${text}\n`;
      const file = path.join(dir, '0.log');
      const long = 'y'.repeat(40000);
      fs.appendFileSync(file, Array.from({ length: 500 }, (_, i) => cri('stdout', 'F', `lnum=${i + 1};`)).join(''), { mode: 0o640 });
      // a long line the runtime split (16 KiB pieces) into partial lines, then its full end
      fs.appendFileSync(file, cri('stdout', 'P', `lnum=long;${long.slice(0, 16384)}`) + cri('stdout', 'P', long.slice(16384, 32768)) + cri('stdout', 'F', long.slice(32768)));
      agent = startAgent(pod, bin);
      const running = agent;
      await sleep(2500);
      // the kubelet's rotation: renamed, a new file, more lines in both
      fs.renameSync(file, `${file}.20261207-040000`);
      fs.appendFileSync(file, Array.from({ length: 500 }, (_, i) => cri(i % 2 ? 'stderr' : 'stdout', 'F', `lnum=${i + 501};`)).join(''), { mode: 0o640 });
      await waitFor(() => records(running.stdout()).some(r => /lnum=1000;/.test(r.log ?? '')), 20_000);
      await sleep(2000);
      running.child.kill('SIGTERM');
      await running.exited;
      const all = records(running.stdout());
      const nums = new Map<string, number>();
      for (const r of all) {
        const m = /lnum=(\d+|long);/.exec(r.log ?? '');
        if (m) nums.set(m[1], (nums.get(m[1]) ?? 0) + 1);
      }
      const joined = all.find(r => /lnum=long;/.test(r.log ?? ''));
      report(`podLogs: ${nums.size} of 1001 records, the long line ${joined ? `${joined.log.length} characters in one record` : 'missing'}`);
      expect(nums.has('999999')).toBe(false);
      for (let i = 1; i <= 1000; i++) expect(nums.get(String(i))).toBe(1);
      expect(nums.get('long')).toBe(1);
      expect(joined.log).toBe(`lnum=long;${long}`);
      expect(all.find(r => /lnum=502;/.test(r.log ?? '')).stream).toBe('stderr');
    } finally {
      if (agent && agent.child.exitCode === null && agent.child.signalCode === null) agent.child.kill('SIGKILL');
      cleanup(pod);
    }
  });

  test('the config with both sources passes --dry-run', () => {
    const pod = synthLogPod({ agent: LogAgent.fluentBit(), output: () => LogOutput.stdout(), podLogs: {}, captureStdout: {} });
    try {
      const r = spawnSync(bin, ['--dry-run', '-c', path.join(pod.configDirectory, 'fluent-bit.conf')], { env: pod.env, encoding: 'utf8', timeout: 30_000 });
      expect(`${r.stdout}${r.stderr}`).toMatch(/configuration test is successful/);
    } finally {
      cleanup(pod);
    }
  });
}
