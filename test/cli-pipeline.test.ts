/**
 * `cdk8s-sidecars check` as a pipeline citizen (issue 40, docs/cli.md): input without objects
 * fails, `--version` on every command, SARIF and JUnit that validate against their published
 * schemas (test/fixtures/schemas/README.md: the OASIS SARIF 2.1.0 JSON schema with Ajv's draft-04
 * validator; the Jenkins xUnit plugin's junit-10.xsd with libxml2's XSD validator, xmllint-wasm),
 * the rule ids and their silencing; and the cdk8s CLI validation plugin, run by the real
 * `cdk8s synth` of the cdk8s-cli devDependency on a small app in a temporary directory.
 *
 * The command runs as a child process of a package-shaped build: src/ compiled with tsc into
 * `<tmp>/pkg/lib`, the repository's package.json beside it (what `--version` reads, and what the
 * cdk8s CLI loads the plugin from), `node_modules` a link to the repository's.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import Ajv from 'ajv-draft-04';
import addFormats from 'ajv-formats';
import { Chart, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { validateXML } from 'xmllint-wasm';
import { LogAgent, WithEnvoy, WithLogAgent, WithTracer } from '../src';
import { CHECK_RULES, CLI_CHECKS } from '../src/engine/check-rules';
import { SET_RULES } from '../src/engine/manifests-check';
import { POD_SPEC_RULES, POD_SPEC_SHAPE_RULE } from '../src/engine/rules';

const ROOT = path.resolve(__dirname, '..');
const MANIFESTS = 'test/fixtures/cli/manifests';
const PKG = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));

let tmp: string;
let pkg: string;
let main: string;

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cdk8s-sidecars-pipeline-'));
  pkg = path.join(tmp, 'pkg');
  fs.mkdirSync(pkg);
  const tsc = spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.json', '--outDir', path.join(pkg, 'lib')], {
    cwd: ROOT, encoding: 'utf8',
  });
  if (tsc.status !== 0) throw new Error(`tsc failed:\n${tsc.stdout}${tsc.stderr}`);
  fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(pkg, 'package.json'));
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(pkg, 'node_modules'), 'dir');
  main = path.join(pkg, 'lib', 'cli', 'main.js');
}, 300_000);

afterAll(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

interface Run { readonly status: number | null; readonly stdout: string; readonly stderr: string }

function cli(args: string[], options: { input?: string; env?: Record<string, string>; cwd?: string } = {}): Run {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('CDK8S_SIDECARS_')) env[k] = v;
  const r = spawnSync(process.execPath, [main, ...args], { cwd: options.cwd ?? ROOT, encoding: 'utf8', input: options.input ?? '', env: { ...env, ...options.env } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function write(name: string, text: string): string {
  const file = path.join(tmp, name);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  return file;
}

/** A Deployment with one native sidecar (an error on 1.27), written with a comment and `---` before it. */
const NATIVE_ON_127 = [
  '# Source: chart/templates/config.yaml', // 1
  'apiVersion: v1', //                         2  <- ConfigMap
  'kind: ConfigMap',
  'metadata: { name: settings }',
  '---', //                                    5
  '# Source: chart/templates/api.yaml', //     6
  '', //                                       7
  'apiVersion: apps/v1', //                    8  <- Deployment
  'kind: Deployment',
  'metadata:',
  '  name: api',
  '  namespace: shop',
  'spec:',
  '  selector: { matchLabels: { app: api } }',
  '  template:',
  '    metadata: { labels: { app: api } }',
  '    spec:',
  '      initContainers:',
  '        - { name: proxy, image: proxy:1, restartPolicy: Always, resources: { requests: { cpu: 10m, memory: 16Mi } } }',
  '      containers:',
  '        - { name: api, image: api:1 }',
  '--- # a comment after the marker', //      22
  'apiVersion: batch/v1', //                  23  <- Job
  'kind: Job',
  'metadata: { name: migrate }',
  'spec:',
  '  template:',
  '    spec:',
  '      restartPolicy: Never',
  '      initContainers:',
  '        - { name: wait, image: busybox:1, readinessProbe: { exec: { command: ["true"] } } }',
  '      containers:',
  '        - { name: migrate, image: migrate:1 }',
  '',
].join('\n');

