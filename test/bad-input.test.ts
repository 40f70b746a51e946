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
import { ApiObject, App, Chart } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
// Imported module by module (not from '../src'), so that constructs in progress cannot break this suite.
import { WithLogAgent } from '../src/with-log-agent';

const ENV = 'CDK8S_SIDECARS_KUBERNETES_VERSION';
const savedEnv = process.env[ENV];
beforeEach(() => { delete process.env[ENV]; });
afterAll(() => { if (savedEnv !== undefined) process.env[ENV] = savedEnv; else delete process.env[ENV]; });

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


const CASES: Case[] = [
  {
    name: 'a raw workload without app containers',
    build: c => new WithLogAgent(c.chart, 'logs', { workload: c.raw({ containers: [] }), kubernetesVersion: '1.30' }),
    message: ["[test/logs] Deployment 'raw'", 'has no app containers (spec.containers is empty)', "Add the app's containers to the workload"],
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
