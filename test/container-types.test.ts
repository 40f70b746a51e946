/**
 * No internal error, ever, on a manifest kubectl reads (issue 48 point 5): every container field
 * in every wrong JSON type, fed to `cdk8s-sidecars check`, to `render` and to the constructs (a raw
 * workload). GIVEN a Deployment (or another workload kind) whose container has one field of the
 * wrong type, WHEN each of the three reads it, THEN none ends in a raw TypeError ("internal error"
 * for the command), and `check` refuses (exit 1, naming the file, the document and the field's
 * path) every value of a JSON type the API server cannot decode (src/engine/container-shape.ts).
 *
 * The `check` half runs every field with every value (exhaustive: it is fast); the render and
 * construct half is a fast-check property (FC_NUM_RUNS sets its runs, FC_SEED replays one).
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { ApiObject, App, Chart } from 'cdk8s';
import * as fc from 'fast-check';
import { WithEnvoy, WithLogAgent, WithTracer } from '../src';
import { withoutVersionEnv } from './util/catalogue';
import { main } from '../src/cli/main';

withoutVersionEnv();

// the module object itself (not an import-star copy): stdin is read with `fs.readSync(0, ...)`
const fsModule = jest.requireActual<typeof import('fs')>('fs');
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

const RUNS = process.env.FC_NUM_RUNS ? Number(process.env.FC_NUM_RUNS) : 60;
const SEED = process.env.FC_SEED ? Number(process.env.FC_SEED) : undefined;

/** Every field of core/v1 Container, by the JSON type the API server decodes it from. */
const FIELDS: Record<string, 'string' | 'bool' | 'strings' | 'objects' | 'object'> = {
  image: 'string',
  command: 'strings',
  args: 'strings',
  workingDir: 'string',
  ports: 'objects',
  envFrom: 'objects',
  env: 'objects',
  resources: 'object',
  resizePolicy: 'objects',
  restartPolicy: 'string',
  restartPolicyRules: 'objects',
  volumeMounts: 'objects',
  volumeDevices: 'objects',
  livenessProbe: 'object',
  readinessProbe: 'object',
  startupProbe: 'object',
  lifecycle: 'object',
  terminationMessagePath: 'string',
  terminationMessagePolicy: 'string',
  imagePullPolicy: 'string',
  securityContext: 'object',
  stdin: 'bool',
  stdinOnce: 'bool',
  tty: 'bool',
};

/** A value of each JSON type, and of each shape inside a list or an object. */
const VALUES: unknown[] = [
  null, true, false, 0, 7, 1.5, -1, 2 ** 40, 'x', '', '80', [], [null], [1], ['x'], [true], [{}], [[]], {}, { a: 1 }, { name: 5 },
  { exec: 'x' }, { httpGet: { port: true } }, { limits: 'x' }, { limits: { cpu: true } }, { preStop: [] }, { capabilities: { add: 'x' } },
  [{ name: 5, containerPort: 'x' }], [{ name: 'a', mountPath: 5 }], [{ name: 'V', valueFrom: 'x' }],
];

/** Whether the API server cannot decode `value` for a field of this kind (the top level only; null is the zero value). */
function wrongAtTop(kind: string, value: unknown): boolean {
  if (value === null) return false;
  switch (kind) {
    case 'string': return typeof value !== 'string';
    case 'bool': return typeof value !== 'boolean';
    case 'strings': return !Array.isArray(value) || value.some(x => x !== null && typeof x !== 'string');
    case 'objects': return !Array.isArray(value) || value.some(x => x === null || typeof x !== 'object' || Array.isArray(x));
    default: return typeof value !== 'object' || Array.isArray(value);
  }
}

const KINDS = ['Deployment', 'StatefulSet', 'DaemonSet', 'Job', 'CronJob', 'Pod'] as const;
type Kind = typeof KINDS[number];

