/**
 * One rule set, four ways in (issue 48, point 3): the same manifests fed to synthesis (a sidecar
 * construct on the workload), `SidecarValidation.addTo` (no construct), the cdk8s validation plugin
 * (`SidecarValidationPlugin`, as `cdk8s synth` runs it) and `cdk8s-sidecars check` give the same
 * verdict: the same rule ids (src/engine/check-rules.ts) for the same problems, each named in the
 * message as `[CS004 container-restart-policy]`, and nothing where the manifest is fine.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { ApiObject, App, Chart, Yaml } from 'cdk8s';
import { SidecarValidation, SidecarValidationPlugin, ValidationPluginViolation, WithLogAgent } from '../src';
import { main } from '../src/cli/main';

const ENV = 'CDK8S_SIDECARS_KUBERNETES_VERSION';
const savedEnv = process.env[ENV];
let dir: string;
beforeAll(() => {
  delete process.env[ENV];
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'one-rule-set-'));
});
afterAll(() => {
  if (savedEnv !== undefined) process.env[ENV] = savedEnv;
  fs.rmSync(dir, { recursive: true, force: true });
});

const app = (over: Record<string, unknown> = {}) => ({ name: 'app', image: 'ghcr.io/example/app:1.0.0', ...over });

/** name, target, the pod spec, the rule ids the API server's rules give (the expectation of all four). */
const CASES: Array<[string, string, Record<string, unknown>, string[]]> = [
  ['a plain pod', '1.33', { containers: [app()] }, []],
  ['a container restartPolicy', '1.33', { containers: [app({ restartPolicy: 'Always' })] }, ['CS004']],
  ['restartPolicyRules', '1.33', {
    containers: [app({ restartPolicy: 'Never', restartPolicyRules: [{ action: 'Restart', exitCodes: { operator: 'In', values: [42] } }] })],
  }, ['CS004', 'CS025']],
  // ContainerStopSignals is alpha and off in 1.37 (kubernetes v1.37.2 pkg/features/kube_features.go), and the API
  // server drops lifecycle.stopSignal where the gate is off (pkg/api/pod/util.go dropDisabledFields)
  ['a stopSignal', '1.37', { os: { name: 'linux' }, containers: [app({ lifecycle: { stopSignal: 'SIGUSR1' } })] }, ['CS026']],
  ['a native sidecar of the user\'s on 1.27', '1.27', {
    initContainers: [{ name: 'proxy', image: 'ghcr.io/example/proxy:1.0.0', restartPolicy: 'Always' }], containers: [app()],
  }, ['CS001']],
  ['a probe on an init container', '1.30', {
    initContainers: [{ name: 'setup', image: 'ghcr.io/example/setup:1.0.0', readinessProbe: { exec: { command: ['true'] } } }], containers: [app()],
  }, ['CS002']],
  ['a mount of no volume', '1.30', { containers: [app({ volumeMounts: [{ name: 'data', mountPath: '/data' }] })] }, ['CS012']],
  ['a sleep action below 1.30', '1.29', { containers: [app({ lifecycle: { preStop: { sleep: { seconds: 5 } } } })] }, ['CS006']],
];

const deployment = (spec: Record<string, unknown>) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web' },
  spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec } },
});

/** The rule ids named in a message (`[CS004 container-restart-policy]`), sorted, once each. */
const idsIn = (text: string) => [...new Set([...text.matchAll(/\[(CS\d{3}) [a-z0-9.-]+\]/g)].map(m => m[1]))].sort();

let outdirs = 0;
/** Synthesizes an app with the workload (and `attach` on it); the rule ids of the errors, or [] when it synthesizes. */
function synthesisIds(manifest: any, attach: (app: App, workload: ApiObject) => void): string[] {
  const a = new App({ outdir: path.join(dir, `dist-${outdirs++}`) });
  const chart = new Chart(a, 'shop');
  const workload = new ApiObject(chart, 'web', manifest);
  attach(a, workload);
  const spy = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
  try {
    a.synthYaml();
    return [];
  } catch (e) {
    return idsIn((e as Error).message);
  } finally {
    spy.mockRestore();
  }
}

function checkIds(file: string, version: string): string[] {
  let out = '';
  const spies = [
    jest.spyOn(process.stdout, 'write').mockImplementation((chunk: any) => { out += String(chunk); return true; }),
    jest.spyOn(process.stderr, 'write').mockImplementation(() => true),
  ];
  try {
    main(['check', file, '--kubernetes-version', version, '--output', 'json']);
  } finally {
    for (const s of spies) s.mockRestore();
  }
  return [...new Set((JSON.parse(out).findings as any[]).filter(f => f.level === 'error').map(f => f.rule as string))].sort();
}

async function pluginIds(file: string, version: string): Promise<string[]> {
  const violations: ValidationPluginViolation[] = [];
  await new SidecarValidationPlugin({ kubernetesVersion: version }).validate({
    manifests: [file],
    report: { addViolation: v => violations.push(v), submit: () => undefined },
  });
  return [...new Set(violations.filter(v => v.ruleName.endsWith('(error)')).map(v => v.ruleName.split(' ')[0]))].sort();
}

describe.each(CASES)('%s (%s)', (_name, version, spec, expected) => {
  test('synthesis, SidecarValidation, the cdk8s plugin and check give the same rule ids', async () => {
    const manifest = deployment(spec);
    const file = path.join(dir, `${outdirs++}.yaml`);
    fs.writeFileSync(file, Yaml.stringify(manifest));
    const verdicts = {
      check: checkIds(file, version),
      plugin: await pluginIds(file, version),
      validation: synthesisIds(manifest, a => SidecarValidation.addTo(a, { kubernetesVersion: version })),
      synthesis: synthesisIds(manifest, (a, workload) => new WithLogAgent(a.node.findChild('shop') as Chart, 'logs', { workload, kubernetesVersion: version })),
    };
    expect(verdicts).toEqual({ check: expected, plugin: expected, validation: expected, synthesis: expected });
  });
});