describe('input without objects fails (a pipeline must not go green on nothing)', () => {
  test.each([
    ['empty stdin (`false | check -`)', ['-'], '', 'stdin was empty or held only empty documents'],
    ['stdin with only comments and markers', ['-'], '# nothing rendered\n---\n---\n', 'stdin was empty or held only empty documents'],
  ])('%s: exit 1 with the reason on stderr; --allow-empty: exit 0', (_what, args, input, reason) => {
    const r = cli(['check', ...args, '--kubernetes-version', '1.29'], { input });
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(`cdk8s-sidecars check: no Kubernetes object in the input (${reason}): nothing was checked. ` +
      'If an upstream step (helm template, kustomize build) failed, fix it; if no objects is expected, pass --allow-empty.\n');
    // the report is still written (a SARIF or JUnit consumer finds a file)
    expect(r.stdout).toBe('Kubernetes 1.29: 1 file(s), 0 object(s), 0 workload(s): 0 error(s), 0 warning(s)\n');
    const allowed = cli(['check', ...args, '--kubernetes-version', '1.29', '--allow-empty'], { input });
    expect(allowed.status).toBe(0);
    expect(allowed.stderr).toBe('');
  });

  test('an empty directory, and one without YAML files: exit 1', () => {
    const empty = path.join(tmp, 'empty-dir');
    fs.mkdirSync(empty);
    const r = cli(['check', empty, '--kubernetes-version', '1.29', '--output', 'json']);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`(directory ${empty} holds no .yaml or .yml file)`);
    expect(JSON.parse(r.stdout)).toMatchObject({ files: 0, objects: 0, kubernetesObjects: 0 });
    const emptyFile = write('only-comments/a.yaml', '# helm rendered nothing\n');
    const f = cli(['check', emptyFile, '--kubernetes-version', '1.29']);
    expect(f.status).toBe(1);
    expect(f.stderr).toContain('(1 file(s) read, each empty or holding only empty documents)');
    expect(cli(['check', empty, '--kubernetes-version', '1.29', '--allow-empty']).status).toBe(0);
  });

  test('a scalar document is not an object: still empty', () => {
    const r = cli(['check', '-', '--kubernetes-version', '1.29'], { input: 'helm failed\n' });
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('warning: not a Kubernetes object (a YAML scalar or list); skipped [CS023 not-an-object]');
  });
});

describe('--version', () => {
  const expected = () => `cdk8s-sidecars ${PKG.version}\n`;
  test.each([
    [['--version']], [['version']], [['check', '--version']], [['target', '--version']], [['timeline', '--version']], [['render', '--version']],
  ])('%j prints the package version, exit 0', (args) => {
    const r = cli(args);
    expect(r).toEqual({ status: 0, stdout: expected(), stderr: '' });
  });
});

describe('--output sarif', () => {
  function sarifValidator() {
    const ajv = new Ajv({ allErrors: true, strict: false });
    addFormats(ajv);
    return ajv.compile(JSON.parse(fs.readFileSync(path.join(__dirname, 'fixtures', 'schemas', 'sarif-schema-2.1.0.json'), 'utf8')));
  }

  test('validates against the OASIS SARIF 2.1.0 schema; one result per finding, at the file and line of its object', () => {
    const file = write('sarif/chart.yaml', NATIVE_ON_127);
    const rel = path.relative(ROOT, file);
    const r = cli(['check', rel, '--kubernetes-version', '1.27', '--output', 'sarif']);
    expect(r.status).toBe(1);
    const sarif = JSON.parse(r.stdout);
    const validate = sarifValidator();
    expect(validate(sarif) ? [] : validate.errors).toEqual([]);
    const run = sarif.runs[0];
    expect(run.tool.driver).toMatchObject({ name: 'cdk8s-sidecars', version: PKG.version });
    expect(run.tool.driver.rules.map((x: any) => x.id)).toEqual(CHECK_RULES.map(x => x.id));
    // the lines counted by hand in NATIVE_ON_127: the Deployment's apiVersion on line 8, the Job's on 23
    expect(run.results.map((x: any) => [x.ruleId, x.level, x.locations[0].physicalLocation.artifactLocation.uri,
      x.locations[0].physicalLocation.region.startLine, x.locations[0].logicalLocations[0].fullyQualifiedName])).toEqual([
      ['CS001', 'error', rel.split(path.sep).join('/'), 8, 'Deployment shop/api'],
      ['CS002', 'error', rel.split(path.sep).join('/'), 23, 'Job migrate'],
    ]);
    for (const x of run.results) expect(run.tool.driver.rules[x.ruleIndex].id).toBe(x.ruleId);
    expect(run.results[0].message.text).toMatch(/^Deployment 'api': init container 'proxy' has restartPolicy 'Always'/);
  });

  test('the fixtures directory at 1.29.3 (warnings) and stdin: valid, and the same findings as --output json', () => {
    const validate = sarifValidator();
    for (const [args, input] of [[[MANIFESTS, '--kubernetes-version', '1.29.3'], ''], [['-', '--kubernetes-version', '1.27'], NATIVE_ON_127]] as const) {
      const sarif = JSON.parse(cli(['check', ...args, '--output', 'sarif'], { input }).stdout);
      expect(validate(sarif) ? [] : validate.errors).toEqual([]);
      const findings = JSON.parse(cli(['check', ...args, '--output', 'json'], { input }).stdout).findings;
      expect(sarif.runs[0].results.length).toBeGreaterThan(0);
      expect(sarif.runs[0].results.map((x: any) => [x.ruleId, x.level, x.message.text, x.locations[0].physicalLocation.region.startLine]))
        .toEqual(findings.map((f: any) => [f.rule, f.level, f.message, f.line]));
    }
  });

  test('an absolute path is a file: URI; a name with spaces is percent-encoded', () => {
    const file = write('sarif dir/a b.yaml', NATIVE_ON_127);
    const sarif = JSON.parse(cli(['check', file, '--kubernetes-version', '1.27', '--output', 'sarif']).stdout);
    expect(sarif.runs[0].results[0].locations[0].physicalLocation.artifactLocation.uri).toBe(new URL(`file://${file}`).href);
    expect(sarifValidator()(sarif)).toBe(true);
  });
});

