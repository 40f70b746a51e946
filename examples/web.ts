/**
 * Scenario 1: a web Deployment with a log agent and a tracing agent.
 *
 * The log agent ships the files the app writes to /var/log/app to Loki; the tracer (an
 * OpenTelemetry Collector agent) receives the app's OTLP on 127.0.0.1 and forwards it to the
 * cluster's collector. Native layout: both start before the app and are stopped after it, so
 * the last lines and spans of a dying pod are not lost.
 */
import { Chart, ChartProps } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { Construct } from 'constructs';
// In your own app: from 'cdk8s-sidecars'
import { LogOutput, WithLogAgent, WithTracer } from '../src';

export class WebChart extends Chart {
  constructor(scope: Construct, id: string, props: ChartProps = {}) {
    super(scope, id, { namespace: 'shop', ...props });

    const web = new kplus.Deployment(this, 'web', {
      metadata: { name: 'web' },
      replicas: 3,
      containers: [{
        name: 'web',
        image: 'ghcr.io/example/shop-web:1.4.2',
        portNumber: 8080,
        securityContext: { user: 1000, group: 1000 },
      }],
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

    // The app gets OTEL_EXPORTER_OTLP_ENDPOINT (http://127.0.0.1:4317), OTEL_SERVICE_NAME, ...
    new WithTracer(this, 'web-tracer', {
      workload: web,
      exporterEndpoint: 'otel-collector.observability:4317',
      exporterTls: false, // a plaintext in-cluster collector
      resourceAttributes: { 'deployment.environment.name': 'prod' },
      samplingRatio: 0.25,
    });
  }
}
