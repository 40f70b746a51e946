/**
 * The small cdk8s apps the cluster suite runs (test/cluster/proof.cluster-test.ts), built with the
 * library's own constructs and applied to the cluster as synthesized, unmodified. Also read by
 * test/proof-doc.test.ts, which recomputes the model's predictions printed in docs/proof.md.
 *
 * Every container writes its own timestamps: the seconds since the machine booted
 * (`/proc/uptime`, 10 ms resolution, the same clock inside a container and in the test run;
 * busybox `date` has no `%N`).
 */
import { ApiObject, Chart, Duration, JsonPatch, Testing } from 'cdk8s';
import { LogAgent, LogOutput, OtlpProtocol, SidecarCheck, SidecarMode, SidecarTimeline, WithEnvoy, WithLogAgent, WithSidecar, WithTracer } from '../../src';

/** busybox as the library emits it (`src/facts/images.ts`), built locally from Debian's busybox-static. */
export const BUSYBOX = 'busybox:1.36.1-musl';
const UID = 65532;
const SECURITY = {
  allowPrivilegeEscalation: false,
  capabilities: { drop: ['ALL'] },
  readOnlyRootFilesystem: true,
  runAsNonRoot: true,
  runAsUser: UID,
  runAsGroup: UID,
  seccompProfile: { type: 'RuntimeDefault' },
};
/** A shell function `now` that prints the uptime (no quotes: it goes inside single-quoted traps). */
const NOW_FN = 'now() { read u _ < /proc/uptime; echo $u; }';
const NOW = '$(now)';
/** How long the sidecar takes from SIGTERM to its exit (its trap sleeps this long). */
export const SIDECAR_STOP_SECONDS = 1.5;
/**
 * The sidecar's `stopTime` (whole seconds), its budget: the model's exit time; the legacy
 * wrapper kills it once this has passed after its SIGTERM, so it must exceed the real stop.
 */
export const SIDECAR_STOP_TIME = 2;
/** How long the app of a Job runs. */
export const APP_RUN_SECONDS = 2;

/** A sidecar that prints `<name>-start`, `<name>-term` at SIGTERM and `<name>-exit`, each with the uptime. */
export function stampingScript(name: string, stopSeconds: number): string {
  return [
    NOW_FN,
    `trap 'echo "${name}-term ${NOW}"; sleep ${stopSeconds}; echo "${name}-exit ${NOW}"; exit 0' TERM`,
    `echo "${name}-start ${NOW}"`,
    'while true; do sleep 3600 & wait $!; done',
  ].join('\n');
}

export type Layout = 'native' | 'legacy';

export interface ProofApp {
  /** The manifests as the chart synthesizes them. */
  readonly manifests: any[];
  /** The model's timeline of the workload. */
  readonly timeline: SidecarTimeline;
}

function modeOf(layout: Layout): SidecarMode {
  return layout === 'native' ? SidecarMode.NATIVE : SidecarMode.LEGACY;
}

/**
 * A Job (or a CronJob) whose app runs `APP_RUN_SECONDS` and exits 0, with one sidecar of
 * `WithSidecar` that takes `SIDECAR_STOP_SECONDS` to stop (its `stopTime`: `SIDECAR_STOP_TIME`).
 */
