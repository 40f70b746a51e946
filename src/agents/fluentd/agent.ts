/**
 * Fluentd as a log agent, all of it but the config writer (./config.ts): its options, its default
 * image, the factory's checks and the container it runs in.
 */
import { Duration } from 'cdk8s';
import { checkImage, checkListenPort, positiveSeconds } from '../../bind/checks';
import { DefaultImage, imageTagVersion, releaseRangeWarning, withoutDigest } from '../../facts/images';
import { Where } from '../../private/errors';
import { LogAgentContext, LogAgentSpec, OtherAgents, agentDiskRequest } from '../log-agent-spec';

// The config writer loads when a Fluentd sidecar renders: an app that ships with another agent does not load it.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const config = (): typeof import('./config') => require('./config');

/**
 * Options of the Fluentd agent.
 */
export interface FluentdOptions {
  /**
   * The Fluentd image (Debian based, with `tini` and `fluentd` on the PATH). The default image
   * ships Fluentd's core plugins only: stdout, forward and HTTP. For Loki, Elasticsearch or
   * OpenSearch give an image that also has `fluent-plugin-grafana-loki`,
   * `fluent-plugin-elasticsearch` or `fluent-plugin-opensearch`; with your own image the
   * config for those outputs is rendered and the plugin is assumed to be there.
   * @default 'fluent/fluentd:v1.19.3-debian-2.2'
   */
  readonly image?: string;
  /**
   * How often the output's buffer is flushed (`flush_interval`).
   * @default Duration.seconds(1)
   */
  readonly flushInterval?: Duration;
  /**
   * The time given to Fluentd after SIGTERM to flush its buffers (`flush_at_shutdown`) and
   * exit. Fluentd has no limit of its own: this is the share of the pod's grace period
   * reserved for it, after which the kubelet kills it. The output's connect and TLS timeouts
   * share it, less a second to exit; when one whole attempt (with `requestTimeout`) is longer,
   * the share is that attempt and the exit, so that one attempt always fits.
   * @default Duration.seconds(10)
   */
  readonly shutdownGrace?: Duration;
  /**
   * How long one request waits for the backend's answer before Fluentd fails it and retries
   * later (out_http `read_timeout`, out_forward `send_timeout`, Elasticsearch/OpenSearch
   * `request_timeout`). Fluentd uses the same timeout at shutdown as in normal operation: keep
   * it above the slowest answer your backend gives, or every flush to it fails and nothing is
   * delivered; a longer one lengthens the shutdown (see `shutdownGrace`).
   * @default Duration.seconds(15)
   */
  readonly requestTimeout?: Duration;
  /**
   * Port of in_monitor_agent on 0.0.0.0: the kubelet probes `GET /api/plugins.json`.
   * 1024 or above: the agent runs as non-root without NET_BIND_SERVICE.
   * @default 24220
   */
  readonly monitorPort?: number;
  /**
   * Accept an image of Fluentd older than 1.19.3. Before 1.19.3 in_monitor_agent still answers
   * `?debug=1` and `?with_ivars=...` with the plugins' settings (output passwords included) on
   * the pod IP, where the probes need it; keep other pods off `monitorPort` with a
   * NetworkPolicy if you set this.
   * @default false - an image tagged with a Fluentd version below 1.19.3 is refused
   */
  readonly allowMonitorDebugInfo?: boolean;
}

/**
 * The default image, pinned, with the upstream source of its tag and the releases the config is
 * written for (`Images`, the README's image table, the cluster's image list read it from the registry).
 */
const IMAGE = {
  // Not v1.19.3-debian-2.4: the -2.4 suffix belonged to v1.19.2 and was never published for v1.19.3.
  // Checked 2026-12-01: v1.19.3 (2026-08-07) is the newest tag of fluent/fluentd, and
  // v1.19.3-2.2 the newest of fluent/fluentd-docker-image (README "Supported tags" at its head);
  // v1.19/debian/Dockerfile at v1.19.3-2.2: `useradd -r` fluent, USER fluent, tini.
  // Checked again 2026-12-07: Fluentd 1.19.4 was reported (2026-12-01), but the fluent/fluentd repository's
  // snapshot reachable here stops at tag v1.19.3 (its last commit 2026-08-08) and RubyGems is not reachable:
  // 1.19.4 can be neither confirmed nor run from source here, so the pin stays at v1.19.3.
  image: 'fluent/fluentd:v1.19.3-debian-2.2',
  usedBy: 'LogAgent.fluentd()',
  source: 'fluent/fluentd-docker-image README.md "Supported tags" (`v1.19.3-debian-2.2`) and git tag v1.19.3-2.2 (v1.19/debian/Dockerfile)',
  // From 1.19.3 (in_monitor_agent's include_debug_info); the keys, the shutdown and the buffer
  // were read at v1.19.3 and run from source (test/agents/fluentd.agent-test.ts).
  releases: { program: 'Fluentd', from: '1.19.3', below: '1.20.0', checked: 'the keys, shutdown and buffering read at v1.19.3 and run from source' },
} as const satisfies DefaultImage;

