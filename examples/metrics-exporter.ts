/**
 * Scenario 4: a third-party manifest brought in with cdk8s `Include`, given a log agent.
 *
 * `Include` turns every object of the YAML file into a plain `ApiObject`; the library works on
 * the synthesized pod template, so the vendor's Deployment gets its sidecar like any other
 * workload (the same goes for `Helm`).
 */
import * as path from 'path';
import { Chart, ChartProps, Include } from 'cdk8s';
import { Construct } from 'constructs';
// In your own app: from 'cdk8s-sidecars'
import { LogOutput, WithLogAgent } from '../src';

export class MetricsExporterChart extends Chart {
  constructor(scope: Construct, id: string, props: ChartProps = {}) {
    super(scope, id, props);

    const vendor = new Include(this, 'metrics-exporter', {
      url: path.join(__dirname, 'vendor', 'metrics-exporter.yaml'),
    });
    const deployment = vendor.apiObjects.find((o) => o.kind === 'Deployment');
    if (!deployment) {
      throw new Error('examples/vendor/metrics-exporter.yaml: no Deployment found');
    }

    // The exporter writes its log file to /var/log/exporter (its --log.file flag).
    new WithLogAgent(this, 'exporter-logs', {
      workload: deployment,
      logDirectory: '/var/log/exporter',
      output: LogOutput.loki({ host: 'loki.monitoring.svc', labels: { app: 'metrics-exporter' } }),
    });
  }
}
