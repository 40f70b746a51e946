/**
 * `CLUSTER_EXPERIMENTS=admission-policy npm run test:cluster`: SidecarInjectionPolicy on the real
 * API server of every built release from 1.34 (etcd, kube-apiserver and kube-controller-manager
 * in namespaces of their own: scripts/cluster/apiserver.sh; no node, so the pods stay Pending).
 *
 * 1. The policy (log agent, tracer, Envoy), its ConfigMaps and NativeSidecarGuard applied to the
 *    namespace `teams` (Pod Security "restricted" enforced); the API server compiles its CEL.
 * 2. A plain Deployment, Job and StatefulSet (no sidecar in their manifests) in `teams`; the same
 *    workloads synthesized with the same constructs in `synth`, which the policy does not select.
 *    Each controller's pod in `teams` is compared field by field with its twin in `synth`, after
 *    the differences docs/admission.md lists (normalizedPod).
 * 3. Injected once: a second identical policy (reinvocation), a pod the library synthesized
 *    created in `teams`, and `kubectl apply --dry-run=server` of a Deployment.
 * 4. failurePolicy: the policy broken at run time (its `hooks` variable fails on every pod):
 *    with Fail the pod create is refused, with Ignore it is admitted without any sidecar.
 * 5. Latency: 50 pod creates (`kubectl create -v=6`, one request each) in a namespace without
 *    the policy, then 50 with it.
 * The results go into docs/proof.md (test/cluster/proof-doc.ts, `admissionPolicy`).
 */
