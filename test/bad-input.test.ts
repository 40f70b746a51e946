/**
 * The bad-input catalogue: every mistake a user can make with the three constructs,
 * `Sidecars.configure()` and `SidecarValidation`, as one case each. For every case:
 * - the user's program (build the app, then `app.synth()` into a fresh directory) fails;
 * - the message names the construct (its path), the bad value, and what to do, in that order;
 * - nothing is written to the output directory.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { ApiObject, App, Chart, Size } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
// Imported module by module (not from '../src'), so that constructs in progress cannot break this suite.
import { LogAgent } from '../src/log-agent';
import { LogOutput } from '../src/log-output';
import { SidecarValidation } from '../src/validation';
import { WithEnvoy } from '../src/with-envoy';
import { WithLogAgent } from '../src/with-log-agent';
import { WithTracer } from '../src/with-tracer';

const ENV = 'CDK8S_SIDECARS_KUBERNETES_VERSION';
const savedEnv = process.env[ENV];
beforeEach(() => { delete process.env[ENV]; });
afterAll(() => { if (savedEnv !== undefined) process.env[ENV] = savedEnv; else delete process.env[ENV]; });

const ENDPOINT = 'otel-collector.observability:4317';
const USER = { user: 1000, group: 1000 };

/** What a case gets to build its app with. */
interface Ctx {
  readonly app: App;
  readonly chart: Chart;
  /** A cdk8s-plus Deployment 'web' (named 'web') with an app container 'app' on port 8080. */
  deployment(props?: Partial<kplus.DeploymentProps>): kplus.Deployment;
  /** A raw Deployment ApiObject 'raw' with the given pod spec. */
  raw(podSpec: any, kind?: string): ApiObject;
}

interface Case {
  readonly name: string;
  readonly build: (ctx: Ctx) => void;
  /** Substrings the message must contain, in this order: the construct (path), the bad value, the fix. */
  readonly message: string[];
}

function ctx(app: App, chart: Chart): Ctx {
  return {
    app,
    chart,
    deployment: (props = {}) => new kplus.Deployment(chart, 'web', {
      metadata: { name: 'web' },
      containers: [{ name: 'app', image: 'ghcr.io/example/app:1.0.0', portNumber: 8080, securityContext: USER }],
      ...props,
    }),
    raw: (podSpec, kind = 'Deployment') => new ApiObject(chart, 'raw', {
      apiVersion: kind === 'Job' ? 'batch/v1' : 'apps/v1',
      kind,
      metadata: { name: 'raw' },
      spec: {
        ...(kind === 'Job' ? {} : { selector: { matchLabels: { app: 'raw' } } }),
        template: { metadata: { labels: { app: 'raw' } }, spec: podSpec },
      },
    }),
  };
}

const APP = { name: 'app', image: 'ghcr.io/example/app:1.0.0', ports: [{ containerPort: 8080 }] };

