/**
 * One assembly of the target: every reader (the constructs, SidecarTimeline, the CLI's `check` and
 * `timeline`, a render config, the validation plugin) gets its version and gate from
 * `assembleTarget` (src/target/resolver.ts), and the default release is written in one place.
 */
import * as fs from 'fs';
import * as path from 'path';
import { App, Chart, Testing } from 'cdk8s';
import { readRenderConfig } from '../src/cli/render-config';
import { resolveCliTarget } from '../src/cli/target-options';
import { SidecarError, Where } from '../src/private/errors';
import { Sidecars } from '../src/settings';
import { DEFAULT_KUBERNETES_VERSION } from '../src/target/capabilities';
import * as resolver from '../src/target/resolver';
import { SidecarTimeline } from '../src/timeline';
import { SidecarValidationPlugin } from '../src/validation-plugin';
import { WithEnvoy } from '../src/with-envoy';
import { rawDeployment } from './util/fixtures';

const VERSION_ENV = resolver.KUBERNETES_VERSION_ENV;
const GATE_ENV = resolver.SIDECAR_CONTAINERS_GATE_ENV;

let saved: Record<string, string | undefined>;
beforeEach(() => {
  saved = { [VERSION_ENV]: process.env[VERSION_ENV], [GATE_ENV]: process.env[GATE_ENV] };
  delete process.env[VERSION_ENV];
  delete process.env[GATE_ENV];
});
afterEach(() => {
  jest.restoreAllMocks();
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

const POD = { kind: 'Pod', apiVersion: 'v1', metadata: { name: 'p' }, spec: { containers: [{ name: 'app', image: 'a:1' }] } };

/** Each reader, run with the version '1.31', and what it read. */
const READERS: Array<[string, (version: string) => string]> = [
  ['a construct (Sidecars.targetOf)', v => {
    const chart = new Chart(new App({ outdir: '/nonexistent-never-written' }), 'c');
    Sidecars.configure(chart, { kubernetesVersion: v });
    return Sidecars.targetOf(chart).kubernetesVersion;
  }],
  ['a construct at synthesis (WithEnvoy)', v => {
    const chart = new Chart(new App({ outdir: '/nonexistent-never-written' }), 'c');
    const e = new WithEnvoy(chart, 'envoy', { workload: rawDeployment(chart, 'web', { containers: [{ name: 'app', image: 'ghcr.io/example/app:1.0.0', ports: [{ containerPort: 8080 }] }] }), appPort: 8080, kubernetesVersion: v });
    Testing.synth(chart);
    return e.targetVersion;
  }],
  ['SidecarTimeline.ofManifest', v => SidecarTimeline.ofManifest(POD, { kubernetesVersion: v }).kubernetesVersion],
  ['the CLI (check, timeline)', v => resolveCliTarget(v, undefined).raw],
  ['a render config', v => readRenderConfig({ kubernetesVersion: v, workloads: [{ select: { kind: 'Pod' }, tracer: { exporterEndpoint: 'otel.example:4317' } }] }).kubernetesVersion],
  ['the validation plugin', v => {
    new SidecarValidationPlugin({ kubernetesVersion: v });
    return v;
  }],
];

describe('every reader of the target calls assembleTarget', () => {
  test.each(READERS)('%s', (_name, read) => {
    const spy = jest.spyOn(resolver, 'assembleTarget');
    expect(read('1.31')).toBe('1.31');
    expect(spy).toHaveBeenCalled();
    expect(spy.mock.calls.some(([r]) => r.version === '1.31' || r.configured?.kubernetesVersion === '1.31')).toBe(true);
  });
});

describe('assembleTarget', () => {
  const fail = (e: SidecarError) => e.placedAt('w');

  test('nothing set: the default release, or the reader\'s own error', () => {
    expect(resolver.assembleTarget({ where: new Where('w'), fail, env: {} })).toMatchObject({
      raw: DEFAULT_KUBERNETES_VERSION, source: 'default', gate: false, gateSet: false,
    });
    const mine = new Error('tell me the release');
    expect(() => resolver.assembleTarget({ where: new Where('w'), fail, unset: () => mine, env: {} })).toThrow(mine);
  });

  test('one precedence: given, then the environment, then Sidecars.configure()', () => {
    const env = { [VERSION_ENV]: '1.30', [GATE_ENV]: 'true' };
    const configured = { kubernetesVersion: '1.29', sidecarContainersGate: false };
    const at = (r: Partial<resolver.TargetRequest>) => resolver.assembleTarget({ where: new Where('w'), fail, ...r });
    expect(at({ version: '1.33', gate: false, configured, env })).toMatchObject({ raw: '1.33', source: 'prop', gate: false, gateSet: true });
    expect(at({ configured, env })).toMatchObject({ raw: '1.30', source: 'env', gate: true });
    expect(at({ configured, env: {} })).toMatchObject({ raw: '1.29', source: 'configure', gate: false, gateSet: true });
  });

  test('a bad given version is named at the reader\'s place, and a tool may word it', () => {
    expect(() => resolver.assembleTarget({ version: '1.2x', where: new Where('--kubernetes-version'), fail, env: {} }))
      .toThrow(/^--kubernetes-version: kubernetesVersion '1\.2x' is not a Kubernetes version/);
    const worded = new Error('worded');
    expect(() => resolver.assembleTarget({ version: '1.2y', where: new Where('k'), fail, failGiven: () => worded, env: {} })).toThrow(worded);
  });

  test('an empty variable says what applies instead, as the reader would fall back', () => {
    const empty = { [VERSION_ENV]: '' };
    const message = (r: Partial<resolver.TargetRequest>) => {
      try {
        resolver.assembleTarget({ where: new Where('w'), fail, env: empty, ...r });
      } catch (e) {
        return (e as Error).message;
      }
      throw new Error('nothing thrown');
    };
    expect(message({ configured: {} })).toMatch(/unset it to use Sidecars\.configure\(\) or the default 1\.27\.$/);
    expect(message({})).toMatch(/unset it to use the default 1\.27\.$/);
    expect(message({ unset: () => new Error('x'), versionName: '--kubernetes-version' })).toMatch(/unset it to use --kubernetes-version\.$/);
  });
});

test('the default release is written once in src/ (DEFAULT_KUBERNETES_VERSION), code elsewhere derives it', () => {
  const files: string[] = [];
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (p.endsWith('.ts')) files.push(p);
    }
  };
  walk(path.join(__dirname, '..', 'src'));
  const found: string[] = [];
  for (const f of files) {
    fs.readFileSync(f, 'utf8').split('\n').forEach((line, i) => {
      // (comments document it; code must not type it)
      if (/^\s*(\*|\/\/|\/\*)/.test(line)) return;
      if (/default'?,? '?1\.27|'1\.27'|"1\.27"/.test(line)) found.push(`${path.relative(path.join(__dirname, '..'), f)}:${i + 1}`);
    });
  }
  expect(found).toEqual(['src/target/capabilities.ts:50']);
});