export function jobApp(version: string, layout: Layout, kind: 'Job' | 'CronJob'): ProofApp {
  const chart = new Chart(Testing.app(), 'proof');
  const name = `${kind.toLowerCase()}-${layout}`;
  const podSpec = {
    restartPolicy: 'Never',
    containers: [{
      name: 'app',
      image: BUSYBOX,
      imagePullPolicy: 'IfNotPresent',
      command: ['sh', '-c', `${NOW_FN}; echo "app-start ${NOW}"; sleep ${APP_RUN_SECONDS}; echo "app-exit ${NOW}"`],
      securityContext: SECURITY,
      resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { cpu: '100m', memory: '32Mi' } },
    }],
  };
  const jobSpec = { backoffLimit: 0, template: { metadata: { labels: { app: name } }, spec: podSpec } };
  const workload = new ApiObject(chart, name, kind === 'Job'
    ? { apiVersion: 'batch/v1', kind, metadata: { name }, spec: jobSpec }
    : { apiVersion: 'batch/v1', kind, metadata: { name }, spec: { schedule: '0 0 1 1 *', suspend: true, jobTemplate: { spec: jobSpec } } });
  new WithSidecar(chart, 'sidecar', {
    workload,
    kubernetesVersion: version,
    mode: modeOf(layout),
    containerName: 'sidecar',
    image: BUSYBOX,
    // not `sh`, which the app runs: the exit-with-app wrapper takes every process whose program
    // is a sidecar's for a sidecar's (docs/proof.md, "Found on the cluster")
    command: ['/bin/busybox', 'sh', '-c', stampingScript('sidecar', SIDECAR_STOP_SECONDS)],
    stopTime: Duration.seconds(SIDECAR_STOP_TIME),
  });
  return { manifests: chart.toJson(), timeline: SidecarTimeline.of(workload) };
}

/**
 * A Deployment of one replica whose app takes 1 s to stop, with two native sidecars of
 * `WithSidecar` (`first`, `second`, in that order) that take 1 s each: deleted, the kubelet stops
 * the app, then `second`, then `first`.
 */
export function orderApp(version: string): ProofApp {
  const chart = new Chart(Testing.app(), 'proof');
  const name = 'order';
  const workload = new ApiObject(chart, name, {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          terminationGracePeriodSeconds: 30,
          containers: [{
            name: 'app',
            image: BUSYBOX,
            imagePullPolicy: 'IfNotPresent',
            command: ['sh', '-c', stampingScript('app', 1)],
            securityContext: SECURITY,
            resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { cpu: '100m', memory: '32Mi' } },
          }],
        },
      },
    },
  });
  for (const s of ['first', 'second']) {
    new WithSidecar(chart, s, {
      workload,
      kubernetesVersion: version,
      mode: SidecarMode.NATIVE,
      containerName: s,
      image: BUSYBOX,
      command: ['sh', '-c', stampingScript(s, 1)],
      stopTime: Duration.seconds(2),
      appShutdownTime: Duration.seconds(2),
    });
  }
  return { manifests: chart.toJson(), timeline: SidecarTimeline.of(workload) };
}

/** How long the StatefulSet's sidecar takes to start listening (its startup check passes then). */
export const SLOW_START_SECONDS = 3;

/**
 * A StatefulSet of 3 replicas (OrderedReady: each pod Ready before the next is made) whose
 * sidecar of `WithSidecar` listens on :9000 only `SLOW_START_SECONDS` after its start, with a TCP
 * startup check every second. Native: the app starts once the check passed; legacy: both start
 * at once, and the pod is Ready once the check passed.
 */
export function statefulSetApp(version: string, layout: Layout): ProofApp {
  const chart = new Chart(Testing.app(), 'proof');
  const name = `ledger-${layout}`;
  const workload = new ApiObject(chart, name, {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name },
    spec: {
      replicas: 3,
      serviceName: name,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          terminationGracePeriodSeconds: 30,
          containers: [{
            name: 'app',
            image: BUSYBOX,
            imagePullPolicy: 'IfNotPresent',
            command: ['sh', '-c', stampingScript('app', 0)],
            securityContext: SECURITY,
            resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { cpu: '100m', memory: '32Mi' } },
          }],
        },
      },
    },
  });
  new WithSidecar(chart, 'sidecar', {
    workload,
    kubernetesVersion: version,
    mode: modeOf(layout),
    containerName: 'sidecar',
    image: BUSYBOX,
    command: ['/bin/busybox', 'sh', '-c', `sleep ${SLOW_START_SECONDS}; exec httpd -f -p 9000 -h /etc`],
    ports: [{ number: 9000, name: 'ready' }],
    startupCheck: SidecarCheck.tcp(9000, { period: Duration.seconds(1) }),
    stopTime: Duration.seconds(2),
    appShutdownTime: Duration.seconds(2),
  });
  return { manifests: chart.toJson(), timeline: SidecarTimeline.of(workload) };
}