import { execFileSync, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { ApiObject, Chart, Testing } from 'cdk8s';
import { CACHE } from './harness';
import { AdmissionPolicyResult, PROOF_DOC, readProofData, renderProof, writeProof } from './proof-doc';
import { NativeSidecarGuard } from '../../src/guard';
import { InjectionFailurePolicy, SidecarInjectionPolicy } from '../../src/sidecar-injection-policy';
import { WithEnvoy } from '../../src/with-envoy';
import { WithLogAgent } from '../../src/with-log-agent';
import { WithTracer } from '../../src/with-tracer';

type Json = any;
const ROOT = path.join(__dirname, '..', '..');
const SCRIPT = path.join(ROOT, 'scripts', 'cluster', 'apiserver.sh');
const K8S = path.join(CACHE, 'kubernetes');
const PODS = Number(process.env.CLUSTER_LATENCY_PODS ?? 50);

const chosen = process.env.CLUSTER_EXPERIMENTS?.split(',').map(s => s.trim()).filter(Boolean);
const running = !chosen || chosen.includes('admission-policy');
const only = process.env.CLUSTER_RELEASES?.split(',').map(s => s.trim()).filter(Boolean);

/** The built releases with a MutatingAdmissionPolicy API (1.34+) and the three binaries this needs. */
function apiServerReleases(): string[] {
  if (!fs.existsSync(K8S)) return [];
  return fs.readdirSync(K8S)
    .filter(v => /^1\.\d+\.\d+$/.test(v) && Number(v.split('.')[1]) >= 34)
    .filter(v => ['kube-apiserver', 'kube-controller-manager', 'kubectl'].every(b => fs.existsSync(path.join(K8S, v, 'bin', b))))
    .filter(v => !only || only.includes(v))
    .sort((a, b) => Number(b.split('.')[1]) - Number(a.split('.')[1]));
}

const releases = running ? apiServerReleases() : [];
const results: AdmissionPolicyResult[] = [];
jest.setTimeout(1_800_000);

afterAll(() => {
  if (results.length === 0) return;
  const previous = readProofData(fs.readFileSync(PROOF_DOC, 'utf8'));
  const kept = (previous.admissionPolicy ?? []).filter(a => !results.some(r => r.version === a.version));
  const proof = { ...previous, admissionPolicy: [...results, ...kept].sort((a, b) => Number(b.version.split('.')[1]) - Number(a.version.split('.')[1])) };
  if (process.env.CLUSTER_WRITE_DOC !== 'false') writeProof(proof);
  else process.stdout.write(renderProof(proof));
});

if (!running) {
  test.skip('admission-policy not chosen (CLUSTER_EXPERIMENTS)', () => undefined);
} else if (releases.length === 0) {
  test('no release from 1.34 is built', () => {
    throw new Error('build one first: bash scripts/cluster/build-kubernetes.sh 1.37.2 (kube-apiserver, kube-controller-manager, kubectl)');
  });
}

/** An API server of `version` for this test file (scripts/cluster/apiserver.sh). */
class ApiServer {
  public static start(version: string): ApiServer {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `apiserver-${version}-`));
    const minor = Number(version.split('.')[1]);
    // 1.34-1.35: beta and off by default (kube_features.go; instance.go's disabled beta versions)
    const extra = minor < 36 ? '--feature-gates=MutatingAdmissionPolicy=true --runtime-config=admissionregistration.k8s.io/v1beta1=true' : '';
    execFileSync('bash', [SCRIPT, 'up', version, dir, String(process.pid)], {
      stdio: ['ignore', 'ignore', 'inherit'], timeout: 300_000, env: { ...process.env, EXTRA_APISERVER_FLAGS: extra },
    });
    return new ApiServer(version, dir);
  }

  private constructor(public readonly version: string, public readonly dir: string) {}

  public kubectl(args: string[], input?: string): string {
    return execFileSync('bash', [SCRIPT, 'exec', this.dir, 'kubectl', ...args], {
      input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'], timeout: 120_000, maxBuffer: 64 * 1024 * 1024,
    });
  }

  public tryKubectl(args: string[], input?: string): { status: number; stdout: string; stderr: string } {
    try {
      return { status: 0, stdout: this.kubectl(args, input), stderr: '' };
    } catch (e: any) {
      return { status: e.status ?? 1, stdout: String(e.stdout ?? ''), stderr: String(e.stderr ?? '') };
    }
  }

  public apply(manifests: Json[], namespace?: string): void {
    this.kubectl(['apply', ...(namespace ? ['-n', namespace] : []), '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: manifests }));
  }

  public async until<T>(what: string, seconds: number, check: () => T | undefined): Promise<T> {
    const end = Date.now() + seconds * 1000;
    for (;;) {
      const v = check();
      if (v !== undefined) return v;
      if (Date.now() > end) throw new Error(`${this.version}: ${what} did not happen within ${seconds} s`);
      await new Promise(r => setTimeout(r, 200));
    }
  }

  public stop(): void {
    const logs = path.join(CACHE, 'cluster-logs', `apiserver-${this.version}`);
    fs.rmSync(logs, { recursive: true, force: true });
    fs.mkdirSync(path.dirname(logs), { recursive: true });
    try {
      fs.cpSync(path.join(this.dir, 'logs'), logs, { recursive: true });
    } catch { /* no logs */ }
    execFileSync('bash', [SCRIPT, 'down', this.dir], { stdio: 'inherit', timeout: 60_000 });
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** An app container that the restricted Pod Security profile admits. */
const APP = {
  name: 'app',
  image: 'ghcr.io/example/shop-web:1.4.2',
  ports: [{ containerPort: 8080 }],
  securityContext: {
    allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' },
  },
};

/** The sidecars: the same constructs and props for the policy and for the synthesized workloads. */
function attach(scope: Json, workload: ApiObject, target: string): void {
  new WithLogAgent(scope, 'logs', { workload, kubernetesVersion: target });
  new WithTracer(scope, 'tracer', { workload, exporterEndpoint: 'otel-gateway.monitoring:4317', kubernetesVersion: target });
  new WithEnvoy(scope, 'envoy', { workload, appPort: 8080, kubernetesVersion: target });
}

/** A plain workload (no sidecar): what a team deploys with kubectl. */
function plainWorkload(chart: Chart, kind: string, id: string): ApiObject {
  const labels = { 'app.kubernetes.io/name': id };
  const spec: Json = { template: { metadata: { labels }, spec: { containers: [APP], ...(kind === 'Job' ? { restartPolicy: 'Never' } : {}) } } };
  if (kind !== 'Job') spec.selector = { matchLabels: labels };
  if (kind === 'StatefulSet') spec.serviceName = id;
  return new ApiObject(chart, id, { apiVersion: kind === 'Job' ? 'batch/v1' : 'apps/v1', kind, metadata: { name: id }, spec });
}

const KINDS = ['Deployment', 'Job', 'StatefulSet'] as const;

/**
 * What may differ between the admitted pod and the synthesized workload's pod, with its reason
 * (docs/admission.md, "What differs"): the agents' ConfigMaps (the policy's own), a checksum of
 * a config that names the workload, WithTracer's workload attribute; and what the API server
 * writes anyway (names, uids, owner, the service account token's generated volume name).
 */
function normalizedPod(pod: Json): Json {
  const metadata = { annotations: { ...pod.metadata.annotations }, labels: { ...pod.metadata.labels } };
  const out: Json = { metadata, spec: structuredClone(pod.spec) };
  for (const k of Object.keys(out.metadata.annotations)) if (k.includes('checksum')) out.metadata.annotations[k] = '<checksum>';
  for (const k of ['pod-template-hash', 'controller-revision-hash', 'statefulset.kubernetes.io/pod-name', 'apps.kubernetes.io/pod-index',
    'batch.kubernetes.io/controller-uid', 'controller-uid', 'batch.kubernetes.io/job-name', 'job-name']) delete out.metadata.labels[k];
  delete out.metadata.annotations['batch.kubernetes.io/job-tracking'];
  // the token's volume and mounts: added by ServiceAccount admission before the policy runs (first in
  // the injected pod, after the library's in the synthesized one; none in the injected sidecars)
  const token = (name: string) => name.startsWith('kube-api-access-');
  out.spec.volumes = (out.spec.volumes ?? []).filter((v: Json) => !token(v.name));
  for (const v of out.spec.volumes) if (v.configMap) v.configMap.name = '<agent config>';
  // the ServiceAccount admission plugin mounts the token into every container before the policy runs
  // (kubernetes v1.37.2 pkg/kubeapiserver/options/plugins.go AllOrderedPlugins: ServiceAccount, then
  // MutatingAdmissionPolicy), so the injected sidecars have no token mount; the synthesized ones have it
  for (const c of [...out.spec.containers, ...(out.spec.initContainers ?? [])]) {
    if (c.volumeMounts) {
      c.volumeMounts = c.volumeMounts.filter((m: Json) => !token(m.name));
      if (c.volumeMounts.length === 0) delete c.volumeMounts;
    }
    if (!c.env) continue;
    c.env = c.env.filter((e: Json) => e.name !== 'K8S_WORKLOAD_NAME');
    for (const e of c.env) if (e.name === 'OTEL_RESOURCE_ATTRIBUTES') e.value = e.value.replace(/,k8s\.[a-z]+\.name=[^,]*$/, '');
  }
  delete out.spec.nodeName;
  delete out.spec.hostname;
  delete out.spec.subdomain;
  return out;
}

/** The paths where two JSON values differ. */
function differences(a: Json, b: Json, at = ''): string[] {
  if (JSON.stringify(a) === JSON.stringify(b)) return [];
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return [`${at}: ${a.length} entries against ${b.length}`];
    return a.flatMap((x, i) => differences(x, b[i], `${at}[${x?.name ?? i}]`));
  }
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    return [...new Set([...Object.keys(a), ...Object.keys(b)])].sort().flatMap(k => differences(a[k], b[k], `${at}.${k}`));
  }
  return [`${at}: ${JSON.stringify(a)} against ${JSON.stringify(b)}`];
}

const sidecarCount = (pod: Json) => (pod.spec.initContainers ?? []).filter((c: Json) => c.restartPolicy === 'Always').length;

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
}

