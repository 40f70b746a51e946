/**
 * `npm run test:cluster`: the library's synthesized manifests, unmodified, on a real one-node
 * cluster of every release whose binaries are built (scripts/cluster/build-kubernetes.sh), with
 * the measurements written to docs/proof.md (test/cluster/proof-doc.ts).
 */
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { App, Chart, Testing } from 'cdk8s';
import * as yaml from 'yaml';
import {
  agentFilter, envoyDrainApp, jobApp, linesApp, orderApp, shippedLines, startupApp, statefulSetApp, stdoutApp,
  EnvoyVariant, Layout, LinesEnd, LogAgentName, StartupVariant, StdoutEnd, StdoutVariant, STDOUT_ENDS, STDOUT_VARIANTS,
  ENVOY_DRAIN_SECONDS, ENVOY_LISTENER_PORT, ENVOY_REQUEST_SECONDS, ENVOY_VARIANTS, LINES_WRITTEN, LOG_AGENTS, SLOW_START_SECONDS, STARTUP_VARIANTS,
} from './apps';
import { Cluster, HTTP_LOAD_SCRIPT, baseImages, builtReleases, loadRequests, stamps, uptime } from './harness';
import {
  EnvoyRun, JobRun, OrderRun, PROOF_DOC, ProofResults, ReleaseResult, StartupRun, WANTED_RELEASES,
  mergeRelease, readProofData, renderProof, whyNotRun, writeProof,
} from './proof-doc';
import { NativeSidecarGuard } from '../../src';

const ROOT = path.join(__dirname, '..', '..');
const RUNS = Number(process.env.CLUSTER_RUNS ?? 3);
const only = process.env.CLUSTER_RELEASES?.split(',').map(s => s.trim()).filter(Boolean);
const releases = builtReleases().filter(v => !only || only.includes(v));
/**
 * `CLUSTER_EXPERIMENTS=lines` runs only those experiments (`jobs`, `order`, `rollout`, `admission`,
 * `lines`, `envoy`, `startup`, `stdout`; `admission-policy` is test/cluster/admission-policy.cluster-test.ts's,
 * on an API server without a node, `admission-policy-node` test/cluster/admission-policy-node.cluster-test.ts's,
 * on a cluster of its own); the page keeps the previous run's figures of the others.
 */
const EXPERIMENTS = ['jobs', 'order', 'rollout', 'admission', 'lines', 'envoy', 'startup', 'stdout', 'admission-policy', 'admission-policy-node'] as const;
type Experiment = typeof EXPERIMENTS[number];
const chosen = process.env.CLUSTER_EXPERIMENTS?.split(',').map(s => s.trim()).filter(Boolean) as Experiment[] | undefined;
for (const e of chosen ?? []) if (!EXPERIMENTS.includes(e)) throw new Error(`CLUSTER_EXPERIMENTS: unknown experiment ${e} (${EXPERIMENTS.join(', ')})`);
const running = (e: Experiment) => !chosen || chosen.includes(e);
/**
 * `CLUSTER_AGENTS=otel-collector` runs the lines and stdout experiments with only these agents
 * (`LOG_AGENTS`, and `hand-written`: the stdout experiment's baseline); the page keeps the others' previous figures.
 */
const agentRuns = agentFilter(process.env.CLUSTER_AGENTS);
const testIf = (e: Experiment, agent?: string) => running(e) && (agent === undefined || agentRuns(agent)) ? test : test.skip;
const results: ReleaseResult[] = [];

jest.setTimeout(1_800_000);