/** How many numbered lines the app of the lost-lines experiment writes (`lnum=<i>;`, one write each). */
export const LINES_WRITTEN = 5000;
/** The log agents of the lost-lines and stdout experiments (`CLUSTER_AGENTS` chooses among them). */
export const LOG_AGENTS = ['fluent-bit', 'fluentd', 'otel-collector', 'vector'] as const;
export type LogAgentName = typeof LOG_AGENTS[number];
/** Each agent as the suite runs it: the library's factory with its defaults (the image it pins). */
export const LOG_AGENT_OF: Record<LogAgentName, () => LogAgent> = {
  'fluent-bit': () => LogAgent.fluentBit(),
  'fluentd': () => LogAgent.fluentd(),
  'otel-collector': () => LogAgent.otelCollector(),
  'vector': () => LogAgent.vector(),
};
/** How the app ends in the lost-lines experiment: its pod is deleted, or it is killed (`kill -9`). */
export type LinesEnd = 'delete' | 'kill';

/**
 * The lost-lines experiment: an app that creates `/var/log/app/app.log`, waits 3 s (every agent
 * has found the file: their scans run every second), writes `LINES_WRITTEN` numbered lines as
 * fast as busybox writes them and prints `app-written <uptime>`, with `WithLogAgent`
 * (`LogOutput.stdout()`: the agent's own log, read with `kubectl logs -c log-agent`, is the
 * output counted). `delete`: a Deployment of one replica whose app then waits; the suite deletes
 * the pod at once (the app exits 0 at SIGTERM). `kill`: a Job (`backoffLimit: 0`) whose writer
 * kills itself with `kill -9` after its last line (a child shell: PID 1 of a container cannot be
 * sent SIGKILL from inside it); the container exits 137 at once, the pod is Failed.
 */
export function linesApp(version: string, layout: Layout, agent: LogAgentName, end: LinesEnd): ProofApp {
  const chart = new Chart(Testing.app(), 'proof');
  const name = `lines-${end}`;
  const write = [
    NOW_FN,
    ': > /var/log/app/app.log',
    'sleep 3',
    `i=1; while [ $i -le ${LINES_WRITTEN} ]; do echo "lnum=$i;" >> /var/log/app/app.log; i=$((i + 1)); done`,
    `echo "app-written ${NOW}"`,
  ].join('\n');
  const command = end === 'kill'
    // the writer, a child of PID 1, kills itself; PID 1 exits with its status (137). `$$$$`: the
    // kubelet reduces `$$` in a command to `$`, so the shell gets `$$` (its own PID)
    ? `/bin/sh -c '${write}\nkill -9 $$$$' & wait $!; exit $?`
    : `${write}\ntrap 'echo "app-term ${NOW}"; exit 0' TERM\nwhile true; do sleep 3600 & wait $!; done`;
  const container = {
    name: 'app',
    image: BUSYBOX,
    imagePullPolicy: 'IfNotPresent',
    command: ['sh', '-c', command],
    securityContext: SECURITY,
    resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { cpu: '200m', memory: '32Mi' } },
  };
  const podSpec = { terminationGracePeriodSeconds: 30, containers: [container] };
  const workload = new ApiObject(chart, name, end === 'kill'
    ? { apiVersion: 'batch/v1', kind: 'Job', metadata: { name }, spec: { backoffLimit: 0, template: { metadata: { labels: { app: name } }, spec: { ...podSpec, restartPolicy: 'Never' } } } }
    : { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name }, spec: { replicas: 1, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: podSpec } } });
  new WithLogAgent(chart, 'logs', {
    workload,
    kubernetesVersion: version,
    mode: modeOf(layout),
    agent: LOG_AGENT_OF[agent](),
    output: LogOutput.stdout(),
  });
  return { manifests: chart.toJson(), timeline: SidecarTimeline.of(workload) };
}

