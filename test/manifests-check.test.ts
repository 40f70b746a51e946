/**
 * src/engine/manifests-check.ts checkManifestSet: the one check of a set of plain manifests behind both
 * SidecarValidation.addTo and `cdk8s-sidecars check` (test/cli.test.ts runs the command).
 * Expected values from outside the code: below 1.32 the endpoints controllers' podutil.FindPort
 * read spec.containers only (kubernetes#127958, fixed in 1.32.0 by kubernetes#127976,
 * CHANGELOG-1.32.md); the HPA controller's calculatePodRequests (replica_calculator.go) fails a
 * Utilization metric on a counted container without a request; the Job controller's matching is
 * the simulation of test/util/job-pod-failure-policy.ts.
 */
import { ApiObject, App, Chart } from 'cdk8s';
import { SidecarValidation, SidecarWarnings } from '../src';
import { hpaManifest } from './util/fixtures';
import { hostileCorpus } from './util/hostile-corpus';
import { matchPodFailurePolicy } from './util/job-pod-failure-policy';
import { decodeInput, readYaml, toPlain } from '../src/cli/reader';
import { checkDocuments } from '../src/engine/check-objects';
import { checkManifestSet } from '../src/engine/manifests-check';
import { parseKubernetesVersion } from '../src/target/capabilities';

const deployment = (ns = 'shop') => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: ns },
  spec: {
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: {
        initContainers: [{ name: 'envoy', image: 'e:1', restartPolicy: 'Always', ports: [{ name: 'envoy-http', containerPort: 10000 }], resources: { requests: { cpu: '10m' } } }],
        containers: [{ name: 'web', image: 'w:1' }],
      },
    },
  },
});
const service = (type = 'ClusterIP') => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'web', namespace: 'shop' },
  spec: { type, selector: { app: 'web' }, ports: [{ port: 80, targetPort: 'envoy-http' }] },
});
const hpa = hpaManifest({ averageUtilization: 60 });
const job = (values: number[]) => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name: 'batch' },
  spec: {
    podFailurePolicy: { rules: [{ action: 'FailJob', onExitCodes: { operator: 'In', values } }] },
    template: {
      spec: {
        restartPolicy: 'Never',
        initContainers: [{ name: 'mesh', image: 'm:1', restartPolicy: 'Always' }],
        containers: [{ name: 'app', image: 'a:1' }],
      },
    },
  },
});
const set = (manifests: any[], minor: number) =>
  checkManifestSet(manifests.map((manifest, i) => ({ path: `obj${i}`, manifest })), minor, false).map(f => [f.index, f.level, f.source]);

describe('checkManifestSet', () => {
  test('a Service whose named targetPort only a native sidecar declares: an error at 1.31 on the Service, none at 1.32 (ClusterIP)', () => {
    expect(set([deployment(), service()], 31)).toEqual([[1, 'error', 'service']]);
    expect(set([deployment(), service()], 32)).toEqual([]);
    expect(set([deployment(), service('LoadBalancer')], 32)).toEqual([[1, 'warning', 'service']]);
    // another namespace: not its pods
    expect(set([deployment('other'), service()], 31)).toEqual([]);
    // inside a kind: List, the finding is on the List
    expect(set([{ apiVersion: 'v1', kind: 'List', items: [deployment(), service()] }], 31)).toEqual([[0, 'error', 'service']]);
  });

  test('an HPA on CPU utilization and an app container without a CPU request: a warning on the HPA', () => {
    expect(set([deployment(), hpa], 32)).toEqual([[1, 'warning', 'autoscaler']]);
  });

  test("a Job rule without containerName: an error when it matches the sidecar's 137, a warning otherwise", () => {
    const takes = (values: number[]) => matchPodFailurePolicy(job(values).spec.podFailurePolicy, {
      containerStatuses: [{ name: 'app', exitCode: 1 }], initContainerStatuses: [{ name: 'mesh', exitCode: 137 }],
    })?.container;
    expect(takes([137])).toBe('mesh');
    expect(set([job([137])], 30)).toEqual([[0, 'error', 'object']]);
    expect(takes([3])).toBeUndefined();
    expect(set([job([3])], 30)).toEqual([[0, 'warning', 'object']]);
  });
});