function manifest(kind: Kind, list: 'containers' | 'initContainers', field: string, value: unknown): any {
  const app: any = { name: 'app', image: 'nginx:1.27', ports: [{ containerPort: 8080 }] };
  const bad: any = list === 'containers' ? app : { name: 'init', image: 'busybox:1.36' };
  bad[field] = value;
  const spec: any = { containers: [app], ...(list === 'initContainers' ? { initContainers: [bad] } : {}) };
  if (kind === 'Job' || kind === 'CronJob') spec.restartPolicy = 'Never';
  const template = { metadata: { labels: { app: 'w' } }, spec };
  const base = { apiVersion: kind === 'Pod' ? 'v1' : kind === 'Job' || kind === 'CronJob' ? 'batch/v1' : 'apps/v1', kind, metadata: { name: 'w' } };
  switch (kind) {
    case 'Pod': return { ...base, spec };
    case 'Job': return { ...base, spec: { template } };
    case 'CronJob': return { ...base, spec: { schedule: '* * * * *', jobTemplate: { spec: { template } } } };
    default: return { ...base, spec: { selector: { matchLabels: { app: 'w' } }, ...(kind === 'StatefulSet' ? { serviceName: 'w' } : {}), template } };
  }
}

let tmp: string;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cdk8s-sidecars-container-types-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** The command in-process: exit code, stdout, stderr; `input` is its stdin. */
function cli(args: string[], input = ''): { status: number; stdout: string; stderr: string } {
  let stdout = '';
  let stderr = '';
  const realRead = fsModule.readFileSync;
  const spies = [
    jest.spyOn(process.stdout, 'write').mockImplementation((c: any) => { stdout += String(c); return true; }),
    jest.spyOn(process.stderr, 'write').mockImplementation((c: any) => { stderr += String(c); return true; }),
    jest.spyOn(fsModule, 'readFileSync').mockImplementation(((f: any, ...rest: any[]) => (f === 0 ? input : (realRead as any)(f, ...rest))) as any),
    jest.spyOn(fsModule, 'readSync').mockImplementation(stdinFrom(input)),
  ];
  try {
    return { status: main(args), stdout, stderr };
  } finally {
    for (const s of spies) s.mockRestore();
  }
}

const noInternalError = (r: { stdout: string; stderr: string }) => !/internal error|TypeError|RangeError|is not a function|Cannot read prop/.test(r.stdout + r.stderr);

describe('check: every container field in every JSON type', () => {
  test('a well-typed workload passes (the base the cases change)', () => {
    for (const kind of KINDS) {
      const file = path.join(tmp, `base-${kind}.json`);
      fs.writeFileSync(file, JSON.stringify(manifest(kind, 'containers', 'workingDir', '/app')));
      const r = cli(['check', file, '--kubernetes-version', '1.29']);
      expect([kind, r.status, r.stderr]).toEqual([kind, 0, '']);
    }
  });

  test.each(['containers', 'initContainers'] as const)('spec.%s[0]: no internal error; a type the API server cannot decode is an error naming file, document and path', list => {
    const missed: string[] = [];
    for (const [field, kind] of Object.entries(FIELDS)) {
      VALUES.forEach((value, i) => {
        const file = path.join(tmp, `${list}-${field}-${i}.json`);
        fs.writeFileSync(file, JSON.stringify(manifest('Deployment', list, field, value)));
        const r = cli(['check', file, '--kubernetes-version', '1.29']);
        const label = `${field}: ${JSON.stringify(value)}`;
        if (!noInternalError(r) || ![0, 1].includes(r.status)) missed.push(`${label}: exit ${r.status}: ${(r.stderr || r.stdout).slice(0, 300)}`);
        const index = list === 'containers' ? 0 : 0;
        if (wrongAtTop(kind, value)) {
          const named = r.stdout.includes(`${path.basename(file)} (document 1): Deployment w`) && r.stdout.includes(`spec.${list}[${index}]`) && r.stdout.includes(field);
          if (r.status !== 1 || !named) missed.push(`${label}: not refused with the file, the document and the path (exit ${r.status}): ${r.stdout.slice(0, 300)}`);
        }
      });
    }
    expect(missed).toEqual([]);
  });

  test('issue 48\'s cases: ports [null], volumeMounts {}, ports "x" (JSON), each with what the API server says', () => {
    const cases: Array<[string, unknown, string]> = [
      ['ports', [null], 'ports[0] is null, not an object: the API server reads it as an empty v1.ContainerPort and refuses it ("ports[0].containerPort: Required value")'],
      ['volumeMounts', {}, 'volumeMounts is {}, not a list of objects: the API server refuses the object ("json: cannot unmarshal object into Go struct field Container.volumeMounts of type []v1.VolumeMount")'],
      ['ports', 'x', 'ports is "x", not a list of objects: the API server refuses the object ("json: cannot unmarshal string into Go struct field Container.ports of type []v1.ContainerPort")'],
    ];
    for (const [field, value, said] of cases) {
      const file = path.join(tmp, `issue48-${field}.json`);
      fs.writeFileSync(file, JSON.stringify(manifest('Deployment', 'containers', field, value)));
      const r = cli(['check', file, '--kubernetes-version', '1.29']);
      expect(r.status).toBe(1);
      expect(r.stdout).toContain(`issue48-${field}.json (document 1): Deployment w\n  error: Deployment 'w': spec.containers[0] ('app'): ${said}`);
    }
  });
});