const CASES: Case[] = [
  {
    name: 'a raw workload without app containers',
    build: c => new WithLogAgent(c.chart, 'logs', { workload: c.raw({ containers: [] }), kubernetesVersion: '1.30' }),
    message: ["[test/logs] Deployment 'raw'", 'has no app containers (spec.containers is empty)', "Add the app's containers to the workload"],
  },
  {
    name: 'a user container called sidecar-tools where the hooks need the tools (legacy before 1.30)',
    build: c => new WithLogAgent(c.chart, 'logs', {
      workload: c.raw({ containers: [APP, { name: 'sidecar-tools', image: 'busybox:1.36' }] }), kubernetesVersion: '1.27',
    }),
    message: ["[test/logs] Deployment 'raw': container name 'sidecar-tools' is the name of the library's init container",
      "that the preStop/postStart hooks of WithLogAgent 'test/logs' need", 'rename your container'],
  },
  {
    name: 'two sidecars whose derived volume names clash',
    build: c => {
      const workload = c.deployment();
      new WithLogAgent(c.chart, 'logs', { workload, kubernetesVersion: '1.29', containerName: 'tracer' });
      new WithTracer(c.chart, 'tracer', { workload, exporterEndpoint: ENDPOINT, kubernetesVersion: '1.29', containerName: 'otel' });
      new WithEnvoy(c.chart, 'envoy', { workload, kubernetesVersion: '1.29', appPort: 8080, containerName: 'tracer' });
    },
    message: ["WithEnvoy 'test/envoy'", "volume name 'tracer-config' is already used by the sidecar of WithLogAgent 'test/logs'", 'choose another containerName for one of them'],
  },
  {
    name: 'an HTTP log output without a host',
    build: c => new WithLogAgent(c.chart, 'logs', { workload: c.deployment(), output: LogOutput.http({ host: '' }) }),
    message: ["WithLogAgent 'test/logs'", 'the http output needs a host; got an empty string', "Set host to the destination's DNS name or IP address"],
  },
  {
    name: 'Envoy sends the app\'s traffic to a port another sidecar binds',
    build: c => {
      const workload = c.raw({ containers: [{ name: 'app', image: 'ghcr.io/example/app:1.0.0' }] });
      new WithLogAgent(c.chart, 'logs', { workload, kubernetesVersion: '1.30' });
      new WithEnvoy(c.chart, 'envoy', { workload, kubernetesVersion: '1.30', appPort: 2020 });
    },
    message: ["WithEnvoy 'test/envoy'", "the app's port 2020, where envoy sends the app's traffic, is bound by sidecar 'log-agent'", 'Choose another port for one of them'],
  },
  {
    name: 'a Fluent Bit HTTP port below 1024 (the agent runs as non-root)',
    build: c => new WithLogAgent(c.chart, 'logs', { workload: c.deployment(), agent: LogAgent.fluentBit({ httpPort: 80 }) }),
    message: ["WithLogAgent 'test/logs'", 'fluent-bit health port 80 is below 1024', 'use a port from 1024 up'],
  },
  {
    name: 'a tracer health port below 1024',
    build: c => new WithTracer(c.chart, 'tracer', { workload: c.deployment(), exporterEndpoint: ENDPOINT, healthPort: 443 }),
    message: ["WithTracer 'test/tracer'", 'healthPort 443 is below 1024', 'use a port from 1024 up'],
  },
  {
    name: 'the log directory is the agent\'s own config directory',
    build: c => new WithLogAgent(c.chart, 'logs', { workload: c.deployment(), logDirectory: '/etc/log-agent' }),
    message: ["WithLogAgent 'test/logs'", "logDirectory '/etc/log-agent' is the agent's config directory '/etc/log-agent'", 'choose a directory of its own'],
  },
  {
    name: 'the log directory inside the hook tools directory',
    build: c => new WithLogAgent(c.chart, 'logs', { workload: c.deployment(), kubernetesVersion: '1.27', logDirectory: '/sidecar-tools/logs' }),
    message: ["WithLogAgent 'test/logs'", "logDirectory '/sidecar-tools/logs' is inside the agent's hook tools directory '/sidecar-tools'", 'choose a directory of its own'],
  },
  {
    name: 'a cpu request above the default limit',
    build: c => new WithTracer(c.chart, 'tracer', { workload: c.deployment(), exporterEndpoint: ENDPOINT, resources: { cpu: { request: kplus.Cpu.units(1) } } }),
    message: ["WithTracer 'test/tracer'", 'resources.cpu request 1 is above the limit 500m (the default)', 'set resources.cpu.limit to at least 1'],
  },
  {
    name: 'a memory limit below the default request',
    build: c => new WithLogAgent(c.chart, 'logs', { workload: c.deployment(), resources: { memory: { limit: Size.mebibytes(16) } } }),
    message: ["WithLogAgent 'test/logs'", 'resources.memory request 32Mi (the default) is above the limit 16Mi', 'or a smaller resources.memory.request'],
  },
  {
    name: 'memory that is not whole mebibytes',
    build: c => new WithEnvoy(c.chart, 'envoy', { workload: c.deployment(), appPort: 8080, resources: { memory: { request: Size.kibibytes(100) } } }),
    message: ["WithEnvoy 'test/envoy'", 'resources.memory.request 100Ki is not a whole number of mebibytes', 'use e.g. Size.mebibytes(64)'],
  },
  {
    name: 'a construct in a namespaced chart on a workload without a namespace',
    build: c => {
      const other = new Chart(c.app, 'sidecars', { namespace: 'observability' });
      new WithLogAgent(other, 'logs', { workload: c.deployment(), kubernetesVersion: '1.29' });
    },
    message: ["WithLogAgent 'sidecars/logs'", "has no namespace, but this construct's chart puts objects into namespace 'observability'", "Create the construct in the workload's chart"],
  },
];

/** `parts` occur in `line` in this order. */
function inOrder(line: string, parts: string[]): boolean {
  let at = 0;
  for (const part of parts) {
    const i = line.indexOf(part, at);
    if (i < 0) return false;
    at = i + part.length;
  }
  return true;
}

describe('the bad-input catalogue', () => {
  test.each(CASES.map(c => [c.name, c] as const))('%s', (_name, c) => {
    const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecars-bad-'));
    try {
      const app = new App({ outdir });
      const chart = new Chart(app, 'test');
      let message: string | undefined;
      try {
        c.build(ctx(app, chart));
        app.synth();
      } catch (e) {
        message = (e as Error).message;
      }
      expect(message).toBeDefined();
      // one reported error holds the parts in order: the construct (path), the bad value, the fix
      if (!message!.split('\n').some(line => inOrder(line, c.message))) {
        throw new Error(`no error line holds, in this order, ${c.message.map(p => `"${p}"`).join(', ')}:\n${message}`);
      }
      expect(fs.readdirSync(outdir)).toEqual([]);
    } finally {
      fs.rmSync(outdir, { recursive: true, force: true });
    }
  });
});

describe('what the catalogue found', () => {
  test('with SidecarValidation on the app, a sidecar error is reported once (not again as a failed toJson)', () => {
    const app = new App({ outdir: fs.mkdtempSync(path.join(os.tmpdir(), 'sidecars-bad-')) });
    const chart = new Chart(app, 'test');
    const raw = ctx(app, chart).raw({ containers: [APP], terminationGracePeriodSeconds: 5 });
    new WithLogAgent(chart, 'logs', { workload: raw, kubernetesVersion: '1.29' });
    SidecarValidation.addTo(app, { kubernetesVersion: '1.29' });
    let message = '';
    try {
      app.synth();
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message.match(/terminationGracePeriodSeconds is 5/g)).toHaveLength(1);
    expect(message).not.toContain('cdk8s-sidecars:');
    fs.rmSync(app.outdir, { recursive: true, force: true });
  });
});
