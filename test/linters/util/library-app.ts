/**
 * The library-only app of `npm run test:linters`: each construct alone on one workload, and the
 * same app without it, so that what a linter says about the difference is what the library adds
 * (or hides). The app's own container is written as a linter would have it (pinned image, pull
 * policy Always, requests and limits of every resource, a readiness probe that does not depend on
 * Envoy, uid and gid above 10000), so that its own findings are few; the comparison does not rely
 * on that, only the reading of the report does.
 */
import { ApiObject, App, Chart, Cron, Duration, Size, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { stringify } from 'yaml';
import {
  AdoptSidecar, LogAgent, LogOutput, NativeSidecarGuard, SidecarCheck, SidecarWarnings, Sidecars, WithEnvoy, WithLogAgent, WithSidecar, WithTracer,
} from '../../../src';

export interface Variant {
  /** e.g. 'WithLogAgent fluent-bit on a Deployment' */
  readonly name: string;
  /** The workload kind. */
  readonly kind: 'Deployment' | 'CronJob';
  /** The probes of the app container: readiness and liveness, readiness only, or none. */
  readonly appProbes: 'both' | 'readiness' | 'none';
  /** Adds the constructs under test (absent from the app without the library). */
  readonly add: (chart: Chart, workload: kplus.Deployment | kplus.CronJob, minor: string) => void;
  /** Releases from which it exists (NativeSidecarGuard needs 1.30). */
  readonly fromMinor?: number;
}

const APP_IMAGE = 'ghcr.io/example/app:1.4.2';

/** An app container with a readiness probe that calls the app itself on 127.0.0.1 (so it holds behind Envoy too). */
function appContainer(probes: Variant['appProbes'], extra: Partial<kplus.ContainerProps> = {}): kplus.ContainerProps {
  return {
    name: 'app',
    image: APP_IMAGE,
    imagePullPolicy: kplus.ImagePullPolicy.ALWAYS,
    ports: [{ number: 8080 }],
    resources: {
      cpu: { request: kplus.Cpu.millis(100), limit: kplus.Cpu.millis(500) },
      memory: { request: Size.mebibytes(128), limit: Size.mebibytes(256) },
      ephemeralStorage: { request: Size.gibibytes(1), limit: Size.gibibytes(2) },
    },
    securityContext: { user: 10001, group: 10001, ensureNonRoot: true, readOnlyRootFilesystem: true },
    ...(probes !== 'none' ? { readiness: kplus.Probe.fromCommand(['wget', '-q', '-O', '/dev/null', 'http://127.0.0.1:8080/ready']) } : {}),
    ...(probes === 'both' ? { liveness: kplus.Probe.fromCommand(['wget', '-q', '-O', '/dev/null', 'http://127.0.0.1:8080/live']) } : {}),
    ...extra,
  };
}

export const VARIANTS: Variant[] = [
  ...(['fluentBit', 'vector', 'fluentd'] as const).map((agent): Variant => ({
    name: `WithLogAgent ${agent} on a Deployment`,
    kind: 'Deployment',
    appProbes: 'both',
    add: (chart, workload) => { new WithLogAgent(chart, 'logs', { workload, agent: LogAgent[agent]() }); },
  })),
  {
    name: 'WithLogAgent fluentBit on a Deployment whose app has no livenessProbe',
    kind: 'Deployment',
    appProbes: 'readiness',
    add: (chart, workload) => { new WithLogAgent(chart, 'logs', { workload }); },
  },
  {
    name: 'WithLogAgent fluentBit to Loki on a CronJob',
    kind: 'CronJob',
    appProbes: 'none',
    add: (chart, workload) => {
      new WithLogAgent(chart, 'logs', { workload, output: LogOutput.loki({ host: 'loki.monitoring.svc', labels: { app: 'report' } }) });
    },
  },
  {
    name: 'WithEnvoy (TLS, an upstream) on a Deployment',
    kind: 'Deployment',
    appProbes: 'both',
    add: (chart, workload) => {
      new WithEnvoy(chart, 'envoy', {
        workload: workload as kplus.Deployment,
        appPort: 8080,
        tls: { secret: { name: 'web-tls' } },
        upstreams: [{ name: 'payments', localPort: 15001, host: 'payments.shop.svc.cluster.local', port: 8080 }],
      });
    },
  },
  {
    name: 'WithEnvoy on a Deployment whose app has no readinessProbe',
    kind: 'Deployment',
    appProbes: 'none',
    add: (chart, workload) => { new WithEnvoy(chart, 'envoy', { workload: workload as kplus.Deployment, appPort: 8080 }); },
  },
  {
    name: 'WithTracer on a Deployment',
    kind: 'Deployment',
    appProbes: 'both',
    add: (chart, workload) => { new WithTracer(chart, 'tracer', { workload, exporterEndpoint: 'otel-collector.observability:4317', exporterTls: false }); },
  },
  {
    name: 'WithSidecar (a proxy of the user\'s) on a Deployment',
    kind: 'Deployment',
    appProbes: 'both',
    add: (chart, workload) => {
      new WithSidecar(chart, 'proxy', {
        workload,
        containerName: 'cloud-sql-proxy',
        image: 'gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.25.3',
        args: ['--port=5432', 'project:region:instance'],
        user: 65532,
        startupCheck: SidecarCheck.http(9090, { path: '/startup' }),
        livenessCheck: SidecarCheck.http(9090, { path: '/liveness', period: Duration.seconds(10), timeout: Duration.minutes(1) }),
        ports: [{ number: 9090, name: 'proxy-health' }],
        localPorts: [5432],
      });
    },
  },
  {
    name: 'AdoptSidecar (a container of the app\'s own) on a Deployment',
    kind: 'Deployment',
    appProbes: 'both',
    add: (chart, workload) => {
      new AdoptSidecar(chart, 'adopt', { workload, containerName: 'helper' });
    },
  },
  {
    name: 'NativeSidecarGuard (a ValidatingAdmissionPolicy) beside a Deployment',
    kind: 'Deployment',
    appProbes: 'both',
    fromMinor: 30,
    add: (chart) => { new NativeSidecarGuard(chart, 'guard', { namespaces: ['shop'] }); },
  },
];

export interface Built {
  readonly yaml: string;
  readonly manifests: any[];
  readonly warnings: string[];
}

/** The variant's app at `minor` ('1.27'), with the library's constructs or without them. */
export function build(variant: Variant, minor: string, withLibrary: boolean): Built {
  const app: App = Testing.app();
  const chart = new Chart(app, 'lib', { namespace: 'shop' });
  const helper = variant.name.startsWith('AdoptSidecar')
    ? [appContainer('none', { name: 'helper', image: 'ghcr.io/example/helper:2.0.1', ports: [{ number: 9091 }] })]
    : [];
  const containers = [appContainer(variant.appProbes), ...helper];
  const workload = variant.kind === 'CronJob'
    ? new kplus.CronJob(chart, 'report', { metadata: { name: 'report' }, containers, schedule: Cron.daily() })
    : new kplus.Deployment(chart, 'web', { metadata: { name: 'web' }, replicas: 2, containers });
  if (variant.kind === 'Deployment') {
    new kplus.Service(chart, 'svc', { metadata: { name: 'web' }, selector: workload as kplus.Deployment, ports: [{ port: 80, targetPort: 8080 }] });
  }
  // the target of every construct in the chart (read at synthesis)
  Sidecars.configure(chart, { kubernetesVersion: minor });
  if (withLibrary) variant.add(chart, workload as any, minor);
  const manifests = Testing.synth(chart);
  return {
    manifests,
    yaml: manifests.map(m => stringify(m)).join('---\n'),
    warnings: withLibrary ? SidecarWarnings.of(app) : [],
  };
}

/** A raw object's kind and name, for messages. */
export const describeObject = (o: ApiObject | any): string => `${o.kind}/${o.metadata?.name}`;
