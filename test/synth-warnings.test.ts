/**
 * The warnings a synthesis prints (issue 48, point 3): each names the rule of `cdk8s-sidecars check`
 * that finds the same thing (`[CS021 known-kubernetes-bug]`, as `check` prints a finding), the
 * object's `sidecars.cdk8s.io/check-ignore` annotation silences it where it is printed, as it
 * silences the finding in `check`, and the facts of the release that every pod of a common shape
 * has (bugs open upstream: kubernetes#137710 and #140309, any pod with two init containers) are
 * printed once per synthesis with the number of workloads, not once per workload.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { ApiObject, App, Chart } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { SidecarValidation, SidecarWarnings, WithEnvoy } from '../src';
import { main } from '../src/cli/main';
import { CHECK_IGNORE_ANNOTATION } from '../src/engine/check-rules';

const ENV = 'CDK8S_SIDECARS_KUBERNETES_VERSION';
const savedEnv = process.env[ENV];
let dir: string;
beforeAll(() => {
  delete process.env[ENV];
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'synth-warnings-'));
});
afterAll(() => {
  if (savedEnv !== undefined) process.env[ENV] = savedEnv;
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The `[cdk8s-sidecars] WARNING` lines `fn` prints on stderr. */
function printed(fn: () => void): string[] {
  let err = '';
  const spy = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: any) => { err += String(chunk); return true; });
  try {
    fn();
  } finally {
    spy.mockRestore();
  }
  return err.split('\n').filter(l => l.startsWith('[cdk8s-sidecars] WARNING: '));
}

let outdirs = 0;
/** An app with `n` Deployments, each behind a WithEnvoy for 1.33.0 (two init containers: sidecar-tools is not one, Envoy and ...). */
function envoyApp(n: number, ignore?: (i: number) => string | undefined): { app: App; deployments: kplus.Deployment[] } {
  const app = new App({ outdir: path.join(dir, `dist-${outdirs++}`) });
  const chart = new Chart(app, 'shop');
  const deployments: kplus.Deployment[] = [];
  for (let i = 0; i < n; i++) {
    const web = new kplus.Deployment(chart, `web${i}`, {
      // a readinessProbe of the app's own: WithEnvoy's warning for an app without one is not what this file counts
      containers: [{ name: 'app', image: 'ghcr.io/example/app:1.0.0', ports: [{ number: 8080 }], readiness: kplus.Probe.fromCommand(['true']) }],
    });
    const value = ignore?.(i);
    if (value !== undefined) ApiObject.of(web).metadata.addAnnotation(CHECK_IGNORE_ANNOTATION, value);
    new WithEnvoy(chart, `envoy${i}`, { workload: web, kubernetesVersion: '1.33.0', appPort: 8080 });
    deployments.push(web);
  }
  return { app, deployments };
}

const OPEN_BUGS = ['kubernetes#137710', 'kubernetes#140309'];

test('one Envoy workload at 1.33.0: two lines (the open upstream bugs in one), each with its rule id; three before', () => {
  const { app, deployments } = envoyApp(1);
  const lines = printed(() => app.synth());
  expect(lines).toHaveLength(2);
  for (const l of lines) expect(l).toMatch(/ \[CS021 known-kubernetes-bug\]$/);
  const summary = lines.filter(l => OPEN_BUGS.every(b => l.includes(b)));
  expect(summary).toHaveLength(1);
  expect(summary[0]).toContain("1 workload of this synthesis ('shop/web0/Resource') runs into bugs open upstream");
  // the workload's own record keeps each bug's details
  expect(OPEN_BUGS.every(b => SidecarWarnings.of(deployments[0]).some(w => w.includes(b)))).toBe(true);
});

test('five workloads: the open bugs once, with the count (6 lines where there were 15), per synthesis call', () => {
  const { app } = envoyApp(5);
  const lines = printed(() => app.synth());
  expect(lines).toHaveLength(6);
  const summary = lines.filter(l => l.includes('kubernetes#137710'));
  expect(summary).toHaveLength(1);
  expect(summary[0]).toContain("5 workloads of this synthesis ('shop/web0/Resource', 'shop/web1/Resource', 'shop/web2/Resource' and 2 more) run into");
  expect(summary[0]).toContain('(5 workloads)');
  // a second call prints it again, once
  expect(printed(() => app.synthYaml()).filter(l => l.includes('kubernetes#137710'))).toHaveLength(1);
});

test('the check-ignore annotation silences a rule where the warning is printed, as check silences the finding', () => {
  const { app } = envoyApp(3, i => (i === 0 ? 'CS021' : i === 1 ? 'known-kubernetes-bug' : undefined));
  const lines = printed(() => app.synth());
  // web0 and web1 silence CS021 (by id and by name): only web2's own line and the summary, which counts web2 alone
  expect(lines.filter(l => l.includes('shop/web0') || l.includes('shop/web1'))).toEqual([]);
  expect(lines.filter(l => l.includes('kubernetes#137710'))).toHaveLength(1);
  expect(lines.find(l => l.includes('kubernetes#137710'))).toContain("1 workload of this synthesis ('shop/web2/Resource')");
  // `check` on the same output: the same rule, silenced on the same objects
  const file = path.join(dir, 'out.yaml');
  fs.writeFileSync(file, app.synthYaml());
  let out = '';
  const spies = [
    jest.spyOn(process.stdout, 'write').mockImplementation((chunk: any) => { out += String(chunk); return true; }),
    jest.spyOn(process.stderr, 'write').mockImplementation(() => true),
  ];
  try {
    expect(main(['check', file, '--kubernetes-version', '1.33.0', '--output', 'json'])).toBe(0);
  } finally {
    for (const s of spies) s.mockRestore();
  }
  const findings: any[] = JSON.parse(out).findings;
  const byObject = (name: string) => findings.filter(f => f.name.includes(name) && f.rule === 'CS021').length;
  expect([byObject('web0'), byObject('web1'), byObject('web2') > 0]).toEqual([0, 0, true]);
});

test('SidecarValidation\'s warnings name their rule and honour the annotation too', () => {
  const make = (ignore: boolean) => {
    const app = new App({ outdir: path.join(dir, `dist-${outdirs++}`) });
    const chart = new Chart(app, 'shop');
    // a native sidecar of the user's with a readiness probe that no Service targets: CS020
    new ApiObject(chart, 'web', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', ...(ignore ? { annotations: { [CHECK_IGNORE_ANNOTATION]: 'CS020' } } : {}) },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: {
            initContainers: [{
              name: 'proxy',
              image: 'ghcr.io/example/proxy:1.0.0',
              restartPolicy: 'Always',
              readinessProbe: { httpGet: { path: '/ready', port: 9000 } },
              resources: { requests: { cpu: '10m', memory: '16Mi' } },
            }],
            containers: [{ name: 'app', image: 'ghcr.io/example/app:1.0.0', ports: [{ containerPort: 8080 }] }],
          },
        },
      },
    });
    new ApiObject(chart, 'svc', {
      apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] },
    });
    SidecarValidation.addTo(app, { kubernetesVersion: '1.33' });
    return app;
  };
  const lines = printed(() => make(false).synth());
  expect(lines.some(l => l.endsWith(' [CS020 sidecar-readiness-without-service]'))).toBe(true);
  expect(printed(() => make(true).synth()).filter(l => l.includes('CS020'))).toEqual([]);
});