/**
 * The distinct line numbers (1 to `LINES_WRITTEN`) an agent's output holds: Fluent Bit's and
 * Fluentd's JSON records, the collector's debug exporter (`Body: Str(lnum=<i>;)`), the app's own log.
 */
export function shippedLines(agentLog: string): number {
  const seen = new Set<number>();
  for (const m of agentLog.matchAll(/lnum=(\d+);/g)) {
    const n = Number(m[1]);
    if (n >= 1 && n <= LINES_WRITTEN) seen.add(n);
  }
  return seen.size;
}

/** The port the app behind Envoy listens on (127.0.0.1), and Envoy's pod-facing listener. */
export const ENVOY_APP_PORT = 8080;
export const ENVOY_LISTENER_PORT = 10000;
/** Envoy's `drainTime` in the drain experiment: the library's default. */
export const ENVOY_DRAIN_SECONDS = 5;
/**
 * How long the app behind Envoy keeps answering after its SIGTERM: `drainTime` (what it asks of an
 * app) and a second more, so that the requests sent at the end of the drain are answered: the
 * failures counted are then Envoy's, not the app's.
 */
export const ENVOY_APP_STOP_SECONDS = ENVOY_DRAIN_SECONDS + 1;
/** How long each request takes in the app (a CGI that sleeps): requests are in flight at any moment. */
export const ENVOY_REQUEST_SECONDS = 0.2;
/** The Envoy variants of the drain experiment: the library's two layouts, and Envoy written by hand. */
export const ENVOY_VARIANTS = ['native', 'legacy', 'hand-written'] as const;
export type EnvoyVariant = typeof ENVOY_VARIANTS[number];

/**
 * The app behind Envoy: busybox httpd on 127.0.0.1:8080 whose `/cgi-bin/slow` answers after
 * `ENVOY_REQUEST_SECONDS`; at SIGTERM it keeps answering for `ENVOY_APP_STOP_SECONDS` (what
 * `drainTime` asks of an app: docs/envoy.md), then exits 0. The CGI is written to an emptyDir
 * (the root filesystem is read-only).
 */
function envoyBackend(): any {
  const cgi = `#!/bin/sh\\nsleep ${ENVOY_REQUEST_SECONDS}\\nprintf "Content-Type: text/plain\\\\r\\\\n\\\\r\\\\nok\\\\n"\\n`;
  return {
    name: 'app',
    image: BUSYBOX,
    imagePullPolicy: 'IfNotPresent',
    command: ['sh', '-c', [
      NOW_FN,
      'mkdir -p /www/cgi-bin',
      `printf '${cgi}' > /www/cgi-bin/slow`,
      'chmod 755 /www/cgi-bin/slow',
      `httpd -f -p 127.0.0.1:${ENVOY_APP_PORT} -h /www & h=$!`,
      `trap 'echo "app-term ${NOW}"; sleep ${ENVOY_APP_STOP_SECONDS}; kill $h; echo "app-exit ${NOW}"; exit 0' TERM`,
      `echo "app-start ${NOW}"`,
      'while true; do sleep 3600 & wait $!; done',
    ].join('\n')],
    ports: [{ containerPort: ENVOY_APP_PORT, name: 'app' }],
    volumeMounts: [{ name: 'www', mountPath: '/www' }],
    securityContext: SECURITY,
    resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { cpu: '500m', memory: '32Mi' } },
  };
}

/**
 * The Envoy drain experiment: a Deployment of one replica, the app of `envoyBackend` behind Envoy.
 * `native` and `legacy`: `WithEnvoy` (its defaults: `drainTime` 5 s, `appShutdownTime` 10 s);
 * `hand-written`: the same Envoy image and the same config (the library's own ConfigMap, taken
 * from the legacy chart) in a plain container as a hand-written manifest would have it: started
 * with the app, no `preStop` hook, no drain, SIGTERM with the app.
 */
