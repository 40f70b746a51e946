/**
 * `CLUSTER_EXPERIMENTS=admission-policy-node npm run test:cluster`: the pods SidecarInjectionPolicy
 * admits, running on a real one-node cluster (scripts/cluster/cluster.sh) of every built release
 * from 1.36 (MutatingAdmissionPolicy v1, on by default; cluster.sh does not turn on the v1beta1 API
 * of 1.34-1.35, which test/cluster/admission-policy.cluster-test.ts covers on an API server alone).
 *
 * The policy (Fluent Bit writing to its stdout, the collector, Envoy) and its ConfigMaps go to the
 * namespace `teams`, NativeSidecarGuard to `teams` and `synth` (Pod Security "restricted" enforced in
 * both). Each workload runs twice: admitted (its plain manifest, no sidecar, in `teams`) and
 * synthesized (the same workload with the same constructs, synthesized by the library, in `synth`):
 * 1. a Job whose app creates its log file, waits 3 s (the agent's scan finds it), writes
 *    `LINES_WRITTEN` numbered lines and exits 0: the Job completes, and the log agent's output
 *    holds every line, the last one included;
 * 2. a Deployment of one replica whose app, at its very start, calls the log agent's health port,
 *    Envoy's upstream (routed back to the app's own server) and the collector's OTLP receiver: the
 *    pod is Ready, every native sidecar started no later than the app, and a request from the node
 *    to Envoy's pod-facing listener is answered by the app;
 * 3. the plain Deployment where the policy does not select it (the namespace `plain`; in `teams`,
 *    with the opt-out label of the policy's `matchConditions`): it runs as written.
 * Traffic stays in the cluster's network namespaces (scripts/cluster/cluster.sh); the cluster is
 * stopped in afterAll, also when a test fails.
 * The results go into docs/proof.md (test/cluster/proof-doc.ts, `admissionPolicyNode`).
 */
import * as fs from 'fs';
import { ApiObject, Chart, Testing } from 'cdk8s';
import { Construct } from 'constructs';
import { BUSYBOX, LINES_WRITTEN, shippedLines } from './apps';
import { Cluster, baseImages, builtReleases, requireServed } from './harness';
import { AdmissionPolicyNodeResult, PROOF_DOC, readProofData, renderProof, writeProof } from './proof-doc';
import { LogOutput, NativeSidecarGuard, OtlpProtocol, SidecarInjectionPolicy, WithEnvoy, WithLogAgent, WithTracer } from '../../src';

type Json = any;

const chosen = process.env.CLUSTER_EXPERIMENTS?.split(',').map(s => s.trim()).filter(Boolean);
const running = !chosen || chosen.includes('admission-policy-node');
const only = process.env.CLUSTER_RELEASES?.split(',').map(s => s.trim()).filter(Boolean);
const releases = running ? builtReleases().filter(v => Number(v.split('.')[1]) >= 36).filter(v => !only || only.includes(v)) : [];
const results: AdmissionPolicyNodeResult[] = [];
jest.setTimeout(1_800_000);

afterAll(() => {
  if (results.length === 0) return;
  const previous = readProofData(fs.readFileSync(PROOF_DOC, 'utf8'));
  const kept = (previous.admissionPolicyNode ?? []).filter(a => !results.some(r => r.version === a.version));
  const proof = {
    ...previous,
    admissionPolicyNode: [...results, ...kept].sort((a, b) => Number(b.version.split('.')[1]) - Number(a.version.split('.')[1])),
  };
  if (process.env.CLUSTER_WRITE_DOC !== 'false') writeProof(proof);
  else process.stdout.write(renderProof(proof));
});

if (!running) {
  test.skip('admission-policy-node not chosen (CLUSTER_EXPERIMENTS)', () => undefined);
} else if (releases.length === 0) {
  test('no release from 1.36 is built with its node binaries', () => {
    throw new Error('build one first: bash scripts/cluster/build-kubernetes.sh 1.37.2 (kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kubectl)');
  });
}

