/**
 * No prop can produce a raw TypeError (issue 24, "Done when"): every prop of every construct,
 * given each value of a small table of wrong types (a number, a string, a boolean, null, a
 * Lazy, a plain object, an array holding null), is either taken (cdk8s drops a null like an
 * unset prop) or refused with a SidecarError (src/private/errors.ts) whose `where` names the
 * construct's path and whose `fix` says what to do (or, for what only synthesis finds, cdk8s'
 * validation error, which gathers such messages). Never a TypeError, RangeError or URIError
 * from deep inside, and never a crash without the path.
 */
import { ApiObject, App, Chart, Lazy, Testing } from 'cdk8s';
import { Construct } from 'constructs';
import { AdoptSidecar } from '../src/adopt-sidecar';
import { NativeSidecarGuard } from '../src/guard';
import { LogAgent } from '../src/log-agent';
import { LogOutput } from '../src/log-output';
import { SidecarError } from '../src/private/errors';
import { SidecarInjectionPolicy } from '../src/sidecar-injection-policy';
import { WithEnvoy } from '../src/with-envoy';
import { WithLogAgent } from '../src/with-log-agent';
import { Mesh, WithMeshProxy } from '../src/with-mesh';
import { SidecarCheck, SidecarQuit, SidecarVolume, WithSidecar } from '../src/with-sidecar';
import { WithTracer } from '../src/with-tracer';
import { isLibraryError } from './util/catalogue';
import { rawDeployment } from './util/fixtures';
import { constructNames, constructProps } from './util/jsii-assembly';

const APP = { name: 'app', image: 'ghcr.io/example/app:1.0.0', ports: [{ containerPort: 8080 }], securityContext: { runAsUser: 1000 } };

function workload(chart: Chart): ApiObject {
  return rawDeployment(chart, 'raw', { containers: [APP, { name: 'proxy', image: 'ghcr.io/example/proxy:1.0.0' }] });
}

/** The wrong values: one of each type JavaScript can pass where the TypeScript type says otherwise. */
const BAD: Array<[string, () => unknown]> = [
  ['a number', () => 42],
  ['NaN', () => NaN],
  ['a string', () => 'x'],
  ['a boolean', () => true],
  ['null', () => null],
  ['a Lazy', () => Lazy.any({ produce: () => 'x' })],
  ['a plain object', () => ({ a: 1 })],
  ['a list with null', () => [null]],
];

type Make = (scope: Construct, id: string, props: any) => Construct;
interface Subject {
  readonly name: string;
  readonly make: Make;
  /** Valid props apart from the workload (added per case). */
  readonly base: Record<string, unknown>;
  readonly noWorkload?: boolean;
}

const SUBJECTS: Subject[] = [
  {
    name: 'WithSidecar',
    make: (s, id, p) => new WithSidecar(s, id, p),
    base: { image: 'ghcr.io/example/sidecar:1.0.0', containerName: 'helper' },
  },
  {
    name: 'AdoptSidecar',
    make: (s, id, p) => new AdoptSidecar(s, id, p),
    base: { containerName: 'proxy' },
  },
  {
    name: 'WithLogAgent',
    make: (s, id, p) => new WithLogAgent(s, id, p),
    base: {},
  },
  {
    name: 'WithEnvoy',
    make: (s, id, p) => new WithEnvoy(s, id, p),
    base: { appPort: 8080 },
  },
  {
    name: 'WithTracer',
    make: (s, id, p) => new WithTracer(s, id, p),
    base: { exporterEndpoint: 'otel-collector.observability:4317' },
  },
  {
    name: 'WithMeshProxy',
    make: (s, id, p) => new WithMeshProxy(s, id, p),
    base: { mesh: Mesh.ISTIO },
  },
  {
    name: 'NativeSidecarGuard',
    make: (s, id, p) => new NativeSidecarGuard(s, id, p),
    base: { namespaces: ['shop'] },
    noWorkload: true,
  },
  {
    name: 'SidecarInjectionPolicy',
    make: (s, id, p) => {
      const policy = new SidecarInjectionPolicy(s, id, p);
      new WithLogAgent(policy.pod, 'logs', { workload: policy.pod });
      return policy;
    },
    base: { namespaces: ['shop'] },
    noWorkload: true,
  },
];

// Every prop, inherited ones included, as the jsii assembly (.jsii) declares it: a prop added to a
// construct is covered here without a list to keep (test/util/jsii-assembly.ts).
const CASES = SUBJECTS.flatMap(s => constructProps(s.name).flatMap(prop => BAD.map(([what, value]) => [`${s.name} ${prop}: ${what}`, s, prop, value] as const)));