export function envoyDrainApp(version: string, variant: EnvoyVariant): { manifests: any[] } {
  const chart = new Chart(Testing.app(), 'proof');
  const name = `envoy-${variant}`;
  const workload = new ApiObject(chart, name, {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          containers: [envoyBackend()],
          volumes: [{ name: 'www', emptyDir: { sizeLimit: '1Mi' } }],
        },
      },
    },
  });
  if (variant !== 'hand-written') {
    new WithEnvoy(chart, 'envoy', { workload, kubernetesVersion: version, mode: modeOf(variant), appPort: ENVOY_APP_PORT });
    return { manifests: chart.toJson() };
  }
  // the library's config, unmodified: its ConfigMap and the container's mount and args
  const library = envoyDrainApp(version, 'legacy').manifests;
  const configMap = library.find(m => m.kind === 'ConfigMap');
  const libraryPod = library.find(m => m.kind === 'Deployment').spec.template.spec;
  const libraryEnvoy = libraryPod.containers.find((c: any) => c.name === 'envoy');
  const configVolume = libraryPod.volumes.find((v: any) => v.configMap?.name === configMap.metadata.name);
  new ApiObject(chart, 'envoy-config', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: configMap.metadata.name }, data: configMap.data });
  const spec = (workload.toJson() as any).spec.template.spec;
  workload.addJsonPatch(
    JsonPatch.add('/spec/template/spec/containers/1', {
      name: 'envoy',
      image: libraryEnvoy.image,
      imagePullPolicy: 'IfNotPresent',
      command: libraryEnvoy.command,
      // the library's args but its drain options (hand-written: Envoy's defaults)
      args: ['--config-path', libraryEnvoy.args[libraryEnvoy.args.indexOf('--config-path') + 1], '--concurrency', '2', '--disable-hot-restart'],
      ports: libraryEnvoy.ports,
      readinessProbe: libraryEnvoy.readinessProbe,
      volumeMounts: libraryEnvoy.volumeMounts.filter((m: any) => m.name === configVolume.name),
      securityContext: libraryEnvoy.securityContext,
      resources: libraryEnvoy.resources,
    }),
    JsonPatch.add(`/spec/template/spec/volumes/${spec.volumes.length}`, configVolume),
  );
  return { manifests: chart.toJson() };
}

/**
 * The startup experiment's variants: native, legacy holding the app until Envoy is ready (the
 * default), legacy without the hold, legacy holding it until Envoy and the collector are ready
 * (`holdApplicationUntilCollectorStarts` too).
 */
export const STARTUP_VARIANTS = ['native', 'legacy-hold', 'legacy-no-hold', 'legacy-collector-hold'] as const;
export type StartupVariant = typeof STARTUP_VARIANTS[number];
/** Envoy's outbound port the app calls at its start (an upstream to the app's own server). */
export const STARTUP_UPSTREAM_PORT = 15001;

/**
 * The startup experiment: a Deployment whose app, at its very start, starts its own server on
 * 127.0.0.1:8080 (busybox httpd, bound before the command returns), then sends one request
 * through Envoy (`WithEnvoy`'s upstream on 127.0.0.1:15001, routed to that server) and one
 * OTLP/HTTP export to the collector of `WithTracer` (`$OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces`,
 * an empty JSON request), each once (`wget -T 2`), and prints `envoy-ok`/`envoy-fail` and
 * `otlp-ok`/`otlp-fail` with the uptime (and wget's message after a failure). `legacy-hold`: `holdApplicationUntilProxyStarts` as by
 * default; `legacy-no-hold`: turned off; `legacy-collector-hold`: Envoy's as by default and WithTracer's
 * `holdApplicationUntilCollectorStarts`. The collector's exporter points at a name that does not
 * resolve: the receiver answers whatever the export does.
 */