/** Fluentd, registered in src/agents/registry.ts (`LogAgent.fluentd()`). */
export const FLUENTD_AGENT: LogAgentSpec<FluentdOptions> = {
  name: 'fluentd',
  factory: 'fluentd',
  title: 'Fluentd',
  names: ['fluentd'],
  // with its default image, which has the core plugins only (the others need a gem: FLUENTD_OUTPUT_PLUGIN)
  image: IMAGE,
  outputs: ['stdout', 'forward', 'http'],
  options: {
    image: 'string',
    flushInterval: 'duration',
    shutdownGrace: 'duration',
    requestTimeout: 'duration',
    monitorPort: 'number',
    allowMonitorDebugInfo: 'boolean',
  },

  lokiLabelValueProblem(v: string): string | undefined {
    return v.includes('"') ? "has a '\"', which Fluentd's Loki plugin sends backslash-escaped (fluent-plugin-grafana-loki `format_labels`)" : undefined;
  },

  check(who: Where, options: FluentdOptions): void {
    checkImage(who, 'image', options.image ?? IMAGE.image, IMAGE.image);
    if (options.monitorPort !== undefined) checkListenPort(who, 'monitorPort', options.monitorPort);
    positiveSeconds(who, 'flushInterval', options.flushInterval, 1);
    positiveSeconds(who, 'shutdownGrace', options.shutdownGrace, 10, 'Fluentd needs time to flush its buffer');
    positiveSeconds(who, 'requestTimeout', options.requestTimeout, 15, 'a request needs time to be answered');
  },

  render(options, ctx, others) {
    const flushSeconds = positiveSeconds(ctx.who, 'fluentd flushInterval', options.flushInterval, 1);
    const graceSeconds = positiveSeconds(ctx.who, 'fluentd shutdownGrace', options.shutdownGrace, 10, 'Fluentd needs time to flush its buffer');
    const requestSeconds = positiveSeconds(ctx.who, 'fluentd requestTimeout', options.requestTimeout, 15, 'a request needs time to be answered');
    const monitorPort = options.monitorPort ?? 24220;
    const image = options.image ?? IMAGE.image;
    const warning = imageRefusalsAndWarning(ctx, options, image, monitorPort, others);
    // the file buffer's `total_limit_size` (`<n>m`: Fluentd's sizes are 1024-based, lib/fluent/config/types.rb, v1.19.3)
    const bufferLimitMiB = Math.max(1, Math.floor(ctx.logVolumeSizeLimitMiB / 4));
    let text: string;
    try {
      text = config().renderFluentdConfig({
        otherAgents: others(ctx.output.type),
        logDirectory: ctx.logDirectory,
        filePattern: ctx.filePattern,
        posFile: `${ctx.logDirectory}/.fluentd-tail.pos`,
        bufferPath: `${ctx.logDirectory}/.fluentd-buffer`,
        bufferLimitMiB,
        flushIntervalSeconds: flushSeconds,
        shutdownGraceSeconds: graceSeconds,
        requestTimeoutSeconds: requestSeconds,
        monitorPort,
        output: ctx.output,
        secretVars: ctx.secretVars,
        sources: ctx.sources ?? {},
      });
    } catch (e) {
    // a value Fluentd's config cannot hold (src/private/values.ts), with the construct's path
      throw ctx.who.place(e);
    }
    return {
      image,
      // tini as PID 1, as in the image's own entrypoint; fluentd forwards SIGTERM to its worker.
      command: ['tini', '--', 'fluentd'],
      args: ['--config', `${ctx.configDirectory}/fluent.conf`],
      files: { 'fluent.conf': text },
      healthPort: monitorPort,
      healthPath: '/api/plugins.json',
      healthPortName: 'fluentd-mon',
      // Liveness on the same endpoint: in_monitor_agent answers it with `render_json(obj, code: 200)`
      // whatever the outputs' retry state (lib/fluent/plugin/in_monitor_agent.rb, v1.19.3), from
      // the http_server helper's own thread (lib/fluent/plugin_helper/http_server.rb `thread_create`)
      // in the worker process: it stops answering when the worker is stopped or holds Ruby's lock.
      livenessPath: '/api/plugins.json',
      // The image's `fluent` system user.
      uid: 999,
      shutdown: config().fluentdShutdown(graceSeconds, ctx.output, requestSeconds),
      env: [],
      // The supervisor opens its socket (and chunk backups go) under Dir.tmpdir.
      scratchDirectory: '/tmp',
      defaultResources: {
        cpuRequest: '50m',
        cpuLimit: '500m',
        memoryRequest: '128Mi',
        memoryLimit: '256Mi',
        // every output but stdout has the file buffer (src/agents/fluentd/config.ts `output`)
        ephemeralStorageRequest: agentDiskRequest(ctx.output.type === 'stdout' ? 0 : bufferLimitMiB),
      },
      ...(warning ? { warnings: [warning] } : {}),
    };
  },
};

