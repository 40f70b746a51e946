/**
 * Scenario 1: a web Deployment with Envoy, a tracing agent and a log agent.
 *
 * - Envoy terminates TLS (a cert-manager Secret) on port 8443 and forwards to the app on
 *   127.0.0.1:8080; the app calls the payments service through Envoy on 127.0.0.1:15001. The
 *   Service points at Envoy, never at the app. The app starts only once Envoy is ready, and on
 *   shutdown Envoy drains while the app answers its last requests.
 * - The tracer (an OpenTelemetry Collector agent) receives the app's OTLP on 127.0.0.1 and
 *   forwards it to the cluster's collector.
 * - The log agent ships the files the app writes to /var/log/app to Loki.
 *
 * Native layout: all three start before the app and are stopped after it (Envoy first, the log
 * agent last), so no request, span or log line of a dying pod is lost.
 */
import { Chart, ChartProps } from 'cdk8s';
import * as kplus from 'cdk8s-plus-34';
import { Construct } from 'constructs';
// In your own app: from 'cdk8s-sidecars'
import { LogOutput, WithEnvoy, WithLogAgent, WithTracer } from '../src';

export class WebChart extends Chart {
  constructor(scope: Construct, id: string, props: ChartProps = {}) {
    super(scope, id, { namespace: 'shop', ...props });

    // The app listens on 127.0.0.1 only: every request comes in through Envoy. (No
    // `portNumber`: cdk8s-plus would add a TCP probe on the pod IP, which cannot reach it.)
    const web = new kplus.Deployment(this, 'web', {
      metadata: { name: 'web' },
      replicas: 3,
      containers: [{
        name: 'web',
        image: 'ghcr.io/example/shop-web:1.4.2',
        args: ['--listen=127.0.0.1:8080', '--payments-url=http://127.0.0.1:15001'],
        securityContext: { user: 1000, group: 1000 },
        // The app's own readiness: Envoy's /ready answers 200 whether or not the app is up
        // (docs/envoy.md). An exec probe, since the app listens on 127.0.0.1 only.
        readiness: kplus.Probe.fromCommand(['wget', '-q', '-O', '/dev/null', 'http://127.0.0.1:8080/healthz']),
      }],
    });

    const envoy = new WithEnvoy(this, 'web-envoy', {
      workload: web,
      appPort: 8080,
      tls: { secret: { name: 'web-tls' } }, // kept renewed by cert-manager
      upstreams: [{ name: 'payments', localPort: 15001, host: 'payments.shop.svc.cluster.local', port: 8080 }],
    });
    new kplus.Service(this, 'web-service', {
      metadata: { name: 'web' },
      selector: web,
      ports: [envoy.servicePort()], // 443 -> Envoy's 8443
    });

    // The app gets OTEL_EXPORTER_OTLP_ENDPOINT (http://127.0.0.1:4317), OTEL_SERVICE_NAME, ...
    new WithTracer(this, 'web-tracer', {
      workload: web,
      exporterEndpoint: 'otel-collector.observability:4317',
      exporterTls: false, // a plaintext in-cluster collector
      resourceAttributes: { 'deployment.environment.name': 'prod' },
      samplingRatio: 0.25,
    });

    // Credentials come from a Secret reference only: they never enter the agent's ConfigMap.
    const loki = kplus.Secret.fromSecretName(this, 'loki-creds', 'loki-creds');
    new WithLogAgent(this, 'web-logs', {
      workload: web,
      output: LogOutput.loki({
        host: 'loki.monitoring.svc',
        labels: { app: 'shop-web' },
        basicAuth: {
          username: { secret: loki, key: 'username' },
          password: { secret: loki, key: 'password' },
        },
      }),
    });
  }
}
