// The README's quick start (its TypeScript block, with CDK8S_OUTDIR for the output directory):
// the reference for the README's Python and Java blocks (python/quickstart.py,
// java/src/main/java/bindings/QuickStart.java), compared byte for byte by scripts/bindings-test.sh.
import { App, Chart } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
// eslint-disable-next-line import/no-unresolved -- the packed library, resolved by scripts/bindings-test.sh
import { LogOutput, Sidecars, WithLogAgent } from 'cdk8s-sidecars';

const app = new App();
Sidecars.configure(app, { kubernetesVersion: '1.29' }); // the LOWEST version of API server and nodes
const chart = new Chart(app, 'shop');
const web = new kplus.Deployment(chart, 'web', {
  containers: [{ name: 'app', image: 'ghcr.io/example/shop-web:1.4.2', portNumber: 8080 }],
});
new WithLogAgent(chart, 'logs', { workload: web, output: LogOutput.loki({ host: 'loki.monitoring.svc' }) });
app.synth();
