/**
 * The example app (examples/), synthesized by the real cdk8s CLI exactly as
 * `npm run synth:example` does, once per cluster, then checked:
 * strict schema of the cluster's release, the layout of every sidecar,
 * the per-cluster handling of the CronJob, and byte-identical output on a second run.
 */
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { parseAllDocuments } from 'yaml';
import { Images } from '../src';
import { oracleAvailable, readStreamsAsApiServer } from './util/api-server-yaml';
import { CLUSTER_IMAGES_DIR, runnableImage, servedByTestCluster, validateInImage } from './util/cluster-images';
import { expectValidEnvoyBootstrap } from './util/envoy-proto';
import { containerOf, layoutOf, podSpecOf } from './util/fixtures';
import { expectValidManifests } from './util/k8s-schema';

const ROOT = path.resolve(__dirname, '..');
const EXAMPLES = path.join(ROOT, 'examples');
const CDK8S = path.join(ROOT, 'node_modules', '.bin', 'cdk8s');

interface Cluster {
  readonly version: string;
  readonly layout: 'legacy' | 'native';
}
const CLUSTERS: Cluster[] = [
  { version: '1.27', layout: 'legacy' },
  { version: '1.29', layout: 'native' },
];

/** Every workload of the example app: its app containers and the sidecars it must get. */
const WORKLOADS = [
  { file: 'web.k8s.yaml', kind: 'Deployment', name: 'web', app: ['web'], sidecars: ['log-agent', 'tracer', 'envoy'] },
  { file: 'ledger.k8s.yaml', kind: 'StatefulSet', name: 'ledger', app: ['ledger'], sidecars: ['log-agent'] },
  { file: 'nightly-report.k8s.yaml', kind: 'CronJob', name: 'nightly-report', app: ['report'], sidecars: ['log-agent'] },
  { file: 'metrics-exporter.k8s.yaml', kind: 'Deployment', name: 'metrics-exporter', app: ['exporter'], sidecars: ['log-agent'] },
];
/** The busybox init container that provides a shell to the hooks of distroless agents. */
const TOOLS = 'sidecar-tools';
const FILES = [...new Set(WORKLOADS.map((w) => w.file))].sort();

/**
 * Runs `cdk8s synth` in examples/ for one cluster; resolves to file name -> content. `again`: the
 * second synth, whose output must be byte-identical, with ts-node's type-check off
 * (TS_NODE_TRANSPILE_ONLY: the same program, in a fresh process; the first synth and `npm test`'s
 * `tsc --project examples/tsconfig.json` type-check it), which halves its cost.
 */
function synth(version: string, outdir: string, printed?: Record<string, string>, again = false): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    const child = spawn(CDK8S, ['synth', '--check-upgrade', 'false', '--output', outdir], {
      cwd: EXAMPLES,
      env: { ...process.env, CDK8S_SIDECARS_KUBERNETES_VERSION: version, ...(again ? { TS_NODE_TRANSPILE_ONLY: 'true' } : {}) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => { output += d; });
    child.stderr.on('data', (d) => { output += d; });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) {
        reject(new Error(`cdk8s synth for ${version} exited with ${code}:\n${output}`));
        return;
      }
      if (printed) printed[version] = output;
      const files: Record<string, string> = {};
      for (const f of fs.readdirSync(outdir).sort()) files[f] = fs.readFileSync(path.join(outdir, f), 'utf8');
      resolve(files);
    });
  });
}

function parse(files: Record<string, string>): Record<string, any[]> {
  const out: Record<string, any[]> = {};
  for (const [f, text] of Object.entries(files)) {
    out[f] = parseAllDocuments(text).map((d) => {
      if (d.errors.length > 0) throw new Error(`${f}: ${d.errors.join('; ')}`);
      return d.toJS();
    });
  }
  return out;
}

function workload(manifests: Record<string, any[]>, w: typeof WORKLOADS[number]): any {
  const found = (manifests[w.file] ?? []).filter((m) => m.kind === w.kind && m.metadata?.name === w.name);
  if (found.length !== 1) throw new Error(`expected one ${w.kind} '${w.name}' in ${w.file}, found ${found.length}`);
  return found[0];
}