const SECURITY = {
  allowPrivilegeEscalation: false,
  capabilities: { drop: ['ALL'] },
  readOnlyRootFilesystem: true,
  runAsNonRoot: true,
  runAsUser: 65532,
  runAsGroup: 65532,
  seccompProfile: { type: 'RuntimeDefault' },
};
const RESOURCES = { requests: { cpu: '10m', memory: '16Mi' }, limits: { cpu: '200m', memory: '32Mi' } };
const NOW_FN = 'now() { read u _ < /proc/uptime; echo $u; }';
const NOW = '$(now)';
/** The app's own server (127.0.0.1), the port Envoy serves; Envoy's upstream routed back to it; its pod-facing listener. */
const APP_PORT = 8080;
const UPSTREAM_PORT = 15001;
const ENVOY_LISTENER_PORT = 10000;
/** The label with which a pod of the selected namespace opts out (the policy's own `matchConditions`). */
const OPT_OUT = 'sidecars.example.com/skip';

/** The sidecars, the same constructs and props for the policy's stand-in pod and for the synthesized twins. */
function attach(scope: Construct, workload: ApiObject, target?: string): void {
  const version = target ? { kubernetesVersion: target } : {};
  new WithLogAgent(scope, 'logs', { workload, ...version, output: LogOutput.stdout() });
  new WithTracer(scope, 'tracer', { workload, ...version, exporterEndpoint: 'collector.invalid:4317', exporterTls: false, protocol: OtlpProtocol.HTTP_PROTOBUF });
  new WithEnvoy(scope, 'envoy', {
    workload, ...version, appPort: APP_PORT, upstreams: [{ name: 'self', localPort: UPSTREAM_PORT, host: '127.0.0.1', port: APP_PORT }],
  });
}

/** The policy (the sidecars of `attach` on its stand-in pod) for `teams`, and NativeSidecarGuard for `teams` and `synth`. */
function policyManifests(target: string): Json[] {
  const chart = new Chart(Testing.app(), 'admission');
  const p = new SidecarInjectionPolicy(chart, 'inject', {
    namespaces: ['teams'],
    kubernetesVersion: target,
    matchConditions: [{ name: 'not-opted-out', expression: `!has(object.metadata.labels) || !('${OPT_OUT}' in object.metadata.labels)` }],
  });
  attach(p.pod, p.pod);
  new NativeSidecarGuard(chart, 'guard', { namespaces: ['teams', 'synth'], kubernetesVersion: target });
  return Testing.synth(chart);
}

/** The same workload synthesized by the library: `attach` on it, for the release. */
function synthesized(workload: Json, target: string): Json[] {
  const chart = new Chart(Testing.app(), 'synth');
  attach(chart, new ApiObject(chart, workload.metadata.name, workload), target);
  return Testing.synth(chart);
}

/** A plain Job (no sidecar): its app writes `LINES_WRITTEN` numbered lines to /var/log/app/app.log, then exits 0. */
function plainJob(): Json {
  const write = [
    NOW_FN,
    ': > /var/log/app/app.log',
    'sleep 3',
    `i=1; while [ $i -le ${LINES_WRITTEN} ]; do echo "lnum=$i;" >> /var/log/app/app.log; i=$((i + 1)); done`,
    `echo "app-exit ${NOW}"`,
  ].join('\n');
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'report' },
    spec: {
      backoffLimit: 0,
      template: {
        metadata: { labels: { app: 'report' } },
        spec: {
          restartPolicy: 'Never',
          containers: [{ name: 'app', image: BUSYBOX, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', write], securityContext: SECURITY, resources: RESOURCES }],
        },
      },
    },
  };
}

/**
 * A plain Deployment (no sidecar) whose app starts its server on 127.0.0.1:8080, then calls, once
 * each: the log agent's health port, Envoy's upstream (to its own server) and the collector's OTLP
 * receiver (`$OTEL_EXPORTER_OTLP_ENDPOINT`, which the policy sets), printing `<what>-ok`/`-fail`.
 */