describe('--output junit', () => {
  const xsd = () => fs.readFileSync(path.join(__dirname, 'fixtures', 'schemas', 'junit-10.xsd'), 'utf8');
  async function expectValidJunit(xml: string) {
    const result = await validateXML({ xml: [{ fileName: 'report.xml', contents: xml }], schema: [{ fileName: 'junit-10.xsd', contents: xsd() }] });
    expect(result.errors).toEqual([]);
    expect(result.valid).toBe(true);
  }

  test('validates against junit-10.xsd: one test case per object, a failure per error, warnings in system-out', async () => {
    const file = path.relative(ROOT, write('junit/chart.yaml', NATIVE_ON_127));
    const r = cli(['check', file, MANIFESTS, '--kubernetes-version', '1.29.3', '--output', 'junit']);
    await expectValidJunit(r.stdout);
    // 3 objects in chart.yaml, 4 in the fixtures' three files
    expect(r.stdout.match(/<testcase /g)?.length).toBe(7);
    expect(r.stdout.match(/<testsuite /g)?.length).toBe(4);
    expect(r.stdout).toContain(`<testcase name="Job migrate (document 3, line 23)" classname="${file}">`);
    expect(r.stdout).toContain('<failure type="CS002" message="CS002 probe-on-init-container: Job &apos;migrate&apos;: init container &apos;wait&apos; sets readinessProbe');
    expect(r.stdout).toMatch(/<system-out>warning: test\/fixtures\/cli\/manifests\/native-sidecars.yaml:4: CS021 known-kubernetes-bug: /);
    expect(r.stdout).toMatch(/<testsuites name="cdk8s-sidecars check \(Kubernetes 1.29.3\)" tests="7" failures="2" errors="0">/);
  });

  test('hostile names (markup, quotes, control characters) still give a valid document', async () => {
    // no lone surrogate: "\ud800" in YAML is refused by the API server's reader, and so by the command's (issue 38)
    const name = 'x<y>&"\'\u0001\u0008z\n]]>';
    const doc = JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { initContainers: [{ name: 'i', image: 'i', readinessProbe: { exec: { command: ['true'] } } }], containers: [{ name: 'a', image: 'a' }] } });
    const r = cli(['check', '-', '--kubernetes-version', '1.29', '--output', 'junit'], { input: doc });
    expect(r.status).toBe(1);
    await expectValidJunit(r.stdout);
    expect(r.stdout).toContain('x&lt;y&gt;&amp;&quot;&apos;\\u0001\\u0008z&#10;]]&gt;');
  });
});

