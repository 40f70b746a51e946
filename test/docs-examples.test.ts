/**
 * The documentation's examples run (issue 16: "the README's examples synthesize to pods whose
 * probes can pass"). Every compiled TypeScript snippet of README.md, CONTRIBUTING.md, docs/*.md
 * and the TSDoc `@example`s (test/util/snippets.ts; `npm run test:snippets` type-checks them) is
 * run as written: `'cdk8s-sidecars'` is the library's source, `App.synth()` records the app
 * instead of writing files, and the objects a fragment refers to without creating them (`app`,
 * `chart`, `web`, `job`, ...) come from a fixture app whose cluster is 1.30 (so that the
 * admission guard's API exists). Every app a snippet builds, and the fixture app, must then
 * synthesize (validation included), and no container of the output may have a probe that can
 * never pass: a tcpSocket, httpGet or grpc probe on the pod IP (no `host`) on a port that Envoy
 * forwards to on 127.0.0.1. That port is read from the output (the clusters of Envoy's bootstrap
 * in the pod's ConfigMap), not from the construct's props.
 */
import * as cdk8s from 'cdk8s';
import { App, Chart } from 'cdk8s';
import * as kplus from 'cdk8s-plus-34';
import * as ts from 'typescript';
import { parseAllDocuments } from 'yaml';
import * as lib from '../src';
import { podSpecOf } from './util/fixtures';
import { FIXTURE_NAMES, Snippet, allSnippets, asModule, isCompiled, markdownSnippets } from './util/snippets';

type Json = any;

const APP_CONTAINER = { name: 'app', image: 'ghcr.io/example/app:1.0.0', ports: [{ number: 8080 }] };

/** Runs one snippet; returns every App it touched (the fixture app first). */
function run(snippet: Snippet): App[] {
  const apps: App[] = [];
  class RecordingApp extends App {
    constructor(props?: cdk8s.AppProps) {
      super(props);
      apps.push(this);
    }
    public synth(): void {
      // recorded: synthesized below, in memory
    }
  }
  const fixtureApp = new RecordingApp();
  lib.Sidecars.configure(fixtureApp, { kubernetesVersion: '1.30' });
  const chart = new Chart(fixtureApp, 'fixture');
  const deployment = (id: string) => new kplus.Deployment(chart, id, { metadata: { name: id }, containers: [APP_CONTAINER] });
  class ShopChart extends Chart {
    constructor(scope: App, id: string) {
      super(scope, id);
      const web = new kplus.Deployment(this, 'web', { containers: [APP_CONTAINER] });
      new lib.WithLogAgent(this, 'logs', { workload: web });
    }
  }
  const values: Record<string, unknown> = {
    app: fixtureApp,
    chart,
    platformChart: new Chart(fixtureApp, 'platform'),
    web: deployment('web'),
    deployment: deployment('deployment'),
    checkout: deployment('checkout'),
    job: new kplus.Job(chart, 'job', { containers: [APP_CONTAINER] }),
    manifest: {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'vendor' },
      spec: { selector: { matchLabels: { app: 'vendor' } }, template: { metadata: { labels: { app: 'vendor' } }, spec: { containers: [{ name: 'app', image: 'x:1' }] } } },
    },
    ShopChart,
  };
  expect(Object.keys(values).sort()).toEqual([...FIXTURE_NAMES].sort());

  const modules: Record<string, unknown> = {
    'cdk8s': { ...cdk8s, App: RecordingApp },
    'cdk8s-plus-34': kplus,
    'cdk8s-sidecars': lib,
  };
  const requireShim = (name: string) => {
    if (name in modules) return modules[name];
    // the other cdk8s-plus majors (dev dependencies), as the snippet names them
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    if (/^cdk8s-plus-(2[7-9]|3[0-3])$/.test(name)) return require(name);
    throw new Error(`${snippet.file}:${snippet.line}: the snippet imports '${name}'`);
  };
  // The same module the type-check sees (test/util/snippets.ts asModule), as CommonJS, inside a
  // block so that its own declarations shadow the fixture's.
  const compilerOptions = { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true };
  const js = ts.transpileModule(asModule(snippet.code), { compilerOptions }).outputText;
  const fakeProcess = { env: {}, exitCode: undefined as number | undefined };
  const names = Object.keys(values);
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  new Function('require', 'exports', 'process', ...names, `{\n${js}\n}`)(requireShim, {}, fakeProcess, ...names.map(n => values[n]));
  return apps;
}

/** Synthesizes an app in memory: every manifest, after validation. */
function manifestsOf(app: App): Json[] {
  return parseAllDocuments(app.synthYaml()).map(d => d.toJSON()).filter(Boolean);
}

