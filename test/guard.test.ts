/**
 * NativeSidecarGuard: the emitted objects per Kubernetes release, and its CEL evaluated on
 * sample pods with a CEL implementation (@bufbuild/cel), including pods a webhook stripped.
 */
import { run } from '@bufbuild/cel';
import { Testing } from 'cdk8s';
import { kplusWorkload, newChart, podMetadataOf, podSpecOf, withEnv } from './util/fixtures';
import { SCHEMA_RELEASES, expectValidManifests, schemaErrors } from './util/k8s-schema';
import { injectIstio } from './util/mesh-injection';
// Imported module by module (not from '../src'), so that other constructs in progress cannot break this suite.
import { GUARD_EXPRESSION, GUARD_MESSAGE_EXPRESSION } from '../src/facts/annotations';
import { NativeSidecarGuard } from '../src/guard';
import { Sidecars } from '../src/settings';
import { WithLogAgent } from '../src/with-log-agent';
import { Mesh, WithMeshProxy } from '../src/with-mesh';

const MARKER = 'sidecars.cdk8s.io/native-sidecars';

type Json = { [key: string]: any };

/** JSON as CEL sees a Kubernetes object: objects as maps (field selection and has() work on both). */
function toCel(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(toCel);
  if (v !== null && typeof v === 'object') return new Map(Object.entries(v).map(([k, x]) => [k, toCel(x)]));
  return v;
}

/** The admission outcome for a pod: undefined when admitted, else the message. */
function admit(candidate: Json, policy: Json): string | undefined {
  const validation = policy.spec.validations[0];
  const ok = run(validation.expression, { object: toCel(candidate) } as any);
  if (ok === true) return undefined;
  if (ok !== false) throw new Error(`the expression returned ${String(ok)}`);
  return run(validation.messageExpression, { object: toCel(candidate) } as any) as string;
}

function guard(version: string, extra: Json = {}) {
  const { chart } = newChart();
  new NativeSidecarGuard(chart, 'guard', { namespaces: ['shop', 'billing'], kubernetesVersion: version, ...extra });
  const manifests = Testing.synth(chart);
  return {
    policy: manifests.find(m => m.kind === 'ValidatingAdmissionPolicy'),
    binding: manifests.find(m => m.kind === 'ValidatingAdmissionPolicyBinding'),
  };
}

function pod(annotations: Json | undefined, initContainers: Json[] | undefined): Json {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'shop', ...(annotations ? { annotations } : {}) },
    spec: { containers: [{ name: 'app', image: 'app:1' }], ...(initContainers ? { initContainers } : {}) },
  };
}

