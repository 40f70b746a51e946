/**
 * The `cdk8s-sidecars` command (issue 29, docs/cli.md), run in-process (issue 36: a child process
 * of a tsc build per test made this the slowest suite): every test calls the bin's own entry
 * point, `main(argv)` of src/cli/main.ts, with its stdout, stderr and stdin captured, the caller's
 * CDK8S_SIDECARS_* and KUBECTL removed from the environment, and returns its exit code; on files,
 * stdin and a fake kubectl (test/fixtures/cli/kubectl/kubectl) that prints recorded outputs
 * written from the documented JSON shapes of `kubectl version`, `get nodes`, `get --raw /metrics`
 * and `get mutatingwebhookconfigurations`. One test runs the program itself (src/cli/main.ts as
 * the main module, transpiled by ts-node) from a shell, as `export $(cdk8s-sidecars target)`
 * does; the consumer test (scripts/consumer-test.sh) runs the same subcommands from the packed
 * tarball's bin.
 *
 * Expected values come from outside the command: the versions and nodes written into the
 * fixtures, the first fixed patches of kubernetes#125880 as its CHANGELOG gives them (1.29.8),
 * the API server's rule for probes on init containers, code point order worked out by hand, and
 * for `render` a cdk8s app that uses the same constructs on the same input.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { App, Chart, Duration, Include, Size, Yaml } from 'cdk8s';
import { AdoptSidecar, FluentBitMultilineParser, LogAgent, LogOutput, SidecarCheck, SidecarQuit, SidecarVolume, WithEnvoy, WithLogAgent, WithSidecar, WithTracer } from '../src';
import { oracleTest, readAsApiServer } from './util/api-server-yaml';
import { hpaManifest } from './util/fixtures';
import { matchPodFailurePolicy } from './util/job-pod-failure-policy';
import { expectValidManifests } from './util/k8s-schema';
import { simulateTermination } from './util/kubelet-termination';
import { loadDocuments } from '../src/cli/io';
import { helpText, main } from '../src/cli/main';
import { timelines } from '../src/cli/timeline';
// the module object itself (not an import-star copy): the command's own `spawnSync` calls go through it
const childProcess = jest.requireActual<typeof import('child_process')>('child_process');
const realSpawnSync = childProcess.spawnSync;
// the same for `fs`: stdin is read with `fs.readSync(0, ...)` (src/cli/reader.ts readStdinBounded)
const fsModule = jest.requireActual<typeof import('fs')>('fs');
const realReadFileSync = fsModule.readFileSync;
const realReadSync = fsModule.readSync;

/** `fs.readSync` with fd 0 reading `input` (then end of file), other fds as they are. */
function stdinFrom(input: string) {
  const bytes = Buffer.from(input, 'utf8');
  let at = 0;
  return ((fd: any, buffer: any, offset: any, length: any, position: any) => {
    if (fd !== 0) return (realReadSync as any)(fd, buffer, offset, length, position);
    const n = Math.min(length, bytes.length - at);
    bytes.copy(buffer, offset, at, at + n);
    at += n;
    return n;
  }) as any;
}

const ROOT = path.resolve(__dirname, '..');
const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'cli');
const MANIFESTS = 'test/fixtures/cli/manifests';
const KUBECTL = path.join(FIXTURES, 'kubectl', 'kubectl');
const CHART_INPUT = path.join(FIXTURES, 'chart', 'helm-template.yaml');
const CHART_CONFIG = 'examples/chart/sidecars.yaml';

let tmp: string;

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cdk8s-sidecars-cli-test-'));
});