const POD_TEMPLATE_KINDS = ['Pod', 'Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'ReplicationController', 'Job', 'CronJob'];

/** The ports Envoy's bootstrap (in a ConfigMap, by name) forwards to on 127.0.0.1. */
function envoyLoopbackPorts(manifests: Json[]): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const m of manifests.filter(x => x.kind === 'ConfigMap' && typeof x.data?.['envoy.json'] === 'string')) {
    const bootstrap = JSON.parse(m.data['envoy.json']);
    const ports: number[] = [];
    for (const cluster of bootstrap.static_resources?.clusters ?? []) {
      for (const group of cluster.load_assignment?.endpoints ?? []) {
        for (const lb of group.lb_endpoints ?? []) {
          const sa = lb.endpoint?.address?.socket_address;
          if (sa?.address === '127.0.0.1') ports.push(sa.port_value);
        }
      }
    }
    out.set(m.metadata.name, ports);
  }
  return out;
}

/** Probes that can never pass: on the pod IP, on a port only reachable on 127.0.0.1. */
function unreachableProbes(manifests: Json[]): string[] {
  const loopback = envoyLoopbackPorts(manifests);
  const problems: string[] = [];
  for (const m of manifests.filter(x => POD_TEMPLATE_KINDS.includes(x.kind))) {
    const spec = podSpecOf(m);
    const fronted = new Set((spec.volumes ?? []).flatMap((v: Json) => loopback.get(v.configMap?.name) ?? []));
    for (const c of [...(spec.initContainers ?? []), ...spec.containers]) {
      for (const kind of ['startupProbe', 'readinessProbe', 'livenessProbe']) {
        const probe = c[kind];
        const action = probe?.tcpSocket ?? probe?.httpGet ?? probe?.grpc;
        if (!action || (action.host !== undefined && action.host !== '')) continue;
        const port = typeof action.port === 'number' ? action.port : (c.ports ?? []).find((p: Json) => p.name === action.port)?.containerPort;
        if (fronted.has(port)) problems.push(`${m.kind} '${m.metadata.name}': container '${c.name}' ${kind} on port ${port}, which the app serves on 127.0.0.1 only (behind Envoy)`);
      }
    }
  }
  return problems;
}

const snippets = allSnippets().filter(isCompiled);

describe('the documentation\'s examples', () => {
  test('there are examples to run: README, docs/ and the TSDoc, with complete apps among them', () => {
    expect(snippets.filter(s => s.file === 'README.md').length).toBeGreaterThanOrEqual(5);
    expect(snippets.filter(s => s.file.startsWith('docs/')).length).toBeGreaterThanOrEqual(5);
    expect(snippets.filter(s => s.file.startsWith('src/')).length).toBeGreaterThanOrEqual(5);
    expect(snippets.filter(s => /new App\(/.test(s.code)).length).toBeGreaterThanOrEqual(5);
  });

  test.each(snippets.map(s => [`${s.file}:${s.line}`, s] as const))('%s synthesizes, and no probe waits on a port Envoy fronts on 127.0.0.1', (_, snippet) => {
    const apps = run(snippet);
    for (const app of apps) {
      const manifests = manifestsOf(app);
      expect(manifests.length).toBeGreaterThan(0);
      expect(unreachableProbes(manifests)).toEqual([]);
    }
  });

  test('the README\'s Envoy examples are recognized: Envoy fronts the app\'s port on 127.0.0.1', () => {
    const withEnvoy = snippets.filter(s => s.file === 'README.md' && /new WithEnvoy\(/.test(s.code) && /new App\(/.test(s.code));
    expect(withEnvoy.length).toBeGreaterThanOrEqual(1);
    for (const s of withEnvoy) {
      const manifests = run(s).flatMap(manifestsOf);
      expect([...envoyLoopbackPorts(manifests).values()].flat()).toContain(8080);
    }
  });

  test('the probe check catches the README\'s old Envoy example (portNumber on the app\'s port)', () => {
    // What the README showed before issue 16: `portNumber: 8080` behind Envoy. The library now
    // refuses it unless `appListensOnPodIp: true`; with that opt-out the output is the old one,
    // and the check (which reads only the output) must flag the TCP startup probe.
    const [old] = markdownSnippets('old-README.md', [
      '```ts',
      "import { App, Chart } from 'cdk8s';",
      "import * as kplus from 'cdk8s-plus-27';",
      "import { WithEnvoy } from 'cdk8s-sidecars';",
      'const app = new App();',
      "const chart = new Chart(app, 'shop');",
      "const web = new kplus.Deployment(chart, 'web', { containers: [{ name: 'app', image: 'ghcr.io/example/web:2.3.0', portNumber: 8080 }] });",
      "new WithEnvoy(chart, 'envoy', { workload: web, kubernetesVersion: '1.29', appPort: 8080, appListensOnPodIp: true });",
      'app.synth();',
      '```',
    ].join('\n'));
    const problems = run(old).flatMap(a => unreachableProbes(manifestsOf(a)));
    expect(problems).toEqual([expect.stringMatching(/container 'app' startupProbe on port 8080/)]);
  });

  test('a snippet whose app fails validation fails here', () => {
    const [bad] = markdownSnippets('bad.md', [
      '```ts',
      "new WithEnvoy(chart, 'envoy', { workload: web, appPort: 9999 });",
      'app.synth();',
      '```',
    ].join('\n'));
    expect(() => run(bad).forEach(manifestsOf)).toThrow(/appPort 9999 is none of the ports/);
  });
});