describe('objects per release', () => {
  test('1.30+: admissionregistration.k8s.io/v1, pods on CREATE, Deny, the namespaces by name', () => {
    const { policy, binding } = guard('1.30');
    expect(policy.apiVersion).toBe('admissionregistration.k8s.io/v1');
    expect(binding.apiVersion).toBe('admissionregistration.k8s.io/v1');
    expect(policy.metadata.name).toBe('cdk8s-sidecars-native-sidecars');
    expect(policy.spec.failurePolicy).toBe('Fail');
    expect(policy.spec.matchConstraints.resourceRules).toEqual([{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] }]);
    expect(binding.spec).toEqual({
      matchResources: { namespaceSelector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['billing', 'shop'] }] } },
      policyName: 'cdk8s-sidecars-native-sidecars',
      validationActions: ['Deny'],
    });
    expect(Object.keys(policy)[0]).toBe('apiVersion');
  });

  test('1.28 and 1.29: v1beta1 only with allowBetaApi (beta, off by default)', () => {
    for (const version of ['1.28', '1.29']) {
      expect(() => guard(version)).toThrow(new RegExp(`NativeSidecarGuard 'test/guard': Kubernetes ${version} serves ValidatingAdmissionPolicy only as admissionregistration.k8s.io/v1beta1, which is off by default.*allowBetaApi: true`, 's'));
      const { policy, binding } = guard(version, { allowBetaApi: true });
      expect(policy.apiVersion).toBe('admissionregistration.k8s.io/v1beta1');
      expect(binding.apiVersion).toBe('admissionregistration.k8s.io/v1beta1');
    }
  });

  test('valid, strict, for every release it emits for; the per-release schemas agree on where the API is', () => {
    for (const release of SCHEMA_RELEASES) {
      const minor = Number(release.split('.')[1]);
      if (minor < 28) {
        // Only v1alpha1 exists there: the guard's v1beta1 objects have no schema.
        const { chart } = newChart();
        new NativeSidecarGuard(chart, 'g', { namespaces: ['shop'], kubernetesVersion: '1.30' });
        const objs = Testing.synth(chart).map(m => ({ ...m, apiVersion: 'admissionregistration.k8s.io/v1beta1' }));
        expect(schemaErrors(objs[0], release)).toEqual([expect.stringMatching(/no schema for apiVersion/)]);
        continue;
      }
      const { chart } = newChart();
      new NativeSidecarGuard(chart, 'g', { namespaces: ['shop'], kubernetesVersion: release, allowBetaApi: true });
      expectValidManifests(Testing.synth(chart), release);
    }
  });

  test('before 1.28: a clear error, also with allowBetaApi', () => {
    expect(() => guard('1.27', { allowBetaApi: true })).toThrow(/Kubernetes 1.27 has no ValidatingAdmissionPolicy API that this guard can use/);
  });

  test('the target is read at synthesis (environment, Sidecars.configure)', () => {
    const { app, chart } = newChart();
    new NativeSidecarGuard(chart, 'guard', { namespaces: ['shop'] });
    Sidecars.configure(app, { kubernetesVersion: '1.31' });
    expect(Testing.synth(chart)[0].apiVersion).toBe('admissionregistration.k8s.io/v1');
    withEnv('CDK8S_SIDECARS_KUBERNETES_VERSION', '1.27', () => expect(() => Testing.synth(chart)).toThrow(/Kubernetes 1.27 has no ValidatingAdmissionPolicy/));
  });

  test('bad props', () => {
    const { chart } = newChart();
    expect(() => new NativeSidecarGuard(chart, 'a', { namespaces: [] })).toThrow("NativeSidecarGuard 'test/a': namespaces is empty");
    expect(() => new NativeSidecarGuard(chart, 'b', { namespaces: ['Shop'] })).toThrow(/namespaces entry 'Shop' is not a valid DNS-1123 label/);
    expect(() => new NativeSidecarGuard(chart, 'c', { namespaces: ['shop'], name: 'No_Good' })).toThrow(/name 'No_Good' is not a valid object name/);
    expect(() => new NativeSidecarGuard(chart, 'd', { namespaces: ['shop'], kubernetesVersion: 'latest' })).toThrow(/'latest' is not a Kubernetes version/);
  });
});