describe('rule ids', () => {
  test('every check has exactly one rule; ids are CS001, CS002, ... in order, names unique', () => {
    const checks = [...POD_SPEC_RULES.map(r => r.name), POD_SPEC_SHAPE_RULE, ...Object.values(SET_RULES), ...Object.values(CLI_CHECKS)];
    for (const check of checks) expect([check, CHECK_RULES.filter(r => r.checks.includes(check)).length]).toEqual([check, 1]);
    expect(CHECK_RULES.flatMap(r => r.checks).sort()).toEqual([...checks].sort());
    expect(CHECK_RULES.map(r => r.id)).toEqual(CHECK_RULES.map((_, i) => `CS${String(i + 1).padStart(3, '0')}`));
    expect(new Set(CHECK_RULES.map(r => r.slug)).size).toBe(CHECK_RULES.length);
  });

  test('docs/cli.md lists every rule with its id and name', () => {
    const doc = fs.readFileSync(path.join(ROOT, 'docs', 'cli.md'), 'utf8');
    const rows = [...doc.matchAll(/^\| `(CS\d{3})` \| `([a-z0-9.-]+)` \|/gm)].map(m => [m[1], m[2]]);
    expect(rows).toEqual(CHECK_RULES.map(r => [r.id, r.slug]));
  });

  test('--ignore silences a rule for the run (by id or name); an unknown one is bad usage', () => {
    const input = NATIVE_ON_127;
    const all = JSON.parse(cli(['check', '-', '--kubernetes-version', '1.27', '--output', 'json'], { input }).stdout);
    expect(all.findings.map((f: any) => f.rule)).toEqual(['CS001', 'CS002']);
    for (const flag of ['CS001', 'cs001', 'native-sidecar-below-1.29']) {
      const r = cli(['check', '-', '--kubernetes-version', '1.27', '--ignore', flag, '--output', 'json'], { input });
      expect(r.status).toBe(1);
      expect(JSON.parse(r.stdout)).toMatchObject({ suppressed: 1, errors: 1, findings: [{ rule: 'CS002' }] });
    }
    const both = cli(['check', '-', '--kubernetes-version', '1.27', '--ignore', 'CS001,CS002'], { input });
    expect(both.status).toBe(0);
    expect(both.stdout).toBe('Kubernetes 1.27: 1 file(s), 3 object(s), 2 workload(s): 0 error(s), 0 warning(s), 2 silenced\n');
    const bad = cli(['check', '-', '--kubernetes-version', '1.27', '--ignore', 'CS999'], { input });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("--ignore: unknown rule 'CS999'");
  });

  test('the sidecars.cdk8s.io/check-ignore annotation silences rules for its object only; an unknown id is a warning', () => {
    const annotated = NATIVE_ON_127.replace('  name: api\n', '  name: api\n  annotations: { sidecars.cdk8s.io/check-ignore: "native-sidecar-below-1.29, CS404" }\n');
    const r = cli(['check', '-', '--kubernetes-version', '1.27', '--output', 'json'], { input: annotated });
    const out = JSON.parse(r.stdout);
    expect(out.suppressed).toBe(1);
    expect(out.findings.map((f: any) => [f.rule, f.name, f.level])).toEqual([['CS024', 'api', 'warning'], ['CS002', 'migrate', 'error']]);
    expect(out.findings[0].message).toContain("names 'CS404', which is not a rule: it silences nothing");
  });
});