function plainDeployment(name: string, labels: Record<string, string> = {}): Json {
  const once = (what: string, cmd: string) =>
    `if e=$(${cmd} 2>&1 > /dev/null); then echo "${what}-ok ${NOW}"; else echo "${what}-fail ${NOW} $(echo "$e" | tail -1)"; fi`;
  const podLabels = { app: name, ...labels };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: podLabels },
        spec: {
          containers: [{
            name: 'app',
            image: BUSYBOX,
            imagePullPolicy: 'IfNotPresent',
            command: ['sh', '-c', [
              NOW_FN,
              `echo "app-start ${NOW}"`,
              'echo ok > /www/index.html',
              `httpd -p 127.0.0.1:${APP_PORT} -h /www`,
              once('log-agent', 'wget -q -T 2 -O - http://127.0.0.1:2020/api/v1/health'),
              once('envoy', `wget -q -T 2 -O - http://127.0.0.1:${UPSTREAM_PORT}/index.html`),
              once('otlp', "wget -q -T 2 -O - --header 'Content-Type: application/json' --post-data '{}' \"$OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces\""),
              'trap \'exit 0\' TERM',
              'while true; do sleep 3600 & wait $!; done',
            ].join('\n')],
            readinessProbe: { exec: { command: ['wget', '-q', '-T', '1', '-O', '/dev/null', `http://127.0.0.1:${APP_PORT}/index.html`] }, periodSeconds: 1 },
            volumeMounts: [{ name: 'www', mountPath: '/www' }],
            securityContext: SECURITY,
            resources: RESOURCES,
          }],
          volumes: [{ name: 'www', emptyDir: { sizeLimit: '1Mi' } }],
        },
      },
    },
  };
}

const nativeSidecars = (pod: Json): string[] => (pod.spec.initContainers ?? []).filter((c: Json) => c.restartPolicy === 'Always').map((c: Json) => c.name);
const round = (x: number) => Math.round(x * 100) / 100;

