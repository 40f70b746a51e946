/**
 * Scenario 2: a StatefulSet with 3 replicas and a log agent.
 *
 * Each replica has its own agent, which keeps its read offsets in a DB file on the shared log
 * volume, and tags every record with the pod name (ledger-0, ledger-1, ...), so the logs of each
 * replica stay apart.
 */
import { Chart, ChartProps } from 'cdk8s';
import * as kplus from 'cdk8s-plus-34';
import { Construct } from 'constructs';
// In your own app: from 'cdk8s-sidecars'
import { LogOutput, WithLogAgent } from '../src';

export class LedgerChart extends Chart {
  constructor(scope: Construct, id: string, props: ChartProps = {}) {
    super(scope, id, { namespace: 'shop', ...props });

    // cdk8s-plus creates the headless Service the StatefulSet needs (it needs a container port).
    const ledger = new kplus.StatefulSet(this, 'ledger', {
      metadata: { name: 'ledger' },
      replicas: 3,
      podManagementPolicy: kplus.PodManagementPolicy.PARALLEL,
      containers: [{
        name: 'ledger',
        image: 'ghcr.io/example/ledger:3.0.1',
        portNumber: 7000,
        securityContext: { user: 1000, group: 1000 },
      }],
    });

    new WithLogAgent(this, 'ledger-logs', {
      workload: ledger,
      output: LogOutput.forward({ host: 'fluentd.logging.svc' }),
    });
  }
}
