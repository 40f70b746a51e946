// The bindings app in TypeScript: the reference the Python, Java and Go twins
// (test/bindings/python/app.py, java/src/main/java/bindings/App.java, go/main.go) must match
// byte for byte (scripts/bindings-test.sh). Keep the four in step: same ids, same props, same order.
// The target comes from CDK8S_SIDECARS_KUBERNETES_VERSION, the output directory from CDK8S_OUTDIR.
import { App, Chart, Cron, Duration } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import {
  EnvoyAppProtocol, LogAgent, LogOutput, SidecarCheck, SidecarQuit, WithEnvoy, WithLogAgent, WithSidecar, WithTracer,
// eslint-disable-next-line import/no-unresolved -- the packed library, resolved by scripts/bindings-test.sh
} from 'cdk8s-sidecars';

const app = new App();
const chart = new Chart(app, 'bindings', { namespace: 'shop' });

const web = new kplus.Deployment(chart, 'web', {
  metadata: { name: 'web' },
  containers: [{ name: 'web', image: 'ghcr.io/example/web:1.0.0', args: ['--listen=127.0.0.1:8080'] }],
});
new WithLogAgent(chart, 'logs', {
  workload: web,
  agent: LogAgent.fluentBit(),
  output: LogOutput.loki({ host: 'loki.monitoring.svc', labels: { team: 'shop' } }),
});
new WithTracer(chart, 'tracer', {
  workload: web,
  exporterEndpoint: 'otel-collector.observability:4317',
  exporterTls: false,
  exporterHeaders: { authorization: { secret: { name: 'otel-auth' }, key: 'token' } },
  drainTime: Duration.seconds(12),
});
new WithEnvoy(chart, 'envoy', {
  workload: web,
  appPort: 8080,
  appProtocol: EnvoyAppProtocol.HTTP2,
  tls: { secret: { name: 'web-tls' } },
});

const report = new kplus.CronJob(chart, 'report', {
  metadata: { name: 'report' },
  schedule: Cron.daily(),
  containers: [{
    name: 'report',
    image: 'ghcr.io/example/report:1.0.0',
    securityContext: { user: 1000, group: 1000 },
    command: ['/bin/sh', '-c', 'run-report; wget -q -O- --post-data= "$PROXY_QUIT_URL"'],
  }],
});
new WithSidecar(chart, 'cloud-sql-proxy', {
  workload: report,
  containerName: 'cloud-sql-proxy',
  image: 'gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.25.3',
  args: ['--port=5432', '--health-check', '--http-address=0.0.0.0', '--quitquitquit', 'my-project:europe-west1:reports'],
  ports: [{ number: 9090, name: 'proxy-health' }],
  localPorts: [5432, 9091],
  startupCheck: SidecarCheck.http(9090, { path: '/startup' }),
  jobQuit: SidecarQuit.http(9091, '/quitquitquit', 'PROXY_QUIT_URL'),
  appEnv: { DB_HOST: '127.0.0.1', DB_PORT: '5432' },
});

app.synth();
