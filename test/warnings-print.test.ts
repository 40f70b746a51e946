/**
 * Warnings on stderr once per synthesis (issue 27, point 8): cdk8s may validate an app more than
 * once per `app.synth()` / `synthYaml()` call (2.70 does once more inside every chart's `toJson()`),
 * so one call must print each warning once; a second call in the same process (a watch loop, a
 * test, a script that synthesizes for two clusters) prints it again. A workload's warnings (the
 * known-bug table) are printed when cdk8s emits it (its toJson(), once per call). The app-wide ones
 * of SidecarValidation (an HPA) come from its validation, which runs in every pass: once per
 * synthesis, which ends when every workload with sidecars was emitted (src/bind/binding.ts AppState,
 * with documented cdk8s API only); an app without any sidecar emits no such workload, so its
 * synthesis never ends: each warning is printed once per App.
 * Counted on process.stderr against SidecarWarnings.of, in an app of three charts.
 */
import { ApiObject, App, Chart, Testing } from 'cdk8s';
import { SidecarValidation, SidecarWarnings, Sidecars, WithLogAgent, WithTracer } from '../src';
import { hpaManifest, kplusWorkload, rawDeployment, withEnv } from './util/fixtures';

const ENV = 'CDK8S_SIDECARS_KUBERNETES_VERSION';
const PREFIX = '[cdk8s-sidecars] WARNING: ';

let stderr: jest.SpyInstance;
beforeEach(() => { stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true); });
afterEach(() => stderr.mockRestore());
const printed = () => stderr.mock.calls.map(c => String(c[0])).filter(s => s.startsWith(PREFIX)).map(s => s.slice(PREFIX.length, -1));
/** How a printed warning ends (issue 48): the id and name of the rule `check` finds it by. */
const RULE_SUFFIX = / \[CS\d{3} [a-z0-9.-]+\]$/;
const OPEN_BUG = /has kubernetes#(137710|140309) /;
/**
 * What one synthesis call prints of a workload's warnings (without the rule suffix): its own, then
 * the bugs open upstream that every pod with two init containers has, in one line (issue 48).
 */