afterAll(() => {
  if (results.length === 0) return;
  // a release not run this time (CLUSTER_RELEASES) keeps its figures of the previous run
  const previous = fs.existsSync(PROOF_DOC) ? readProofData(fs.readFileSync(PROOF_DOC, 'utf8')) : undefined;
  const before = previous?.releases ?? [];
  // an experiment not run this time (CLUSTER_EXPERIMENTS), or an agent (CLUSTER_AGENTS), keeps its figures of the previous run
  const merged = results.map(r => mergeRelease(r, before.find(x => x.version === r.version), { experiment: running, agent: agentRuns }));
  const all = [...merged, ...before.filter(b => !results.some(r => r.version === b.version))]
    .sort((a, b) => Number(b.version.split('.')[1]) - Number(a.version.split('.')[1]));
  const proof: ProofResults = {
    machine: {
      cpus: os.cpus().length,
      memoryGiB: Math.round(os.totalmem() / 2 ** 30),
      kernel: os.release(),
      cgroups: fs.existsSync('/sys/fs/cgroup/memory') ? 'v1 (cgroupfs)' : 'v2',
      containerd: execFileSync('containerd', ['--version'], { encoding: 'utf8' }).split(' ')[2] ?? '?',
      runc: execFileSync('runc', ['--version'], { encoding: 'utf8' }).split('\n')[0].replace('runc version ', ''),
      etcd: execFileSync('etcd', ['--version'], { encoding: 'utf8' }).split('\n')[0].replace('etcd Version: ', ''),
    },
    // the page's run counts are the Jobs'; a run of other experiments keeps them
    runs: previous && !running('jobs') ? previous.runs : RUNS,
    releases: all,
    ...(previous?.admissionPolicy ? { admissionPolicy: previous.admissionPolicy } : {}),
    ...(previous?.admissionPolicyNode ? { admissionPolicyNode: previous.admissionPolicyNode } : {}),
    notRun: WANTED_RELEASES.filter(v => !all.some(r => r.version === v)).map(v => ({ version: v, why: whyNotRun(v) })),
  };
  if (process.env.CLUSTER_WRITE_DOC !== 'false') writeProof(proof);
  else process.stdout.write(renderProof(proof));
});

// only the admission-policy experiments chosen: no cluster of this file to start
const ownExperiments = EXPERIMENTS.filter(e => e !== 'admission-policy' && e !== 'admission-policy-node').some(running);
if (!ownExperiments) {
  test.skip('no experiment of this file chosen (CLUSTER_EXPERIMENTS)', () => undefined);
} else if (releases.length === 0) {
  test('no release is built', () => {
    throw new Error('build one first: bash scripts/cluster/build-kubernetes.sh 1.33.13 (docs/proof.md)');
  });
}

