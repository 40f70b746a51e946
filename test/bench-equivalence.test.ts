/**
 * The benchmark's baseline cannot rot (issue 36): `npm run bench` times the library against the
 * same sidecars written by hand with cdk8s-plus-27 (bench/hand-written.ts), and stops when the two
 * outputs are not equivalent (bench/equivalence.ts). That check ran only in the benchmark, which
 * no test runs, so the hand-written app fell behind the library (liveness probes, Envoy's preStop)
 * unnoticed. Here it runs in `npm test`, at a small N, on the library's sources (the benchmark
 * itself loads the compiled lib/; the apps are the same code, bench/apps.ts).
 */
import { SHAPES, Shape, VARIANTS, Variant, buildApp } from '../bench/apps';
import { checkEquivalent, checkSameWorkloads, parseYaml } from '../bench/equivalence';

// bench/apps.ts imports the compiled library ('../lib', what consumers load); the test runs on src/.
// (jest hoists jest.mock above the imports.)
jest.mock('../lib', () => jest.requireActual('../src'), { virtual: true });

const N = 3;

describe('bench/: the hand-written baseline writes what the library writes', () => {
  const saved = process.env.CDK8S_SIDECARS_KUBERNETES_VERSION;
  const shapes: Array<Shape | undefined> = [undefined, ...SHAPES];
  const out = new Map<Shape | undefined, Record<Variant, any[]>>();
  beforeAll(() => {
    // the apps choose their target with Sidecars.configure(); the environment variable would win
    delete process.env.CDK8S_SIDECARS_KUBERNETES_VERSION;
    for (const shape of shapes) {
      out.set(shape, Object.fromEntries(VARIANTS.map(v => [v, parseYaml(buildApp(v, N, shape).synthYaml())])) as Record<Variant, any[]>);
    }
  });
  afterAll(() => {
    if (saved !== undefined) process.env.CDK8S_SIDECARS_KUBERNETES_VERSION = saved;
  });

  test.each(shapes.map(s => [s ?? 'workloads alone', s] as const))(`hand-legacy and lib-legacy are equivalent (N=${N}, %s)`, (_name, shape) => {
    const { 'hand-legacy': hand, 'lib-legacy': lib } = out.get(shape)!;
    const census = shape === undefined ? /^Deployment: 3, ConfigMap: 9;/ : shape === 'service' ? /^Deployment: 3, ConfigMap: 9, Service: 3;/ : /^Deployment: 3, ConfigMap: 9, Service: 3, HorizontalPodAutoscaler: 3;/;
    expect(checkEquivalent(hand, lib)).toMatch(census);
  });

  test.each(shapes.map(s => [s ?? 'workloads alone', s] as const))('lib-native has the same objects and containers as lib-legacy, each sidecar native (%s)', (_name, shape) => {
    const { 'lib-native': native, 'lib-legacy': legacy } = out.get(shape)!;
    expect(checkSameWorkloads(native, legacy)).toMatch(/3 native sidecars per Deployment/);
  });

  test('the check fails on a hand-written app that lacks a field the library writes', () => {
    const { 'hand-legacy': written, 'lib-legacy': lib } = out.get('hpa')!;
    const hand = structuredClone(written);
    const envoy = hand.find(o => o.kind === 'Deployment').spec.template.spec.containers.find((c: any) => c.name === 'envoy');
    delete envoy.livenessProbe;
    expect(() => checkEquivalent(hand, lib)).toThrow(/outputs differ:[\s\S]*livenessProbe/);
    const service = structuredClone(written);
    service.find(o => o.kind === 'Service').spec.ports[0].targetPort = 8080;
    expect(() => checkEquivalent(service, lib)).toThrow(/outputs differ:[\s\S]*targetPort/);
  });
});
