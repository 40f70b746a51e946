/**
 * Kubernetes around the sidecar (issue 28): a Job's podFailurePolicy and native sidecars.
 *
 * The oracle is test/util/job-pod-failure-policy.ts, the Job controller's matching transcribed
 * from kubernetes/kubernetes pkg/controller/job/pod_failure_policy.go: a rule "matches the
 * teardown" when, for a failed pod whose native sidecar exited with 143 (SIGTERM) or 137 (SIGKILL),
 * the controller picks that rule for the sidecar's status.
 */
import { ApiObject, Testing } from 'cdk8s';
import { SidecarMode, SidecarValidation, SidecarWarnings, WithLogAgent } from '../src';
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