describe('render and the constructs: no internal error, ever (fast-check)', () => {
  const config = (dir: string) => {
    const file = path.join(dir, 'sidecars.json');
    fs.writeFileSync(file, JSON.stringify({
      kubernetesVersion: '1.29',
      workloads: [{ select: { name: 'w' }, logAgent: { output: 'stdout' }, envoy: { appPort: 8080 }, tracer: { exporterEndpoint: 'otel-collector.observability:4317' } }],
    }));
    return file;
  };

  test('render --config over every field in every type: a result or a clear error, never an internal one', () => {
    const cfg = config(tmp);
    fc.assert(fc.property(
      fc.constantFrom(...KINDS), fc.constantFrom('containers' as const, 'initContainers' as const), fc.constantFrom(...Object.keys(FIELDS)), fc.constantFrom(...VALUES),
      (kind, list, field, value) => {
        const r = cli(['render', '--config', cfg], JSON.stringify(manifest(kind, list, field, value)));
        if (!noInternalError(r) || ![0, 1, 2].includes(r.status)) throw new Error(`render: exit ${r.status}: ${r.stderr.slice(0, 500)}`);
        if (list === 'containers' && wrongAtTop(FIELDS[field], value) && r.status === 0) throw new Error(`render accepted ${field}: ${JSON.stringify(value)}`);
      },
    ), { numRuns: RUNS, seed: SEED });
  });

  test('WithLogAgent, WithEnvoy, WithTracer on a raw workload with that field: synthesized or refused with the workload named, never a TypeError', () => {
    fc.assert(fc.property(
      fc.constantFrom(...KINDS), fc.constantFrom('containers' as const, 'initContainers' as const), fc.constantFrom(...Object.keys(FIELDS)), fc.constantFrom(...VALUES),
      fc.constantFrom('log', 'envoy', 'tracer'),
      (kind, list, field, value, sidecar) => {
        const app = new App({ outdir: path.join(tmp, 'never-written') });
        const chart = new Chart(app, 'c');
        const workload = new ApiObject(chart, 'w', manifest(kind, list, field, value));
        try {
          if (sidecar === 'log') new WithLogAgent(chart, 's', { workload, kubernetesVersion: '1.29' });
          else if (sidecar === 'envoy') new WithEnvoy(chart, 's', { workload, kubernetesVersion: '1.29', appPort: 8080 });
          else new WithTracer(chart, 's', { workload, kubernetesVersion: '1.29', exporterEndpoint: 'otel-collector.observability:4317' });
          app.synthYaml();
        } catch (e) {
          const err = e as Error;
          if (err.name !== 'Error' && err.name !== 'SidecarError') throw new Error(`${sidecar} on ${kind} ${list} ${field}: ${JSON.stringify(value)}: ${err.stack}`);
          if (!/c\/w|c\/s|Deployment 'w'|'w'/.test(err.message)) throw new Error(`${sidecar}: the error names neither the workload nor the construct: ${err.message}`);
        }
      },
    ), { numRuns: RUNS, seed: SEED });
  });

  test('issue 48: containers [null] and {} given to a construct: the workload and the problem named', () => {
    for (const containers of [[null], {}]) {
      const app = new App();
      const chart = new Chart(app, 'c');
      const w = new ApiObject(chart, 'w', { ...manifest('Deployment', 'containers', 'image', 'x'), spec: { selector: {}, template: { spec: { containers } } } });
      new WithLogAgent(chart, 's', { workload: w, kubernetesVersion: '1.29' });
      expect(() => app.synthYaml()).toThrow(/\[c\/w\] Deployment 'w': spec\.containers(\[0\] is undefined, not an object| is not a list \(got object\))/);
    }
  });
});
