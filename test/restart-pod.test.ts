/**
 * Issue 37 point 4: a native sidecar whose exit restarts the whole pod in place
 * (`restartPodOnExitCodes`, the RestartAllContainers action of KEP-5532, beta 1.36), and what the
 * timeline says about it and about `lifecycle.stopSignal`. Facts read in kubernetes v1.36.0 and
 * v1.37.2 (pkg/features/kube_features.go, validation.go, kuberuntime_manager.go SyncPod).
 */
import { ApiObject, Testing } from 'cdk8s';
import { SidecarTimeline, SidecarWarnings, WithLogAgent, WithSidecar } from '../src';
import { kplusWorkload, manifestOf, newChart, podSpecOf } from './util/fixtures';
import { expectValidManifests } from './util/k8s-schema';
import { CHECK_RULES } from '../src/engine/check-rules';
import { POD_SPEC_SHAPE_RULE, checkPodSpecByRule } from '../src/engine/rules';

function build(version: string, codes?: number[]) {
  const { chart } = newChart();
  const web = kplusWorkload(chart, 'Deployment');
  new WithSidecar(chart, 'proxy', {
    workload: web,
    kubernetesVersion: version,
    containerName: 'auth-proxy',
    image: 'ghcr.io/example/auth-proxy:1.0.0',
    command: ['/proxy'],
    ...(codes ? { restartPodOnExitCodes: codes } : {}),
  });
  return { chart, web };
}