// (jest refuses `.each` of an empty table: a release named by CLUSTER_RELEASES whose node binaries are not built)
(ownExperiments ? describe.each(releases) : describe.skip.each(releases.length > 0 ? releases : ['none']))('Kubernetes %s', version => {
  let cluster: Cluster;
  const result: ReleaseResult = {
    version, jobs: [], order: [], rollout: [], admission: [], dryRun: [], lines: [], envoy: [], startup: [], stdout: [],
  } as any;
  const minor = Number(version.split('.')[1]);
  const target = `1.${minor}`;

  beforeAll(() => {
    cluster = Cluster.start(version, baseImages());
    result.startSeconds = round(cluster.startSeconds);
    result.kubeletVersion = cluster.kubectl(['get', 'node', 'node', '-o', 'jsonpath={.status.nodeInfo.kubeletVersion}']).trim();
    if (cluster.controllerManagerOf) result.controllerManager = cluster.controllerManagerOf;
    results.push(result);
  });
  afterAll(() => cluster?.stop());

  let ns = 0;
  /**
   * A fresh namespace under the restricted Pod Security profile (enforced), or `privileged` for a
   * pod with a hostPath (`podLogs`, the hand-written baseline of the stdout experiment).
   */
  function namespace(prefix: string, level: 'restricted' | 'privileged' = 'restricted'): string {
    const name = `${prefix}-${++ns}`;
    cluster.kubectl(['create', 'namespace', name]);
    cluster.kubectl(['label', 'namespace', name, `pod-security.kubernetes.io/enforce=${level}`, `pod-security.kubernetes.io/warn=${level}`]);
    return name;
  }

  async function runJob(layout: Layout, kind: 'Job' | 'CronJob'): Promise<JobRun> {
    const app = jobApp(target, layout, kind);
    const name = app.manifests[0].metadata.name;
    const n = namespace(`${kind.toLowerCase()}-${layout}`);
    // the ServiceAccount controller's default account first: a Job's pod waits for it otherwise
    await cluster.until('default ServiceAccount', 30, () => cluster.tryKubectl(['get', 'sa', 'default', '-n', n]).status === 0 ? true : undefined);
    const pods = cluster.watch(['pods', '-n', n]);
    const jobs = cluster.watch(['jobs', '-n', n]);
    try {
      cluster.apply(app.manifests, n);
      const jobName = kind === 'Job' ? name : `${name}-run`;
      // a CronJob runs its own jobTemplate, unmodified, as a Job created from it
      if (kind === 'CronJob') cluster.kubectl(['create', 'job', '-n', n, jobName, `--from=cronjob/${name}`]);
      const complete = await cluster.until(`Job ${jobName} Complete`, 120, () => jobs.events.find(e =>
        e.object.metadata.name === jobName && (e.object.status?.conditions ?? []).some((c: any) =>
          (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True')));
      const failed = (complete.object.status.conditions as any[]).some(c => c.type === 'Failed' && c.status === 'True');
      if (failed) throw new Error(`${version}: Job ${jobName} failed: ${JSON.stringify(complete.object.status)}`);
      const succeeded = pods.events.find(e => e.object.status?.phase === 'Succeeded')!;
      const pod = succeeded.object.metadata.name;
      const appLog = stamps(cluster.kubectl(['logs', '-n', n, pod, '-c', 'app']));
      const side = stamps(cluster.kubectl(['logs', '-n', n, pod, '-c', 'sidecar']));
      const appExit = appLog['app-exit'];
      return {
        layout,
        kind,
        sigterm: round(side['sidecar-term'] - appExit),
        sidecarExit: round(side['sidecar-exit'] - appExit),
        succeeded: round(succeeded.at - appExit),
        complete: round(complete.at - appExit),
      };
    } finally {
      pods.stop();
      jobs.stop();
    }
  }

  for (const kind of ['Job', 'CronJob'] as const) {
    for (const layout of ['native', 'legacy'] as const) {
      const runs = kind === 'Job' ? RUNS : Math.max(1, RUNS - 1);
      testIf('jobs')(`${kind} ${layout}: the app's exit -> sidecar SIGTERM -> exit -> pod Succeeded -> Job Complete (${runs} runs)`, async () => {
        for (let i = 0; i < runs; i++) {
          const r = await runJob(layout, kind);
          result.jobs.push(r);
          // the order the kubelet and the Job controller must keep, whatever the timing
          expect(r.sigterm).toBeGreaterThanOrEqual(0);
          expect(r.sidecarExit).toBeGreaterThanOrEqual(r.sigterm);
          expect(r.succeeded).toBeGreaterThanOrEqual(r.sidecarExit);
          expect(r.complete).toBeGreaterThanOrEqual(r.succeeded);
        }
      });
    }
  }

  testIf('order')('pod deletion: the app, then the native sidecars in reverse order, each after the previous one exited', async () => {
    for (let i = 0; i < RUNS; i++) {
      const app = orderApp(target);
      const n = namespace('order');
      cluster.apply(app.manifests, n);
      const pod = await cluster.until('order pod running', 120, () => {
        const r = cluster.tryKubectl(['get', 'pods', '-n', n, '-o', 'json']);
        if (r.status !== 0) return undefined;
        const p = JSON.parse(r.stdout).items[0];
        const all = [...(p?.status?.containerStatuses ?? []), ...(p?.status?.initContainerStatuses ?? [])];
        return all.length === 3 && all.every((c: any) => c.state?.running) ? p.metadata.name as string : undefined;
      });
      // the containers have printed their start stamp: their traps are set
      await cluster.until('start stamps', 30, () => ['app', 'first', 'second'].every(c =>
        /-start /.test(cluster.tryKubectl(['logs', '-n', n, pod, '-c', c]).stdout)) ? true : undefined);
      const follows = ['app', 'first', 'second'].map(c => cluster.follow(n, pod, c));
      await new Promise(r => setTimeout(r, 500));
      const t0 = uptime();
      cluster.kubectl(['delete', 'pod', '-n', n, pod, '--wait=false']);
      await Promise.all(follows.map(f => f.done));
      const s = stamps(follows.map(f => f.lines.join('\n')).join('\n'));
      const run: OrderRun = {
        appTerm: round(s['app-term'] - t0),
        appExit: round(s['app-exit'] - t0),
        secondTerm: round(s['second-term'] - t0),
        secondExit: round(s['second-exit'] - t0),
        firstTerm: round(s['first-term'] - t0),
        firstExit: round(s['first-exit'] - t0),
      };
      result.order.push(run);
      expect(run.secondTerm).toBeGreaterThanOrEqual(run.appExit);
      expect(run.firstTerm).toBeGreaterThanOrEqual(run.secondExit);
    }
  });

  for (const layout of ['native', 'legacy'] as const) {
    testIf('rollout')(`StatefulSet of 3 replicas, ${layout}: from the apply to 3 Ready replicas, with a sidecar that starts in ${SLOW_START_SECONDS} s`, async () => {
      for (let i = 0; i < Math.max(1, RUNS - 1); i++) {
        const app = statefulSetApp(target, layout);
        const n = namespace(`sts-${layout}`);
        await cluster.until('default ServiceAccount', 30, () => cluster.tryKubectl(['get', 'sa', 'default', '-n', n]).status === 0 ? true : undefined);
        const sets = cluster.watch(['statefulsets', '-n', n]);
        try {
          await new Promise(r => setTimeout(r, 300));
          const t0 = uptime();
          cluster.apply(app.manifests, n);
          const ready = await cluster.until('3 Ready replicas', 180, () => sets.events.find(e => e.object.status?.readyReplicas === 3));
          const seconds = round(ready.at - t0);
          result.rollout!.push({ layout, seconds });
          // OrderedReady: each pod waits for the one before it to be Ready, and each waits for its sidecar
          expect(seconds).toBeGreaterThanOrEqual(3 * SLOW_START_SECONDS);
        } finally {
          sets.stop();
        }
      }
    });
  }

  /**
   * A library cell that lost lines says why: the containers' states and the agent's own log (its
   * last 60 lines, the lines counted left out).
   */
  function reportLoss(what: string, pod: any, log: string, written: number, shipped: number): void {
    if (shipped >= written) return;
    const states = [...pod?.status?.initContainerStatuses ?? [], ...pod?.status?.containerStatuses ?? []]
      .map((c: any) => `${c.name}: ${JSON.stringify(c.state)} last ${JSON.stringify(c.lastState)}`);
    process.stdout.write(`[${what}] ${written - shipped} of ${written} lines lost\n${states.join('\n')}\n` +
      `agent log (last 60 lines, the lines counted left out):\n${log.split('\n').filter(l => !/lnum=\d+;/.test(l)).slice(-60).join('\n')}\n`);
  }

  /**
   * The lost-lines experiment (`linesApp`): the app writes `LINES_WRITTEN` numbered lines, then
   * its pod is deleted at once, or it is killed; the agent's stdout (its output) is read to its
   * end and its distinct line numbers counted.
   */
  async function runLines(layout: Layout, agent: LogAgentName, end: LinesEnd): Promise<number> {
    const app = linesApp(target, layout, agent, end);
    const n = namespace(`lines-${end}-${agent}-${layout}`);
    await cluster.until('default ServiceAccount', 30, () => cluster.tryKubectl(['get', 'sa', 'default', '-n', n]).status === 0 ? true : undefined);
    cluster.apply(app.manifests, n);
    const podOf = () => {
      const r = cluster.tryKubectl(['get', 'pods', '-n', n, '-o', 'json']);
      return r.status === 0 ? JSON.parse(r.stdout).items[0] : undefined;
    };
    try {
      if (end === 'delete') {
        const pod = await cluster.until('the app has written its lines', 180, () => {
          const p = podOf();
          return p && /app-written /.test(cluster.tryKubectl(['logs', '-n', n, p.metadata.name, '-c', 'app']).stdout) ? p.metadata.name as string : undefined;
        });
        const agentLog = cluster.follow(n, pod, 'log-agent');
        const deleted = podOf();
        cluster.kubectl(['delete', 'pod', '-n', n, pod, '--wait=false']);
        await agentLog.done;
        const shipped = shippedLines(agentLog.lines.join('\n'));
        reportLoss(`lines ${n}`, deleted, agentLog.lines.join('\n'), LINES_WRITTEN, shipped);
        return shipped;
      }
      const pod = await cluster.until('the killed app\'s pod has ended', 180, () => {
        const p = podOf();
        return p && (p.status?.phase === 'Failed' || p.status?.phase === 'Succeeded') ? p : undefined;
      });
      const appStatus = (pod.status.containerStatuses as any[]).find(c => c.name === 'app');
      // the writer was killed, PID 1 exited with its status: the kill happened
      if (appStatus?.state?.terminated?.exitCode !== 137) {
        throw new Error(`${version}: the killed app exited ${JSON.stringify(appStatus?.state)}: ${cluster.tryKubectl(['logs', '-n', n, pod.metadata.name, '-c', 'app']).stdout.slice(-2000)}`);
      }
      const log = cluster.kubectl(['logs', '-n', n, pod.metadata.name, '-c', 'log-agent']);
      const shipped = shippedLines(log);
      reportLoss(`lines ${n}`, pod, log, LINES_WRITTEN, shipped);
      return shipped;
    } finally {
      cluster.tryKubectl(['delete', 'namespace', n, '--wait=false']);
    }
  }

  for (const end of ['delete', 'kill'] as const) {
    for (const agent of LOG_AGENTS) {
      for (const layout of ['native', 'legacy'] as const) {
        const what = end === 'delete' ? 'the pod is deleted (a Deployment)' : 'the app is killed with kill -9 (a Job)';
        testIf('lines', agent)(`lines lost, ${agent} ${layout}: the app writes ${LINES_WRITTEN} lines, then ${what} (${RUNS} runs)`, async () => {
          for (let i = 0; i < RUNS; i++) {
            const shipped = await runLines(layout, agent, end);
            result.lines!.push({ agent, layout, end, written: LINES_WRITTEN, shipped });
            expect(shipped).toBeLessThanOrEqual(LINES_WRITTEN);
          }
        });
      }
    }
  }

  /**
   * The seed's experiment (`stdoutApp`): the app prints numbered lines to stdout, and its pod is
   * deleted while it prints (the lines written counted in its own log), or it prints
   * `LINES_WRITTEN` and is killed with kill -9 (a Job; a Deployment, restarted in place); the
   * agent's stdout is read to its end (or, where it runs on, 8 s after the app's end:
   * the read delay of every agent with room to spare) and its distinct line numbers counted.
   */
  async function runStdout(variant: StdoutVariant, end: StdoutEnd): Promise<{ written: number; shipped: number }> {
    const app = stdoutApp(target, variant, end);
    const hostPath = variant.source === 'pod-logs';
    const n = namespace(`stdout-${end}-${variant.agent}-${variant.layout}-${variant.source}`.slice(0, 55), hostPath ? 'privileged' : 'restricted');
    await serviceAccount(n);
    cluster.apply(app.manifests, n);
    const podOf = () => {
      const r = cluster.tryKubectl(['get', 'pods', '-n', n, '-o', 'json']);
      return r.status === 0 ? JSON.parse(r.stdout).items[0] : undefined;
    };
    const statusOf = (p: any, c: string) =>
      [...p.status?.containerStatuses ?? [], ...p.status?.initContainerStatuses ?? []].find((x: any) => x.name === c);
    try {
      if (end === 'delete') {
        const pod = await cluster.until('the app is printing', 180, () => {
          const p = podOf();
          return p && /app-printing/.test(cluster.tryKubectl(['logs', '-n', n, p.metadata.name, '-c', 'app']).stdout) ? p.metadata.name as string : undefined;
        });
        const appLog = cluster.follow(n, pod, 'app');
        const agentLog = cluster.follow(n, pod, 'log-agent');
        const deleted = podOf();
        cluster.kubectl(['delete', 'pod', '-n', n, pod, '--wait=false']);
        await Promise.all([appLog.done, agentLog.done]);
        // the lines the app printed, up to its shutdown log, as its own log has them
        const written = shippedLines(appLog.lines.join('\n'));
        if (!appLog.lines.some(l => /app-term /.test(l))) throw new Error(`${version}: the app's log did not reach its end: ${appLog.lines.slice(-5).join('\n')}`);
        const shipped = shippedLines(agentLog.lines.join('\n'));
        if (variant.agent !== 'hand-written') reportLoss(`stdout ${n}`, deleted, agentLog.lines.join('\n'), written, shipped);
        return { written, shipped };
      }
      const pod = await cluster.until('the app was killed', 180, () => {
        const p = podOf();
        const appStatus = p && statusOf(p, 'app');
        const killed = end === 'kill-job' ? appStatus?.state?.terminated : appStatus?.lastState?.terminated;
        return killed ? p : undefined;
      });
      const killed = end === 'kill-job' ? statusOf(pod, 'app').state.terminated : statusOf(pod, 'app').lastState.terminated;
      // the writer was killed, and the container's first process exited with its status: the kill happened
      if (killed.exitCode !== 137) throw new Error(`${version}: the killed app exited ${JSON.stringify(killed)}`);
      // an agent that exits with the app (the library's on a Job: native, or the legacy wrapper): its log to
      // its end, however late it started (legacy: the kubelet may start it after the app has already
      // been killed, and Fluentd then needs seconds before it reads); else (it runs on) 8 s
      const exitsWithApp = end === 'kill-job' && variant.agent !== 'hand-written';
      await cluster.until(exitsWithApp ? 'the agent has exited' : 'the agent has exited, or 8 s', exitsWithApp ? 120 : 60, () => {
        const agent = statusOf(podOf() ?? pod, 'log-agent');
        return agent?.state?.terminated || (!exitsWithApp && Date.now() - Date.parse(killed.finishedAt) > 8000) ? true : undefined;
      });
      const log = cluster.kubectl(['logs', '-n', n, pod.metadata.name, '-c', 'log-agent']);
      const shipped = shippedLines(log);
      if (variant.agent !== 'hand-written') reportLoss(`stdout ${n}`, podOf() ?? pod, log, LINES_WRITTEN, shipped);
      return { written: LINES_WRITTEN, shipped };
    } finally {
      cluster.tryKubectl(['delete', 'namespace', n, '--wait=false']);
    }
  }

  for (const end of STDOUT_ENDS) {
    for (const variant of STDOUT_VARIANTS) {
      const what = { 'delete': 'the pod is deleted', 'kill-job': 'the app is killed with kill -9 (a Job)', 'kill-deployment': 'the app is killed with kill -9 (a Deployment)' }[end];
      testIf('stdout', variant.agent)(`stdout lines lost, ${variant.agent} ${variant.layout} ${variant.source}: the app prints ${end === 'delete' ? 'lines (50 per 0.1 s)' : `${LINES_WRITTEN} lines`}, then ${what} (${RUNS} runs)`, async () => {
        for (let i = 0; i < RUNS; i++) {
          const { written, shipped } = await runStdout(variant, end);
          result.stdout!.push({ agent: variant.agent, layout: variant.layout, source: variant.source, end, written, shipped });
          expect(shipped).toBeLessThanOrEqual(written);
          // the library loses none; the hand-written baseline is measured, not judged
          if (variant.agent !== 'hand-written') expect(written - shipped).toBe(0);
        }
      });
    }
  }

  /** Waits for the default ServiceAccount of a new namespace (a pod waits for it otherwise). */
  async function serviceAccount(n: string): Promise<void> {
    await cluster.until('default ServiceAccount', 30, () => cluster.tryKubectl(['get', 'sa', 'default', '-n', n]).status === 0 ? true : undefined);
  }

  /** The single pod of a namespace once it is Ready: its name and IP. */
  async function readyPod(n: string, seconds: number): Promise<{ name: string; ip: string }> {
    return cluster.until(`a Ready pod in ${n}`, seconds, () => {
      const r = cluster.tryKubectl(['get', 'pods', '-n', n, '-o', 'json']);
      const p = r.status === 0 ? JSON.parse(r.stdout).items[0] : undefined;
      const ready = (p?.status?.conditions ?? []).some((c: any) => c.type === 'Ready' && c.status === 'True');
      return ready && p.status.podIP ? { name: p.metadata.name as string, ip: p.status.podIP as string } : undefined;
    });
  }

  /** Clients of the Envoy drain experiment, and how long they run after the delete. */
  const ENVOY_CLIENTS = 6;
  const ENVOY_AFTER_DELETE_SECONDS = ENVOY_DRAIN_SECONDS + 6;

  /**
   * The Envoy drain experiment (`envoyDrainApp`): `ENVOY_CLIENTS` clients in the cluster's network
   * namespace send requests to Envoy's listener on the pod IP, one at a time each, at most one per
   * `ENVOY_REQUEST_SECONDS`, keep-alive; once every client has been answered and 1.5 s more, the
   * pod is deleted. Counted: the requests not ended before the delete and started by
   * `ENVOY_DRAIN_SECONDS` after it (the time the library gives the clients' load balancers to
   * stop sending to the pod), and the failures among them.
   */
  async function runEnvoy(variant: EnvoyVariant): Promise<EnvoyRun> {
    const app = envoyDrainApp(target, variant);
    const n = namespace(`envoy-${variant}`);
    try {
      await serviceAccount(n);
      cluster.apply(app.manifests, n);
      const pod = await readyPod(n, 180);
      const load = cluster.spawnInside([process.execPath, '-e', HTTP_LOAD_SCRIPT, `http://${pod.ip}:${ENVOY_LISTENER_PORT}/cgi-bin/slow`,
        String(ENVOY_CLIENTS), String(ENVOY_REQUEST_SECONDS), String(60)]);
      await cluster.until('the load client\'s first answer', 30, () => load.lines.includes('ready') ? true : undefined);
      await new Promise(r => setTimeout(r, 1500));
      const t0 = uptime();
      cluster.kubectl(['delete', 'pod', '-n', n, pod.name, '--wait=false']);
      // the clients' end: ENVOY_AFTER_DELETE_SECONDS after the delete (the client ends by itself at 60 s)
      await new Promise(r => setTimeout(r, ENVOY_AFTER_DELETE_SECONDS * 1000));
      const all = loadRequests(load.lines).filter(q => q.start <= t0 + ENVOY_AFTER_DELETE_SECONDS);
      const before = all.filter(q => q.end < t0);
      // the set-up works: every request before the delete was answered
      expect(before.filter(q => !q.ok)).toEqual([]);
      expect(before.length).toBeGreaterThan(0);
      const window = all.filter(q => q.end >= t0 && q.start <= t0 + ENVOY_DRAIN_SECONDS);
      const failed = window.filter(q => !q.ok);
      const kinds: Record<string, number> = {};
      for (const q of failed) kinds[q.detail] = (kinds[q.detail] ?? 0) + 1;
      const firstFailed = all.filter(q => !q.ok && q.end >= t0).map(q => q.start - t0);
      return {
        variant,
        requests: window.length,
        failed: failed.length,
        ...(firstFailed.length > 0 ? { firstFailure: round(Math.max(0, Math.min(...firstFailed))) } : {}),
        kinds,
      };
    } finally {
      cluster.tryKubectl(['delete', 'namespace', n, '--wait=false']);
    }
  }

  for (const variant of ENVOY_VARIANTS) {
    testIf('envoy')(`Envoy, ${variant}: requests in flight while the pod is deleted (${RUNS} runs)`, async () => {
      for (let i = 0; i < RUNS; i++) {
        const r = await runEnvoy(variant);
        result.envoy!.push(r);
        expect(r.requests).toBeGreaterThan(0);
      }
    });
  }

  /** Runs of the startup experiment per variant (its outcome is a yes or no: more runs). */
  const STARTUP_RUNS = RUNS + 2;

  /** The startup experiment (`startupApp`): the app's first request through Envoy and to the collector. */
  async function runStartup(variant: StartupVariant): Promise<StartupRun> {
    const app = startupApp(target, variant);
    const n = namespace(`startup-${variant}`);
    try {
      await serviceAccount(n);
      cluster.apply(app.manifests, n);
      const log = await cluster.until('the app\'s first requests', 180, () => {
        const r = cluster.tryKubectl(['get', 'pods', '-n', n, '-o', 'jsonpath={.items[0].metadata.name}']);
        if (r.status !== 0 || !r.stdout.trim()) return undefined;
        const l = cluster.tryKubectl(['logs', '-n', n, r.stdout.trim(), '-c', 'app']).stdout;
        return /envoy-(ok|fail) /.test(l) && /otlp-(ok|fail) /.test(l) ? l : undefined;
      });
      const error = (what: string) => /-fail [0-9.]+ ?(.*)$/.exec(log.split('\n').find(l => l.startsWith(`${what}-fail `)) ?? '')?.[1].trim();
      const envoyError = error('envoy');
      const otlpError = error('otlp');
      return {
        variant,
        envoy: /envoy-ok /.test(log),
        otlp: /otlp-ok /.test(log),
        ...(envoyError !== undefined ? { envoyError } : {}),
        ...(otlpError !== undefined ? { otlpError } : {}),
      };
    } finally {
      cluster.tryKubectl(['delete', 'namespace', n, '--wait=false']);
    }
  }

  for (const variant of STARTUP_VARIANTS) {
    testIf('startup')(`startup, ${variant}: the app's first request through Envoy and to the collector (${STARTUP_RUNS} runs)`, async () => {
      for (let i = 0; i < STARTUP_RUNS; i++) result.startup!.push(await runStartup(variant));
    });
  }

  testIf('admission')('NativeSidecarGuard: the real API server rejects a pod whose restartPolicy was stripped and admits the library\'s pods', async () => {
    const n = namespace('guard');
    const chart = new Chart(Testing.app(), 'guard');
    new NativeSidecarGuard(chart, 'guard', { namespaces: [n], kubernetesVersion: target, allowBetaApi: minor < 30 });
    cluster.apply(chart.toJson(), n);
    const job = jobApp(target, 'native', 'Job').manifests[0];
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'guarded', annotations: job.spec.template.metadata.annotations }, spec: job.spec.template.spec };
    const stripped = JSON.parse(JSON.stringify(pod));
    stripped.metadata.name = 'stripped';
    delete stripped.spec.initContainers[0].restartPolicy;
    // the policy's binding takes a moment to reach the admission plugin
    const rejected = await cluster.until('the guard rejects', 60, () => {
      const r = cluster.tryKubectl(['create', '--dry-run=server', '-n', n, '-f', '-'], JSON.stringify(stripped));
      return r.status !== 0 && /ValidatingAdmissionPolicy|denied/.test(r.stderr) ? r.stderr.trim() : undefined;
    });
    const admitted = cluster.tryKubectl(['create', '--dry-run=server', '-n', n, '-f', '-'], JSON.stringify(pod));
    result.admission.push({ check: 'NativeSidecarGuard: a pod whose restartPolicy was stripped', outcome: 'rejected', detail: firstLine(rejected) });
    result.admission.push({ check: 'NativeSidecarGuard: the library\'s pod', outcome: admitted.status === 0 ? 'admitted' : 'rejected', detail: firstLine(admitted.stderr) });
    expect(admitted.status).toBe(0);
  });

  testIf('admission')('every file of the example app and of the vendor fixtures passes --dry-run=server --validate=strict, with no restricted-profile warning', () => {
    const files: Array<[string, string]> = [];
    for (const cl of ['cluster-1.27', 'cluster-1.29']) {
      const dir = path.join(ROOT, 'examples', 'dist', cl);
      if (!fs.existsSync(dir)) throw new Error(`${dir} is missing: npm run synth:example`);
      for (const f of fs.readdirSync(dir).filter(x => x.endsWith('.yaml')).sort()) files.push([`examples/dist/${cl}/${f}`, path.join(dir, f)]);
    }
    const vendor = path.join(ROOT, 'test', 'fixtures', 'vendor');
    for (const f of fs.readdirSync(vendor).filter(x => x.endsWith('.yaml')).sort()) files.push([`test/fixtures/vendor/${f}`, path.join(vendor, f)]);
    const failures: string[] = [];
    for (const [name, file] of files) {
      const text = fs.readFileSync(file, 'utf8');
      const docs = yaml.parseAllDocuments(text).map(d => d.toJSON()).filter(Boolean);
      // the example app's namespaces (shop, monitoring) under the restricted profile, enforced and
      // warned; the vendor's as they come (their objects without one go to default)
      const restricted = name.startsWith('examples/');
      for (const n of new Set(docs.map((d: any) => d.metadata?.namespace as string).filter(Boolean))) {
        if (cluster.tryKubectl(['get', 'namespace', n]).status !== 0) cluster.kubectl(['create', 'namespace', n]);
        if (restricted) cluster.kubectl(['label', '--overwrite', 'namespace', n, 'pod-security.kubernetes.io/enforce=restricted', 'pod-security.kubernetes.io/warn=restricted']);
      }
      const r = cluster.tryKubectl(['apply', '--dry-run=server', '--validate=strict', '-f', file]);
      const warned = restricted && /would violate PodSecurity/.test(r.stderr);
      const ok = r.status === 0 && !warned;
      result.dryRun.push({ file: name, objects: docs.length, ok, ...(ok ? {} : { detail: firstLine(r.stderr) }) });
      if (!ok) failures.push(`${name}: ${r.stderr}`);
    }
    expect(failures).toEqual([]);
  });

  testIf('admission')('the restricted profile (enforced) admitted every pod the suite ran', () => {
    // every pod above ran in a namespace labelled pod-security.kubernetes.io/enforce=restricted
    const pods = JSON.parse(cluster.kubectl(['get', 'pods', '-A', '-o', 'json'])).items as any[];
    const mine = pods.filter(p => /^(job|cronjob|order|sts|lines|envoy|startup|stdout)-/.test(p.metadata.namespace));
    result.admission.push({ check: 'restricted profile (enforced): the library\'s Job, CronJob, Deployment and StatefulSet pods', outcome: `${mine.length} pods admitted`, detail: '' });
    expect(mine.length).toBeGreaterThan(0);
  });
});

function round(x: number): number {
  return Math.round(x * 100) / 100;
}

function firstLine(s: string): string {
  return s.split('\n').find(l => l.trim() !== '')?.trim().slice(0, 200) ?? '';
}

export { App };
