/**
 * Synthesis cost per workload is constant (issue 36): a guard against super-linear growth that
 * counts work instead of timing it, so it is deterministic on any machine, loaded or not.
 *
 * The app is the benchmark's (bench/apps.ts): N Deployments, each with the log agent, the tracer
 * and Envoy and a Service in front of Envoy (and a variant with a HorizontalPodAutoscaler too),
 * plus `SidecarValidation.addTo(app)` in a third variant (the app-wide checks). Counted while the
 * app is built and synthesized:
 *
 * - construct-tree nodes visited: every read of a construct's `node.children` (what
 *   `findAll()` and every other walk of the tree go through);
 * - objects rendered: calls of `ApiObject.toJson()`;
 * - manifest fields read: every property read on the objects `toJson()` returns (each is
 *   returned with counting accessors), wherever the library reads them (checks, clones).
 *
 * The work one more workload adds (count at N+1 minus count at N) must be the same at N=20 and at
 * N=200: any per-workload walk of the app (a quadratic) makes it grow with N. The same for
 * `cdk8s-sidecars check`'s core (`checkManifestSet`) over plain manifests: the fields it reads per
 * added Deployment and Service, and after reading (`checkDocuments`) the fields it reads per added
 * Deployment and Service: under two reads per field (one more per container field for its JSON type, issue 48), no copies (issue 36: five per workload).
 */
import { ApiObject } from 'cdk8s';
import { Node } from 'constructs';
import { buildApp, Shape } from '../bench/apps';
import { parseYaml } from '../bench/equivalence';
import { SidecarValidation } from '../src';
import { checkDocuments } from '../src/engine/check-objects';
import { checkManifestSet } from '../src/engine/manifests-check';
import { parseKubernetesVersion } from '../src/target/capabilities';

// bench/apps.ts imports the compiled library ('../lib', what consumers load); the test runs on src/.
jest.mock('../lib', () => jest.requireActual('../src'), { virtual: true });

interface Work { nodes: number; renders: number; reads: number }

let counting = false;
const work: Work = { nodes: 0, renders: 0, reads: 0 };

/** A deep copy of `value` whose every property is an accessor that counts its reads. */
function counted(value: any): any {
  if (value === null || typeof value !== 'object') return value;
  const out: any = Array.isArray(value) ? new Array(value.length) : {};
  for (const key of Object.keys(value)) {
    let v = counted(value[key]);
    Object.defineProperty(out, key, {
      enumerable: true,
      configurable: true,
      get: () => {
        if (counting) work.reads++;
        return v;
      },
      set: (x: any) => {
        v = x;
      },
    });
  }
  return out;
}

const children = Object.getOwnPropertyDescriptor(Node.prototype, 'children')!;
const toJson = ApiObject.prototype.toJson;

function instrument(): void {
  Object.defineProperty(Node.prototype, 'children', {
    ...children,
    get(this: Node) {
      if (counting) work.nodes++;
      return children.get!.call(this);
    },
  });
  ApiObject.prototype.toJson = function (this: ApiObject) {
    const json = toJson.call(this);
    if (!counting) return json;
    work.renders++;
    return counted(json);
  };
}

function restore(): void {
  Object.defineProperty(Node.prototype, 'children', children);
  ApiObject.prototype.toJson = toJson;
}

type Variant = Shape | 'validation';

/** The work of building and synthesizing the library's app of `n` workloads (legacy layout). */
function workOf(variant: Variant, n: number): Work {
  Object.assign(work, { nodes: 0, renders: 0, reads: 0 });
  counting = true;
  try {
    const app = buildApp('lib-legacy', n, variant === 'validation' ? 'hpa' : variant);
    if (variant === 'validation') SidecarValidation.addTo(app);
    app.synthYaml();
  } finally {
    counting = false;
  }
  return { ...work };
}

const minus = (a: Work, b: Work): Work => ({ nodes: a.nodes - b.nodes, renders: a.renders - b.renders, reads: a.reads - b.reads });

/** The work one more workload adds at `n`. */
const marginal = (variant: Variant, n: number) => minus(workOf(variant, n + 1), workOf(variant, n));

describe('synthesis: the work one more workload adds is the same at N=20 and N=200', () => {
  const saved = process.env.CDK8S_SIDECARS_KUBERNETES_VERSION;
  beforeAll(() => {
    // the app chooses its target with Sidecars.configure(); the environment variable would win
    delete process.env.CDK8S_SIDECARS_KUBERNETES_VERSION;
    instrument();
  });
  afterAll(() => {
    restore();
    if (saved !== undefined) process.env.CDK8S_SIDECARS_KUBERNETES_VERSION = saved;
  });

  test.each<Variant>(['service', 'hpa', 'validation'])('each workload with a Service (%s)', variant => {
    const small = marginal(variant, 20);
    const large = marginal(variant, 200);
    // the counters count something: a workload visits its own nodes and renders its own objects
    expect(small.nodes).toBeGreaterThan(0);
    expect(small.renders).toBeGreaterThan(0);
    expect(small.reads).toBeGreaterThan(0);
    expect(large).toEqual(small);
  });

  test('the guard fails on a per-workload walk of the app (a quadratic)', () => {
    // one findAll() of the whole app per workload, as a per-workload lookup of the app's Services did
    const quadratic = (n: number) => {
      Object.assign(work, { nodes: 0, renders: 0, reads: 0 });
      counting = true;
      try {
        const app = buildApp('lib-legacy', n, 'service');
        for (const c of app.node.findAll()) if (ApiObject.isApiObject(c) && c.kind === 'Deployment') app.node.findAll();
      } finally {
        counting = false;
      }
      return { ...work };
    };
    const small = minus(quadratic(21), quadratic(20));
    const large = minus(quadratic(201), quadratic(200));
    expect(large.nodes).toBeGreaterThan(small.nodes);
  });
});

