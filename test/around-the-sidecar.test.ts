/**
 * Kubernetes around the sidecar (issue 28): a Job's podFailurePolicy and native sidecars.
 *
 * The oracle is test/util/job-pod-failure-policy.ts, the Job controller's matching transcribed
 * from kubernetes/kubernetes pkg/controller/job/pod_failure_policy.go: a rule "matches the
 * teardown" when, for a failed pod whose native sidecar exited with 143 (SIGTERM) or 137 (SIGKILL),
 * the controller picks that rule for the sidecar's status.
 */
import { ApiObject, Testing } from 'cdk8s';
import { SidecarCheck, SidecarMode, SidecarValidation, SidecarWarnings, WithLogAgent, WithSidecar } from '../src';
import { newChart, withEnv } from './util/fixtures';
import { matchPodFailurePolicy } from './util/job-pod-failure-policy';
import { checkJobPodFailurePolicy } from '../src/engine/rules';

const ENV = 'CDK8S_SIDECARS_KUBERNETES_VERSION';

const jobManifest = (rules: any[], initContainers: any[] = [{ name: 'mesh', image: 'ghcr.io/example/mesh:1', restartPolicy: 'Always' }]) => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name: 'batch' },
  spec: {
    backoffLimit: 3,
    podFailurePolicy: { rules },
    template: {
      spec: {
        restartPolicy: 'Never',
        initContainers,
        containers: [{ name: 'app', image: 'ghcr.io/example/app:1' }],
      },
    },
  },
});

/** Whether the Job controller takes the rule for a failed pod whose only non-zero exit is the sidecar's `code`. */
const takesSidecarCode = (rule: any, code: number) => matchPodFailurePolicy({ rules: [rule] }, {
  containerStatuses: [{ name: 'app', exitCode: 0 }],
  initContainerStatuses: [{ name: 'mesh', exitCode: code }],
}) !== undefined;

