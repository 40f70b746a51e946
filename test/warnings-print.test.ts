/**
 * Warnings on stderr once per synthesis (issue 27, point 8): cdk8s validates an app once per
 * `app.synth()` / `synthYaml()` call and then again inside every chart's `toJson()`
 * (node_modules/cdk8s/lib/app.js `synth` and `_synthChart`, 2.70.x: C charts, C + 1 validations),
 * so one call must print each warning once; a second call in the same process (a watch loop, a
 * test, a script that synthesizes for two clusters) prints it again. Counted on process.stderr
 * against SidecarWarnings.of, for a workload's warnings (the known-bug table) and for the
 * app-wide ones of SidecarValidation (an HPA), in an app of three charts.
 */
import { ApiObject, App, Chart, Testing } from 'cdk8s';
import { SidecarValidation, SidecarWarnings, WithLogAgent, WithTracer } from '../src';
import { hpaManifest, kplusWorkload, rawDeployment, withEnv } from './util/fixtures';

const ENV = 'CDK8S_SIDECARS_KUBERNETES_VERSION';
const PREFIX = '[cdk8s-sidecars] WARNING: ';

let stderr: jest.SpyInstance;
beforeEach(() => { stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true); });
afterEach(() => stderr.mockRestore());
const printed = () => stderr.mock.calls.map(c => String(c[0])).filter(s => s.startsWith(PREFIX)).map(s => s.slice(PREFIX.length, -1));

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
  ['a workload with the known bugs of 1.29.3', appWithKnownBugs, 2],
  ['SidecarValidation: an HPA without the request', appWithHpaWarning, 1],
] as const)('%s', (_name, make, count) => {
  test('one synthYaml() call of three charts prints each warning once; a second call prints them again', () => withEnv(ENV, undefined, () => {
    const app = make();
    app.synthYaml();
    const warnings = SidecarWarnings.of(app);
    expect(warnings).toHaveLength(count);
    expect(printed()).toEqual(warnings);
    app.synthYaml();
    expect(SidecarWarnings.of(app)).toEqual(warnings);
    expect(printed()).toEqual([...warnings, ...warnings]);
  }));

  test('two Chart.toJson() calls outside a synth (one validation each) print them once each', () => withEnv(ENV, undefined, () => {
    const app = make();
    const chart = app.node.findChild('test') as Chart;
    chart.toJson();
    const warnings = SidecarWarnings.of(app);
    chart.toJson();
    expect(printed()).toEqual([...warnings, ...warnings]);
  }));
});