test.each(CASES)('%s', (_name, subject, prop, value) => {
  const app = new App({ outdir: '/nonexistent-never-written' });
  const chart = new Chart(app, 'test');
  const props: any = { ...subject.base, kubernetesVersion: '1.29', ...(subject.noWorkload ? {} : { workload: workload(chart) }) };
  props[prop] = value();
  let error: unknown;
  try {
    subject.make(chart, 'subject', props);
    Testing.synth(chart);
  } catch (e) {
    error = e;
  }
  if (error === undefined) return; // taken (e.g. null as unset)
  const e = error as Error;
  const typed = e instanceof SidecarError ? e.where.includes('test/subject') && e.fix !== '' : isLibraryError(e);
  if (!typed || !e.message.includes('test/subject')) {
    throw new Error(`${subject.name} ${prop}: a ${e.constructor?.name}, or no construct path or fix:\n${e.stack}`);
  }
});

/** The factories: each option (or positional argument) given each wrong value; a SidecarError naming the factory, or taken. */
const FACTORIES: Array<{ name: string; call: (bad: unknown, key: string) => unknown; keys: string[] }> = [
  { name: 'LogAgent.fluentBit()', call: (v, k) => LogAgent.fluentBit({ [k]: v }), keys: ['image', 'flushInterval', 'grace', 'httpPort'] },
  { name: 'LogAgent.vector()', call: (v, k) => LogAgent.vector({ [k]: v }), keys: ['image', 'gracefulShutdownLimit', 'apiPort', 'exposeGrpcApi'] },
  { name: 'LogAgent.fluentd()', call: (v, k) => LogAgent.fluentd({ [k]: v }), keys: ['image', 'flushInterval', 'shutdownGrace', 'monitorPort', 'allowMonitorDebugInfo'] },
  { name: 'LogOutput.forward()', call: (v, k) => LogOutput.forward({ host: 'logs.example.com', [k]: v }), keys: ['host', 'port', 'tls'] },
  { name: 'LogOutput.http()', call: (v, k) => LogOutput.http({ host: 'logs.example.com', [k]: v }), keys: ['host', 'port', 'tls', 'uri', 'secretHeaders', 'basicAuth'] },
  { name: 'LogOutput.loki()', call: (v, k) => LogOutput.loki({ host: 'logs.example.com', [k]: v }), keys: ['host', 'port', 'tls', 'labels', 'tenantId', 'basicAuth'] },
  { name: 'LogOutput.elasticsearch()', call: (v, k) => LogOutput.elasticsearch({ host: 'logs.example.com', [k]: v }), keys: ['host', 'port', 'tls', 'index', 'basicAuth'] },
  { name: 'SidecarCheck.http()', call: (v, k) => (k === 'port' ? SidecarCheck.http(v as number) : SidecarCheck.http(9090, { [k]: v })), keys: ['port', 'path', 'period', 'timeout'] },
  { name: 'SidecarCheck.exec()', call: v => SidecarCheck.exec(v as string[]), keys: ['command'] },
  {
    name: 'SidecarVolume.emptyDir()',
    call: (v, k) => (k === 'name' ? SidecarVolume.emptyDir(v as string, '/x') : k === 'mountPath' ? SidecarVolume.emptyDir('x', v as string) : SidecarVolume.emptyDir('x', '/x', { [k]: v })),
    keys: ['name', 'mountPath', 'appMountPath', 'appReadOnly', 'memory', 'sizeLimit'],
  },
  { name: 'SidecarVolume.secret()', call: v => SidecarVolume.secret('x', v as any, '/x'), keys: ['secret'] },
  { name: 'SidecarQuit.http()', call: (v, k) => (k === 'port' ? SidecarQuit.http(v as number, '/q') : k === 'path' ? SidecarQuit.http(9091, v as string) : SidecarQuit.http(9091, '/q', v as string)), keys: ['port', 'path', 'envName'] },
];

const FACTORY_CASES = FACTORIES.flatMap(f => f.keys.flatMap(key => BAD.map(([what, value]) => [`${f.name} ${key}: ${what}`, f, key, value] as const)));

test.each(FACTORY_CASES)('%s', (_name, f, key, value) => {
  let error: unknown;
  try {
    f.call(value(), key);
  } catch (e) {
    error = e;
  }
  if (error === undefined) return;
  const e = error as Error;
  const who = f.name.replace(/\(\)$/, '');
  if (!(e instanceof SidecarError) || !e.where.includes(who.split('.')[0]) || e.fix === '') {
    throw new Error(`${f.name} ${key}: a ${e.constructor?.name}, or no factory name or fix:\n${e.stack}`);
  }
});

test('every construct of the assembly is a subject (its props then come from the assembly too)', () => {
  expect(SUBJECTS.map(s => s.name).sort()).toEqual(constructNames());
});