afterAll(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

interface Run { readonly status: number | null; readonly stdout: string; readonly stderr: string }

/**
 * Runs the command in-process (the bin's `main(argv)`) in the repository root, without any
 * CDK8S_SIDECARS_* or KUBECTL of the caller: its stdout, stderr and exit code; `input` is its stdin.
 * The programs it starts (kubectl) get this environment, as a child process of the bin would.
 */
function cli(args: string[], options: { input?: string; env?: Record<string, string> } = {}): Run {
  const saved = { ...process.env };
  for (const k of Object.keys(process.env)) if (k.startsWith('CDK8S_SIDECARS_') || k === 'KUBECTL') delete process.env[k];
  Object.assign(process.env, options.env ?? {});
  let stdout = '';
  let stderr = '';
  const spies = [
    jest.spyOn(process.stdout, 'write').mockImplementation((chunk: any) => { stdout += String(chunk); return true; }),
    jest.spyOn(process.stderr, 'write').mockImplementation((chunk: any) => { stderr += String(chunk); return true; }),
    jest.spyOn(fsModule, 'readFileSync').mockImplementation(((file: any, ...rest: any[]) =>
      (file === 0 ? options.input ?? '' : (realReadFileSync as any)(file, ...rest))) as any),
    jest.spyOn(fsModule, 'readSync').mockImplementation(stdinFrom(options.input ?? '')),
    // (jest's process.env is the test's own copy: hand it to the programs the command starts)
    jest.spyOn(childProcess, 'spawnSync').mockImplementation(((command: string, a: any, o: any) =>
      realSpawnSync(command, a, { env: { ...process.env }, ...o })) as any),
  ];
  try {
    const status = main(args);
    return { status, stdout, stderr };
  } finally {
    for (const spy of spies) spy.mockRestore();
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  }
}

const json = (r: Run) => JSON.parse(r.stdout);

describe('check', () => {
  test('a directory at 1.27: every .yaml/.yml below it, the native sidecars and the probe on an init container are errors (exit 1)', () => {
    const r = cli(['check', MANIFESTS, '--kubernetes-version', '1.27', '--output', 'json']);
    expect(r.status).toBe(1);
    const out = json(r);
    // native-sidecars.yaml (Deployment + Service), nested/probe-on-init.yml, plain.yaml; README.txt is skipped
    expect({ files: out.files, objects: out.objects, workloads: out.workloads, errors: out.errors, warnings: out.warnings })
      .toEqual({ files: 3, objects: 4, workloads: 3, errors: 3, warnings: 0 });
    expect(out.findings.map((f: any) => [f.file, f.document, f.kind, f.name, f.namespace ?? null, f.level])).toEqual([
      [`${MANIFESTS}/native-sidecars.yaml`, 1, 'Deployment', 'api', 'shop', 'error'],
      [`${MANIFESTS}/native-sidecars.yaml`, 1, 'Deployment', 'api', 'shop', 'error'],
      [`${MANIFESTS}/nested/probe-on-init.yml`, 1, 'Job', 'migrate', null, 'error'],
    ]);
    expect(out.findings[0].message).toContain("init container 'proxy' has restartPolicy 'Always'");
    expect(out.findings[0].message).toContain('Kubernetes 1.27 does not know');
    expect(out.findings[1].message).toContain("init container 'logs'");
    // The API server: probes and lifecycle are forbidden on init containers without restartPolicy Always (SIDECARS.md §4).
    expect(out.findings[2].message).toContain("init container 'wait' sets readinessProbe");
  });

  test('1.29.3 has kubernetes#125880 (fixed in 1.29.8) and #126543 (fixed in 1.29.9): warnings, exit 0 when there is no error; 1.29.8 has only the second, 1.29.9 neither', () => {
    // The fixed-in patches are the CHANGELOG's (kubernetes CHANGELOG-1.29.md), not the table's.
    const file = `${MANIFESTS}/native-sidecars.yaml`;
    const r = cli(['check', file, '--kubernetes-version', '1.29.3']);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(`${file} (document 1): Deployment shop/api\n  warning: `);
    expect(r.stdout).toContain('kubernetes#125880');
    expect(r.stdout).toContain('kubernetes#126543');
    // and the open kubernetes#137710 and #140309 (two init containers: every patch release)
    expect(r.stdout).toMatch(/0 error\(s\), 4 warning\(s\)\n$/);
    const half = cli(['check', file, '--kubernetes-version', '1.29.8']);
    expect(half.status).toBe(0);
    expect(half.stdout).not.toContain('kubernetes#125880');
    expect(half.stdout).toContain('kubernetes#126543');
    expect(half.stdout).toMatch(/0 error\(s\), 3 warning\(s\)\n$/);
    const fixed = cli(['check', file, '--kubernetes-version', '1.29.9']);
    expect(fixed.status).toBe(0);
    expect(fixed.stdout).not.toContain('kubernetes#126543');
    expect(fixed.stdout).toMatch(/Kubernetes 1\.29\.9: 1 file\(s\), 2 object\(s\), 1 workload\(s\): 0 error\(s\), 2 warning\(s\)\n$/);
  });

  test('text output: one header per object, its findings below it in the order found; json keeps one entry per finding', () => {
    // native-sidecars.yaml's Deployment has four findings at 1.29.3 (kubernetes#125880, #126543 and
    // the open #137710, #140309) and two at 1.27 (each native sidecar); probe-on-init.yml's Job one.
    for (const [version, count] of [['1.29.3', 5], ['1.27', 3]] as const) {
      const text = cli(['check', MANIFESTS, '--kubernetes-version', version]).stdout.split('\n');
      const findings = json(cli(['check', MANIFESTS, '--kubernetes-version', version, '--output', 'json'])).findings;
      const headers = text.filter(l => / \(document \d+\): /.test(l));
      const objects: string[] = [...new Set<string>(findings.map((f: any) => `${f.file} (document ${f.document}): ${f.kind} ${f.namespace ? `${f.namespace}/` : ''}${f.name}`))];
      expect(findings.length).toBe(count);
      expect(headers).toEqual(objects);
      expect(headers.length).toBe(2);
      // below each header, exactly the findings of that object (from the JSON), one line each
      const blocks = headers.map(h => {
        const after = text.slice(text.indexOf(h) + 1);
        const end = after.findIndex(l => !l.startsWith('  '));
        return after.slice(0, end);
      });
      expect(blocks).toEqual(objects.map(o => findings
        .filter((f: any) => o.startsWith(`${f.file} (document ${f.document}): `))
        .map((f: any) => `  ${f.level}: ${f.message} [${f.rule} ${f.ruleName}]`)));
    }
  });

  test('a native sidecar without a CPU or memory request (nor a limit to default it from) is a warning where native sidecars run', () => {
    const pod = (resources: any) => Yaml.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p' },
      spec: { initContainers: [{ name: 'agent', image: 'a', restartPolicy: 'Always', ...(resources ? { resources } : {}) }], containers: [{ name: 'app', image: 'b' }] },
    });
    const warnings = (resources: any, version = '1.30') =>
      json(cli(['check', '-', '--kubernetes-version', version, '--output', 'json'], { input: pod(resources) })).findings.map((f: any) => `${f.level}: ${f.message}`);
    expect(warnings(undefined)).toEqual([
      "warning: Pod 'p': native sidecar 'agent' has no CPU or memory request (nor a limit the API server would copy into it): it runs for " +
      'the whole life of the pod, but the scheduler counts it as zero (unless a LimitRange of the namespace sets a default). Give it ' +
      'small requests and limits, e.g. requests { cpu: 50m, memory: 64Mi }.',
    ]);
    expect(warnings({ requests: { memory: '64Mi' } })).toEqual([expect.stringContaining("native sidecar 'agent' has no CPU request")]);
    // a limit without a request is copied into the request (kubernetes.io docs, Resource Management for Pods and Containers)
    expect(warnings({ requests: { memory: '64Mi' }, limits: { cpu: '100m' } })).toEqual([]);
    // on 1.27 the sidecar is an error of its own, and no sidecar there: no request warning
    expect(warnings(undefined, '1.27')).toEqual([expect.stringMatching(/^error: Pod 'p': init container 'agent' has restartPolicy 'Always'/)]);
  });

  test('the target from the environment variable, and the 1.28 gate from --gate or its variable', () => {
    const file = `${MANIFESTS}/native-sidecars.yaml`;
    expect(cli(['check', file], { env: { CDK8S_SIDECARS_KUBERNETES_VERSION: '1.27' } }).status).toBe(1);
    expect(cli(['check', file], { env: { CDK8S_SIDECARS_KUBERNETES_VERSION: '1.29' } }).status).toBe(0);
    expect(cli(['check', file, '--kubernetes-version', '1.28']).status).toBe(1);
    expect(cli(['check', file, '--kubernetes-version', '1.28', '--gate']).status).toBe(0);
    expect(cli(['check', file, '--kubernetes-version', '1.28'], { env: { CDK8S_SIDECARS_SIDECAR_CONTAINERS_GATE: 'true' } }).status).toBe(0);
  });

  test('stdin with -, and a kind: List checked item by item', () => {
    const list = Yaml.stringify({ apiVersion: 'v1', kind: 'List', items: Yaml.load(path.join(ROOT, MANIFESTS, 'native-sidecars.yaml')) });
    const r = cli(['check', '-', '--kubernetes-version', '1.27', '--output', 'json'], { input: list });
    expect(r.status).toBe(1);
    const out = json(r);
    expect(out.findings.map((f: any) => [f.file, f.kind])).toEqual([['-', 'List'], ['-', 'List']]);
    expect(out.findings[0].message).toMatch(/^List items\[0\]: Deployment 'api': init container 'proxy'/);
  });

  test('directories are walked in code point order, not in locale or UTF-16 order', () => {
    // Code point order of the paths below dir/: 'Z.yaml' (Z U+005A) < 'a-b.yaml' ('-' U+002D before
    // '.' U+002E) < 'a.yaml' ('.' before '/' U+002F) < 'a/b.yaml' < '\uFFFD.yaml' < '\u{1F600}.yaml'
    // (U+FFFD before U+1F600, although UTF-16 puts the surrogate 0xD83D first).
    const dir = path.join(tmp, 'order');
    const names = ['a.yaml', 'Z.yaml', 'a-b.yaml', 'a/b.yaml', '\u{1F600}.yaml', '\uFFFD.yaml', 'skip.json', 'node_modules/x/c.yaml', '.git/d.yml', '.hidden/e.yaml'];
    for (const n of names) {
      fs.mkdirSync(path.dirname(path.join(dir, n)), { recursive: true });
      fs.writeFileSync(path.join(dir, n), fs.readFileSync(path.join(ROOT, MANIFESTS, 'native-sidecars.yaml')));
    }
    const out = json(cli(['check', dir, '--kubernetes-version', '1.27', '--output', 'json']));
    const files = [...new Set(out.findings.map((f: any) => path.relative(dir, f.file)))];
    // '.hidden' (U+002E) sorts first; .git and node_modules are not entered
    expect(files).toEqual([path.join('.hidden', 'e.yaml'), 'Z.yaml', 'a-b.yaml', 'a.yaml', path.join('a', 'b.yaml'), '\uFFFD.yaml', '\u{1F600}.yaml']);
  });

  test('helm template output (leading ---, # Source: comments): its legacy proxy on a CronJob is no error; check counts its objects', () => {
    const r = cli(['check', CHART_INPUT, '--kubernetes-version', '1.30']);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('Kubernetes 1.30: 1 file(s), 3 object(s), 2 workload(s): 0 error(s), 0 warning(s)\n');
  });

  // (against the API server's reader only: the JS YAML 1.1 reader is known to read 12:30, 0o17 and dates otherwise)
  oracleTest('the documents are those the API server reads (yaml.v2\'s YAML 1.1, empty documents dropped as kubectl drops them)', () => {
    const yaml11 = writeTmp('yaml11.yaml', [
      '---', '# only a comment', '---', 'apiVersion: v1', 'kind: ConfigMap', 'metadata: { name: x }',
      'data: { a: yes, b: on, c: 0755, d: 1.30, e: ~, f: "1.30", g: 12:30, h: 0o17, i: 2024-01-02 }', '---', 'plain', '',
    ].join('\n'));
    const files = [yaml11, CHART_INPUT, ...['native-sidecars.yaml', 'nested/probe-on-init.yml', 'plain.yaml'].map(f => path.join(ROOT, MANIFESTS, f))];
    for (const file of files) expect(loadDocuments(file)).toEqual(readAsApiServer(fs.readFileSync(file, 'utf8')).filter(d => d !== null));
    // yes/on are booleans, 0755 and 0o17 octal, 1.30 the number 1.3; no base 60, no timestamps
    expect(loadDocuments(yaml11)[0].data).toEqual({ a: true, b: true, c: 493, d: 1.3, e: null, f: '1.30', g: '12:30', h: 15, i: '2024-01-02' });
  });

  test('a file that is not valid YAML is an error naming the file and the line (cdk8s\' Yaml.load alone would take it)', () => {
    const bad = path.join(tmp, 'bad.yaml');
    fs.writeFileSync(bad, 'apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n  spec: oops\n');
    const r = cli(['check', bad, '--kubernetes-version', '1.29']);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(new RegExp(`^cdk8s-sidecars check: ${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: document 1 \\(line 4\\): not valid YAML: `));
    const missing = cli(['check', 'no-such.yaml', '--kubernetes-version', '1.29']);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toBe('cdk8s-sidecars check: no-such.yaml: no such file or directory\n');
  });

  test.each([
    [['check'], 'no input: give files, directories or - for stdin'],
    [['check', MANIFESTS], '--kubernetes-version is required'],
    [['check', MANIFESTS, '--kubernetes-version', '1.3'], "kubernetesVersion '1.3' is older than 1.27"],
    [['check', MANIFESTS, '--kubernetes-version', 'v1.29.3-eks-1'], 'carries a vendor suffix'],
    [['check', MANIFESTS, '--kubernetes-version', '1.29', '--output', 'xml'], "--output 'xml': use text, json, sarif or junit"],
    [['check', MANIFESTS, '--bogus'], "Unknown option '--bogus'"],
    [['check', MANIFESTS, '--kubernetes-version'], "Option '--kubernetes-version <value>' argument missing"],
  ])('bad usage %j: exit 2 with the message and the usage line', (args, message) => {
    const r = cli(args);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(message);
    expect(r.stderr).toContain(`\nUsage: ${helpText('check').split('\n')[0].replace('Usage: ', '')}\n`);
  });
});