describe('podFailurePolicy onExitCodes without containerName on a pod with native sidecars', () => {
  const cases: Array<[string, any]> = [
    ['In [143] FailJob', { action: 'FailJob', onExitCodes: { operator: 'In', values: [143] } }],
    ['In [137] Ignore', { action: 'Ignore', onExitCodes: { operator: 'In', values: [137] } }],
    ['NotIn [1] FailJob', { action: 'FailJob', onExitCodes: { operator: 'NotIn', values: [1] } }],
    ['NotIn [137, 143] Count', { action: 'Count', onExitCodes: { operator: 'NotIn', values: [137, 143] } }],
    ['In [1, 2] FailJob', { action: 'FailJob', onExitCodes: { operator: 'In', values: [1, 2] } }],
    ['NotIn [0] with containerName', { action: 'FailJob', onExitCodes: { containerName: 'app', operator: 'NotIn', values: [0] } }],
    ['onPodConditions only', { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] }],
  ];

  test.each(cases)('%s: an error exactly when the Job controller takes the rule for a sidecar that exits 137 or 143', (_name, rule) => {
    const found = checkJobPodFailurePolicy(jobManifest([rule]), "Job 'batch'");
    const teardown = [137, 143].some(code => takesSidecarCode(rule, code));
    expect(found.errors.length).toBe(teardown ? 1 : 0);
    // a warning when the sidecar could still be taken for the app (any other code the rule takes), none with a containerName
    const anyCode = rule.onExitCodes !== undefined && rule.onExitCodes.containerName === undefined;
    expect(found.warnings.length).toBe(!teardown && anyCode ? 1 : 0);
    if (anyCode && !teardown) expect([1, 2].some(code => takesSidecarCode(rule, code))).toBe(true);
  });

  test('the message names the rule, the sidecars, the codes and the containerName fix', () => {
    const { errors } = checkJobPodFailurePolicy(jobManifest([
      { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] },
      { action: 'FailJob', onExitCodes: { operator: 'NotIn', values: [1] } },
    ]), "Job 'batch'");
    expect(errors).toEqual([
      "Job 'batch': spec.podFailurePolicy.rules[1] (action \"FailJob\", onExitCodes \"NotIn\" [1]) has no containerName, so the Job controller " +
      "matches it against every container of a failed pod, native sidecars 'mesh' included (pod_failure_policy.go getMatchingContainerFromList); " +
      'when the app fails, the sidecars are stopped and exit with 137 or 143 (SIGKILL, SIGTERM), which this rule matches: its action is taken for ' +
      "the teardown, not for the app's exit code. Set spec.podFailurePolicy.rules[1].onExitCodes.containerName to the app container ('app'; one " +
      "rule per container), so that the sidecars' exit codes are not matched.",
    ]);
  });

  test('no native sidecar (legacy sidecars, ordinary init containers): nothing to say', () => {
    const rule = { action: 'FailJob', onExitCodes: { operator: 'In', values: [143] } };
    expect(checkJobPodFailurePolicy(jobManifest([rule], [{ name: 'migrate', image: 'x' }]), 'w')).toEqual({ errors: [], warnings: [] });
    expect(checkJobPodFailurePolicy({ kind: 'Deployment', spec: { podFailurePolicy: { rules: [rule] } } }, 'w')).toEqual({ errors: [], warnings: [] });
  });

  test('a CronJob\'s job template is checked, with its field path', () => {
    const job = jobManifest([{ action: 'FailJob', onExitCodes: { operator: 'In', values: [143] } }]);
    const cron = { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'nightly' }, spec: { schedule: '0 3 * * *', jobTemplate: { spec: job.spec } } };
    expect(checkJobPodFailurePolicy(cron, 'w').errors[0]).toContain('spec.jobTemplate.spec.podFailurePolicy.rules[0]');
  });

  test('SidecarValidation.checkManifest reports the error half', () => {
    const problems = SidecarValidation.checkManifest(jobManifest([{ action: 'FailJob', onExitCodes: { operator: 'In', values: [143] } }]), '1.29');
    expect(problems).toEqual([expect.stringContaining('spec.podFailurePolicy.rules[0] (action "FailJob", onExitCodes "In" [143]) has no containerName')]);
    expect(SidecarValidation.checkManifest(jobManifest([{ action: 'FailJob', onExitCodes: { containerName: 'app', operator: 'In', values: [143] } }]), '1.29')).toEqual([]);
  });

  const rawJob = (chart: any, rules: any[]) => new ApiObject(chart, 'job', {
    ...jobManifest(rules, []),
  });

  test('WithLogAgent on a Job: the native layout fails synthesis, the legacy layout does not', () => withEnv(ENV, undefined, () => {
    const rules = [{ action: 'FailJob', onExitCodes: { operator: 'NotIn', values: [0] } }];
    const native = newChart();
    new WithLogAgent(native.chart, 'logs', { workload: rawJob(native.chart, rules), kubernetesVersion: '1.31' });
    expect(() => Testing.synth(native.chart)).toThrow(/spec\.podFailurePolicy\.rules\[0\] \(action "FailJob", onExitCodes "NotIn" \[0\]\) has no containerName.*native sidecars 'log-agent' included/);
    const legacy = newChart();
    new WithLogAgent(legacy.chart, 'logs', { workload: rawJob(legacy.chart, rules), kubernetesVersion: '1.31', mode: SidecarMode.LEGACY, allowLegacyOnJob: true });
    expect(() => Testing.synth(legacy.chart)).not.toThrow();
  }));

  test('WithLogAgent on a Job whose rule takes other codes: a warning, readable with SidecarWarnings.of', () => withEnv(ENV, undefined, () => {
    const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const { app, chart } = newChart();
      new WithLogAgent(chart, 'logs', { workload: rawJob(chart, [{ action: 'FailJob', onExitCodes: { operator: 'In', values: [3] } }]), kubernetesVersion: '1.31' });
      Testing.synth(chart);
      expect(SidecarWarnings.of(app)).toEqual([expect.stringMatching(
        /^'test\/job' \(Job 'batch'\): spec\.podFailurePolicy\.rules\[0\] .*a sidecar that crashes with one of these codes is taken as the app's failure\. Set spec\.podFailurePolicy\.rules\[0\]\.onExitCodes\.containerName to the app container \('app'/,
      )]);
    } finally {
      stderr.mockRestore();
    }
  }));
});

/**
 * The endpoints controllers' `podutil.FindPort` (kubernetes pkg/api/v1/pod/util.go), as the oracle:
 * before kubernetes#127976 (1.32.0) it read `spec.containers` only; after it, the restartable init
 * containers too. A Service port whose named targetPort the old lookup cannot find gets no
 * endpoint for the pod.
 */
function findPort(podSpec: any, name: string, withSidecars: boolean): number | undefined {
  const lists = [podSpec.containers ?? [], ...(withSidecars ? [(podSpec.initContainers ?? []).filter((c: any) => c.restartPolicy === 'Always')] : [])];
  for (const list of lists) {
    for (const c of list) {
      for (const p of c.ports ?? []) if (p.name === name) return p.containerPort;
    }
  }
  return undefined;
}