export function startupApp(version: string, variant: StartupVariant): ProofApp {
  const chart = new Chart(Testing.app(), 'proof');
  const name = `startup-${variant}`;
  // on failure, wget's message (its last line) after the stamp
  const once = (what: string, cmd: string) =>
    `if e=$(${cmd} 2>&1 > /dev/null); then echo "${what}-ok ${NOW}"; else echo "${what}-fail ${NOW} $(echo "$e" | tail -1)"; fi`;
  const workload = new ApiObject(chart, name, {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          containers: [{
            name: 'app',
            image: BUSYBOX,
            imagePullPolicy: 'IfNotPresent',
            command: ['sh', '-c', [
              NOW_FN,
              `echo "app-start ${NOW}"`,
              'echo ok > /www/index.html',
              `httpd -p 127.0.0.1:${ENVOY_APP_PORT} -h /www`,
              once('envoy', `wget -q -T 2 -O - http://127.0.0.1:${STARTUP_UPSTREAM_PORT}/index.html`),
              once('otlp', "wget -q -T 2 -O - --header 'Content-Type: application/json' --post-data '{}' \"$OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces\""),
              'trap \'exit 0\' TERM',
              'while true; do sleep 3600 & wait $!; done',
            ].join('\n')],
            ports: [{ containerPort: ENVOY_APP_PORT, name: 'app' }],
            volumeMounts: [{ name: 'www', mountPath: '/www' }],
            securityContext: SECURITY,
            resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { cpu: '200m', memory: '32Mi' } },
          }],
          volumes: [{ name: 'www', emptyDir: { sizeLimit: '1Mi' } }],
        },
      },
    },
  });
  const mode = variant === 'native' ? SidecarMode.NATIVE : SidecarMode.LEGACY;
  new WithEnvoy(chart, 'envoy', {
    workload,
    kubernetesVersion: version,
    mode,
    appPort: ENVOY_APP_PORT,
    upstreams: [{ name: 'self', localPort: STARTUP_UPSTREAM_PORT, host: '127.0.0.1', port: ENVOY_APP_PORT }],
    ...(variant === 'legacy-no-hold' ? { holdApplicationUntilProxyStarts: false } : {}),
  });
  new WithTracer(chart, 'tracer', {
    workload,
    kubernetesVersion: version,
    mode,
    exporterEndpoint: 'collector.invalid:4317',
    exporterTls: false,
    protocol: OtlpProtocol.HTTP_PROTOBUF,
    ...(variant === 'legacy-collector-hold' ? { holdApplicationUntilCollectorStarts: true } : {}),
  });
  return { manifests: chart.toJson(), timeline: SidecarTimeline.of(workload) };
}

/**
 * The seed's experiment (issue 51): what an app prints to STDOUT, not to a file. The sources the
 * library reads it from (`WithLogAgent` `captureStdout`, `podLogs`), and the baseline the seed
 * describes: a Fluent Bit sidecar written by hand in the legacy layout.
 */
export const STDOUT_SOURCES = ['capture', 'pod-logs'] as const;
export type StdoutSource = typeof STDOUT_SOURCES[number];
/** `delete`: a Deployment's pod deleted; `kill-job`: the app of a Job killed with kill -9; `kill-deployment`: the same in a Deployment, restarted in place. */
export const STDOUT_ENDS = ['delete', 'kill-job', 'kill-deployment'] as const;
export type StdoutEnd = typeof STDOUT_ENDS[number];
/** One cell: the library with an agent, a layout and a source, or the hand-written baseline. */
export interface StdoutVariant {
  readonly agent: LogAgentName | 'hand-written';
  readonly layout: Layout;
  readonly source: StdoutSource;
}
/**
 * The cells: every agent of the suite in both layouts with both sources, except Fluentd with
 * `podLogs` (its partial-line join needs fluent-plugin-concat, which the suite's Fluentd image,
 * built as the default one, does not have: `LogAgent.fluentd()` refuses it); and the baseline.
 * The collector's debug exporter prints each record's body as `Body: Str(lnum=<i>;)`.
 */
export const STDOUT_VARIANTS: StdoutVariant[] = [
  ...LOG_AGENTS.flatMap(agent => (['native', 'legacy'] as const).flatMap(layout => STDOUT_SOURCES
    .filter(source => !(agent === 'fluentd' && source === 'pod-logs'))
    .map(source => ({ agent, layout, source })))),
  { agent: 'hand-written', layout: 'legacy', source: 'pod-logs' },
];