/**
 * The app-wide checks through the command (src/engine/manifests-check.ts, the one implementation that
 * SidecarValidation.addTo uses too): fixtures written here, in a temporary file.
 * Expected values: a Service's named targetPort that only a native sidecar declares gets no
 * endpoints below 1.32 (podutil.FindPort read spec.containers only, kubernetes#127958; fixed in
 * 1.32.0 by kubernetes#127976, CHANGELOG-1.32.md); the HPA controller fails a Utilization metric
 * when a counted container has no request for it (replica_calculator.go calculatePodRequests);
 * the Job controller's matching of a rule without containerName against the sidecar's exit code is
 * the simulation of test/util/job-pod-failure-policy.ts (pod_failure_policy.go).
 */
describe('check: the app-wide checks and the warnings of addTo', () => {
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'shop' },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          initContainers: [{
            name: 'envoy',
            image: 'ghcr.io/example/envoy:1',
            restartPolicy: 'Always',
            ports: [{ name: 'envoy-http', containerPort: 8080 }],
            resources: { requests: { cpu: '50m', memory: '64Mi' } },
          }],
          containers: [{ name: 'web', image: 'ghcr.io/example/web:1', resources: { requests: { memory: '64Mi' } } }],
        },
      },
    },
  };
  const service = (type?: string) => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web', namespace: 'shop' },
    spec: { ...(type ? { type } : {}), selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'envoy-http' }] },
  });
  const write = (name: string, docs: any[]) => {
    const file = path.join(tmp, name);
    fs.writeFileSync(file, docs.map(d => Yaml.stringify(d)).join('---\n'));
    return file;
  };
  const findings = (r: Run) => json(r).findings.map((f: any) => [f.kind, f.name, f.level]);

  test("a Service's named targetPort that only a native sidecar declares: an error at 1.31 (exit 1), clean at 1.32 (ClusterIP), a warning for a LoadBalancer", () => {
    const file = write('service-port.yaml', [deployment, service()]);
    const old = cli(['check', file, '--kubernetes-version', '1.31']);
    expect(old.status).toBe(1);
    expect(old.stdout).toContain(`${file} (document 2): Service shop/web\n  error: Service 'web' port "http" (targetPort 'envoy-http') selects the pods of 'Deployment shop/web'`);
    expect(old.stdout).toContain('kubernetes#127958');
    expect(old.stdout).toContain('Give the Service targetPort: 8080');
    const fixed = cli(['check', file, '--kubernetes-version', '1.32', '--output', 'json']);
    expect(fixed.status).toBe(0);
    expect(findings(fixed)).toEqual([]);
    // the same port in the app container: FindPort finds it in spec.containers at every release
    const app = structuredClone(deployment);
    (app.spec.template.spec.containers[0] as any).ports = [{ name: 'envoy-http', containerPort: 8080 }];
    expect(cli(['check', write('service-port-app.yaml', [app, service()]), '--kubernetes-version', '1.31']).status).toBe(0);
    // another namespace: not the Service's pods
    const other = { ...service(), metadata: { name: 'web', namespace: 'other' } };
    expect(cli(['check', write('service-port-ns.yaml', [deployment, other]), '--kubernetes-version', '1.31']).status).toBe(0);
    const lb = cli(['check', write('service-lb.yaml', [deployment, service('LoadBalancer')]), '--kubernetes-version', '1.32', '--output', 'json']);
    expect(lb.status).toBe(0);
    expect(findings(lb)).toEqual([['Service', 'web', 'warning']]);
    expect(json(lb).findings[0].message).toContain('kubernetes#134651');
  });

  test('the Service and the Deployment in two files of one check are matched too', () => {
    const a = write('two-a.yaml', [deployment]);
    const b = write('two-b.yaml', [service()]);
    const r = cli(['check', a, b, '--kubernetes-version', '1.31', '--output', 'json']);
    expect(r.status).toBe(1);
    expect(json(r).findings.map((f: any) => [f.file, f.kind, f.level])).toEqual([[b, 'Service', 'error']]);
  });

  test('an HPA on CPU utilization of a pod whose app container has no CPU request: a warning under the HPA, exit 0', () => {
    const hpa = hpaManifest({ averageUtilization: 70, minReplicas: 1 });
    const r = cli(['check', write('hpa.yaml', [deployment, hpa]), '--kubernetes-version', '1.32', '--output', 'json']);
    expect(r.status).toBe(0);
    expect(findings(r)).toEqual([['HorizontalPodAutoscaler', 'web', 'warning']]);
    expect(json(r).findings[0].message).toContain("'web'");
    expect(json(r).findings[0].message).toContain('calculatePodRequests');
    // with the request, the controller computes the utilization: nothing to say
    const withRequest = structuredClone(deployment);
    withRequest.spec.template.spec.containers[0].resources.requests = { cpu: '100m', memory: '64Mi' } as any;
    expect(findings(cli(['check', write('hpa-ok.yaml', [withRequest, hpa]), '--kubernetes-version', '1.32', '--output', 'json']))).toEqual([]);
  });

  test('a Job podFailurePolicy onExitCodes rule without containerName: an error when it matches the sidecar\'s 137, a warning otherwise', () => {
    const job = (rule: any) => ({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'batch' },
      spec: {
        podFailurePolicy: { rules: [rule] },
        template: {
          spec: {
            restartPolicy: 'Never',
            initContainers: [{ name: 'mesh', image: 'ghcr.io/example/mesh:1', restartPolicy: 'Always', resources: { requests: { cpu: '10m', memory: '32Mi' } } }],
            containers: [{ name: 'app', image: 'ghcr.io/example/app:1' }],
          },
        },
      },
    });
    const takes137 = (rule: any) => matchPodFailurePolicy({ rules: [rule] }, {
      containerStatuses: [{ name: 'app', exitCode: 1 }], initContainerStatuses: [{ name: 'mesh', exitCode: 137 }],
    });
    const kill = { action: 'Ignore', onExitCodes: { operator: 'In', values: [137] } };
    expect(takes137(kill)?.container).toBe('mesh'); // the controller matches the sidecar's exit code
    const bad = cli(['check', write('job-137.yaml', [job(kill)]), '--kubernetes-version', '1.30', '--output', 'json']);
    expect(bad.status).toBe(1);
    expect(findings(bad)).toEqual([['Job', 'batch', 'error']]);
    expect(json(bad).findings[0].message).toContain('onExitCodes.containerName');
    const other = { action: 'FailJob', onExitCodes: { operator: 'In', values: [3] } };
    expect(takes137(other)).toBeUndefined();
    const warned = cli(['check', write('job-3.yaml', [job(other)]), '--kubernetes-version', '1.30']);
    expect(warned.status).toBe(0);
    expect(warned.stdout).toContain('Job batch\n  warning: ');
    expect(warned.stdout).toMatch(/0 error\(s\), 1 warning\(s\)\n$/);
  });
});

