/**
 * Issue 27 point 5: the `sidecar-tools` image (busybox from Docker Hub by default) can be
 * overridden, for air-gapped clusters and registry mirrors: on `Sidecars.configure()` and per
 * construct (the construct's prop wins), checked where it is given.
 */
import { Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { Sidecars, WithEnvoy, WithLogAgent } from '../src';
import { manifestOf, newChart, podSpecOf } from './util/fixtures';

const MIRROR = 'registry.example.com/mirror/busybox:1.36.1-musl';
const tools = (manifests: any[]) => podSpecOf(manifestOf(manifests, 'Deployment')).initContainers.find((c: any) => c.name === 'sidecar-tools');
const web = (chart: any) => new kplus.Deployment(chart, 'web', { containers: [{ name: 'app', image: 'ghcr.io/example/app:1.0.0', ports: [{ number: 8080 }] }] });

test('the default is busybox:1.36.1-musl; Sidecars.configure() sets a mirror for every construct in the scope', () => {
  const { app, chart } = newChart();
  // 1.27 (legacy): the log agent's preStop delay needs the tools
  new WithLogAgent(chart, 'logs', { workload: web(chart) });
  expect(tools(Testing.synth(chart)).image).toBe('busybox:1.36.1-musl');
  Sidecars.configure(app, { toolsImage: MIRROR });
  const t = tools(Testing.synth(chart));
  expect(t.image).toBe(MIRROR);
  expect(t.imagePullPolicy).toBe('IfNotPresent');
});

test('per construct, the prop wins over Sidecars.configure(); two constructs that disagree are an error naming both', () => {
  const { app, chart } = newChart();
  Sidecars.configure(app, { toolsImage: 'registry.example.com/other/busybox:1' });
  const workload = web(chart);
  new WithLogAgent(chart, 'logs', { workload, toolsImage: MIRROR });
  expect(tools(Testing.synth(chart)).image).toBe(MIRROR);
  new WithEnvoy(chart, 'envoy', { workload, appPort: 8080 });
  expect(() => Testing.synth(chart)).toThrow(
    /its sidecars ask for different sidecar-tools images \('registry.example.com\/mirror\/busybox:1.36.1-musl' by WithLogAgent 'test\/logs'; 'registry.example.com\/other\/busybox:1' by WithEnvoy 'test\/envoy'\)/,
  );
});

test('a toolsImage that is not an image reference is refused where it is given', () => {
  const { app, chart } = newChart();
  expect(() => Sidecars.configure(app, { toolsImage: 'not an image' })).toThrow(/Sidecars.configure\(the App\): toolsImage/);
  expect(() => new WithLogAgent(chart, 'logs', { workload: web(chart), toolsImage: '' })).toThrow(/WithLogAgent 'test\/logs': toolsImage/);
});