const perCall = (warnings: string[]) => [
  ...warnings.filter(w => !OPEN_BUG.test(w)),
  ...(warnings.some(w => OPEN_BUG.test(w)) ? [expect.stringMatching(/^1 workload of this synthesis \('test\/web\/Resource'\) runs into bugs open upstream .*kubernetes#137710.*kubernetes#140309/)] : []),
];
const printedBare = () => {
  const lines = printed();
  expect(lines.filter(l => !RULE_SUFFIX.test(l))).toEqual([]);
  return lines.map(l => l.replace(RULE_SUFFIX, ''));
};

/** 1.29.3 and two native sidecars: kubernetes#125880 and #126543 (src/facts/known-bugs.ts), in the first of three charts. */
function appWithKnownBugs(): App {
  const app = Testing.app();
  const chart = new Chart(app, 'test');
  const workload = kplusWorkload(chart, 'Deployment');
  new WithLogAgent(chart, 'logs', { workload, kubernetesVersion: '1.29.3' });
  new WithTracer(chart, 'tracer', { workload, exporterEndpoint: 'otel-gateway.observability:4317', kubernetesVersion: '1.29.3' });
  new Chart(app, 'second');
  new Chart(app, 'third');
  return app;
}

/** No sidecar at all: an HPA on CPU utilization of a Deployment whose container has no CPU request (an app-wide warning). */
function appWithHpaWarning(): App {
  const app = Testing.app();
  const chart = new Chart(app, 'test', { namespace: 'shop' });
  rawDeployment(chart, 'web');
  new ApiObject(chart, 'hpa', hpaManifest({ averageUtilization: 60 }));
  new Chart(app, 'second');
  new Chart(app, 'third');
  SidecarValidation.addTo(app, { kubernetesVersion: '1.32' });
  return app;
}

describe.each([
  // kubernetes#125880, #126543 and the open #137710, #140309 (two init containers): printed at each emit
  ['a workload with the known bugs of 1.29.3', appWithKnownBugs, 4, 2],
  // SidecarValidation's, with no sidecar in the app: once per App (nothing ends its synthesis)
  ['SidecarValidation: an HPA without the request', appWithHpaWarning, 1, 1],
] as const)('%s', (_name, make, count, ofTwoCalls) => {
  const repeated = (warnings: unknown[], times: number) => Array.from({ length: times }, () => warnings).flat();
  test('one synthYaml() call of three charts prints each warning once; a second call prints them again (once per App without sidecars)', () => withEnv(ENV, undefined, () => {
    const app = make();
    app.synthYaml();
    const warnings = SidecarWarnings.of(app);
    expect(warnings).toHaveLength(count);
    expect(printedBare()).toEqual(perCall(warnings));
    app.synthYaml();
    expect(SidecarWarnings.of(app)).toEqual(warnings);
    expect(printedBare()).toEqual(repeated(perCall(warnings), ofTwoCalls));
  }));

  test('two Chart.toJson() calls (one validation and one emit each) print a workload\'s once each', () => withEnv(ENV, undefined, () => {
    const app = make();
    const chart = app.node.findChild('test') as Chart;
    chart.toJson();
    const warnings = SidecarWarnings.of(app);
    chart.toJson();
    expect(printedBare()).toEqual(repeated(perCall(warnings), ofTwoCalls));
  }));
});

describe('issue 37: a synthesis without a target says which layout it got and how to choose', () => {
  const NOTICE = '[cdk8s-sidecars] NOTICE: ';
  const notices = () => stderr.mock.calls.map(c => String(c[0])).filter(s => s.startsWith(NOTICE));
  const build = (configure?: string) => {
    const app = Testing.app();
    if (configure) Sidecars.configure(app, { kubernetesVersion: configure });
    for (const id of ['a', 'b']) {
      const chart = new Chart(app, id);
      const workload = kplusWorkload(chart, 'Deployment');
      new WithLogAgent(chart, 'logs', { workload });
      new WithTracer(chart, 'tracer', { workload, exporterEndpoint: 'otel-gateway.observability:4317' });
    }
    return app;
  };

  test('no prop, variable or Sidecars.configure(): one notice per synthesis call, naming the default, the layout and the three ways', () => withEnv(ENV, undefined, () => {
    const app = build();
    app.synthYaml();
    expect(notices()).toEqual([
      '[cdk8s-sidecars] NOTICE: no target Kubernetes release is set (no kubernetesVersion prop, no CDK8S_SIDECARS_KUBERNETES_VERSION, no Sidecars.configure()), so the ' +
      'sidecars were emitted for the default, Kubernetes 1.27, the oldest release the library supports: the LEGACY layout (each sidecar one more entry of ' +
      "spec.containers, stopped together with the app; a Job's sidecars exit through a wrapper). A cluster whose API server and every kubelet run 1.29 or later " +
      "takes native sidecars (started before the app, stopped after it): set its lowest release with Sidecars.configure(app, { kubernetesVersion: '1.35' }), " +
      'or CDK8S_SIDECARS_KUBERNETES_VERSION=1.35 for one synthesis; `npx cdk8s-sidecars target` prints it for the cluster kubectl points at. ' +
      "Set '1.27' to keep the legacy layout without this notice.\n",
    ]);
    app.synthYaml();
    expect(notices()).toHaveLength(2); // the next call says it again
    // not a warning of the pods: SidecarWarnings stays as it was
    expect(SidecarWarnings.of(app)).toEqual([]);
    // a Testing.synth() of a chart (outside a synthesis call): once per App
    const other = build();
    Testing.synth(other.node.children[0] as Chart);
    Testing.synth(other.node.children[1] as Chart);
    expect(notices()).toHaveLength(3);
  }));

  test.each([['Sidecars.configure 1.27', '1.27', undefined], ['the environment', undefined, '1.35']])('a target from %s: no notice', (_name, configure, env) => withEnv(ENV, env, () => {
    build(configure).synthYaml();
    expect(notices()).toEqual([]);
  }));
});