/** What `CLUSTER_AGENTS` may name: the agents of the suite, and the stdout experiment's hand-written baseline. */
export const CLUSTER_AGENT_NAMES: ReadonlyArray<string> = [...LOG_AGENTS, 'hand-written'];

/**
 * `CLUSTER_AGENTS=otel-collector` (a comma list): the agents the lines and stdout experiments run,
 * all when unset or empty; an unknown name is an error.
 */
export function agentFilter(value: string | undefined): (agent: string) => boolean {
  const chosen = (value ?? '').split(',').map(s => s.trim()).filter(Boolean);
  for (const a of chosen) if (!CLUSTER_AGENT_NAMES.includes(a)) throw new Error(`CLUSTER_AGENTS: unknown agent ${a} (${CLUSTER_AGENT_NAMES.join(', ')})`);
  return agent => chosen.length === 0 || chosen.includes(agent);
}

/** The image the hand-written baseline runs (the library's pin: src/facts/images.ts). */
const FLUENT_BIT_IMAGE = 'fluent/fluent-bit:5.1.1';

/**
 * The hand-written baseline as the seed describes it, as such manifests are found: a Fluent Bit
 * container beside the app in `spec.containers`, tailing the app container's kubelet log files
 * with the `cri` parser, to stdout, with Fluent Bit's defaults otherwise (`Refresh_Interval` 60 s,
 * `Grace` 5 s; `Flush 1` as the examples write it, the default too), except `Read_from_Head`, so
 * that a late start costs no first lines (only the last ones are measured); no `preStop`, so it
 * gets SIGTERM when the app does; run as root to read root's files, a hostPath of /var/log/pods.
 */
