/**
 * The apps the benchmark synthesizes: N Deployments, each an app container with the log agent,
 * the tracer and Envoy, built three ways; in the shapes real apps have, each Deployment also
 * with a Service in front of Envoy, and then also a HorizontalPodAutoscaler (issue 36: the
 * objects around the workloads are what the library looks up per workload).
 */
import { App, Chart } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { Sidecars, WithEnvoy, WithLogAgent, WithTracer } from '../lib';
import { handWrittenDeployment, handWrittenService } from './hand-written';

export type Variant = 'hand-legacy' | 'lib-legacy' | 'lib-native';
export const VARIANTS: Variant[] = ['hand-legacy', 'lib-legacy', 'lib-native'];

/**
 * What each workload comes with: `service`, a Service that sends port 80 to Envoy's listener
 * (the library: `WithEnvoy.exposeVia()`; by hand: the port written out); `hpa`, that Service and
 * a HorizontalPodAutoscaler on CPU utilization.
 */
export type Shape = 'service' | 'hpa';
export const SHAPES: Shape[] = ['service', 'hpa'];

/** Kubernetes versions of the two layouts (1.27: legacy; 1.29: native). */
export const TARGET: Record<Exclude<Variant, 'hand-legacy'>, string> = {
  'lib-legacy': '1.27',
  'lib-native': '1.29',
};

const APP_PORT = 8080;

/**
 * The user's part, the same in every variant. The port is declared with `ports`, not
 * `portNumber`: for `portNumber` cdk8s-plus-27 adds a TCP startup probe on the pod IP, which
 * behind Envoy (the app listens on 127.0.0.1) can never pass, and `WithEnvoy` refuses it. The app
 * has a readiness probe of its own, an exec probe on 127.0.0.1, as `WithEnvoy` asks (without one,
 * it warns for every workload that the pod is Ready as soon as Envoy is).
 */
function appContainer(i: number): kplus.ContainerProps {
  return {
    name: 'app',
    image: `ghcr.io/example/svc-${i}:1.0.${i % 10}`,
    ports: [{ number: APP_PORT }],
    securityContext: { user: 1000, group: 1000 },
    readiness: APP_READINESS,
  };
}
const APP_READINESS = kplus.Probe.fromCommand(['wget', '-q', '-O', '/dev/null', `http://127.0.0.1:${APP_PORT}/ready`]);

const ids = (i: number) => ({
  workload: `svc${i}`, logs: `svc${i}-logs`, tracer: `svc${i}-tracer`, envoy: `svc${i}-envoy`,
  service: `svc${i}-service`, hpa: `svc${i}-hpa`,
});

/** The autoscaler of `hpa`, the same in every variant. */
function autoscaler(scope: Chart, id: string, target: kplus.Deployment): void {
  new kplus.HorizontalPodAutoscaler(scope, id, {
    target,
    maxReplicas: 10,
    metrics: [kplus.Metric.resourceCpu(kplus.MetricTarget.averageUtilization(70))],
  });
}

/** Builds (constructs) the app of `n` workloads; nothing is synthesized yet. */
export function buildApp(variant: Variant, n: number, shape?: Shape): App {
  const app = new App();
  if (variant !== 'hand-legacy') Sidecars.configure(app, { kubernetesVersion: TARGET[variant] });
  const chart = new Chart(app, 'platform');
  for (let i = 0; i < n; i++) {
    const id = ids(i);
    if (variant === 'hand-legacy') {
      const deployment = handWrittenDeployment(chart, id.workload, appContainer(i), id, APP_PORT);
      if (shape) handWrittenService(chart, id.service, deployment);
      if (shape === 'hpa') autoscaler(chart, id.hpa, deployment);
      continue;
    }
    const workload = new kplus.Deployment(chart, id.workload, { containers: [appContainer(i)] });
    new WithLogAgent(chart, id.logs, { workload });
    new WithTracer(chart, id.tracer, { workload, exporterEndpoint: 'otel-collector.observability:4317', exporterTls: false });
    const envoy = new WithEnvoy(chart, id.envoy, { workload, appPort: APP_PORT });
    if (shape) envoy.exposeVia(new kplus.Service(chart, id.service, { selector: workload }));
    if (shape === 'hpa') autoscaler(chart, id.hpa, workload);
  }
  return app;
}

/**
 * What `cdk8s synth` writes for the comparison with the pipeline linters (issue 50): `workloads`
 * Deployments in `charts` charts (one YAML file each), each with the log agent (Fluent Bit) and
 * Envoy in front of a Service, native at Kubernetes 1.33. Writes the files into `outdir`.
 */
export function synthCheckApp(outdir: string, workloads: number, charts: number): void {
  const app = new App({ outdir });
  Sidecars.configure(app, { kubernetesVersion: '1.33' });
  const perChart = Math.ceil(workloads / charts);
  for (let c = 0; c < charts; c++) {
    const chart = new Chart(app, `team${String(c).padStart(2, '0')}`);
    for (let i = c * perChart; i < Math.min(workloads, (c + 1) * perChart); i++) {
      const id = ids(i);
      const workload = new kplus.Deployment(chart, id.workload, {
        containers: [appContainer(i)],
      });
      new WithLogAgent(chart, id.logs, { workload });
      new WithEnvoy(chart, id.envoy, { workload, appPort: APP_PORT }).exposeVia(new kplus.Service(chart, id.service, { selector: workload }));
    }
  }
  app.synth();
}
