/**
 * Example app: one code base, synthesized once per cluster with the cdk8s CLI.
 *
 *   CDK8S_SIDECARS_KUBERNETES_VERSION=1.27 cdk8s synth -o dist/cluster-1.27   -> legacy sidecars
 *   CDK8S_SIDECARS_KUBERNETES_VERSION=1.29 cdk8s synth -o dist/cluster-1.29   -> native sidecars
 *
 * `npm run synth:example` (at the repository root) does both. Without the variable the
 * library targets 1.27 (legacy). In your own app, import from 'cdk8s-sidecars' instead of
 * '../src'.
 */
import { App } from 'cdk8s';
import { SidecarTimeline } from '../src';
import { LedgerChart } from './ledger';
import { MetricsExporterChart } from './metrics-exporter';
import { NightlyReportChart } from './nightly-report';
import { WebChart } from './web';

const app = new App();
// Deployment + log agent + tracer
new WebChart(app, 'web');
// StatefulSet (3 replicas) + log agent
new LedgerChart(app, 'ledger');
// CronJob whose logs must not be lost
new NightlyReportChart(app, 'nightly-report');
// third-party YAML brought in with Include + log agent
new MetricsExporterChart(app, 'metrics-exporter');
app.synth();

// One line per workload: when its app starts at the latest, when the last sidecar gets SIGTERM
// after the app's exit, when the pod is gone, a Job's completion after its app, the effective
// request (docs/shutdown.md). On stderr: the synth output stays the manifests alone.
process.stderr.write(`${SidecarTimeline.summaryTable(SidecarTimeline.ofAll(app))}\n`);