/** Every container-like object (has an image) anywhere in a manifest. */
function containersIn(node: any, found: any[] = []): any[] {
  if (Array.isArray(node)) {
    node.forEach((n) => containersIn(n, found));
  } else if (node !== null && typeof node === 'object') {
    if (typeof node.image === 'string') found.push(node);
    Object.values(node).forEach((n) => containersIn(n, found));
  }
  return found;
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cdk8s-sidecars-examples-'));
const first: Record<string, Record<string, string>> = {};
const second: Record<string, Record<string, string>> = {};
/** What the synth printed, by cluster. */
const printed: Record<string, string> = {};

beforeAll(async () => {
  await Promise.all(CLUSTERS.flatMap((c) => [
    synth(c.version, path.join(tmp, `a-${c.version}`), printed).then((f) => { first[c.version] = f; }),
    synth(c.version, path.join(tmp, `b-${c.version}`), undefined, true).then((f) => { second[c.version] = f; }),
  ]));
}, 300_000);

afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe.each(CLUSTERS)('examples/ synthesized by the cdk8s CLI for a $version cluster ($layout)', (cluster) => {
  const manifests = () => parse(first[cluster.version]);

  test('prints the timeline summary: a header and one line per workload (issue 26)', () => {
    const lines = printed[cluster.version].trimEnd().split('\n').filter(l => !l.startsWith('[cdk8s-sidecars]'));
    const at = lines.findIndex(l => l.startsWith('workload '));
    // (the CLI then lists the files it wrote, indented)
    const table = lines.slice(at, lines.findIndex((l, i) => i > at && !/^[A-Z]/.test(l)));
    expect(table.map(l => l.split(/ {2,}/)[0])).toEqual([
      'workload', "Deployment 'web'", "StatefulSet 'ledger'", "CronJob 'nightly-report'", "Deployment 'metrics-exporter'",
    ]);
    // the CronJob: its legacy agent is stopped by the report itself (the kubelet never stops it); a native one right after the app
    const cron = table[3].split(/ {2,}/);
    expect(cron[1]).toBe(cluster.version);
    expect(cron[7] === 'never').toBe(cluster.layout === 'legacy');
    // docs/shutdown.md shows the example app's real figures: this very table
    expect(fs.readFileSync(path.join(__dirname, '..', 'docs', 'shutdown.md'), 'utf8')).toContain(`\n${table.join('\n')}\n`);
  });

  test('writes one file per chart', () => {
    expect(Object.keys(first[cluster.version])).toEqual(FILES);
  });

  test('every manifest is valid against the strict schema of its release', () => {
    const all = Object.values(manifests()).flat();
    expect(all.length).toBeGreaterThan(WORKLOADS.length);
    expectValidManifests(all, cluster.version);
  });

  (oracleAvailable() ? test : test.skip)('the API server\'s YAML reader reads every file as the tests do (test/util/api-server-yaml.ts)', () => {
    const files = first[cluster.version];
    const read = readStreamsAsApiServer(Object.values(files));
    const js = parse(files);
    Object.keys(files).forEach((f, i) => {
      expect(read[i].filter(d => d.error !== undefined)).toEqual([]);
      expect(read[i].map(d => d.ok)).toEqual(js[f]);
    });
  });

  test('a second synth is byte-identical', () => {
    expect(second[cluster.version]).toEqual(first[cluster.version]);
  });

  test('the test cluster serves every image the manifests use, by the exact name (scripts/cluster/images.list)', () => {
    const used = [...new Set(Object.values(manifests()).flat().flatMap((m) => containersIn(m)).map((c) => c.image as string))].sort();
    expect(used.length).toBeGreaterThanOrEqual(7);
    expect(used.filter((i) => !servedByTestCluster().has(i))).toEqual([]);
  });

  // The images of the test cluster (scripts/cluster/images.sh) are the real programs: each agent of
  // the example app reads its config, as the pod mounts it, with its command and args unmodified.
  const agentImages = [Images.FLUENT_BIT, Images.ENVOY, Images.OTEL_COLLECTOR].filter((i) => runnableImage(i) !== undefined);
  (agentImages.length === 3 ? test : test.skip)(
    `every agent reads its config in the test cluster's image of it, as the pod runs it${agentImages.length === 3 ? '' :
      ` (skipped: needs root and the built images in ${CLUSTER_IMAGES_DIR}: scripts/cluster/images.sh build)`}`, () => {
      const ran: string[] = [];
      for (const [file, objects] of Object.entries(manifests())) {
        for (const w of objects.filter((o) => ['Deployment', 'StatefulSet', 'CronJob'].includes(o?.kind))) {
          const spec = podSpecOf(w);
          for (const c of [...(spec.initContainers ?? []), ...spec.containers]) {
            const r = validateInImage(spec, c, objects);
            if (r === undefined) continue;
            ran.push(`${w.metadata.name}/${c.name}:${r.id}`);
            expect({ file, container: c.name, status: r.status, output: r.status === 0 ? '' : r.output }).toEqual({ file, container: c.name, status: 0, output: '' });
          }
        }
      }
      // the web Deployment's three agents and the other workloads' log agents
      expect(ran.sort()).toEqual(['ledger/log-agent:fluent-bit', 'metrics-exporter/log-agent:fluent-bit', 'nightly-report/log-agent:fluent-bit',
        'web/envoy:envoy', 'web/log-agent:fluent-bit', 'web/tracer:otelcol']);
    }, 600_000);

  test.each(WORKLOADS)(`$kind $name gets its sidecars in the ${cluster.layout} layout`, (w) => {
    const m = workload(manifests(), w);
    const { init, containers } = layoutOf(m);
    if (cluster.layout === 'native') {
      // native: the sidecars are init containers (after the busybox `sidecar-tools` copy step
      // when a hook needs a shell), in the order log agent, tracer, Envoy (stopped in reverse),
      // each with restartPolicy Always and a startupProbe; the app containers are untouched
      expect(init.filter((n) => n !== TOOLS)).toEqual(w.sidecars);
      expect(init.indexOf(TOOLS)).toBeLessThanOrEqual(0);
      expect(containers).toEqual(w.app);
      for (const s of w.sidecars) {
        const c = containerOf(m, s);
        expect(c.restartPolicy).toBe('Always');
        expect(c.startupProbe).toBeDefined();
      }
    } else {
      // legacy: the sidecars are regular containers after the app, except Envoy, which goes
      // first and holds the app (postStart waits until it is ready); each has a preStop hook
      // that keeps it alive while the app shuts down
      const expected = [...w.sidecars.filter((s) => s === 'envoy'), ...w.app, ...w.sidecars.filter((s) => s !== 'envoy')];
      expect(containers).toEqual(expected);
      expect(init.filter((n) => n !== TOOLS)).toEqual([]);
      for (const s of w.sidecars) expect(containerOf(m, s).lifecycle?.preStop).toBeDefined();
      if (w.sidecars.includes('envoy')) expect(containerOf(m, 'envoy').lifecycle?.postStart).toBeDefined();
    }
  });

  if (cluster.layout === 'legacy') {
    test('no container anywhere has a restartPolicy (1.27 does not know the field)', () => {
      const offending = Object.values(manifests()).flat()
        .flatMap((m) => containersIn(m).map((c) => ({ m, c })))
        .filter(({ c }) => 'restartPolicy' in c)
        .map(({ m, c }) => `${m.kind}/${m.metadata?.name}: ${c.name}`);
      expect(offending).toEqual([]);
    });
  } else {
    test('no regular container has a restartPolicy; only sidecars among the init containers do', () => {
      for (const w of WORKLOADS) {
        const spec = podSpecOf(workload(manifests(), w));
        for (const c of spec.containers) expect(c.restartPolicy).toBeUndefined();
        for (const c of spec.initContainers ?? []) {
          expect(`${c.name}: ${c.restartPolicy}`).toBe(`${c.name}: ${w.sidecars.includes(c.name) ? 'Always' : undefined}`);
        }
      }
    });
  }

  test('the CronJob can complete: legacy, the report stops the agent itself; native, nothing extra', () => {
    const cron = workload(manifests(), WORKLOADS[2]);
    const spec = podSpecOf(cron);
    const report = containerOf(cron, 'report');
    const agent = containerOf(cron, 'log-agent');
    const stopVar = (report.env ?? []).find((e: any) => e.name === 'STOP_LOG_AGENT_ON_EXIT');
    expect(spec.restartPolicy).toBe('Never');
    expect(cron.spec.jobTemplate.spec.activeDeadlineSeconds).toBe(3600);
    if (cluster.layout === 'legacy') {
      expect(spec.shareProcessNamespace).toBe(true);
      expect(stopVar).toEqual({ name: 'STOP_LOG_AGENT_ON_EXIT', value: 'true' });
      // same user as the agent, so that the report may signal it
      expect(report.securityContext.runAsUser).toBe(agent.securityContext.runAsUser);
      expect(agent.command).toEqual(['/fluent-bit/bin/fluent-bit']); // what `pkill -x fluent-bit` matches
    } else {
      // cdk8s-plus-34 writes its default false; nothing shares the processes
      expect(spec.shareProcessNamespace).toBe(false);
      expect(stopVar).toBeUndefined();
    }
  });

  test('the web Service sends traffic to Envoy, never to the app, and Envoy\'s bootstrap is valid', () => {
    const objects = manifests()['web.k8s.yaml'];
    const svc = objects.find((o) => o.kind === 'Service');
    const web = workload(manifests(), WORKLOADS[0]);
    const envoy = containerOf(web, 'envoy');
    expect(svc.spec.ports).toEqual([expect.objectContaining({ port: 443, targetPort: 8443 })]);
    expect(envoy.ports).toContainEqual(expect.objectContaining({ containerPort: 8443 }));
    expect(containerOf(web, 'web').ports).toBeUndefined();
    const config = objects.find((o) => o.kind === 'ConfigMap' && o.data?.['envoy.json'] !== undefined);
    expectValidEnvoyBootstrap(JSON.parse(config.data['envoy.json']));
  });

  test('the included third-party manifest keeps its own fields and gets the agent on its log directory', () => {
    const objects = manifests()['metrics-exporter.k8s.yaml'];
    expect(objects.map((o) => `${o.kind}/${o.metadata.namespace}/${o.metadata.name}`).sort()).toEqual([
      expect.stringMatching(/^ConfigMap\/monitoring\/metrics-exporter-exporter-logs-config-/),
      'Deployment/monitoring/metrics-exporter',
      'Service/monitoring/metrics-exporter',
    ]);
    const d = workload(manifests(), WORKLOADS[3]);
    const exporter = containerOf(d, 'exporter');
    expect(exporter.args).toContain('--log.file=/var/log/exporter/exporter.log');
    expect(exporter.volumeMounts).toEqual([{ mountPath: '/var/log/exporter', name: 'log-agent-logs' }]);
    expect(d.spec.replicas).toBe(2);
  });
});
