/**
 * Scenario 3: a CronJob whose logs must not be lost.
 *
 * Native layout (1.29+): nothing special. The log agent starts before the report and does not
 * block the Job: once the report has exited, Kubernetes stops the agent, which ships the last
 * lines (Fluent Bit keeps flushing for `Grace` seconds after SIGTERM), and the Job completes.
 *
 * Legacy layout (1.27): the agent is an ordinary container that never exits, so the pod would
 * never complete; the library refuses that unless `allowLegacyOnJob: true` says the app stops
 * the agent itself. Here it does: on legacy clusters only, the pod shares its process namespace
 * and the report runs as the agent's user (65532), so that when the report is done, its
 * entrypoint waits for the agent to pick up the last lines and sends it SIGTERM; the agent
 * flushes and exits, and the pod completes. `activeDeadline` bounds the Job should that ever
 * fail. Sharing the process namespace lets the containers see (and signal) each other's
 * processes: one more reason to move this CronJob to a 1.29+ cluster first.
 */
import { ApiObject, Chart, ChartProps, Cron, Duration, JsonPatch } from 'cdk8s';
import * as kplus from 'cdk8s-plus-34';
import { Construct } from 'constructs';
// In your own app: from 'cdk8s-sidecars'
import { LogOutput, SidecarLayout, WithLogAgent } from '../src';

/** Fluent Bit's user in its image; the report runs as the same user so it may signal the agent. */
const AGENT_UID = 65532;

/**
 * The report's entrypoint. `STOP_LOG_AGENT_ON_EXIT` is set on legacy clusters only. The agent
 * looks for new log files and flushes every second: waiting 3 s before stopping it
 * lets it read the report's last lines first.
 */
const ENTRYPOINT = [
  '/app/nightly-report --log-file=/var/log/app/report.log',
  'status=$?',
  'if [ "${STOP_LOG_AGENT_ON_EXIT:-}" = true ]; then sleep 3; pkill -TERM -x fluent-bit; fi',
  'exit $status',
].join('\n');

export class NightlyReportChart extends Chart {
  constructor(scope: Construct, id: string, props: ChartProps = {}) {
    super(scope, id, { namespace: 'shop', ...props });

    const report = new kplus.CronJob(this, 'nightly-report', {
      metadata: { name: 'nightly-report' },
      schedule: Cron.schedule({ minute: '0', hour: '2' }),
      activeDeadline: Duration.hours(1),
      backoffLimit: 2,
      containers: [{
        name: 'report',
        image: 'ghcr.io/example/nightly-report:2.1.0',
        command: ['/bin/sh', '-c', ENTRYPOINT],
        securityContext: { user: AGENT_UID, group: AGENT_UID },
      }],
    });

    const logs = new WithLogAgent(this, 'report-logs', {
      workload: report,
      output: LogOutput.loki({ host: 'loki.monitoring.svc', labels: { app: 'nightly-report' } }),
      // Legacy layout only: the report's entrypoint stops the agent itself (see above).
      allowLegacyOnJob: true,
    });

    // The layout follows the target cluster (CDK8S_SIDECARS_KUBERNETES_VERSION here); read it
    // after any `Sidecars.configure()` that applies to this chart: once read it is fixed, and a
    // later change of the target that would flip it fails synthesis.
    if (logs.layout === SidecarLayout.LEGACY) {
      ApiObject.of(report).addJsonPatch(JsonPatch.add('/spec/jobTemplate/spec/template/spec/shareProcessNamespace', true));
      report.containers[0].env.addVariable('STOP_LOG_AGENT_ON_EXIT', kplus.EnvValue.fromValue('true'));
    }
  }
}