// not chosen, or no release built: the test above says so (jest refuses an empty table)
(releases.length > 0 ? describe.each(releases) : describe.skip.each(['none']))('Kubernetes %s: SidecarInjectionPolicy', version => {
  let server: ApiServer;
  const minor = Number(version.split('.')[1]);
  const target = `1.${minor}`;
  const result: Json = { version, pods: [], once: [], failurePolicy: [] };

  /** The policy objects (with `name` and `failurePolicy`), synthesized. */
  function policyManifests(name: string, failurePolicy = InjectionFailurePolicy.FAIL): Json[] {
    const { chart } = chartOf();
    const p = new SidecarInjectionPolicy(chart, 'inject', { namespaces: ['teams'], name, failurePolicy, kubernetesVersion: target, allowBetaApi: true });
    attach(p.pod, p.pod, target);
    return Testing.synth(chart);
  }

  function chartOf(): { chart: Chart } {
    const app = Testing.app();
    return { chart: new Chart(app, 'admission') };
  }

  function namespace(name: string): void {
    server.kubectl(['create', 'namespace', name]);
    server.kubectl(['label', 'namespace', name, 'pod-security.kubernetes.io/enforce=restricted', 'pod-security.kubernetes.io/warn=restricted']);
  }

  async function podsOf(ns: string, selector: string): Promise<Json[]> {
    return server.until(`a pod of ${selector} in ${ns}`, 90, () => {
      const items = JSON.parse(server.kubectl(['get', 'pods', '-n', ns, '-l', selector, '-o', 'json'])).items;
      return items.length > 0 ? items : undefined;
    });
  }

  beforeAll(async () => {
    server = ApiServer.start(version);
    for (const ns of ['teams', 'synth', 'plain']) namespace(ns);
    // the pods wait for their namespace's default ServiceAccount (the controller-manager makes it)
    for (const ns of ['teams', 'synth', 'plain']) {
      await server.until(`the default ServiceAccount of ${ns}`, 60, () => (server.tryKubectl(['get', 'sa', 'default', '-n', ns]).status === 0 ? true : undefined));
    }
  });
  afterAll(() => {
    server?.stop();
    if (result.latency) results.push(result as AdmissionPolicyResult);
  });

  test('the API server takes the policy, its binding, the ConfigMaps and the guard', async () => {
    const manifests = policyManifests('cdk8s-sidecars-injection');
    result.apiVersion = manifests.find(m => m.kind === 'MutatingAdmissionPolicy').apiVersion;
    const { chart } = chartOf();
    new NativeSidecarGuard(chart, 'guard', { namespaces: ['teams'], kubernetesVersion: target });
    server.apply([...manifests, ...Testing.synth(chart)]);
    // the policy is read by the API server's informer: wait until a pod is injected
    await server.until('the policy in effect', 60, () => {
      const r = server.tryKubectl(['run', 'probe', '-n', 'teams', '--image=busybox', '--dry-run=server', '-o', 'json',
        '--overrides', JSON.stringify({ spec: { containers: [{ ...APP, name: 'probe' }] } })]);
      return r.status === 0 && sidecarCount(JSON.parse(r.stdout)) > 0 ? true : undefined;
    });
  });

  test.each(KINDS)('%s: the pod its controller creates equals the synthesized workload\'s', async kind => {
    const id = `web-${kind.toLowerCase()}`;
    const plain = chartOf();
    plainWorkload(plain.chart, kind, id);
    server.apply(Testing.synth(plain.chart), 'teams');
    const synth = chartOf();
    const w = plainWorkload(synth.chart, kind, id);
    attach(synth.chart, w, target);
    server.apply(Testing.synth(synth.chart), 'synth');
    const admitted = (await podsOf('teams', `app.kubernetes.io/name=${id}`))[0];
    const synthesized = (await podsOf('synth', `app.kubernetes.io/name=${id}`))[0];
    const diff = differences(normalizedPod(admitted), normalizedPod(synthesized));
    result.pods.push({ kind, sidecars: sidecarCount(admitted), equal: diff.length === 0, differences: diff });
    expect(sidecarCount(admitted)).toBe(3);
    expect(diff).toEqual([]);
  });

  test('injected once: a second policy, a pod the library synthesized, a server-side dry run', async () => {
    // a second, identical policy on the same namespace: each runs (and reinvokes) with the other's output
    server.apply(policyManifests('cdk8s-sidecars-injection-2'));
    await new Promise(r => setTimeout(r, 3000));
    const plain = chartOf();
    plainWorkload(plain.chart, 'Deployment', 'twice');
    server.apply(Testing.synth(plain.chart), 'teams');
    const pod = (await podsOf('teams', 'app.kubernetes.io/name=twice'))[0];
    result.once.push({ check: 'two identical policies', ok: sidecarCount(pod) === 3, detail: `${sidecarCount(pod)} native sidecars` });
    // a pod the library synthesized, created in the policy's namespace
    const synth = chartOf();
    const w = plainWorkload(synth.chart, 'Deployment', 'synthesized');
    attach(synth.chart, w, target);
    const template = Testing.synth(synth.chart).find(m => m.kind === 'Deployment').spec.template;
    const created = JSON.parse(server.kubectl(['create', '-n', 'teams', '-o', 'json', '-f', '-'], JSON.stringify({
      apiVersion: 'v1', kind: 'Pod', metadata: { ...template.metadata, name: 'synthesized' }, spec: template.spec,
    })));
    result.once.push({ check: 'a pod the library synthesized', ok: sidecarCount(created) === 3, detail: `${sidecarCount(created)} native sidecars` });
    const dry = JSON.parse(server.kubectl(['create', '-n', 'teams', '--dry-run=server', '-o', 'json', '-f', '-'], JSON.stringify({
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'dry', labels: { 'app.kubernetes.io/name': 'dry' } }, spec: { containers: [APP] },
    })));
    result.once.push({ check: 'kubectl create --dry-run=server of a plain pod', ok: sidecarCount(dry) === 3, detail: `${sidecarCount(dry)} native sidecars` });
    server.kubectl(['delete', 'mutatingadmissionpolicybinding', 'cdk8s-sidecars-injection-2']);
    server.kubectl(['delete', 'mutatingadmissionpolicy', 'cdk8s-sidecars-injection-2']);
    expect(result.once.filter((o: Json) => !o.ok)).toEqual([]);
  });

  test('the cost: 50 pod creates without and with the policy', () => {
    const latencies = (ns: string): number[] => {
      const out: number[] = [];
      for (let i = 0; i < PODS; i++) {
        const r = spawnSync('bash', [SCRIPT, 'exec', server.dir, 'kubectl', 'create', '-n', ns, '-v=6', '-f', '-'], {
          input: JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: `latency-${i}` }, spec: { containers: [APP] } }), encoding: 'utf8',
        });
        // client-go's round tripper at -v=6: `"Response" verb="POST" url=".../pods?..." status="201 Created" milliseconds=12`
        // (older: `POST https://... 201 Created in 12 milliseconds`)
        const m = /POST[^\n]*\/pods[^\n]*?(?:milliseconds=(\d+)|in (\d+) milliseconds)/.exec(r.stderr + r.stdout);
        if (r.status !== 0 || !m) throw new Error(`${version}: pod create in ${ns} failed or printed no latency: ${r.stderr.slice(-400)}`);
        out.push(Number(m[1] ?? m[2]));
      }
      return out;
    };
    const without = latencies('plain');
    const withPolicy = latencies('teams');
    result.latency = {
      pods: PODS,
      withoutMs: { median: percentile(without, 50), p90: percentile(without, 90) },
      withMs: { median: percentile(withPolicy, 50), p90: percentile(withPolicy, 90) },
    };
  });

  test.each([InjectionFailurePolicy.FAIL, InjectionFailurePolicy.IGNORE])('failurePolicy %s: a policy that fails at run time', async policy => {
    // the same policy with a variable that fails on every pod at run time (int(c.name); a constant int('x') is refused when the policy is created)
    const broken = policyManifests('cdk8s-sidecars-injection', policy).filter(m => m.kind.startsWith('MutatingAdmissionPolicy'));
    const spec = broken.find(m => m.kind === 'MutatingAdmissionPolicy').spec;
    spec.variables = spec.variables.map((v: Json) => (v.name === 'hooks' ? { ...v, expression: 'object.spec.containers.map(c, int(c.name))' } : v));
    server.apply(broken);
    await new Promise(r => setTimeout(r, 3000));
    const name = `broken-${policy.toLowerCase()}`;
    const r = server.tryKubectl(['create', '-n', 'teams', '-o', 'json', '-f', '-'], JSON.stringify({
      apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [APP] },
    }));
    const created = r.status === 0 ? JSON.parse(r.stdout) : undefined;
    result.failurePolicy.push({
      policy,
      outcome: created ? 'admitted' : 'refused',
      sidecars: created ? sidecarCount(created) : 0,
      detail: (created ? '' : r.stderr.trim().split('\n').pop() ?? '').slice(0, 240),
    });
    if (policy === InjectionFailurePolicy.FAIL) expect(created).toBeUndefined();
    else expect(created && sidecarCount(created)).toBe(0);
    // never half-injected: no volume or annotation of the library's either
    if (created) expect(Object.keys(created.metadata.annotations ?? {}).filter(k => k.includes('sidecars.cdk8s.io'))).toEqual([]);
  });
});
