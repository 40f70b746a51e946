/**
 * Example app: one code base, synthesized once per cluster.
 *
 *   CDK8S_SIDECARS_KUBERNETES_VERSION=1.27 cdk8s synth   -> legacy sidecars
 *   CDK8S_SIDECARS_KUBERNETES_VERSION=1.29 cdk8s synth   -> native sidecars
 *
 * (`npm run synth:example` does both, into examples/dist/<cluster>/.)
 * In your own app, import from 'cdk8s-sidecars' instead of '../src'.
 */
import { App, Chart, ChartProps } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import { LogOutput, WithLogAgent } from '../src';

export class ShopChart extends Chart {
  constructor(scope: Construct, id: string, props: ChartProps = {}) {
    super(scope, id, props);

    // A web Deployment whose app writes log files to /var/log/app.
    const web = new kplus.Deployment(this, 'web', {
      replicas: 3,
      containers: [{
        name: 'web',
        image: 'ghcr.io/example/shop-web:1.4.2',
        portNumber: 8080,
        securityContext: { user: 1000, group: 1000 },
      }],
    });
    new WithLogAgent(this, 'web-logs', {
      workload: web,
      output: LogOutput.loki({ host: 'loki.monitoring.svc', labels: { app: 'shop-web' } }),
    });
  }
}

const app = new App();
new ShopChart(app, 'shop');
app.synth();
