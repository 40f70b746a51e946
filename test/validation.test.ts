import { ApiObject, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { SidecarValidation, Sidecars, WithLogAgent } from '../src';
import { kplusWorkload, newChart, withEnv } from './util/fixtures';

const ENV = 'CDK8S_SIDECARS_KUBERNETES_VERSION';

function podWithNativeInit(chart: any, id: string) {
  return new ApiObject(chart, id, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: id },
    spec: {
      initContainers: [{ name: 'own-sidecar', image: 'x:1', restartPolicy: 'Always' }],
      containers: [{ name: 'app', image: 'a:1' }],
    },
  });
}

describe('SidecarValidation.addTo: the same release-aware checks over the whole app', () => {
  test('flags a user\'s own native sidecar on a 1.27 target, naming the object path', () => withEnv(ENV, undefined, () => {
    const { app, chart } = newChart();
    podWithNativeInit(chart, 'pod');
    SidecarValidation.addTo(app, { kubernetesVersion: '1.27' });
    // (issue 27 point 8: not a bare `[]`, the App's empty path, in front of it)
    expect(() => Testing.synth(chart)).toThrow(
      "\n  [SidecarValidation] SidecarValidation.addTo(app), Kubernetes 1.27: test/pod: Pod 'pod': init container 'own-sidecar' has restartPolicy 'Always' (a native sidecar), which Kubernetes 1.27 does not know",
    );
    expect(() => Testing.synth(chart)).not.toThrow(/\[\] /);
  }));

  test('the same app passes for 1.29; the target comes from Sidecars.configure or the env', () => {
    withEnv(ENV, undefined, () => {
      const { app, chart } = newChart();
      podWithNativeInit(chart, 'pod');
      SidecarValidation.addTo(app);
      Sidecars.configure(app, { kubernetesVersion: '1.29' });
      expect(() => Testing.synth(chart)).not.toThrow();
    });
    withEnv(ENV, '1.27', () => {
      const { app, chart } = newChart();
      podWithNativeInit(chart, 'pod');
      SidecarValidation.addTo(app);
      Sidecars.configure(app, { kubernetesVersion: '1.29' });
      expect(() => Testing.synth(chart)).toThrow(/Kubernetes 1\.27 does not know/);
    });
  });

  test('sees workloads after the sidecars are in, and cdk8s-plus workloads too', () => withEnv(ENV, undefined, () => {
    const { app, chart } = newChart();
    const web = kplusWorkload(chart, 'Deployment');
    new WithLogAgent(chart, 'logs', { workload: web });
    const other = new kplus.Deployment(chart, 'other', { containers: [{ image: 'x', portNumber: 80 }] });
    other.addInitContainer({ name: 'a', image: 'a' });
    other.addInitContainer({ name: 'a2', image: 'a' });
    SidecarValidation.addTo(app, { kubernetesVersion: '1.31' });
    expect(() => Testing.synth(chart)).not.toThrow();
  }));

  test('catches a construct pinned to a release the pipeline\'s cluster does not have; the fix names the overriding props', () => withEnv(ENV, '1.27', () => {
    const { app, chart } = newChart();
    new WithLogAgent(chart, 'logs', { workload: kplusWorkload(chart, 'Deployment'), kubernetesVersion: '1.29', overrideAppTarget: true });
    SidecarValidation.addTo(app);
    expect(() => Testing.synth(chart)).toThrow(/init container 'log-agent' has restartPolicy 'Always' \(a native sidecar\), which Kubernetes 1\.27 does not know/);
    expect(() => Testing.synth(chart)).toThrow(
      "The sidecars of this workload were pinned by WithLogAgent 'test/logs' (kubernetesVersion: \"1.29\", overrideAppTarget: true, Kubernetes 1.29): " +
      'remove those props (kubernetesVersion, and overrideAppTarget where it lets a construct override the app\'s target)',
    );
    // without the opt-in the construct itself refuses to disagree (test/target.test.ts)
    expect(() => new WithLogAgent(chart, 'logs2', { workload: kplusWorkload(chart, 'Deployment', 'other'), kubernetesVersion: '1.29' })).toThrow(/differs from the app's target/);
  }));

  test('its own kubernetesVersion is the release it checks against: it may differ from the app\'s (it emits nothing)', () => withEnv(ENV, '1.30', () => {
    const { app, chart } = newChart();
    kplusWorkload(chart, 'Deployment');
    SidecarValidation.addTo(app, { kubernetesVersion: '1.28' });
    expect(() => Testing.synth(chart)).not.toThrow();
  }));

  test('a bad version is an error at once', () => {
    const { app } = newChart();
    expect(() => SidecarValidation.addTo(app, { kubernetesVersion: 'one.two' })).toThrow(
      "SidecarValidation.addTo(app): kubernetesVersion 'one.two' is not a Kubernetes version.",
    );
  });
});

describe('SidecarValidation.checkManifest: plain JSON, e.g. from a YAML file', () => {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p' },
    spec: { initContainers: [{ name: 's', image: 'x', restartPolicy: 'Always', readinessProbe: { exec: { command: ['true'] } } }], containers: [{ name: 'app', image: 'a' }] },
  };
  test('release-aware', () => {
    expect(SidecarValidation.checkManifest(pod, '1.29')).toEqual([]);
    expect(SidecarValidation.checkManifest(pod, '1.28', true)).toEqual([]);
    expect(SidecarValidation.checkManifest(pod, '1.28')).toEqual([
      "Pod 'p': init container 's' has restartPolicy 'Always' (a native sidecar), which Kubernetes 1.28 drops without the SidecarContainers feature gate: " +
      'without the field, readinessProbe is forbidden on an init container, so the API server rejects the Pod ("may not be set for init containers ' +
      'without restartPolicy=Always"). ' +
      "Either move 's' to spec.containers (it then runs beside the app, but neither starts before nor stops after it), turn the SidecarContainers gate on " +
      'in the API server and every kubelet and say so (`sidecarContainersGate: true`), or target Kubernetes 1.29 or later if every node runs it.',
    ]);
  });
  test('objects without a pod template pass; the input is not changed', () => {
    expect(SidecarValidation.checkManifest({ kind: 'Service' }, '1.27')).toEqual([]);
    const copy = JSON.parse(JSON.stringify(pod));
    SidecarValidation.checkManifest(pod, '1.27');
    expect(pod).toEqual(copy);
  });
  test('a bad version', () => {
    expect(() => SidecarValidation.checkManifest(pod, 'x')).toThrow("SidecarValidation.checkManifest: kubernetesVersion 'x' is not a Kubernetes version.");
  });
});
