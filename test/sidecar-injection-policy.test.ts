/**
 * SidecarInjectionPolicy: the objects per release, and the policy's CEL run offline (with
 * @bufbuild/cel and the Kubernetes parts of test/util/k8s-cel.ts) on the pods of plain
 * Deployments, Jobs and StatefulSets, compared field by field with what the library writes at
 * synthesis for the same workloads; idempotence; and NativeSidecarGuard's CEL on the result.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { JsonPatch, Testing } from 'cdk8s';
import * as YAML from 'yaml';
import { newChart } from './util/fixtures';
import { AGENTS, APP, POD_SPECS, podOf, policyFor, synthesized, workload, normalized } from './util/injection-cases';
import { admitWithPolicy, evaluate, rewrite } from './util/k8s-cel';
import { restrictedViolations, volumeViolations } from './util/pss';
import { helpText, main } from '../src/cli/main';
import { GUARD_EXPRESSION } from '../src/facts/annotations';
import { KNOWN_ADMISSION_POLICY_BUGS, findKnownBugs } from '../src/facts/known-bugs';
import { InjectionFailurePolicy, SidecarInjectionPolicy } from '../src/sidecar-injection-policy';
import { WithLogAgent } from '../src/with-log-agent';

type Json = any;

describe('the policy reproduces synthesis', () => {
  for (const version of ['1.36', '1.37']) {
    for (const [agents, attach] of Object.entries(AGENTS)) {
      const { policy } = policyFor(attach, version);
      for (const kind of ['Deployment', 'Job', 'StatefulSet']) {
        for (const [shape, podSpec] of Object.entries(POD_SPECS)) {
          test(`${version} ${agents}: ${kind}, ${shape}`, () => {
            const plain = Testing.synth((() => { const { chart } = newChart(); workload(chart, kind, podSpec); return chart; })())[0].spec.template;
            const admitted = admitWithPolicy(policy.spec, podOf(kind, plain));
            expect(admitted.skippedBy).toBeUndefined();
            let template: Json;
            try {
              template = synthesized(kind, podSpec, attach, version);
            } catch (e) {
              // the one documented difference of behaviour: appShutdownTime given and a grace period below the
              // sidecars' need is an error at synthesis; a policy cannot refuse, it raises the grace period to the need
              const need = /terminationGracePeriodSeconds is \d+, but its sidecars need (\d+)/.exec((e as Error).message);
              expect(need).not.toBeNull();
              expect(admitted.pod.spec.terminationGracePeriodSeconds).toBe(Number(need![1]));
              template = synthesized(kind, { ...podSpec, terminationGracePeriodSeconds: Number(need![1]) }, attach, version);
            }
            const expected = podOf(kind, template);
            expect(normalized(admitted.pod)).toEqual(normalized(expected));
            // the rules, stated: native sidecars first, before the pod's own init containers
            const names = admitted.pod.spec.initContainers.map((c: Json) => c.name);
            const own = (podSpec.initContainers ?? []).map((c: Json) => c.name);
            expect(names.slice(names.length - own.length)).toEqual(own);
            for (const c of admitted.pod.spec.initContainers.slice(0, names.length - own.length)) {
              if (c.name !== 'sidecar-tools') {
                expect(c.restartPolicy).toBe('Always');
                expect(c.startupProbe).toBeDefined();
              }
            }
            // idempotent: a second run (reinvocation, a second policy) changes nothing
            const again = admitWithPolicy(policy.spec, admitted.pod);
            expect(again.skippedBy).toBe('not-injected-yet');
            expect(again.pod).toEqual(admitted.pod);
            // the guard admits it, and so does the restricted Pod Security profile (the sidecars' part of the pod)
            expect(evaluate(GUARD_EXPRESSION, { object: admitted.pod })).toBe(true);
            const ours = new Set(names.slice(0, names.length - own.length));
            expect(admitted.pod.spec.initContainers.filter((c: Json) => ours.has(c.name)).flatMap((c: Json) => restrictedViolations(c))).toEqual([]);
            expect(admitted.pod.spec.volumes.flatMap((v: Json) => volumeViolations(v))).toEqual([]);
          });
        }
      }
    }
  }

  test('a pod the library synthesized is not injected again', () => {
    const { policy } = policyFor(AGENTS['log agent'], '1.36');
    const pod = podOf('Deployment', synthesized('Deployment', POD_SPECS['one container'], AGENTS['log agent'], '1.36'));
    const out = admitWithPolicy(policy.spec, pod);
    expect(out.skippedBy).toBe('not-injected-yet');
    expect(out.pod).toEqual(pod);
  });

  test('a pod the library would refuse is left alone, with the condition that says why', () => {
    const { policy } = policyFor(AGENTS['log agent + tracer + envoy'], '1.36');
    const skipped = (spec: Json) => admitWithPolicy(policy.spec, podOf('Deployment', { metadata: {}, spec })).skippedBy;
    expect(skipped({ containers: [{ ...APP, ports: [{ containerPort: 2020 }] }] })).toBe('ports-free');
    expect(skipped({ containers: [{ ...APP, name: 'log-agent' }] })).toBe('names-free');
    expect(skipped({ containers: [APP], volumes: [{ name: 'log-agent-logs', emptyDir: {} }] })).toBe('names-free');
    expect(skipped({ containers: [APP], hostNetwork: true })).toBe('linux-pod-network');
    expect(skipped({ containers: [APP], os: { name: 'windows' } })).toBe('linux-pod-network');
    expect(skipped({ containers: [APP], initContainers: [{ name: 'mine', image: 'x', restartPolicy: 'Always' }] })).toBe('no-own-native-sidecars');
    // and the library refuses the same pods at synthesis
    expect(() => synthesized('Deployment', { containers: [{ ...APP, ports: [{ containerPort: 2020 }] }] }, AGENTS['log agent'], '1.36')).toThrow(/port 2020/);
  });

  test('the grace period comes from the pod\'s own hooks and grace period, as the engine computes it', () => {
    const { policy } = policyFor(AGENTS['log agent'], '1.36');
    const grace = (spec: Json) => admitWithPolicy(policy.spec, podOf('Deployment', { metadata: {}, spec })).pod.spec.terminationGracePeriodSeconds;
    const plain = grace({ containers: [APP] });
    const withHook = grace({ containers: [{ ...APP, lifecycle: { preStop: { sleep: { seconds: 25 } } } }] });
    // a readable hook of 25 s adds 25 s to the app's end
    expect(withHook - plain).toBe(25);
    // an explicit grace above the need is kept
    expect(grace({ containers: [APP], terminationGracePeriodSeconds: 300 })).toBe(300);
  });
});

describe('names and objects', () => {
  test('every Object.* initializer is named after its field path (CheckTypeNamesMatchFieldPathNames)', () => {
    const { policy } = policyFor(AGENTS['log agent + tracer + envoy'], '1.36');
    const types = rewrite(policy.spec.mutations[0].jsonPatch.expression).objectTypes;
    // no Object type outside the mutation's expression, where the API server does not declare them
    for (const v of policy.spec.variables) expect(() => rewrite(v.expression, false)).not.toThrow();
    for (const c of policy.spec.matchConditions) expect(() => rewrite(c.expression, false)).not.toThrow();
    expect(() => rewrite('[Object.spec.volumes{name: "x"}]', false)).toThrow(/undeclared reference to 'Object.spec.volumes'/);
    expect(types).toContain('Object.spec.initContainers.startupProbe.httpGet');
    expect(types).toContain('Object.spec.containers.env');
    // a wrong name is caught by the offline evaluator, as by the API server
    expect(() => rewrite('Object.spec.initContainers{startupProbe: Object.spec.initContainers.livenessProbe{}}')).toThrow(/type mismatch/);
  });

  test('1.36+: v1 policy and binding, the agents\' ConfigMaps in each namespace, fail closed by default', () => {
    const { manifests, policy, binding } = policyFor(AGENTS['log agent'], '1.36');
    expect(policy.apiVersion).toBe('admissionregistration.k8s.io/v1');
    expect(binding.apiVersion).toBe('admissionregistration.k8s.io/v1');
    expect(policy.spec.failurePolicy).toBe('Fail');
    expect(policy.spec.reinvocationPolicy).toBe('IfNeeded');
    expect(policy.spec.mutations[0].patchType).toBe('JSONPatch');
    expect(binding.spec.matchResources.namespaceSelector.matchExpressions[0].values).toEqual(['billing', 'shop']);
    const cms = manifests.filter(m => m.kind === 'ConfigMap');
    expect(cms.map(c => c.metadata.namespace).sort()).toEqual(['billing', 'shop']);
    expect(cms[0].data).toEqual(cms[1].data);
    // the pod mounts that very name
    const admitted = admitWithPolicy(policy.spec, podOf('Deployment', { metadata: {}, spec: { containers: [APP] } })).pod;
    expect(admitted.spec.volumes.some((v: Json) => v.configMap?.name === cms[0].metadata.name)).toBe(true);
    expect(manifests.map(m => m.kind).filter(k => k === 'Pod')).toEqual([]);
    expect(manifests).toMatchSnapshot();
  });

  test('the known bugs of MutatingAdmissionPolicy: none hits the library\'s policy; each hits the policy it describes', () => {
    const { policy } = policyFor(AGENTS['log agent + tracer + envoy'], '1.36');
    const v = { major: 1, minor: 36, patch: 3 } as any;
    expect(findKnownBugs('p', policy.spec, v, KNOWN_ADMISSION_POLICY_BUGS)).toEqual([]);
    const twoMutations = { ...policy.spec, mutations: [...policy.spec.mutations, ...policy.spec.mutations] };
    expect(findKnownBugs('p', twoMutations, v, KNOWN_ADMISSION_POLICY_BUGS).map(f => f.issue)).toEqual(['kubernetes#129309']);
    const unguarded = { mutations: [{ jsonPatch: { expression: 'dyn(c.env) + [Object.spec.containers.env{name: "A"}]' } }] };
    expect(findKnownBugs('p', unguarded, v, KNOWN_ADMISSION_POLICY_BUGS).map(f => f.issue)).toEqual(['kubernetes#140293']);
    expect(findKnownBugs('p', unguarded, { major: 1, minor: 37, patch: 0 } as any, KNOWN_ADMISSION_POLICY_BUGS)).toEqual([]);
    expect(findKnownBugs('p', { paramKind: { kind: 'ConfigMap' } }, v, KNOWN_ADMISSION_POLICY_BUGS).map(f => f.issue)).toEqual(['kubernetes#140201']);
  });

  test('the user\'s JSON patches apply to the policy\'s objects', () => {
    const { chart } = newChart();
    const p = new SidecarInjectionPolicy(chart, 'inject', { namespaces: ['shop'], kubernetesVersion: '1.36' });
    new WithLogAgent(p.pod, 'logs', { workload: p.pod });
    p.policy.addJsonPatch(JsonPatch.add('/spec/reinvocationPolicy', 'Never'));
    expect(Testing.synth(chart).find(m => m.kind === 'MutatingAdmissionPolicy').spec.reinvocationPolicy).toBe('Never');
  });

  test('failurePolicy Ignore, pod labels', () => {
    const { policy, binding } = policyFor(AGENTS['log agent'], '1.36', { failurePolicy: InjectionFailurePolicy.IGNORE, podLabels: { sidecars: 'yes' } });
    expect(policy.spec.failurePolicy).toBe('Ignore');
    expect(binding.spec.matchResources.objectSelector).toEqual({ matchLabels: { sidecars: 'yes' } });
  });

  test('1.34 and 1.35: v1beta1 only with allowBetaApi; below: refused with why', () => {
    for (const version of ['1.34', '1.35']) {
      expect(() => policyFor(AGENTS['log agent'], version)).toThrow(new RegExp(`SidecarInjectionPolicy 'test/inject': Kubernetes ${version} serves MutatingAdmissionPolicy only as admissionregistration.k8s.io/v1beta1, which is off by default.*allowBetaApi: true`, 's'));
      expect(policyFor(AGENTS['log agent'], version, { allowBetaApi: true }).policy.apiVersion).toBe('admissionregistration.k8s.io/v1beta1');
    }
    expect(() => policyFor(AGENTS['log agent'], '1.33', { allowBetaApi: true })).toThrow(/Kubernetes 1.33 has no MutatingAdmissionPolicy API this policy can use \(alpha v1alpha1 in 1.32-1.33/);
  });

  test('bad input: no sidecar, no namespace, a condition without a name', () => {
    const { chart } = newChart();
    new SidecarInjectionPolicy(chart, 'inject', { namespaces: ['shop'], kubernetesVersion: '1.36' });
    expect(() => Testing.synth(chart)).toThrow(/SidecarInjectionPolicy 'test\/inject': no sidecar construct is attached to its pod/);
    expect(() => new SidecarInjectionPolicy(newChart().chart, 'inject', { namespaces: [], kubernetesVersion: '1.36' })).toThrow(/namespaces is empty/);
    expect(() => new SidecarInjectionPolicy(newChart().chart, 'inject', { namespaces: ['shop'], kubernetesVersion: '1.36', matchConditions: [{ expression: 'true' } as any] }))
      .toThrow(/matchConditions has .*not a \{ name, expression \}/);
  });
});

describe('cdk8s-sidecars policy', () => {
  const run = (args: string[]) => {
    let stdout = '';
    let stderr = '';
    const spies = [
      jest.spyOn(process.stdout, 'write').mockImplementation((c: any) => { stdout += String(c); return true; }),
      jest.spyOn(process.stderr, 'write').mockImplementation((c: any) => { stderr += String(c); return true; }),
    ];
    try {
      return { status: main(args), stdout, stderr };
    } finally {
      for (const s of spies) s.mockRestore();
    }
  };
  let dir: string;
  beforeAll(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cdk8s-sidecars-policy-')); });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const config = (text: string) => {
    const file = path.join(dir, `c${Math.random().toString(36).slice(2)}.yaml`);
    fs.writeFileSync(file, text);
    return file;
  };

  test('writes the policy of a render config entry: the same CEL as the construct with the same props', () => {
    const file = config([
      "kubernetesVersion: '1.36'",
      'workloads:',
      '  - select: { kind: Deployment }',
      '    logAgent: { output: { loki: { host: loki.monitoring.svc } } }',
      'admission:',
      '  namespaces: [shop, billing]',
      '',
    ].join('\n'));
    const r = run(['policy', '--config', file]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const docs = readManifests(r.stdout);
    expect(docs.map((d: Json) => d.kind)).toEqual(['MutatingAdmissionPolicy', 'MutatingAdmissionPolicyBinding', 'ConfigMap', 'ConfigMap']);
    const { policy } = policyFor(AGENTS['log agent'], '1.36');
    // the same CEL but for the ConfigMaps' names (after the constructs' paths)
    const cel = (p: Json) => JSON.stringify([p.spec.matchConditions, p.spec.variables, p.spec.mutations]).replace(/name: \\"[a-z0-9-]*-config-c[0-9a-f]{7}\\"/g, '<cm>');
    expect(cel(docs[0])).toEqual(cel(policy));
    expect(cel(docs[0])).toContain('<cm>');
  });

  test('a bad admission key names it; --help is docs/cli.md\'s', () => {
    const file = config("kubernetesVersion: '1.36'\nworkloads:\n  - select: { kind: Deployment }\n    logAgent: {}\nadmission: { namespaces: [shop], failurePolicy: Sometimes }\n");
    const r = run(['policy', '--config', file]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/admission.failurePolicy: expected one of Fail, Ignore/);
    const old = config("kubernetesVersion: '1.33'\nworkloads:\n  - select: { kind: Deployment }\n    logAgent: {}\nadmission: { namespaces: [shop] }\n");
    const r2 = run(['policy', '--config', old]);
    expect(r2.status).not.toBe(0);
    expect(r2.stderr).toMatch(/Kubernetes 1.33 has no MutatingAdmissionPolicy API/);
    const docs = fs.readFileSync(path.join(__dirname, '..', 'docs', 'cli.md'), 'utf8');
    expect(docs).toContain(`## policy\n\n\`\`\`text\n${helpText('policy')}\`\`\`\n`);
  });
});

function readManifests(text: string): Json[] {
  return text.split(/^---$/m).map(d => d.trim()).filter(d => d !== '').map(d => YAML.parse(d));
}
