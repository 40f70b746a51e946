/**
 * `cdk8s-sidecars timeline` on the library's own output (issue 48, point 4): a synthesized
 * workload whose constructs were given `appShutdownTime: 20s` is timed with the app's 20 s (the
 * annotation sidecars.cdk8s.io/app-shutdown-time, read back), not the default 10 s, for every
 * construct and both layouts.
 *
 * The expected times are not the library's: they come from the kubelet simulation of
 * test/util/kubelet-termination.ts (written from the kubelet's code) run on the synthesized pod,
 * with each container's time from SIGTERM to its exit taken from the agents' shutdown table of
 * docs/shutdown.md (Fluent Bit with `stdout`: max(Grace 5, 1) + 1 = 6 s; the collector:
 * drainTime 10 + 1 = 11 s; Envoy: 1 s), the props the test gives (`stopTime`, `proxyStopTime`)
 * and, for a legacy Istio proxy, the drain Istio reads from the pod's own annotation.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { ApiObject, App, Chart, Duration, Testing, Yaml } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import {
  AdoptSidecar, LogAgent, Mesh, SidecarCheck, SidecarTimeline, WithEnvoy, WithLogAgent, WithMeshProxy, WithSidecar, WithTracer,
} from '../src';
import { cutShort, simulateTermination } from './util/kubelet-termination';
import { sigtermHoldOf } from './util/sigterm-hold';
import { main } from '../src/cli/main';
import { APP_SHUTDOWN_ANNOTATION } from '../src/facts/annotations';

const ENV = 'CDK8S_SIDECARS_KUBERNETES_VERSION';
const savedEnv = process.env[ENV];
let dir: string;
beforeAll(() => {
  delete process.env[ENV];
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'timeline-own-output-'));
});
afterAll(() => {
  if (savedEnv !== undefined) process.env[ENV] = savedEnv;
  fs.rmSync(dir, { recursive: true, force: true });
});

const APP = 20;
const appShutdownTime = Duration.seconds(APP);

/** What each construct adds, with how long its container takes from SIGTERM to its exit (docs/shutdown.md's table, or the prop given). */
interface Case {
  readonly name: string;
  readonly attach: (chart: Chart, workload: ApiObject, version: string) => void;
  /** Container name -> seconds from SIGTERM to exit (the app's containers: APP). */
  readonly stops: (manifest: any) => Record<string, number>;
  /** The pod as admitted (a mesh's proxy added where its injector puts it); default: as synthesized. */
  readonly admitted?: (manifest: any, version: string) => any;
}

const CASES: Case[] = [
  {
    name: 'WithLogAgent (Fluent Bit, stdout)',
    attach: (chart, workload, v) => new WithLogAgent(chart, 'logs', { workload, kubernetesVersion: v, agent: LogAgent.fluentBit(), appShutdownTime }),
    // Grace 5 + exit 1; native from 1.29 after the 2 s its wrapper holds SIGTERM (issue 51)
    stops: m => ({ 'log-agent': 6 + sigtermHoldOf((m.spec.template.spec.initContainers ?? []).find((x: any) => x.name === 'log-agent')) }),
  },
  {
    name: 'WithTracer',
    attach: (chart, workload, v) => new WithTracer(chart, 'tracer', { workload, kubernetesVersion: v, exporterEndpoint: 'otel-collector.observability:4317', appShutdownTime }),
    stops: () => ({ tracer: 11 }),
  },
  {
    name: 'WithEnvoy',
    attach: (chart, workload, v) => new WithEnvoy(chart, 'envoy', { workload, kubernetesVersion: v, appPort: 8080, appShutdownTime }),
    stops: () => ({ envoy: 1 }),
  },
  {
    name: 'WithSidecar',
    attach: (chart, workload, v) => new WithSidecar(chart, 'proxy', {
      workload,
      kubernetesVersion: v,
      containerName: 'db-proxy',
      image: 'ghcr.io/example/db-proxy:1.0.0',
      ports: [{ number: 9090 }],
      startupCheck: SidecarCheck.http(9090, { path: '/ready' }),
      stopTime: Duration.seconds(3),
      appShutdownTime,
    }),
    stops: () => ({ 'db-proxy': 3 }),
  },
  {
    name: 'AdoptSidecar',
    attach: (chart, workload, v) => new AdoptSidecar(chart, 'adopt', {
      workload, kubernetesVersion: v, containerName: 'vendor-proxy', stopTime: Duration.seconds(4), appShutdownTime,
    }),
    stops: () => ({ 'vendor-proxy': 4 }),
  },
  {
    name: 'WithMeshProxy (Istio)',
    attach: (chart, workload, v) => new WithMeshProxy(chart, 'mesh', { workload, kubernetesVersion: v, mesh: Mesh.ISTIO, proxyStopTime: Duration.seconds(5), appShutdownTime }),
    // native: the proxy's own stop; legacy: Istio drains for terminationDrainDuration, which the pod's annotation sets
    stops: m => {
      const config = JSON.parse(m.spec.template.metadata.annotations['proxy.istio.io/config']);
      return { 'istio-proxy': parseFloat(config.terminationDrainDuration) };
    },
    // Istio's injector: native, istio-proxy first among the init containers (1.33+: `auto`); legacy, last in containers
    admitted: (m, v) => {
      const out = structuredClone(m);
      const spec = out.spec.template.spec;
      const proxy = { name: 'istio-proxy', image: 'docker.io/istio/proxyv2:1.28.0' };
      if (Number(v.split('.')[1]) >= 33) spec.initContainers = [{ ...proxy, restartPolicy: 'Always' }, ...spec.initContainers ?? []];
      else spec.containers = [...spec.containers, proxy];
      return out;
    },
  },
];