describe('a Service whose named targetPort only a native sidecar declares (SidecarValidation)', () => {
  const proxy = { name: 'auth-proxy', image: 'ghcr.io/example/auth-proxy:1', restartPolicy: 'Always', ports: [{ containerPort: 4180, name: 'proxy' }] };
  const podSpec = (appPorts: any[] = [{ containerPort: 8080, name: 'http' }]) => ({
    initContainers: [proxy],
    containers: [{ name: 'app', image: 'ghcr.io/example/app:1', ports: appPorts }],
  });
  const service = (chart: any, targetPort: string | number, extra: any = {}, selector: any = { app: 'raw' }) => new ApiObject(chart, 'svc', {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web', ...(extra.namespace ? { namespace: extra.namespace } : {}) },
    spec: { selector, ports: [{ name: 'web', port: 80, targetPort }], ...(extra.type ? { type: extra.type } : {}) },
  });
  const deployment = (chart: any, spec = podSpec()) => new ApiObject(chart, 'raw', {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'raw' },
    spec: { selector: { matchLabels: { app: 'raw' } }, template: { metadata: { labels: { app: 'raw' } }, spec } },
  });

  test.each([
    ['1.31', 'proxy', {}, true],
    ['1.29', 'proxy', { type: 'LoadBalancer' }, true],
    ['1.32', 'proxy', {}, false],
    ['1.31', 'http', {}, false],
    ['1.31', 4180, {}, false],
  ])('Kubernetes %s, targetPort %s %j: an error exactly when the old FindPort finds no port and the new one does', (version, targetPort, extra, expected) => {
    const { app, chart } = newChart();
    deployment(chart);
    service(chart, targetPort, extra);
    SidecarValidation.addTo(app, { kubernetesVersion: version });
    const broken = typeof targetPort === 'string' && Number(version.split('.')[1]) < 32
      && findPort(podSpec(), targetPort, false) === undefined && findPort(podSpec(), targetPort, true) !== undefined;
    expect(broken).toBe(expected);
    if (broken) {
      expect(() => app.synthYaml()).toThrow(new RegExp(
        `SidecarValidation.addTo\\(app\\), Kubernetes ${version.replace('.', '\\.')}: test/svc: Service 'web' port "web" \\(targetPort 'proxy'\\) selects the pods of ` +
        "'test/raw', where only the native sidecar\\(s\\) 'auth-proxy' declare a port named 'proxy'; .*kubernetes#127958, fixed in 1\\.32\\.0 by kubernetes#127976.*" +
        'Give the Service targetPort: 4180 \\(the number\\)',
      ));
    } else {
      expect(() => app.synthYaml()).not.toThrow();
    }
  });

  test('an app container that declares the same name, another namespace, another selector: no error', () => {
    for (const build of [
      (chart: any) => { deployment(chart, podSpec([{ containerPort: 4180, name: 'proxy' }])); service(chart, 'proxy'); },
      (chart: any) => { deployment(chart); service(chart, 'proxy', { namespace: 'other' }); },
      (chart: any) => { deployment(chart); service(chart, 'proxy', {}, { app: 'someone-else' }); },
    ]) {
      const { app, chart } = newChart();
      build(chart);
      SidecarValidation.addTo(app, { kubernetesVersion: '1.30' });
      expect(() => app.synthYaml()).not.toThrow();
    }
  });

  test('1.32+, a LoadBalancer Service: a warning naming kubernetes#134651', () => {
    const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const { app, chart } = newChart();
      deployment(chart);
      service(chart, 'proxy', { type: 'LoadBalancer' });
      SidecarValidation.addTo(app, { kubernetesVersion: '1.33' });
      app.synthYaml();
      expect(SidecarWarnings.of(app)).toEqual([expect.stringMatching(
        /^test\/svc: Service 'web' port "web" \(targetPort 'proxy'\) .*type LoadBalancer.*kubernetes#134651, open.*Give the Service targetPort: 4180/,
      )]);
      expect(stderr.mock.calls.filter(c => String(c[0]).includes('kubernetes#134651'))).toHaveLength(1);
    } finally {
      stderr.mockRestore();
    }
  });

  test('a WithSidecar port in the native layout, found on the emitted pod', () => withEnv(ENV, undefined, () => {
    const { app, chart } = newChart();
    deployment(chart, { containers: [{ name: 'app', image: 'ghcr.io/example/app:1' }] } as any);
    new WithSidecar(chart, 'proxy', {
      workload: chart.node.findChild('raw') as ApiObject,
      kubernetesVersion: '1.31',
      containerName: 'auth-proxy',
      image: 'ghcr.io/example/auth-proxy:1.0.0',
      ports: [{ number: 4180, name: 'proxy' }],
      startupCheck: SidecarCheck.tcp(4180),
    });
    service(chart, 'proxy');
    SidecarValidation.addTo(app, { kubernetesVersion: '1.31' });
    expect(() => app.synthYaml()).toThrow(/test\/svc: Service 'web' port "web" \(targetPort 'proxy'\) selects the pods of 'test\/raw', where only the native sidecar\(s\) 'auth-proxy'/);
  }));
});

/**
 * The HPA controller's `calculatePodRequests` (kubernetes pkg/controller/podautoscaler/replica_calculator.go,
 * the version that counts restartable init containers), as the oracle: the error it returns, or undefined.
 */
