/**
 * The apps the benchmark synthesizes: N Deployments, each an app container with the log agent,
 * the tracer and Envoy, built three ways.
 */
import { App, Chart } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { Sidecars, WithEnvoy, WithLogAgent, WithTracer } from '../lib';
import { handWrittenDeployment } from './hand-written';

export type Variant = 'hand-legacy' | 'lib-legacy' | 'lib-native';
export const VARIANTS: Variant[] = ['hand-legacy', 'lib-legacy', 'lib-native'];

/** Kubernetes versions of the two layouts (1.27: legacy; 1.29: native). */
export const TARGET: Record<Exclude<Variant, 'hand-legacy'>, string> = {
  'lib-legacy': '1.27',
  'lib-native': '1.29',
};

const APP_PORT = 8080;

/**
 * The user's part, the same in every variant. The port is declared with `ports`, not
 * `portNumber`: for `portNumber` cdk8s-plus-27 adds a TCP startup probe on the pod IP, which
 * behind Envoy (the app listens on 127.0.0.1) can never pass, and `WithEnvoy` refuses it.
 */
function appContainer(i: number): kplus.ContainerProps {
  return {
    name: 'app',
    image: `ghcr.io/example/svc-${i}:1.0.${i % 10}`,
    ports: [{ number: APP_PORT }],
    securityContext: { user: 1000, group: 1000 },
  };
}

const ids = (i: number) => ({ workload: `svc${i}`, logs: `svc${i}-logs`, tracer: `svc${i}-tracer`, envoy: `svc${i}-envoy` });

/** Builds (constructs) the app of `n` workloads; nothing is synthesized yet. */
export function buildApp(variant: Variant, n: number): App {
  const app = new App();
  if (variant !== 'hand-legacy') Sidecars.configure(app, { kubernetesVersion: TARGET[variant] });
  const chart = new Chart(app, 'platform');
  for (let i = 0; i < n; i++) {
    const id = ids(i);
    if (variant === 'hand-legacy') {
      handWrittenDeployment(chart, id.workload, appContainer(i), id, APP_PORT);
      continue;
    }
    const workload = new kplus.Deployment(chart, id.workload, { containers: [appContainer(i)] });
    new WithLogAgent(chart, id.logs, { workload });
    new WithTracer(chart, id.tracer, { workload, exporterEndpoint: 'otel-collector.observability:4317', exporterTls: false });
    new WithEnvoy(chart, id.envoy, { workload, appPort: APP_PORT });
  }
  return app;
}
