/**
 * The parts of an agent that are the same in every workload are made once, frozen and shared
 * (issue 36: construction must cost no more than the same sidecars written by hand). The manifest
 * checks (`checkManifestData`) and `deepFreeze` skip a frozen object they have seen, and a
 * workload allocates less: a sidecar that builds its probes, security context, mounts, volume
 * sources, env entries, ports, args or default resources anew for each workload fails here.
 */
import { App, Chart } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { SidecarBase, WithEnvoy, WithLogAgent, WithTracer } from '../src';

function twoOf(make: (chart: Chart, id: string, workload: kplus.Deployment) => SidecarBase): [any, any] {
  const app = new App();
  const chart = new Chart(app, 'c');
  const agents = ['a', 'b'].map(id => {
    const workload = new kplus.Deployment(chart, `${id}-app`, { containers: [{ image: 'ghcr.io/example/app:1.0.0', portNumber: 8080, securityContext: { user: 1000 } }] });
    return make(chart, id, workload)._agent as any;
  });
  return [agents[0], agents[1]];
}

/** The fields of the agent's container and spec that must be one object in both workloads. */
function expectShared(a: any, b: any, paths: string[]): void {
  for (const p of paths) {
    const at = (o: any) => p.split('.').reduce((x, k) => x?.[k], o);
    expect({ path: p, value: at(a) }).toEqual({ path: p, value: expect.anything() });
    expect({ path: p, same: at(a) === at(b) }).toEqual({ path: p, same: true });
    expect(Object.isFrozen(at(a))).toBe(true);
  }
}

test('WithLogAgent: probes, security context, resources, env entries, args, ports, mounts and volume sources are shared', () => {
  const [a, b] = twoOf((chart, id, workload) => new WithLogAgent(chart, `${id}-logs`, { workload }));
  expectShared(a, b, [
    'container.livenessProbe', 'container.startupProbe', 'container.securityContext', 'container.resources',
    'container.command', 'container.args', 'container.ports', 'container.env.0', 'container.env.1', 'container.env.2',
    'container.volumeMounts.0', 'container.volumeMounts.1', 'appMounts.0', 'volumes.0',
  ]);
  // the config volume names each workload's own ConfigMap
  expect(a.volumes[1].configMap.name).not.toBe(b.volumes[1].configMap.name);
});

test('WithTracer: probes, security context, resources, env entries, args and ports are shared', () => {
  const [a, b] = twoOf((chart, id, workload) => new WithTracer(chart, `${id}-tracer`, { workload, exporterEndpoint: 'otel-collector.observability:4317' }));
  expectShared(a, b, [
    'container.livenessProbe', 'container.startupProbe', 'container.securityContext', 'container.resources',
    'container.args', 'container.ports', 'container.env.0', 'container.volumeMounts.0', 'localPorts', 'appEnv.0', 'appEnv.1', 'appEnv.3',
  ]);
  // the workload's own name is not shared
  expect(a.container.env.find((e: any) => e.name === 'K8S_WORKLOAD_NAME').value).not.toBe(b.container.env.find((e: any) => e.name === 'K8S_WORKLOAD_NAME').value);
});

test('WithEnvoy: probes, security context, resources, command, args and ports are shared', () => {
  const [a, b] = twoOf((chart, id, workload) => new WithEnvoy(chart, `${id}-envoy`, { workload, appPort: 8080 }));
  expectShared(a, b, [
    'container.livenessProbe', 'container.readinessProbe', 'container.startupProbe', 'container.securityContext', 'container.resources',
    'container.command', 'container.args', 'container.ports', 'container.volumeMounts.0',
  ]);
});