function calculatePodRequests(podSpec: any, resource: string): string | undefined {
  const containers = [...(podSpec.containers ?? []), ...(podSpec.initContainers ?? []).filter((c: any) => c.restartPolicy === 'Always')];
  for (const c of containers) {
    if (c.resources?.requests?.[resource] === undefined) return `missing request for ${resource} in container ${c.name} of Pod p`;
  }
  return undefined;
}

describe('an HPA on CPU utilization and a container without a CPU request (SidecarValidation, a warning)', () => {
  const withRequests = { requests: { cpu: '100m', memory: '64Mi' } };
  const spec = (sidecarResources?: any) => ({
    initContainers: [{ name: 'auth-proxy', image: 'ghcr.io/example/auth-proxy:1', restartPolicy: 'Always', ...(sidecarResources ? { resources: sidecarResources } : {}) }],
    containers: [{ name: 'app', image: 'ghcr.io/example/app:1', resources: withRequests }],
  });
  const deployment = (chart: any, podSpec: any) => new ApiObject(chart, 'raw', {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'raw' },
    spec: { selector: { matchLabels: { app: 'raw' } }, template: { metadata: { labels: { app: 'raw' } }, spec: podSpec } },
  });
  const hpa = (chart: any, hpaSpec: any, apiVersion = 'autoscaling/v2') => new ApiObject(chart, 'hpa', {
    apiVersion,
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: 'raw' },
    spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'raw' }, minReplicas: 2, maxReplicas: 10, ...hpaSpec },
  });
  const cpuUtilization = { metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } }] };

  function warningsOf(podSpec: any, hpaSpec: any, apiVersion?: string, kubernetesVersion = '1.31'): string[] {
    const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const { app, chart } = newChart();
      deployment(chart, podSpec);
      hpa(chart, hpaSpec, apiVersion);
      SidecarValidation.addTo(app, { kubernetesVersion });
      app.synthYaml();
      return SidecarWarnings.of(app);
    } finally {
      stderr.mockRestore();
    }
  }

  test.each([
    ['a native sidecar without requests, cpu Utilization', spec(), cpuUtilization, undefined],
    ['a native sidecar with requests', spec(withRequests), cpuUtilization, undefined],
    ['autoscaling/v1 targetCPUUtilizationPercentage', spec(), { targetCPUUtilizationPercentage: 70 }, 'autoscaling/v1'],
  ])('%s: a warning exactly when the HPA controller fails the metric', (_name, podSpec, hpaSpec, apiVersion) => {
    const oracle = calculatePodRequests(podSpec, 'cpu');
    const warnings = warningsOf(podSpec, hpaSpec, apiVersion);
    expect(warnings.length).toBe(oracle === undefined ? 0 : 1);
    if (oracle) {
      expect(warnings[0]).toBe(
        "test/hpa: HorizontalPodAutoscaler 'raw' scales 'test/raw' on cpu utilization, but container(s) 'auth-proxy' (native sidecar) of its pod have no " +
        'cpu request: the HPA controller sums the requests of every container and native sidecar and fails the metric ("missing request for cpu in ' +
        'container ...", replica_calculator.go calculatePodRequests), so it does not scale on it. Give each of them resources.requests.cpu (WithSidecar: resources).',
      );
    }
  });

  test('metrics that need no request (AverageValue, ContainerResource of the app) and a pod-level request: no warning', () => {
    expect(warningsOf(spec(), { metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'AverageValue', averageValue: '500m' } } }] })).toEqual([]);
    expect(warningsOf(spec(), { metrics: [{ type: 'ContainerResource', containerResource: { name: 'cpu', container: 'app', target: { type: 'Utilization', averageUtilization: 70 } } }] })).toEqual([]);
    // a pod-level request needs 1.34+ (PodLevelResources beta; the API server drops it before: issue 37's rule)
    expect(warningsOf({ ...spec(), resources: { requests: { cpu: '1' } } }, cpuUtilization, undefined, '1.34')).toEqual([]);
  });

  test('WithSidecar gives its container requests: no warning on the emitted pod', () => withEnv(ENV, undefined, () => {
    const { app, chart } = newChart();
    const workload = deployment(chart, { containers: [{ name: 'app', image: 'ghcr.io/example/app:1', resources: withRequests }] });
    new WithSidecar(chart, 'proxy', { workload, kubernetesVersion: '1.31', containerName: 'auth-proxy', image: 'ghcr.io/example/auth-proxy:1.0.0' });
    hpa(chart, cpuUtilization);
    SidecarValidation.addTo(app, { kubernetesVersion: '1.31' });
    app.synthYaml();
    expect(SidecarWarnings.of(app)).toEqual([]);
  }));
});