function handWrittenFluentBit(chart: Chart, name: string): { container: any; volumes: any[] } {
  const config = [
    '[SERVICE]', '    Flush 1', '    Log_Level info', '',
    '[INPUT]', '    Name tail', '    Path /var/log/pods/${POD_NAMESPACE}_${POD_NAME}_${POD_UID}/app/*.log', '    multiline.parser cri',
    '    Read_from_Head true', '',
    '[OUTPUT]', '    Name stdout', '    Match *', '    Format json_lines', '',
  ].join('\n');
  new ApiObject(chart, `${name}-fluent-bit`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${name}-fluent-bit` }, data: { 'fluent-bit.conf': config } });
  const field = (n: string, p: string) => ({ name: n, valueFrom: { fieldRef: { fieldPath: p } } });
  return {
    container: {
      name: 'log-agent',
      image: FLUENT_BIT_IMAGE,
      imagePullPolicy: 'IfNotPresent',
      args: ['--config', '/fluent-bit/etc/custom/fluent-bit.conf'],
      env: [field('POD_NAME', 'metadata.name'), field('POD_NAMESPACE', 'metadata.namespace'), field('POD_UID', 'metadata.uid')],
      resources: { requests: { cpu: '20m', memory: '32Mi' }, limits: { cpu: '200m', memory: '128Mi' } },
      volumeMounts: [
        { name: 'config', mountPath: '/fluent-bit/etc/custom' },
        { name: 'pods', mountPath: '/var/log/pods', readOnly: true },
      ],
    },
    volumes: [
      { name: 'config', configMap: { name: `${name}-fluent-bit` } },
      { name: 'pods', hostPath: { path: '/var/log/pods', type: 'Directory' } },
    ],
  };
}

/** The lines the app of the seed's experiment prints at its SIGTERM before it exits (its shutdown log). */
export const STDOUT_SHUTDOWN_LINES = 5;

/**
 * The seed's experiment: an app that waits 3 s and prints numbered lines to its stdout
 * (`lnum=<i>;`, one write each). `delete`: a Deployment of one replica whose app prints 50 lines
 * every 0.1 s (up to `LINES_WRITTEN`) and says `app-printing` when it begins; the suite deletes
 * the pod once it has seen that, so the app is still printing when it gets SIGTERM; then, as apps
 * do, it logs its shutdown (`STDOUT_SHUTDOWN_LINES` more numbered lines) and exits 0. The lines
 * written are counted in the app's own log (`kubectl logs -c app`, followed to its end).
 * `kill-job`: a Job (`backoffLimit: 0`) whose writer prints `LINES_WRITTEN` lines as fast as
 * busybox `sh` prints them and kills itself with `kill -9` (exit 137). `kill-deployment`: the same
 * in a Deployment: the kubelet restarts the container in place, and the restarted app prints only
 * `app-restarted` (a marker on an emptyDir of its own says the lines are written). The agent's
 * output is `LogOutput.stdout()`, its own log, whose distinct line numbers are counted.
 */
export function stdoutApp(version: string, variant: StdoutVariant, end: StdoutEnd): { manifests: any[] } {
  const chart = new Chart(Testing.app(), 'proof');
  const name = `stdout-${end}`;
  const write = [
    NOW_FN,
    'sleep 3',
    `i=1; while [ $i -le ${LINES_WRITTEN} ]; do echo "lnum=$i;"; i=$((i + 1)); done`,
    ': > /state/done',
    `echo "app-written ${NOW}"`,
  ].join('\n');
  // (a trapped SIGTERM ends the loop after the current `sleep 0.1`)
  const printing = [
    NOW_FN,
    "t=; trap 't=1' TERM",
    'sleep 3',
    'echo "app-printing"',
    `i=1; while [ -z "$t" ] && [ $i -le ${LINES_WRITTEN} ]; do j=0; while [ $j -lt 50 ]; do echo "lnum=$i;"; i=$((i + 1)); j=$((j + 1)); done; sleep 0.1; done`,
    'while [ -z "$t" ]; do sleep 0.1; done',
    `k=0; while [ $k -lt ${STDOUT_SHUTDOWN_LINES} ]; do echo "lnum=$i; shutting down"; i=$((i + 1)); k=$((k + 1)); done`,
    `echo "app-term ${NOW}"`,
    'exit 0',
  ].join('\n');
  const restarted = `${NOW_FN}\nif [ -e /state/done ]; then echo "app-restarted ${NOW}"; trap 'exit 0' TERM; while true; do sleep 3600 & wait $!; done; fi\n`;
  const command = end === 'delete'
    ? printing
    // the writer, a child of the container's first process, kills itself; `$$$$`: the kubelet
    // reduces `$$` in a command to `$`, so the shell gets `$$` (its own PID)
    : `${restarted}/bin/sh -c '${write}\nkill -9 $$$$' & wait $!; exit $?`;
  const container = {
    name: 'app',
    image: BUSYBOX,
    imagePullPolicy: 'IfNotPresent',
    command: ['sh', '-c', command],
    securityContext: SECURITY,
    resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { cpu: '200m', memory: '32Mi' } },
    volumeMounts: [{ name: 'state', mountPath: '/state' }],
  };
  const hand = variant.agent === 'hand-written' ? handWrittenFluentBit(chart, name) : undefined;
  const podSpec = {
    terminationGracePeriodSeconds: 30,
    containers: [container, ...(hand ? [hand.container] : [])],
    volumes: [{ name: 'state', emptyDir: {} }, ...(hand?.volumes ?? [])],
  };
  const job = end === 'kill-job';
  const workload = new ApiObject(chart, name, job
    ? { apiVersion: 'batch/v1', kind: 'Job', metadata: { name }, spec: { backoffLimit: 0, template: { metadata: { labels: { app: name } }, spec: { ...podSpec, restartPolicy: 'Never' } } } }
    : { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name }, spec: { replicas: 1, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: podSpec } } });
  if (variant.agent !== 'hand-written') {
    new WithLogAgent(chart, 'logs', {
      workload,
      kubernetesVersion: version,
      mode: modeOf(variant.layout),
      agent: LOG_AGENT_OF[variant.agent](),
      output: LogOutput.stdout(),
      ...(variant.source === 'capture' ? { captureStdout: {} } : { podLogs: {} }),
    });
  }
  return { manifests: chart.toJson() };
}