describe('the cdk8s validation plugin under the real `cdk8s synth`', () => {
  const cdk8sCli = path.join(ROOT, 'node_modules', 'cdk8s-cli', 'bin', 'cdk8s');

  function synth(properties: Record<string, unknown>, env: Record<string, string> = {}) {
    const dir = fs.mkdtempSync(path.join(tmp, 'app-'));
    fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
    fs.writeFileSync(path.join(dir, 'main.js'), [
      "const { App, Chart, ApiObject } = require('cdk8s');",
      'const app = new App();',
      "const chart = new Chart(app, 'shop');",
      "new ApiObject(chart, 'api', { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'api' }, spec: {",
      "  selector: { matchLabels: { app: 'api' } },",
      "  template: { metadata: { labels: { app: 'api' } }, spec: {",
      "    initContainers: [{ name: 'proxy', image: 'proxy:1', restartPolicy: 'Always', resources: { requests: { cpu: '10m', memory: '16Mi' } } }],",
      "    containers: [{ name: 'api', image: 'api:1' }] } } } });",
      'app.synth();',
      '',
    ].join('\n'));
    fs.writeFileSync(path.join(dir, 'cdk8s.yaml'), [
      'language: typescript',
      'app: node main.js',
      'validations:',
      `  - package: ${JSON.stringify(pkg)}`,
      `    version: ${JSON.stringify(PKG.version)}`,
      '    class: SidecarValidationPlugin',
      `    properties: ${JSON.stringify(properties)}`,
      '',
    ].join('\n'));
    const clean: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('CDK8S_SIDECARS_')) clean[k] = v;
    const r = spawnSync(process.execPath, [cdk8sCli, 'synth', '--check-upgrade', 'false', '--validation-reports-output-file', 'reports.json'], {
      cwd: dir, encoding: 'utf8', env: { ...clean, HOME: dir, ...env },
    });
    const reportFile = path.join(dir, 'reports.json');
    const reports = fs.existsSync(reportFile) ? JSON.parse(fs.readFileSync(reportFile, 'utf8')).reports : undefined;
    return { status: r.status, out: r.stdout + r.stderr, reports, dir };
  }

  test('a native sidecar on a 1.27 target fails the synth with CS001, the construct path and the line', () => {
    const r = synth({ kubernetesVersion: '1.27' });
    expect(r.status).toBe(2);
    expect(r.out).toContain('Validation failed');
    expect(r.reports).toHaveLength(1);
    const report = r.reports[0];
    expect(report.summary).toMatchObject({ status: 'failure', plugin: pkg, metadata: { 'kubernetes version': '1.27', 'errors': '1' } });
    expect(report.violations).toEqual([expect.objectContaining({
      ruleName: 'CS001 native-sidecar-below-1.29 (error)',
      recommendation: expect.stringMatching(/^Deployment 'api': init container 'proxy' has restartPolicy 'Always'/),
      violatingConstructs: [{ resourceName: 'api', locations: ['line 1 (document 1)'], manifestPath: 'dist/shop.k8s.yaml', constructPath: 'shop/api' }],
    })]);
    fs.rmSync(r.dir, { recursive: true, force: true });
  });

  test('the target from the environment; 1.29 passes; a numeric version is refused with the fix', () => {
    const fromEnv = synth({}, { CDK8S_SIDECARS_KUBERNETES_VERSION: '1.29' });
    expect(fromEnv.status).toBe(0);
    expect(fromEnv.reports[0].summary).toMatchObject({ status: 'success', metadata: { 'kubernetes version': '1.29', 'errors': '0', 'warnings': '0' } });
    const ignored = synth({ kubernetesVersion: '1.27', ignore: ['CS001'] });
    expect(ignored.status).toBe(0);
    expect(ignored.reports[0].summary.metadata).toMatchObject({ silenced: '1' });
    const numeric = synth({ kubernetesVersion: 1.3 });
    expect(numeric.status).not.toBe(0);
    expect(numeric.out).toContain('kubernetesVersion is the number 1.3; quote it (kubernetesVersion: "1.30")');
    const none = synth({});
    expect(none.status).not.toBe(0);
    expect(none.out).toContain('no target: give kubernetesVersion (e.g. "1.29") or set CDK8S_SIDECARS_KUBERNETES_VERSION');
    for (const r of [fromEnv, ignored, numeric, none]) fs.rmSync(r.dir, { recursive: true, force: true });
  });
});

describe('timeline on the library\'s own output reads the recorded stop times', () => {
  test.each(['1.29', '1.27'])('%s: no sidecar killed, said on an assumed: line; a manifest without them keeps the worst case', (version) => {
    const app = Testing.app();
    const chart = new Chart(app, 'shop');
    const workload = new kplus.Deployment(chart, 'web', { containers: [{ name: 'app', image: 'ghcr.io/example/app:1.0.0', ports: [{ number: 8080 }] }] });
    const common = { workload, kubernetesVersion: version };
    new WithLogAgent(chart, 'logs', { ...common, agent: LogAgent.fluentBit() });
    new WithTracer(chart, 'tracer', { ...common, exporterEndpoint: 'otel-collector.observability:4317' });
    new WithEnvoy(chart, 'envoy', { ...common, appPort: 8080 });
    const file = write(`timeline/shop-${version}.yaml`, app.synthYaml());
    const r = cli(['timeline', file, '--kubernetes-version', version]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).not.toContain('(killed)');
    expect(r.stdout).toContain('are the ones cdk8s-sidecars recorded in the pod template (annotation sidecars.cdk8s.io/stop-times)');
    if (version === '1.27') expect(r.stdout).toMatch(/log-agent\s+legacy sidecar/);
    // the same manifest without the annotation: the sidecars run until killed, and the table says so
    const bare = write(`timeline/bare-${version}.yaml`, fs.readFileSync(file, 'utf8').replace(/^ *sidecars\.cdk8s\.io\/stop-times: .*\n/m, ''));
    const worst = cli(['timeline', bare, '--kubernetes-version', version]);
    if (version === '1.29') {
      expect(worst.stdout).toContain('(killed)');
      expect(worst.stdout).toContain('its stop time is not known: it runs until it is killed');
    }
    expect(worst.stdout).not.toContain('recorded in the pod template');
  });
});