describe('target', () => {
  const cluster = (name: string, args: string[] = [], env: Record<string, string> = {}) =>
    cli(['target', ...args], { env: { KUBECTL, FAKE_KUBECTL_CLUSTER: path.join(FIXTURES, 'kubectl', name), ...env } });

  test('EKS with skewed nodes: the lowest kubelet (v1.29.3-eks-...) wins over the 1.30 API server; metrics forbidden: no gate line', () => {
    const log = path.join(tmp, 'kubectl.log');
    const r = cluster('eks-skew', ['--context', 'prod'], { FAKE_KUBECTL_LOG: log });
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('CDK8S_SIDECARS_KUBERNETES_VERSION=1.29\n');
    expect(r.stderr).toContain('# API server: v1.30.4-eks-a737599\n');
    expect(r.stderr).toContain('# kubelet 1.29.3: 1 node(s) (ip-10-0-2-33.ec2.internal)\n');
    expect(r.stderr).toContain('# risk: version skew: the API server is 1.30, the kubelets 1.29, 1.30');
    expect(r.stderr).toContain('# SidecarContainers gate: not readable (');
    expect(r.stderr).toContain('cannot get path "/metrics"');
    // the Vault injector mutates pods at CREATE; the Deployment-only webhook does not touch pods
    expect(r.stderr).toContain('# risk: mutating webhook vault-agent-injector-cfg/vault.hashicorp.com rewrites pods at CREATE');
    expect(r.stderr).not.toContain('deployment-defaults');
    // every kubectl call got the context
    expect(fs.readFileSync(log, 'utf8').trim().split('\n')).toEqual([
      '--context prod version -o json',
      '--context prod get nodes -o json',
      '--context prod get --raw /metrics',
      '--context prod get mutatingwebhookconfigurations -o json',
    ]);
    expect(cluster('eks-skew', ['--with-patch']).stdout).toBe('CDK8S_SIDECARS_KUBERNETES_VERSION=1.29.3\n');
  });

  test('GKE: v1.30.2-gke.1587003 kubelets under a 1.31 API server, the gate readable and on', () => {
    const r = cluster('gke');
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('CDK8S_SIDECARS_KUBERNETES_VERSION=1.30\nCDK8S_SIDECARS_SIDECAR_CONTAINERS_GATE=true\n');
    expect(r.stderr).toContain('# kubelet 1.30.2: 2 node(s) (gke-pool-b-1, gke-pool-b-2)\n');
    expect(r.stderr).toContain('# mutating webhooks on pod CREATE: 0\n');
  });

  test('malformed webhook configurations (webhooks: 5, rules: "x"): exit 1 with the call and the path, never "0 webhooks" (issue 48)', () => {
    for (const [webhooks, at] of [['5', 'items[0].webhooks is 5'], ['[{"name":"h","rules":"x"}]', 'items[0].webhooks[0].rules is "x"']]) {
      const dir = path.join(tmp, `webhooks-${at.length}`);
      fs.mkdirSync(dir, { recursive: true });
      for (const f of fs.readdirSync(path.join(FIXTURES, 'kubectl', 'gke'))) fs.copyFileSync(path.join(FIXTURES, 'kubectl', 'gke', f), path.join(dir, f));
      fs.writeFileSync(path.join(dir, 'webhooks.out'), `{"items":[{"metadata":{"name":"m"},"webhooks":${webhooks}}]}`);
      const r = cli(['target'], { env: { KUBECTL, FAKE_KUBECTL_CLUSTER: dir } });
      expect([r.status, r.stdout]).toEqual([1, '']);
      expect(r.stderr).toContain(`kubectl get mutatingwebhookconfigurations -o json: ${at}, not `);
      expect(r.stderr).not.toContain('internal error');
      expect(r.stderr).not.toContain('mutating webhooks on pod CREATE: 0');
    }
  });

  test('k3s 1.28 (v1.28.5+k3s1) with the alpha gate off: gate false and the 1.28 risk', () => {
    const r = cluster('k3s-128');
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('CDK8S_SIDECARS_KUBERNETES_VERSION=1.28\nCDK8S_SIDECARS_SIDECAR_CONTAINERS_GATE=false\n');
    expect(r.stderr).toContain('# risk: 1.28 without the SidecarContainers gate');
    expect(r.stderr).not.toContain('version skew');
  });

  test('stdout is for export $(...): the commands a shell runs next get the variables', () => {
    // the program itself (its main module, transpiled by ts-node), not main() in-process
    const program = `"${process.execPath}" -r ts-node/register/transpile-only "${path.join(ROOT, 'src', 'cli', 'main.ts')}"`;
    const script = `vars=$(${program} target) && export $vars && sh -c 'echo "$CDK8S_SIDECARS_KUBERNETES_VERSION/$CDK8S_SIDECARS_SIDECAR_CONTAINERS_GATE"'`;
    const sh = spawnSync('sh', ['-c', script], {
      cwd: ROOT, encoding: 'utf8', env: { ...process.env, KUBECTL, FAKE_KUBECTL_CLUSTER: path.join(FIXTURES, 'kubectl', 'gke') },
    });
    expect(sh.stdout).toBe('1.30/true\n');
  });

  test('an unreachable cluster: exit 1 with kubectl\'s error, nothing on stdout', () => {
    const r = cluster('unreachable');
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain("cdk8s-sidecars target: cannot read the API server's version: ");
    expect(r.stderr).toContain('The connection to the server 10.0.0.1:6443 was refused - did you specify the right host or port?');
  });

  test('no kubectl: exit 1 naming KUBECTL', () => {
    const r = cli(['target'], { env: { KUBECTL: path.join(tmp, 'no-kubectl') } });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('not found: install kubectl or set KUBECTL to its path');
  });

  test('bad usage: exit 2 with the usage line', () => {
    const r = cli(['target', 'extra']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("unexpected argument 'extra'");
    expect(r.stderr).toContain('\nUsage: cdk8s-sidecars target [--context C]');
  });
});

describe('timeline', () => {
  /** The stop table of one block: container -> [SIGTERM, exit] as printed (`18`, `30 (killed)`). */
  function stopTable(out: string): Record<string, [number, number]> {
    const lines = out.split('\n');
    const head = lines.findIndex(l => /^\s+container\s+role\s+preStop\s+turn\s+SIGTERM/.test(l));
    const rows: Record<string, [number, number]> = {};
    for (const line of lines.slice(head + 1)) {
      if (!/^\s{2}\S/.test(line)) break;
      const cols = line.trim().split(/\s{2,}/);
      rows[cols[0]] = [Number(cols[4]), parseFloat(cols[6])];
    }
    return rows;
  }

  test.each([
    // 1.29+: native sidecars stop after the app, in reverse order; 1.28 (gate on): all at once
    ['1.29', []],
    ['1.28', ['--gate']],
  ])('the stop times on %s are the kubelet simulation\'s (test/util/kubelet-termination.ts)', (version, flags) => {
    const file = `${MANIFESTS}/native-sidecars.yaml`;
    const stops: Record<string, number> = { api: 4, proxy: 5, logs: 3 };
    const r = cli(['timeline', file, '--kubernetes-version', version, ...flags, '--app-shutdown-time', '4s', '--stop-time', 'proxy=5s', '--stop-time', 'logs=3s']);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe(`${file} (document 1): Deployment shop/api`);
    const spec = Yaml.load(path.join(ROOT, file))[0].spec.template.spec;
    const sim = simulateTermination({ spec, minor: Number(version.split('.')[1]), behaviour: name => ({ exitAfterSigterm: stops[name] }) });
    const expected = Object.fromEntries([...sim.containers.values()].map(c => [c.name, [c.sigterm, c.exit]]));
    expect(stopTable(r.stdout)).toEqual(expected);
    expect(r.stdout).toContain(`the pod is gone at ${sim.end} s`);
  });

  test('its plumbing: one block per workload through the timeline interface, with the target and the extras', () => {
    const seen: any[] = [];
    const source = { ofManifest: (m: any, o: any) => (seen.push([m.metadata.name, o]), { toTable: () => `table of ${m.metadata.name}` }) };
    const file = path.join(ROOT, MANIFESTS, 'native-sidecars.yaml');
    const target = { version: { major: 1, minor: 29, raw: '1.29' }, raw: '1.29', gate: false };
    const out = timelines([file], target, { legacySidecars: ['x'] }, source);
    expect(out).toBe(`${file} (document 1): Deployment shop/api\ntable of api\n`);
    expect(seen).toEqual([['api', { kubernetesVersion: '1.29', sidecarContainersGate: false, legacySidecars: ['x'] }]]);
    const refusing = { ofManifest: () => { throw new Error('SidecarTimeline.ofManifest: no'); } };
    expect(() => timelines([file], target, {}, refusing)).toThrow(`${file} (document 1): Deployment shop/api: SidecarTimeline.ofManifest: no`);
  });

  test.each([
    [['--stop-time', 'log-agent'], "--stop-time 'log-agent': use NAME=DURATION"],
    [['--stop-time', 'log-agent=soon'], '--stop-time log-agent: expected a duration such as 10s'],
    [['--app-shutdown-time=-1s'], '--app-shutdown-time: expected a duration'],
  ])('bad flags %j: exit 2 with the usage line', (flags, message) => {
    const r = cli(['timeline', `${MANIFESTS}/plain.yaml`, '--kubernetes-version', '1.29', ...flags]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(message);
    expect(r.stderr).toContain('\nUsage: cdk8s-sidecars timeline ');
  });

  test('bad usage: exit 2', () => {
    const r = cli(['timeline']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('\nUsage: cdk8s-sidecars timeline ');
  });
});

describe('render', () => {
  /** The same constructs on the same input in a cdk8s app, with the tree docs/cli.md gives. */
  function sameInACdk8sApp(version: string | undefined): string {
    const app = new App();
    const chart = new Chart(app, 'sidecars');
    const [, web, report] = new Include(chart, 'input', { url: CHART_INPUT }).apiObjects;
    const target = version === undefined ? {} : { kubernetesVersion: version };
    new WithLogAgent(chart, 'deployment-shop-web-shop-log-agent', {
      ...target,
      workload: web,
      logDirectory: '/var/log/app',
      output: LogOutput.loki({ host: 'loki.observability', port: 3100, tls: false, labels: { app: 'web' } }),
    });
    new WithEnvoy(chart, 'deployment-shop-web-shop-envoy', { ...target, workload: web, appPort: 8080 });
    new WithTracer(chart, 'deployment-shop-web-shop-tracer', { ...target, workload: web, exporterEndpoint: 'otel-collector.observability:4317', exporterTls: false });
    new AdoptSidecar(chart, 'cronjob-shop-report-shop-adopt-cloud-sql-proxy', {
      ...target,
      workload: report,
      containerName: 'cloud-sql-proxy',
      resources: { cpu: { request: { amount: '50m' }, limit: { amount: '500m' } }, memory: { request: Size.mebibytes(64), limit: Size.mebibytes(256) } },
      startupCheck: SidecarCheck.http(9090, { path: '/startup' }),
      jobQuit: SidecarQuit.http(9091, '/quitquitquit'),
    });
    return app.synthYaml();
  }

  const input = () => fs.readFileSync(CHART_INPUT, 'utf8');

  test('the example chart\'s helm template output: byte for byte what the constructs give in a cdk8s app, the same on a second run', () => {
    const r = cli(['render', '--config', CHART_CONFIG], { input: input() });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(sameInACdk8sApp('1.30'));
    expect(cli(['render', '--config', CHART_CONFIG], { input: input() }).stdout).toBe(r.stdout);
  });

  test('the constructs\' warnings go to stderr, the manifests alone to stdout (the chart\'s default targetPort http bypasses Envoy)', () => {
    const r = cli(['render', '--config', CHART_CONFIG], { input: input().replace('targetPort: 10000', 'targetPort: http') });
    expect(r.status).toBe(0);
    expect(r.stderr).toContain("[cdk8s-sidecars] WARNING: WithEnvoy 'sidecars/deployment-shop-web-shop-envoy': Service 'sidecars/input/shop-web-service-shop' selects");
    expect(Yaml.load(writeTmp('warned.yaml', r.stdout)).map((o: any) => o.kind)).toEqual(['Service', 'Deployment', 'CronJob', 'ConfigMap', 'ConfigMap', 'ConfigMap']);
  });

  test('input order, then the new ConfigMaps; what is not selected passes through unchanged; 1.30 is native', () => {
    const out = Yaml.load(writeTmp('out.yaml', cli(['render', '--config', CHART_CONFIG], { input: input() }).stdout));
    const inputDocs = Yaml.load(CHART_INPUT);
    expect(out.map((o: any) => o.kind)).toEqual(['Service', 'Deployment', 'CronJob', 'ConfigMap', 'ConfigMap', 'ConfigMap']);
    expect(out[0]).toEqual(inputDocs[0]);
    const web = out[1].spec.template.spec;
    expect(web.containers.map((c: any) => c.name)).toEqual(['web']);
    // sidecar-tools: the busybox init container that gives the distroless agents' hooks a shell (docs/envoy.md)
    expect(web.initContainers.map((c: any) => [c.name, c.restartPolicy ?? null]))
      .toEqual([['sidecar-tools', null], ['log-agent', 'Always'], ['tracer', 'Always'], ['envoy', 'Always']]);
    const job = out[2].spec.jobTemplate.spec.template.spec;
    expect(job.containers.map((c: any) => c.name)).toEqual(['report']);
    expect(job.initContainers.map((c: any) => [c.name, c.restartPolicy, c.startupProbe.httpGet])).toEqual([['cloud-sql-proxy', 'Always', { path: '/startup', port: 9090 }]]);
    // the adopted container keeps every field of its own
    const proxyIn = inputDocs[2].spec.jobTemplate.spec.template.spec.containers[1];
    expect(job.initContainers[0]).toMatchObject(proxyIn);
  });

  test('the output is valid Kubernetes 1.30 (strict schema) and passes check at 1.30: render piped into check', () => {
    const rendered = cli(['render', '--config', CHART_CONFIG], { input: input() }).stdout;
    expectValidManifests(Yaml.load(writeTmp('valid.yaml', rendered)), '1.30');
    const checked = cli(['check', '-', '--kubernetes-version', '1.30'], { input: rendered });
    expect(checked.status).toBe(0);
    expect(checked.stdout).toBe('Kubernetes 1.30: 1 file(s), 6 object(s), 2 workload(s): 0 error(s), 0 warning(s)\n');
  });

  test('the target from CDK8S_SIDECARS_KUBERNETES_VERSION when the config has none: 1.27 is legacy, as in a cdk8s app', () => {
    const config = writeTmp('no-version.yaml', fs.readFileSync(path.join(ROOT, CHART_CONFIG), 'utf8').replace(/^kubernetesVersion: .*\n/m, ''));
    const r = cli(['render', '--config', config], { input: input(), env: { CDK8S_SIDECARS_KUBERNETES_VERSION: '1.27' } });
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(sameInACdk8sApp('1.27'));
    const web = Yaml.load(writeTmp('out127.yaml', r.stdout))[1].spec.template.spec;
    expect((web.initContainers ?? []).map((c: any) => [c.name, c.restartPolicy ?? null])).toEqual([['sidecar-tools', null]]);
    // legacy: Envoy first in spec.containers, holding the app until it is ready (docs/envoy.md)
    expect(web.containers.map((c: any) => c.name)).toEqual(['envoy', 'web', 'log-agent', 'tracer']);
  });

  test('the props render took late (toolsImage, watchAppExit, livenessCheck, fluentBit multilineParsers, fluentd requestTimeout): what the constructs give in a cdk8s app', () => {
    const config = writeTmp('late-props.yaml', [
      'kubernetesVersion: "1.27"', 'workloads:',
      '  - select: { kind: Deployment }',
      '    logAgent:',
      '      logDirectory: /var/log/app',
      '      agent: { fluentBit: { multilineParsers: [java, go] } }',
      '      toolsImage: registry.example.com/mirror/busybox:1.36.1-musl',
      '      watchAppExit: true',
      '  - select: { kind: CronJob }',
      '    logAgent:',
      '      logDirectory: /var/log/app',
      '      agent: { fluentd: { requestTimeout: 7s } }',
      '      allowLegacyOnJob: true',
      '    adopt:',
      '      - containerName: cloud-sql-proxy',
      '        livenessCheck: { tcp: { port: 9090, period: 10s, timeout: 1m } }',
      '        allowLegacyOnJob: true', '',
    ].join('\n'));
    const r = cli(['render', '--config', config], { input: input() });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const app = new App();
    const chart = new Chart(app, 'sidecars');
    const [, web, report] = new Include(chart, 'input', { url: CHART_INPUT }).apiObjects;
    new WithLogAgent(chart, 'deployment-shop-web-shop-log-agent', {
      kubernetesVersion: '1.27',
      workload: web,
      logDirectory: '/var/log/app',
      agent: LogAgent.fluentBit({ multilineParsers: [FluentBitMultilineParser.JAVA, FluentBitMultilineParser.GO] }),
      toolsImage: 'registry.example.com/mirror/busybox:1.36.1-musl',
      watchAppExit: true,
    });
    new WithLogAgent(chart, 'cronjob-shop-report-shop-log-agent', {
      kubernetesVersion: '1.27', workload: report, logDirectory: '/var/log/app', agent: LogAgent.fluentd({ requestTimeout: Duration.seconds(7) }), allowLegacyOnJob: true,
    });
    new AdoptSidecar(chart, 'cronjob-shop-report-shop-adopt-cloud-sql-proxy', {
      kubernetesVersion: '1.27',
      workload: report,
      containerName: 'cloud-sql-proxy',
      livenessCheck: SidecarCheck.tcp(9090, { period: Duration.seconds(10), timeout: Duration.minutes(1) }),
      allowLegacyOnJob: true,
    });
    expect(r.stdout).toBe(app.synthYaml());
    // the props reached the constructs (not dropped on the way): the mirror, the shared process namespace, the probe
    const out = Yaml.load(writeTmp('late-out.yaml', r.stdout));
    const webPod = out[1].spec.template.spec;
    expect(webPod.shareProcessNamespace).toBe(true);
    expect(webPod.initContainers.find((c: any) => c.name === 'sidecar-tools').image).toBe('registry.example.com/mirror/busybox:1.36.1-musl');
    const proxy = out[2].spec.jobTemplate.spec.template.spec.containers.find((c: any) => c.name === 'cloud-sql-proxy');
    expect(proxy.livenessProbe.tcpSocket).toEqual({ port: 9090 });
  });

  test('sidecars: a WithSidecar of the user\'s own per entry, with its volumes, ports, env and checks: what the construct gives in a cdk8s app', () => {
    const config = writeTmp('with-sidecar.yaml', [
      'kubernetesVersion: "1.30"', 'workloads:',
      '  - select: { kind: Deployment }',
      '    sidecars:',
      '      - containerName: cache',
      '        image: ghcr.io/example/cache:2.1.0',
      '        args: [--port, "6380"]',
      '        env: { CACHE_MODE: lru }',
      '        secretEnv: { CACHE_TOKEN: { secret: { name: cache-creds }, key: token } }',
      '        appEnv: { CACHE_URL: "localhost:6380" }',
      '        ports: [ { number: 6380, name: cache } ]',
      '        configFiles: { cache.conf: "maxmemory 64mb\\n" }',
      '        volumes:',
      '          - emptyDir: { name: cache-data, mountPath: /data, sizeLimit: 32Mi }',
      '          - configMap: { name: cache-extra, configMapName: cache-extra, mountPath: /extra }',
      '        readinessCheck: { tcp: { port: 6380 } }',
      '        resources: { cpu: { request: 10m, limit: 100m }, memory: { request: 16Mi, limit: 64Mi } }', '',
    ].join('\n'));
    const r = cli(['render', '--config', config], { input: input() });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const app = new App();
    const chart = new Chart(app, 'sidecars');
    const [, web] = new Include(chart, 'input', { url: CHART_INPUT }).apiObjects;
    new WithSidecar(chart, 'deployment-shop-web-shop-sidecar-cache', {
      kubernetesVersion: '1.30',
      workload: web,
      containerName: 'cache',
      image: 'ghcr.io/example/cache:2.1.0',
      args: ['--port', '6380'],
      env: { CACHE_MODE: 'lru' },
      secretEnv: { CACHE_TOKEN: { secret: { name: 'cache-creds' }, key: 'token' } },
      appEnv: { CACHE_URL: 'localhost:6380' },
      ports: [{ number: 6380, name: 'cache' }],
      configFiles: { 'cache.conf': 'maxmemory 64mb\n' },
      volumes: [SidecarVolume.emptyDir('cache-data', '/data', { sizeLimit: Size.mebibytes(32) }), SidecarVolume.configMap('cache-extra', 'cache-extra', '/extra')],
      readinessCheck: SidecarCheck.tcp(6380),
      resources: { cpu: { request: { amount: '10m' }, limit: { amount: '100m' } }, memory: { request: Size.mebibytes(16), limit: Size.mebibytes(64) } },
    });
    expect(r.stdout).toBe(app.synthYaml());
    const pod = Yaml.load(writeTmp('with-sidecar-out.yaml', r.stdout))[1].spec.template.spec;
    const cache = pod.initContainers.find((c: any) => c.name === 'cache');
    expect([cache.image, cache.restartPolicy, cache.readinessProbe.tcpSocket]).toEqual(['ghcr.io/example/cache:2.1.0', 'Always', { port: 6380 }]);
    expect(pod.volumes.map((v: any) => v.name)).toEqual(expect.arrayContaining(['cache-data', 'cache-extra']));
  });

  const edits: Array<[string, [RegExp, string], string]> = [
    ['unknown key', [/appPort: 8080/, 'appPrt: 8080'], 'workloads[0].envoy.appPrt: unknown key; known keys here: containerName,'],
    ['wrong type', [/appPort: 8080/, 'appPort: "8080"'], 'workloads[0].envoy.appPort: expected a number, got string "8080"'],
    ['a prop the construct refuses', [/appPort: 8080/, 'appPort: 0'], "workloads[0].envoy: WithEnvoy 'sidecars/deployment-shop-web-shop-envoy': appPort 0 is not a valid port"],
    ['a selector that selects nothing', [/name: shop-report/, 'name: shop-reprt'], 'workloads[1].select: selects no workload of the input (its workloads: Deployment shop-web, CronJob shop-report)'],
    ['an unquoted version', [/"1.30"/, '1.30'], "kubernetesVersion: expected a string, got the number 1.3: quote the version ('1.30')"],
    ['a version the library does not take', [/"1.30"/, '"1.26"'], "kubernetesVersion: kubernetesVersion '1.26' is older than 1.27"],
    ['a bad duration', [/appPort: 8080/, 'appPort: 8080\n      drainTime: soon'], 'workloads[0].envoy.drainTime: expected a duration such as 10s'],
    ['a bad check', [/http: \{ port: 9090, path: \/startup \}/, 'http: { port: 9090, path: startup }'], 'workloads[1].adopt[0].startupCheck.http: SidecarCheck.http(): path'],
    ['a bad agent', [/logDirectory:/, 'agent: fluentBitt\n      logDirectory:'], 'workloads[0].logAgent.agent: expected one of fluentBit, vector, fluentd'],
    ['a parser Fluent Bit does not have', [/logDirectory:/, 'agent: { fluentBit: { multilineParsers: [cobol] } }\n      logDirectory:'],
      'workloads[0].logAgent.agent.fluentBit.multilineParsers[0]: expected one of '],
    ['a sidecar volume without its mount path', [/ {4}envoy:/, '    sidecars: [ { image: "ghcr.io/example/x:1.0.0", volumes: [ { emptyDir: { name: data } } ] } ]\n    envoy:'],
      'workloads[0].sidecars[0].volumes[0].emptyDir.mountPath: required key is missing'],
    ['a tools image the construct refuses', [/logDirectory:/, 'toolsImage: "busybox:latest "\n      logDirectory:'], "workloads[0].logAgent: WithLogAgent 'sidecars/deployment-shop-web-shop-log-agent': "],
  ];
  test.each(edits)('a config error (%s): exit 2 with the path of the bad key, nothing on stdout', (_, [from, to], message) => {
    const text = fs.readFileSync(path.join(ROOT, CHART_CONFIG), 'utf8');
    expect(text).toMatch(from);
    const config = writeTmp('bad-config.yaml', text.replace(from, to));
    const r = cli(['render', '--config', config], { input: input() });
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`cdk8s-sidecars render: config error: ${config}: ${message}`);
  });

  test('tracer.holdApplicationUntilCollectorStarts: the legacy layout starts the agent first, with its postStart wait; a string is a config error', () => {
    const text = fs.readFileSync(path.join(ROOT, CHART_CONFIG), 'utf8').replace('"1.30"', '"1.27"');
    expect(text).toMatch(/exporterTls: false\n/);
    const held = writeTmp('hold.yaml', text.replace(/exporterTls: false\n/, 'exporterTls: false\n      holdApplicationUntilCollectorStarts: true\n'));
    const r = cli(['render', '--config', held], { input: input() });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const web = Yaml.load(writeTmp('hold-out.yaml', r.stdout))[1].spec.template.spec;
    // both holds (Envoy's by default) before the app, the log agent after it
    expect(web.containers.map((c: any) => c.name)).toEqual(['tracer', 'envoy', 'web', 'log-agent']);
    expect(web.containers[0].lifecycle.postStart.exec.command.slice(-2)).toEqual(['http://127.0.0.1:13133/', '30']);
    const plain = cli(['render', '--config', writeTmp('no-hold.yaml', text)], { input: input() });
    expect(Yaml.load(writeTmp('no-hold-out.yaml', plain.stdout))[1].spec.template.spec.containers.map((c: any) => c.name))
      .toEqual(['envoy', 'web', 'log-agent', 'tracer']);
    const bad = cli(['render', '--config', writeTmp('hold-bad.yaml', text.replace(/exporterTls: false\n/, 'exporterTls: false\n      holdApplicationUntilCollectorStarts: "yes"\n'))], { input: input() });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('workloads[0].tracer.holdApplicationUntilCollectorStarts: expected');
  });

  test('the same sidecar twice on one workload is a config error naming both keys', () => {
    const config = writeTmp('twice.yaml', [
      'kubernetesVersion: "1.30"', 'workloads:',
      '  - select: { kind: Deployment }', '    envoy: { appPort: 8080 }',
      '  - select: { name: shop-web }', '    envoy: { appPort: 8080 }', '',
    ].join('\n'));
    const r = cli(['render', '--config', config], { input: input() });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("workloads[1].envoy: Deployment 'shop-web' already gets this sidecar from workloads[0].envoy");
  });

  test('what the constructs refuse at synthesis: exit 1 with cdk8s\' validation message, nothing on stdout', () => {
    const config = writeTmp('port.yaml', fs.readFileSync(path.join(ROOT, CHART_CONFIG), 'utf8').replace('appPort: 8080', 'appPort: 9090'));
    const r = cli(['render', '--config', config], { input: input() });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('Validation failed with the following errors:');
    expect(r.stderr).toContain('appPort 9090 is none of the ports');
  });

  test.each([
    ['two objects of one kind, name and namespace', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n',
      "stdin: cdk8s' Include cannot take the input: There is already a Construct with name 'a-configmap'"],
    ['an object without apiVersion', 'kind: ConfigMap\nmetadata: {name: a}\n', "stdin: document 1 (ConfigMap 'a') has no apiVersion"],
    ['broken YAML', 'kind: ConfigMap\nmetadata: {name: a}\n  data: x\n', 'stdin: document 1 (line 3): not valid YAML: '],
  ])('input cdk8s cannot take (%s): exit 1 naming it, nothing on stdout', (_, text, message) => {
    const r = cli(['render', '--config', CHART_CONFIG], { input: text });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`cdk8s-sidecars render: ${message}`);
  });

  test.each([
    [['render'], '--config is required'],
    [['render', '--config', CHART_CONFIG, 'file.yaml'], "unexpected argument 'file.yaml' (the manifests come on stdin)"],
  ])('bad usage %j: exit 2 with the usage line', (args, message) => {
    const r = cli(args);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(message);
    expect(r.stderr).toContain('\nUsage: cdk8s-sidecars render --config FILE\n');
  });
});

describe('help', () => {
  const docs = fs.readFileSync(path.join(ROOT, 'docs', 'cli.md'), 'utf8');

  test.each(['check', 'target', 'timeline', 'render'])('%s --help prints what docs/cli.md shows, exit 0', (command) => {
    for (const flag of ['--help', '-h']) {
      const r = cli([command, flag]);
      expect(r.status).toBe(0);
      expect(r.stdout).toBe(helpText(command));
    }
    expect(docs).toContain(`## ${command}\n\n\`\`\`text\n${helpText(command)}\`\`\`\n`);
  });

  test('no command: the command list, exit 2; an unknown command: exit 2', () => {
    const none = cli([]);
    expect(none.status).toBe(2);
    expect(none.stdout).toMatch(/^Usage: cdk8s-sidecars <command> \[options\]\n/);
    const unknown = cli(['lint']);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain("cdk8s-sidecars: unknown command 'lint'\nUsage: cdk8s-sidecars <command>");
    expect(cli(['--help']).status).toBe(0);
  });
});

function writeTmp(name: string, text: string): string {
  const file = path.join(tmp, name);
  fs.writeFileSync(file, text);
  return file;
}