describe('SidecarValidation.addTo runs the same check', () => {
  const app = (manifests: any[]) => {
    const a = new App();
    const chart = new Chart(a, 'c');
    manifests.forEach((m, i) => new ApiObject(chart, `o${i}`, m));
    return a;
  };

  test("the Service error at 1.31 is checkManifestSet's message under the Service's path; at 1.32 the LoadBalancer warning is on SidecarWarnings", () => {
    const expected = checkManifestSet([{ path: 'c/o0', manifest: deployment() }, { path: 'c/o1', manifest: service() }], 31, false)[0].message;
    const a = app([deployment(), service()]);
    SidecarValidation.addTo(a, { kubernetesVersion: '1.31' });
    expect(() => a.synth()).toThrow(`SidecarValidation.addTo(app), Kubernetes 1.31: c/o1: ${expected}`);
    const lb = app([deployment(), service('LoadBalancer')]);
    SidecarValidation.addTo(lb, { kubernetesVersion: '1.32' });
    lb.synth();
    expect(SidecarWarnings.of(lb)).toEqual([expect.stringMatching(/^c\/o1: Service 'web' .*kubernetes#134651/)]);
  });
});

describe('the checks read the manifests in place and change none (issue 36: no copies)', () => {
  const deepFreeze = (v: any): any => {
    if (v !== null && typeof v === 'object' && !Object.isFrozen(v)) {
      Object.freeze(v);
      for (const k of Object.keys(v)) deepFreeze(v[k]);
    }
    return v;
  };
  const vpa = { apiVersion: 'autoscaling.k8s.io/v1', kind: 'VerticalPodAutoscaler', metadata: { name: 'v', namespace: 'shop' }, spec: { targetRef: { kind: 'Deployment', name: 'web' } } };
  const selfStopping = {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'db' },
    spec: {
      volumeClaimTemplates: [{ metadata: { name: 'data' } }],
      template: {
        spec: {
          initContainers: [{
            name: 'proxy',
            image: 'envoyproxy/envoy:v1.37.11',
            restartPolicy: 'Always',
            readinessProbe: { tcpSocket: { port: 9 } },
            lifecycle: { preStop: { exec: { command: ['sh', '-c', 'kill -TERM 1'] } } },
          }],
          containers: [{ name: 'db', image: 'db:1' }],
        },
      },
    },
  };
  const cronJob = { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'c' }, spec: { jobTemplate: { spec: job([137]).spec } } };
  const noTemplate = [{ kind: 'Deployment', metadata: { name: 'bare' } }, { kind: 'Job', spec: { template: null } }, { kind: 'CronJob', spec: { jobTemplate: 5 } }, { kind: 'Pod', metadata: null }];
  // the hostile corpus's type confusions: every node of a workload of the wrong type, and whole kinds of the wrong shape
  const confusions = hostileCorpus().filter(f => f.name.startsWith('type ') || f.name.startsWith('shape '))
    .flatMap(f => readYaml(decodeInput(f.bytes, f.name), f.name).map(d => toPlain(d.value)));

  test.each([29, 27, 33])('checkDocuments over frozen manifests finds what it finds over copies (1.%d)', minor => {
    const manifests = [deployment(), service(), service('LoadBalancer'), hpa, vpa, job([137]), job([3]), cronJob, selfStopping, ...noTemplate, ...confusions,
      { apiVersion: 'v1', kind: 'List', items: [deployment('other'), service(), selfStopping, 5, null] }];
    expect(confusions.length).toBeGreaterThan(100);
    const inputs = (copy: (v: any) => any) => manifests.map((m, i) => ({ file: `${i}.yaml`, docs: [{ doc: copy(structuredClone(m)), line: 1 }] }));
    const target = { version: parseKubernetesVersion(`1.${minor}.0`)!, gate: false };
    const plain = checkDocuments(inputs(v => v), target);
    expect(plain.findings.length).toBeGreaterThan(50);
    expect(checkDocuments(inputs(deepFreeze), target)).toEqual(plain);
  });
});