describe('the CEL, evaluated on sample pods', () => {
  const { policy } = guard('1.30');
  const sidecar = (name: string, restartPolicy?: string) => ({ name, image: `${name}:1`, ...(restartPolicy ? { restartPolicy } : {}) });

  test('the policy carries the expressions the tests evaluate', () => {
    expect(policy.spec.validations[0].expression).toBe(GUARD_EXPRESSION);
    expect(policy.spec.validations[0].messageExpression).toBe(GUARD_MESSAGE_EXPRESSION);
  });

  test('a correct pod is admitted', () => {
    expect(admit(pod({ [MARKER]: 'log-agent,tracer' }, [sidecar('log-agent', 'Always'), sidecar('tracer', 'Always'), sidecar('migrate')]), policy)).toBeUndefined();
  });

  test('a pod whose sidecar a webhook stripped is rejected, and the message names it', () => {
    const message = admit(pod({ [MARKER]: 'log-agent,tracer' }, [sidecar('log-agent', 'Always'), sidecar('tracer'), sidecar('migrate')]), policy);
    expect(message).toMatch(/^init container 'tracer' was emitted by cdk8s-sidecars as a native sidecar \(annotation sidecars.cdk8s.io\/native-sidecars\) but arrived without restartPolicy: Always/);
  });

  test('pods without the marker, without annotations or without init containers are admitted', () => {
    expect(admit(pod({ other: 'x' }, [sidecar('tracer')]), policy)).toBeUndefined();
    expect(admit(pod(undefined, [sidecar('tracer')]), policy)).toBeUndefined();
    expect(admit(pod({ [MARKER]: 'tracer' }, undefined), policy)).toBeUndefined();
  });

  test('names match whole: an unmarked init container whose name contains a marked one is not judged', () => {
    expect(admit(pod({ [MARKER]: 'log-agent' }, [sidecar('log-agent', 'Always'), sidecar('log')]), policy)).toBeUndefined();
    expect(admit(pod({ [MARKER]: 'log-agent' }, [sidecar('log-agent', 'Always'), sidecar('log-agent-migrate')]), policy)).toBeUndefined();
  });

  test('a marked container that is missing is admitted (e.g. the mesh did not inject its proxy)', () => {
    expect(admit(pod({ [MARKER]: 'istio-proxy,log-agent' }, [sidecar('log-agent', 'Always')]), policy)).toBeUndefined();
  });

  test('end to end: a synthesized workload, injected by Istio, then stripped by an old webhook', () => {
    const { chart } = newChart();
    const workload = kplusWorkload(chart, 'Deployment');
    new WithLogAgent(chart, 'logs', { workload, kubernetesVersion: '1.33' });
    new WithMeshProxy(chart, 'mesh', { workload, mesh: Mesh.ISTIO, kubernetesVersion: '1.33' });
    const d = Testing.synth(chart).find(m => m.kind === 'Deployment');
    const injected = injectIstio(podMetadataOf(d), podSpecOf(d));
    const asPod = { apiVersion: 'v1', kind: 'Pod', metadata: podMetadataOf(d), spec: injected.spec };
    expect(admit(asPod, policy)).toBeUndefined();
    // A webhook built against a pre-1.28 client round-trips the pod and drops the unknown field.
    const stripped = structuredClone(asPod);
    for (const c of stripped.spec.initContainers) delete c.restartPolicy;
    expect(admit(stripped, policy)).toMatch(/^init container 'istio-proxy' was emitted by cdk8s-sidecars as a native sidecar/);
    // The same with only the library's sidecar stripped.
    const ours = structuredClone(asPod);
    delete ours.spec.initContainers.find((c: Json) => c.name === 'log-agent').restartPolicy;
    expect(admit(ours, policy)).toMatch(/^init container 'log-agent'/);
  });
});

describe('Sidecars.targetOf: the resolved target, before creating a construct that depends on it (issue 27 point 7)', () => {
  test('the environment, then Sidecars.configure() on the scope or an enclosing one, then 1.27; a guard created only where the API exists', () => {
    for (const [env, configured, expected] of [
      [undefined, undefined, { kubernetesVersion: '1.27', minor: 27, patch: undefined, sidecarContainersGate: false, mode: 'AUTO', layout: 'LEGACY', source: 'default' }],
      [undefined, '1.29.3', { kubernetesVersion: '1.29.3', minor: 29, patch: 3, sidecarContainersGate: false, mode: 'AUTO', layout: 'NATIVE', source: 'configure' }],
      ['1.30', '1.27', { kubernetesVersion: '1.30', minor: 30, patch: undefined, sidecarContainersGate: false, mode: 'AUTO', layout: 'NATIVE', source: 'env' }],
    ] as const) {
      withEnv('CDK8S_SIDECARS_KUBERNETES_VERSION', env, () => {
        const { app, chart } = newChart();
        if (configured) Sidecars.configure(app, { kubernetesVersion: configured });
        // asked on the chart: the App's configure() counts (an enclosing scope)
        expect(Sidecars.targetOf(chart)).toEqual(expected);
        // the docs' one-code-base pattern (docs/meshes.md): the guard only where v1 of the policy API exists
        if (Sidecars.targetOf(chart).minor >= 30) new NativeSidecarGuard(chart, 'guard', { namespaces: ['shop'] });
        expect(() => Testing.synth(chart)).not.toThrow();
        expect(Testing.synth(chart).length).toBe(expected.minor >= 30 ? 2 : 0);
      });
    }
  });

  test('1.28 with the gate from Sidecars.configure(); an invalid environment variable is the constructs\' error', () => {
    const { app, chart } = newChart();
    Sidecars.configure(app, { kubernetesVersion: '1.28', sidecarContainersGate: true });
    expect(Sidecars.targetOf(chart)).toMatchObject({ minor: 28, sidecarContainersGate: true, layout: 'NATIVE' });
    withEnv('CDK8S_SIDECARS_KUBERNETES_VERSION', '1.3', () => {
      expect(() => Sidecars.targetOf(chart)).toThrow(/kubernetesVersion '1.3' is older than 1.27/);
    });
  });
});