describe('restartPodOnExitCodes', () => {
  test.each(['1.36', '1.37'])('%s: the native sidecar gets a RestartAllContainers rule on those codes; schema-valid; warned', (version) => {
    const { chart, web } = build(version, [1, 2]);
    const manifests = Testing.synth(chart);
    expectValidManifests(manifests, version);
    const proxy = podSpecOf(manifestOf(manifests, 'Deployment')).initContainers.find((c: any) => c.name === 'auth-proxy');
    expect(proxy.restartPolicy).toBe('Always');
    expect(proxy.restartPolicyRules).toEqual([{ action: 'RestartAllContainers', exitCodes: { operator: 'In', values: [1, 2] } }]);
    expect(SidecarWarnings.of(chart)).toEqual(expect.arrayContaining([expect.stringMatching(
      /restartPodOnExitCodes restarts every container of .* in place .* one after another, app containers first, with no preStop hook and SIGTERM with only its 2 s minimum grace period \(no ordered stop of the sidecars after the app\).*loses what it has buffered/)]));
    // the timeline says what the exit does
    const t = SidecarTimeline.of(web);
    expect(t.podRestarts).toEqual([expect.stringMatching(/^'auth-proxy' exiting with a code in \[1, 2\] restarts every container in place: no preStop; SIGTERM with the kubelet's 2 s minimum, one container after another, app containers first \(up to 2s for the 1 running other\)/)]);
    expect(t.toTable()).toMatch(/\npod restart: 'auth-proxy' exiting/);
  });

  test('without it: no rule, no warning, no pod restart in the timeline', () => {
    const { chart, web } = build('1.37');
    const proxy = podSpecOf(manifestOf(Testing.synth(chart), 'Deployment')).initContainers.find((c: any) => c.name === 'auth-proxy');
    expect(proxy.restartPolicyRules).toBeUndefined();
    expect(SidecarTimeline.of(web).podRestarts).toEqual([]);
  });

  test.each(['1.27', '1.35'])('%s: refused, naming the construct, the codes and the fix, before any file is written', (version) => {
    const { chart } = build(version, [1]);
    expect(() => Testing.synth(chart)).toThrow(new RegExp(
      "WithSidecar 'test/proxy': restartPodOnExitCodes \\[1\\] asks the kubelet to restart every container of .* needs a native sidecar on Kubernetes 1\\.36 or later.*" +
      `${version === '1.27' ? 'legacy layout \\(Kubernetes 1\\.27\\)' : 'Kubernetes 1\\.35 refuses restartPolicyRules on a native sidecar'}.*Target 1\\.36\\+, or drop restartPodOnExitCodes`));
  });

  test('the codes of a stop by the kubelet, 0 and non-codes are refused at construction', () => {
    expect(() => build('1.37', [143])).toThrow("WithSidecar 'test/proxy': restartPodOnExitCodes has 143, the code a sidecar exits with when the kubelet stops it (SIGTERM)");
    expect(() => build('1.37', [137])).toThrow('(SIGKILL)');
    expect(() => build('1.37', [0])).toThrow('restartPodOnExitCodes has 0, not an exit code from 1 to 255');
    expect(() => build('1.37', [])).toThrow('restartPodOnExitCodes [] is not a list of 1 to 255 exit codes');
    expect(() => build('1.37', [1.5])).toThrow('not an exit code from 1 to 255');
  });

  test('the other constructs take it too (WithLogAgent), with the warning about the buffer', () => {
    const { chart } = newChart();
    new WithLogAgent(chart, 'logs', { workload: kplusWorkload(chart, 'Deployment'), kubernetesVersion: '1.36', restartPodOnExitCodes: [1] });
    const agent = podSpecOf(manifestOf(Testing.synth(chart), 'Deployment')).initContainers.find((c: any) => c.name === 'log-agent');
    expect(agent.restartPolicyRules).toEqual([{ action: 'RestartAllContainers', exitCodes: { operator: 'In', values: [1] } }]);
  });
});

describe('the timeline and lifecycle.stopSignal', () => {
  test('a stopSignal the target drops (alpha through 1.37) is named in the assumptions', () => {
    const manifest = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p' },
      spec: { os: { name: 'linux' }, containers: [{ name: 'app', image: 'a', lifecycle: { stopSignal: 'SIGUSR1' } }] },
    };
    const t = SidecarTimeline.ofManifest(manifest, { kubernetesVersion: '1.37' });
    expect(t.assumptions).toEqual(expect.arrayContaining([
      "'app': its lifecycle.stopSignal SIGUSR1 is dropped by Kubernetes 1.37 (ContainerStopSignals is alpha and off): it is stopped with SIGTERM (or its image's STOPSIGNAL) as shown",
    ]));
  });
});

describe('restartPolicyRules not of the API\'s shape: a clear error, no TypeError', () => {
  const pod = (rules: unknown, where: 'containers' | 'initContainers' = 'containers') => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p' },
    spec: where === 'containers'
      ? { containers: [{ name: 'app', image: 'a', restartPolicy: 'Never', restartPolicyRules: rules }] }
      : { initContainers: [{ name: 'side', image: 's', restartPolicy: 'Always', restartPolicyRules: rules }], containers: [{ name: 'app', image: 'a' }] },
  });

  test.each([
    ['{}', {}], ["'x'", 'x'], ['values \'ab\'', [{ action: 'Restart', exitCodes: { operator: 'In', values: 'ab' } }]], ['[null]', [null]],
  ])('the timeline of a pod with restartPolicyRules %s reads no pod restart and does not throw', (_name, rules) => {
    for (const where of ['containers', 'initContainers'] as const) {
      expect(SidecarTimeline.ofManifest(pod(rules, where), { kubernetesVersion: '1.37' }).podRestarts).toEqual([]);
    }
  });

  test('the check gives it rule CS014 (pod-spec-malformed)', () => {
    const found = checkPodSpecByRule(pod({}).spec, { minor: 37, gate: false }, "Pod 'p'");
    expect(found).toEqual([{ rule: POD_SPEC_SHAPE_RULE, message: expect.stringMatching(/\('app'\) has restartPolicyRules \{\}, which is not a list of rules/) }]);
    expect(CHECK_RULES.find(r => r.checks.includes(found[0].rule))?.id).toBe('CS014');
  });

  test('a RestartAllContainers rule whose values are not a list: the timeline line shows no codes', () => {
    const t = SidecarTimeline.ofManifest(pod([{ action: 'RestartAllContainers', exitCodes: { operator: 'In', values: 'ab' } }], 'initContainers'), { kubernetesVersion: '1.37' });
    expect(t.podRestarts).toEqual([expect.stringMatching(/^'side' exiting with a code in \[\] restarts every container in place/)]);
  });

  test.each([['{}', {}], ["'x'", 'x'], ['values \'ab\'', [{ action: 'Restart', exitCodes: { operator: 'In', values: 'ab' } }]]])(
    'an ApiObject app container with restartPolicyRules %s: refused at synthesis, naming the workload, the value and the shape', (_name, rules) => {
      const { chart } = newChart();
      const web = new ApiObject(chart, 'web', {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web' },
        spec: {
          selector: { matchLabels: { app: 'web' } },
          template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'ghcr.io/example/app:1.0.0', restartPolicy: 'Always', restartPolicyRules: rules }] } },
        },
      });
      new WithLogAgent(chart, 'logs', { workload: web, kubernetesVersion: '1.37' });
      expect(() => Testing.synth(chart)).toThrow(new RegExp(
        `spec\\.containers\\[0\\] \\('app'\\) has restartPolicyRules ${JSON.stringify(rules).replace(/[[\]{}()]/g, '\\$&')}, which is not a list of rules; give a list like`));
    });
});