function synthesize(c: Case, version: string): any {
  const app = Testing.app();
  const chart = new Chart(app, 'shop');
  const containers: any[] = [{ name: 'app', image: 'ghcr.io/example/app:1.0.0', ports: [{ containerPort: 8080 }] }];
  if (c.name.startsWith('AdoptSidecar')) containers.push({ name: 'vendor-proxy', image: 'ghcr.io/example/vendor-proxy:2.0.0' });
  const workload = new ApiObject(chart, 'web', {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web' },
    spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers } } },
  });
  c.attach(chart, workload, version);
  return Yaml.load(writeYaml(app)).find((o: any) => o.kind === 'Deployment');
}

let files = 0;
function writeYaml(app: App): string {
  const file = path.join(dir, `out-${files++}.yaml`);
  fs.writeFileSync(file, app.synthYaml());
  return file;
}

/** `cdk8s-sidecars timeline FILE --kubernetes-version V`, in-process: stdout, stderr, the exit code. */
function timeline(file: string, version: string): { status: number; stdout: string; stderr: string } {
  let stdout = '';
  let stderr = '';
  const spies = [
    jest.spyOn(process.stdout, 'write').mockImplementation((chunk: any) => { stdout += String(chunk); return true; }),
    jest.spyOn(process.stderr, 'write').mockImplementation((chunk: any) => { stderr += String(chunk); return true; }),
  ];
  try {
    return { status: main(['timeline', file, '--kubernetes-version', version]), stdout, stderr };
  } finally {
    for (const s of spies) s.mockRestore();
  }
}

/** The stop table as printed: container -> [SIGTERM, exit] (`30 (killed)` read as 30). */
function stopTable(out: string): Record<string, [number, number]> {
  const lines = out.split('\n');
  const head = lines.findIndex(l => /^\s+container\s+role\s+preStop\s+turn\s+SIGTERM/.test(l));
  const rows: Record<string, [number, number]> = {};
  for (const line of lines.slice(head + 1)) {
    if (!/^\s{2}\S/.test(line)) break;
    const cols = line.trim().split(/\s{2,}/);
    rows[cols[0]] = [parseFloat(cols[4]), parseFloat(cols[6])];
  }
  return rows;
}

const LAYOUTS: Array<[string, string]> = [['legacy', '1.27'], ['native', '1.33']];

describe.each(CASES.map(c => [c.name, c] as const))('%s', (_, c) => {
  test.each(LAYOUTS)('%s (%s): the timeline of the synthesized manifest is the kubelet simulation\'s, with the app\'s 20 s', (layout, version) => {
    const manifest = synthesize(c, version);
    expect(manifest.spec.template.metadata.annotations[APP_SHUTDOWN_ANNOTATION]).toBe(`${APP}s`);
    const admitted = c.admitted ? c.admitted(manifest, version) : manifest;
    const file = path.join(dir, `admitted-${files++}.yaml`);
    fs.writeFileSync(file, Yaml.stringify(admitted));
    const spec = admitted.spec.template.spec;
    const stops = c.stops(manifest);
    const natives = (spec.initContainers ?? []).filter((x: any) => x.restartPolicy === 'Always').map((x: any) => x.name);
    expect(natives.length > 0).toBe(layout === 'native');
    const sim = simulateTermination({
      spec,
      minor: Number(version.split('.')[1]),
      behaviour: name => ({ exitAfterSigterm: stops[name] ?? APP }),
    });
    // the library's grace is enough: nobody is cut short on the kubelet's timeline
    expect(cutShort(sim)).toEqual([]);

    const r = timeline(file, version);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const expected = Object.fromEntries([...sim.containers.values()].map(x => [x.name, [x.sigterm, x.exit]]));
    expect(stopTable(r.stdout)).toEqual(expected);
    const appExit = sim.containers.get('app')!.exit;
    expect(appExit).toBe(APP);
    const sidecars = [...sim.containers.values()].filter(x => x.name !== 'app');
    const lastSigterm = Math.max(...sidecars.map(x => x.sigterm)) - appExit;
    expect(r.stdout).toContain(`grace ${sim.grace} s`);
    const when = lastSigterm >= 0 ? `${lastSigterm} s after it` : `${-lastSigterm} s before it (while the app still runs)`;
    expect(r.stdout).toContain(`the app exits at ${appExit} s, the last sidecar gets SIGTERM ${when}, the pod is gone at ${sim.end} s`);
    expect(r.stdout).toContain(`app budget: ${APP} s from SIGTERM to exit; appShutdownTime ${APP}s (recorded by cdk8s-sidecars in the pod template`);
    expect(r.stdout).not.toMatch(/SIGTERM -\d/);
    // the header speaks of native sidecars only where the pod has some
    if (layout === 'legacy') expect(r.stdout.split('\n')[1]).toBe('Deployment \'web\', Kubernetes 1.27');
    expect(r.stdout).not.toContain('(killed)');
  });
});

