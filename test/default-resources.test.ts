/**
 * The sidecars' default requests and limits, checked against what the docs tell users (not
 * against a copy of the code's numbers), and against a bound of their own: "small" (docs/security.md:
 * "small resource requests and limits of its own (not cdk8s-plus's 1 CPU / 512 Mi defaults)").
 * The property tests (test/property.test.ts) check the same documented defaults on random
 * workloads, with random partial overrides that must pass through unchanged.
 */
import { ApiObject, Chart, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { LogAgent } from '../src/log-agent';
import { WithEnvoy } from '../src/with-envoy';
import { WithLogAgent } from '../src/with-log-agent';
import { WithSidecar } from '../src/with-sidecar';
import { WithTracer } from '../src/with-tracer';
import { DocumentedResources, ResourceOwner, documentedResources } from './util/docs';

const DOCS = documentedResources();

/** A quantity in the units the docs use: millicores ('20m', '1') or MiB ('32Mi', '1Gi'). */
function amount(q: string): number {
  const m = /^(\d+(?:\.\d+)?)(m|Mi|Gi)?$/.exec(q);
  if (!m) throw new Error(`not a quantity this test reads: ${q}`);
  const scale: Record<string, number> = { 'm': 1, 'Mi': 1, 'Gi': 1024, '': 1000 };
  return Number(m[1]) * scale[m[2] ?? ''];
}

/** cdk8s-plus-27's own default resources of a container, read from cdk8s-plus (not typed in). */
function kplusDefaults(): DocumentedResources {
  const chart = new Chart(Testing.app(), 'kplus');
  new kplus.Deployment(chart, 'd', { containers: [{ image: 'x:1' }] });
  const d = Testing.synth(chart).find(m => m.kind === 'Deployment');
  return d.spec.template.spec.containers[0].resources;
}

/** Every container of a synthesized app with a construct of each kind on 1.27 (legacy: the hook tools are there too). */
function synthesized(): Record<ResourceOwner, any> {
  const out: Partial<Record<ResourceOwner, any>> = {};
  const one = (owner: ResourceOwner, add: (chart: Chart, workload: ApiObject) => void, container: string) => {
    const chart = new Chart(Testing.app(), 'test');
    const workload = new ApiObject(chart, 'web', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'app:1', ports: [{ containerPort: 8080 }] }] } },
      },
    });
    add(chart, workload);
    const spec = Testing.synth(chart).find(m => m.kind === 'Deployment').spec.template.spec;
    const all = [...(spec.initContainers ?? []), ...spec.containers];
    out[owner] = all.find(c => c.name === container)?.resources;
    out.tools ??= all.find(c => c.name === 'sidecar-tools')?.resources;
  };
  const v = '1.27';
  one('fluent-bit', (c, workload) => new WithLogAgent(c, 'logs', { workload, kubernetesVersion: v }), 'log-agent');
  one('vector', (c, workload) => new WithLogAgent(c, 'logs', { workload, kubernetesVersion: v, agent: LogAgent.vector() }), 'log-agent');
  one('fluentd', (c, workload) => new WithLogAgent(c, 'logs', { workload, kubernetesVersion: v, agent: LogAgent.fluentd() }), 'log-agent');
  one('tracer', (c, workload) => new WithTracer(c, 'tracer', { workload, kubernetesVersion: v, exporterEndpoint: 'collector:4317' }), 'tracer');
  one('envoy', (c, workload) => new WithEnvoy(c, 'envoy', { workload, kubernetesVersion: v, appPort: 8080 }), 'envoy');
  one('sidecar', (c, workload) => new WithSidecar(c, 'side', { workload, kubernetesVersion: v, containerName: 'side', image: 'example/side:1' }), 'side');
  return out as Record<ResourceOwner, any>;
}

const OWNERS = Object.keys(DOCS) as ResourceOwner[];

describe('default resources: the code and the docs agree', () => {
  const got = synthesized();
  test.each(OWNERS)('%s: the container has the documented defaults', owner => {
    expect(got[owner]).toEqual(DOCS[owner]);
  });
});

describe('default resources: the documented defaults are sane and small', () => {
  const kp = kplusDefaults();

  test('cdk8s-plus-27 still has the defaults the bound is made from (1 CPU / 512Mi requested)', () => {
    expect([amount(kp.requests.cpu), amount(kp.requests.memory)]).toEqual([1000, 512]);
  });

  test.each(OWNERS)('%s: no request above its limit (the API server would reject it)', owner => {
    for (const r of ['cpu', 'memory'] as const) expect(amount(DOCS[owner].requests[r])).toBeLessThanOrEqual(amount(DOCS[owner].limits[r]));
  });

  // The bound: a sidecar reserves at most a tenth of the CPU and a quarter of the memory that
  // cdk8s-plus reserves for a container by default, and may use at most what cdk8s-plus
  // reserves (its default request). So the sidecars cost less than the app's own container.
  test.each(OWNERS)('%s: requests at most 1/10 of cdk8s-plus\'s CPU and 1/4 of its memory request, limits at most its request', owner => {
    const d = DOCS[owner];
    expect(amount(d.requests.cpu)).toBeLessThanOrEqual(amount(kp.requests.cpu) / 10);
    expect(amount(d.requests.memory)).toBeLessThanOrEqual(amount(kp.requests.memory) / 4);
    expect(amount(d.limits.cpu)).toBeLessThanOrEqual(amount(kp.requests.cpu));
    expect(amount(d.limits.memory)).toBeLessThanOrEqual(amount(kp.requests.memory));
  });

  test('every library sidecar on one pod (the largest log agent, the tracer, Envoy, the tools) requests less than one cdk8s-plus container', () => {
    const worstLog = (r: 'cpu' | 'memory') => Math.max(...(['fluent-bit', 'vector', 'fluentd'] as const).map(a => amount(DOCS[a].requests[r])));
    for (const r of ['cpu', 'memory'] as const) {
      const sum = worstLog(r) + amount(DOCS.tracer.requests[r]) + amount(DOCS.envoy.requests[r]) + amount(DOCS.tools.requests[r]);
      expect(sum).toBeLessThan(amount(kp.requests[r]));
    }
  });
});