/**
 * What the image allows: refused where it leaks its outputs' settings (before 1.19.3) or lacks the
 * gem an output or podLogs needs (the default image has the core plugins only); the release-range
 * warning of an upstream image otherwise.
 */
function imageRefusalsAndWarning(
  ctx: LogAgentContext, options: FluentdOptions, image: string, monitorPort: number, others: OtherAgents,
): string | undefined {
  // Only the upstream images' tags are Fluentd versions; the tag of an image of your own is not.
  const repo = image.split('@')[0].replace(/:[^/]*$/, '');
  const upstream = ['fluentd', 'fluentd-kubernetes-daemonset'].includes(repo.slice(repo.lastIndexOf('/') + 1));
  const v = upstream ? imageTagVersion(image) : undefined;
  const leaksDebugInfo = v !== undefined && (v.major < 1 || (v.major === 1 && (v.minor < 19 || (v.minor === 19 && v.patch < 3))));
  if (leaksDebugInfo && !options.allowMonitorDebugInfo) {
    throw ctx.who.error(
      `Fluentd image '${image}' is older than 1.19.3, whose in_monitor_agent (on the pod IP for the probes) ` +
    "still answers ?debug=1 and ?with_ivars= with the plugins' settings, output passwords included",
      image, `Use ${IMAGE.image} or later, or set \`allowMonitorDebugInfo: true\` and keep other pods off port ${monitorPort} with a NetworkPolicy`, '. ',
    );
  }
  // The tag of an image of your own names your release, not Fluentd's: read as naming none.
  const untagged = image.split('@')[0].replace(/:[^/]*$/, '');
  const warning = releaseRangeWarning(ctx.who, upstream ? image : untagged, IMAGE)?.replace(`'${untagged}'`, `'${image}'`);
  const plugin = config().FLUENTD_OUTPUT_PLUGIN[ctx.output.type];
  if (plugin !== undefined && withoutDigest(image) === IMAGE.image) {
    throw ctx.who.error(
      `the ${ctx.output.type} output needs the ${plugin} gem, which the default Fluentd image ${IMAGE.image} ` +
    'does not ship (it has the core plugins only: stdout, forward, http)',
      image, 'Pass `LogAgent.fluentd({ image })` with an image ' +
    `that has it (e.g. one built FROM ${IMAGE.image} with \`gem install ${plugin}\`), or use ${others(ctx.output.type)}, ` +
    'which support this output natively', '. ',
    );
  }
  if (ctx.sources?.podLogsEnv !== undefined && withoutDigest(image) === IMAGE.image) {
    throw ctx.who.error(
      `podLogs joins the kubelet's partial lines (CRI tag P) with the fluent-plugin-concat gem, which the default Fluentd image ${IMAGE.image} ` +
    'does not ship', image, 'Pass `LogAgent.fluentd({ image })` with an image that has it (one built FROM ' +
    `${IMAGE.image} with \`gem install fluent-plugin-concat\`), or use ${others()}, whose CRI readers are built in`, '. ',
    );
  }
  return warning;
}