describe('checkManifestSet (cdk8s-sidecars check): the fields one more Deployment and Service add', () => {
  /** `n` Deployments with a native sidecar, each with a Service and an HPA, as plain manifests. */
  function manifests(n: number): Array<{ path: string; manifest: any }> {
    const out: Array<{ path: string; manifest: any }> = [];
    for (let i = 0; i < n; i++) {
      const labels = { app: `svc${i}` };
      out.push({
        path: `deployment-${i}.yaml`,
        manifest: {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: `svc${i}`, namespace: 'shop' },
          spec: {
            selector: { matchLabels: labels },
            template: {
              metadata: { labels },
              spec: {
                initContainers: [{
                  name: 'proxy',
                  image: 'envoyproxy/envoy:v1.37.11',
                  restartPolicy: 'Always',
                  ports: [{ name: 'http', containerPort: 10000 }],
                  readinessProbe: { httpGet: { path: '/ready', port: 15021 } },
                  resources: { requests: { cpu: '100m', memory: '64Mi' } },
                }],
                containers: [{ name: 'app', image: `ghcr.io/example/svc-${i}:1.0`, resources: { requests: { cpu: '100m', memory: '64Mi' } } }],
              },
            },
          },
        },
      });
      out.push({
        path: `service-${i}.yaml`,
        manifest: { apiVersion: 'v1', kind: 'Service', metadata: { name: `svc${i}`, namespace: 'shop' }, spec: { selector: labels, ports: [{ port: 80, targetPort: 'http' }] } },
      });
      out.push({
        path: `hpa-${i}.yaml`,
        manifest: {
          apiVersion: 'autoscaling/v2',
          kind: 'HorizontalPodAutoscaler',
          metadata: { name: `svc${i}`, namespace: 'shop' },
          spec: {
            scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: `svc${i}` },
            maxReplicas: 5,
            metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } }],
          },
        },
      });
    }
    return out;
  }

  function readsOf(n: number): number {
    const set = manifests(n).map(o => ({ path: o.path, manifest: counted(o.manifest) }));
    work.reads = 0;
    counting = true;
    try {
      checkManifestSet(set, 29, false);
    } finally {
      counting = false;
    }
    return work.reads;
  }

  test('is the same at N=20 and N=200', () => {
    const small = readsOf(21) - readsOf(20);
    const large = readsOf(201) - readsOf(200);
    expect(small).toBeGreaterThan(0);
    expect(large).toBe(small);
  });
});

describe('cdk8s-sidecars check after reading (checkDocuments): no copies of the manifests', () => {
  type Input = { file: string; docs: Array<{ doc: any; line: number }> };
  /** The benchmark's native app of 201 Deployments and their Services, one object per file as `check` reads them (Deployment i, then its Service). */
  let app201: Input[];
  beforeAll(() => {
    app201 = parseYaml(buildApp('lib-native', 201, 'service').synthYaml()).filter(o => o.kind === 'Deployment' || o.kind === 'Service')
      .map((o, i) => ({ file: `${i}.yaml`, docs: [{ doc: o, line: 1 }] }));
  });
  /** The first `n` Deployments and their Services. */
  const inputs = (n: number) => app201.slice(0, 2 * n);
  const fields = (v: any): number => (v === null || typeof v !== 'object' ? 0 : Object.keys(v).reduce((n, k) => n + 1 + fields(v[k]), 0));
  const target = { version: parseKubernetesVersion('1.29')!, gate: false };

  function readsOf(set: Input[]): number {
    const instrumented = set.map(f => ({ file: f.file, docs: f.docs.map(d => ({ doc: counted(d.doc), line: d.line })) }));
    work.reads = 0;
    counting = true;
    try {
      checkDocuments(instrumented, target);
    } finally {
      counting = false;
    }
    return work.reads;
  }

  test('the fields one more Deployment and Service make it read: the same at N=20 and N=200, under two reads per field', () => {
    expect(app201.map(f => f.docs[0].doc.kind).slice(0, 4)).toEqual(['Deployment', 'Service', 'Deployment', 'Service']);
    const small = readsOf(inputs(21)) - readsOf(inputs(20));
    const large = readsOf(inputs(201)) - readsOf(inputs(200));
    expect(large).toBe(small);
    // issue 36: each check copied the workload it read (five copies of every Deployment, 5.1 reads
    // per field); the checks now read the manifests in place (1.02 reads per field). Issue 48: the
    // JSON types of every container field are checked as the API server decodes them
    // (src/engine/container-shape.ts), one more read of each container field: 1.79 reads per field.
    const added = inputs(21).slice(40).reduce((n, f) => n + fields(f.docs[0].doc), 0);
    expect(added).toBeGreaterThan(300);
    expect(small).toBeLessThanOrEqual(2 * added);
  });
});