// not chosen, or no release built: the test above says so (jest refuses an empty table)
(releases.length > 0 ? describe.each(releases) : describe.skip.each(['none']))('Kubernetes %s: the pods SidecarInjectionPolicy admits, on a node', version => {
  let cluster: Cluster;
  const target = `1.${version.split('.')[1]}`;
  const result: Json = { version, job: [], deployment: [], untouched: [] };
  /** Where each variant runs: the plain workload in the policy's namespace, its synthesized twin in `synth`. */
  const VARIANTS = [['admitted', 'teams'], ['synthesized', 'synth']] as const;

  function namespace(name: string): void {
    cluster.kubectl(['create', 'namespace', name]);
    cluster.kubectl(['label', 'namespace', name, 'pod-security.kubernetes.io/enforce=restricted', 'pod-security.kubernetes.io/warn=restricted']);
  }

  function podOf(ns: string, app: string): Json | undefined {
    const r = cluster.tryKubectl(['get', 'pods', '-n', ns, '-l', `app=${app}`, '-o', 'json']);
    return r.status === 0 ? JSON.parse(r.stdout).items[0] : undefined;
  }

  const ready = (pod: Json | undefined) => (pod?.status?.conditions ?? []).some((c: Json) => c.type === 'Ready' && c.status === 'True');

  beforeAll(async () => {
    // the policy injects the same sidecars as the synthesized twins: their images, before any cluster starts
    requireServed([...synthesized(plainJob(), target), ...synthesized(plainDeployment('web'), target)], `${version}: admission-policy-node`);
    cluster = Cluster.start(version, baseImages());
    result.kubeletVersion = cluster.kubectl(['get', 'node', 'node', '-o', 'jsonpath={.status.nodeInfo.kubeletVersion}']).trim();
    const namespaces = ['teams', 'synth', 'plain'];
    for (const ns of namespaces) namespace(ns);
    for (const ns of namespaces) {
      await cluster.until(`the default ServiceAccount of ${ns}`, 60, () => (cluster.tryKubectl(['get', 'sa', 'default', '-n', ns]).status === 0 ? true : undefined));
    }
    const manifests = policyManifests(target);
    result.apiVersion = manifests.find(m => m.kind === 'MutatingAdmissionPolicy').apiVersion;
    cluster.kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: manifests }));
    // the API server's informer reads the policy: wait until a pod is injected
    await cluster.until('the policy in effect', 60, () => {
      const r = cluster.tryKubectl(['create', '-n', 'teams', '--dry-run=server', '-o', 'json', '-f', '-'], JSON.stringify({
        apiVersion: 'v1', kind: 'Pod', metadata: { name: 'probe' }, spec: { containers: [{ name: 'app', image: BUSYBOX, securityContext: SECURITY }] },
      }));
      return r.status === 0 && nativeSidecars(JSON.parse(r.stdout)).length > 0 ? true : undefined;
    });
  });
  afterAll(() => {
    cluster?.stop();
    if (result.job.length === 2 && result.deployment.length === 2 && result.untouched.length === 2) results.push(result as AdmissionPolicyNodeResult);
  });

  test.each(VARIANTS)(`a Job, %s (%s): it completes with its sidecars, and the log agent ships all ${LINES_WRITTEN} lines, the last included`, async (variant, ns) => {
    const jobs = cluster.watch(['jobs', '-n', ns]);
    try {
      cluster.apply(variant === 'admitted' ? [plainJob()] : synthesized(plainJob(), target), ns);
      const done = await cluster.until(`Job report Complete or Failed in ${ns}`, 240, () => jobs.events.find(e => e.object.metadata.name === 'report' &&
        (e.object.status?.conditions ?? []).some((c: Json) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True')));
      const complete = (done.object.status.conditions as Json[]).some(c => c.type === 'Complete' && c.status === 'True');
      const pod = podOf(ns, 'report');
      const appLog = cluster.kubectl(['logs', '-n', ns, pod.metadata.name, '-c', 'app']);
      const agentLog = cluster.kubectl(['logs', '-n', ns, pod.metadata.name, '-c', 'log-agent']);
      const appExit = Number(/app-exit ([0-9.]+)/.exec(appLog)?.[1]);
      const run = {
        variant,
        sidecars: nativeSidecars(pod),
        complete,
        appExitToComplete: round(done.at - appExit),
        written: LINES_WRITTEN,
        shipped: shippedLines(agentLog),
        lastLine: agentLog.includes(`lnum=${LINES_WRITTEN};`),
      };
      result.job.push(run);
      if (!complete || run.shipped < LINES_WRITTEN) {
        process.stdout.write(`[admission-policy-node ${version} ${variant}] Job: ${JSON.stringify(done.object.status)}\n` +
          `pod: ${JSON.stringify(pod.status, null, 1).slice(0, 4000)}\nagent log (lines counted left out):\n` +
          `${agentLog.split('\n').filter(l => !/lnum=\d+;/.test(l)).slice(-40).join('\n')}\n`);
      }
      expect(run.sidecars).toEqual(['log-agent', 'tracer', 'envoy']);
      expect(complete).toBe(true);
      expect(Number.isFinite(appExit)).toBe(true);
      expect(run.shipped).toBe(LINES_WRITTEN);
      expect(run.lastLine).toBe(true);
    } finally {
      jobs.stop();
    }
  });

  test.each(VARIANTS)('a Deployment, %s (%s): Ready, its sidecars up before the app, a request through Envoy answered by the app', async (variant, ns) => {
    cluster.apply(variant === 'admitted' ? [plainDeployment('web')] : synthesized(plainDeployment('web'), target), ns);
    const pod = await cluster.until(`the web pod Ready in ${ns}`, 180, () => {
      const p = podOf(ns, 'web');
      return ready(p) ? p : undefined;
    });
    // the API server's own stamps (whole seconds): the pod's start, not its controllers' (the first
    // Deployment of a cluster waits about 3 s longer for its pod, whichever variant runs first)
    const readyAt = (pod.status.conditions as Json[]).find(c => c.type === 'Ready').lastTransitionTime;
    const started = (s: Json) => Date.parse(s.state?.running?.startedAt ?? '');
    const app = (pod.status.containerStatuses as Json[]).find(c => c.name === 'app');
    const sidecars = (pod.status.initContainerStatuses as Json[]).filter(c => nativeSidecars(pod).includes(c.name));
    const sidecarsFirst = sidecars.length === 3 && sidecars.every(s => s.started === true && started(s) <= started(app));
    // what the app found at its start: printed once, right after its server is up
    const appLog = await cluster.until('the app\'s three calls', 30, () => {
      const log = cluster.kubectl(['logs', '-n', ns, pod.metadata.name, '-c', 'app']);
      return ['log-agent', 'envoy', 'otlp'].every(w => new RegExp(`^${w}-(ok|fail) `, 'm').test(log)) ? log : undefined;
    });
    const ok = (what: string) => new RegExp(`^${what}-ok `, 'm').test(appLog);
    // from the node (the cluster's network namespace, loopback and the pods' bridge only) to Envoy's listener on the pod's IP
    const through = cluster.spawnInside([process.execPath, '-e', `require('http').get('http://${pod.status.podIP}:${ENVOY_LISTENER_PORT}/index.html', { timeout: 5000 }, r => { let b = ''; r.on('data', d => b += d); r.on('end', () => { console.log(r.statusCode + ' ' + b.trim()); }); }).on('error', e => console.log('error ' + e.code))`]);
    await through.done;
    const run = {
      variant,
      sidecars: nativeSidecars(pod),
      createdToReady: (Date.parse(readyAt) - Date.parse(pod.metadata.creationTimestamp)) / 1000,
      sidecarsFirst,
      atAppStart: { logAgent: ok('log-agent'), envoy: ok('envoy'), otlp: ok('otlp') },
      throughEnvoy: through.lines.includes('200 ok'),
    };
    result.deployment.push(run);
    if (!Object.values(run.atAppStart).every(Boolean) || !run.throughEnvoy || !sidecarsFirst) {
      process.stdout.write(`[admission-policy-node ${version} ${variant}] app log:\n${appLog}\nthrough Envoy: ${through.lines.join(' ')}\n` +
        `statuses: ${JSON.stringify([...pod.status.initContainerStatuses, ...pod.status.containerStatuses].map((c: Json) => [c.name, c.started, c.state]))}\n`);
    }
    expect(run.sidecars).toEqual(['log-agent', 'tracer', 'envoy']);
    expect(sidecarsFirst).toBe(true);
    expect(run.atAppStart).toEqual({ logAgent: true, envoy: true, otlp: true });
    expect(run.throughEnvoy).toBe(true);
  });
  test.each([
    ['plain', 'another namespace', {}],
    ['teams', 'the opt-out label', { [OPT_OUT]: 'true' }],
  ] as Array<[string, string, Record<string, string>]>)('a pod the policy does not select (%s: %s) runs as written', async (ns, _why, labels) => {
    const name = ns === 'plain' ? 'web' : 'web-skip';
    const written = plainDeployment(name, labels);
    cluster.apply([written], ns);
    const pod = await cluster.until(`the ${name} pod Ready in ${ns}`, 180, () => {
      const p = podOf(ns, name);
      return ready(p) ? p : undefined;
    });
    const libraryAnnotations = Object.keys(pod.metadata.annotations ?? {}).filter(k => k.includes('sidecars.cdk8s.io')).length;
    result.untouched.push({
      pod: `${ns}/${name}${Object.keys(labels).length > 0 ? ` (${Object.keys(labels).join(', ')})` : ''}`,
      ready: true,
      containers: (pod.spec.containers as Json[]).map(c => c.name),
      initContainers: (pod.spec.initContainers ?? []).length,
      libraryAnnotations,
    });
    expect((pod.spec.containers as Json[]).map(c => c.name)).toEqual(['app']);
    expect(pod.spec.initContainers ?? []).toEqual([]);
    expect(libraryAnnotations).toBe(0);
    expect(pod.spec.terminationGracePeriodSeconds).toBe(30);
    // the app container as written: no mount or variable of the library's
    const app = pod.spec.containers[0];
    expect((app.volumeMounts as Json[]).map(m => m.name).filter(n => !n.startsWith('kube-api-access-'))).toEqual(['www']);
    expect(app.env).toBeUndefined();
    expect(pod.spec.volumes.map((v: Json) => v.name).filter((n: string) => !n.startsWith('kube-api-access-'))).toEqual(['www']);
  });
});