test('the constructs\' own timeline and the manifest\'s agree for every construct and layout (SidecarTimeline.of and ofManifest)', () => {
  for (const c of CASES.filter(x => !x.admitted)) {
    for (const [, version] of LAYOUTS) {
      const app = Testing.app();
      const chart = new Chart(app, 'shop');
      const containers: any[] = [{ name: 'app', image: 'ghcr.io/example/app:1.0.0', ports: [{ containerPort: 8080 }] }];
      if (c.name.startsWith('AdoptSidecar')) containers.push({ name: 'vendor-proxy', image: 'ghcr.io/example/vendor-proxy:2.0.0' });
      const workload = new ApiObject(chart, 'web', {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web' },
        spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers } } },
      });
      c.attach(chart, workload, version);
      const manifest = Testing.synth(chart).find((o: any) => o.kind === 'Deployment');
      const of = SidecarTimeline.of(workload);
      const read = SidecarTimeline.ofManifest(manifest, { kubernetesVersion: version });
      expect([c.name, version, read.termination, read.startOrder, read.appShutdownSeconds, read.endSeconds])
        .toEqual([c.name, version, of.termination, of.startOrder, of.appShutdownSeconds, of.endSeconds]);
    }
  }
});

test('a kplus workload with Fluent Bit to Loki and Envoy at 1.33: the app\'s 20 s, not 10 s (the case of the issue)', () => {
  const app = Testing.app();
  const chart = new Chart(app, 'shop');
  const web = new kplus.Deployment(chart, 'web', { containers: [{ name: 'app', image: 'ghcr.io/example/app:1.0.0', ports: [{ number: 8080 }] }] });
  new WithLogAgent(chart, 'logs', { workload: web, kubernetesVersion: '1.33', appShutdownTime });
  new WithEnvoy(chart, 'envoy', { workload: web, kubernetesVersion: '1.33', appPort: 8080, appShutdownTime });
  const file = writeYaml(app);
  const r = timeline(file, '1.33');
  expect(r.status).toBe(0);
  const of = SidecarTimeline.of(web);
  expect(r.stdout).toContain(`the app exits at ${APP} s`);
  expect(r.stdout).toContain(`the pod is gone at ${of.endSeconds} s`);
  expect(r.stdout).toContain(`grace ${of.graceSeconds} s`);
});

test('a malformed app-shutdown-time annotation is an error naming it; a given appShutdownTime wins over it', () => {
  const manifest = synthesize(CASES[0], '1.33');
  const given = SidecarTimeline.ofManifest(manifest, { kubernetesVersion: '1.33', appShutdownTime: Duration.seconds(3) });
  expect(given.appExitSeconds).toBe(3);
  manifest.spec.template.metadata.annotations[APP_SHUTDOWN_ANNOTATION] = 'soon';
  expect(() => SidecarTimeline.ofManifest(manifest, { kubernetesVersion: '1.33' })).toThrow(
    `SidecarTimeline.ofManifest: the pod template's annotation ${APP_SHUTDOWN_ANNOTATION} is "soon"; cdk8s-sidecars writes it as a number of seconds (e.g. "20s"). ` +
    'Fix or remove it, or give appShutdownTime.');
});

test('a timeline whose sidecar gets SIGTERM before the app\'s exit says "before", never a negative "after"', () => {
  const manifest = synthesize(CASES[0], '1.27');
  // the app given 30 s where the library planned 20: the legacy agent's hook ends at 22 s
  const t = SidecarTimeline.ofManifest(manifest, { kubernetesVersion: '1.27', appShutdownTime: Duration.seconds(30) });
  expect(t.sidecarSigtermAfterAppSeconds).toBe(-8);
  expect(t.toTable()).toContain('the app exits at 30 s, the last sidecar gets SIGTERM 8 s before it (while the app still runs), the pod is gone at');
});
