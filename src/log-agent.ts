import { Duration } from 'cdk8s';
import { FLUENT_BIT_CONFIG_FILE, fluentBitBufferMiB, fluentBitShutdown, renderFluentBitConfig } from './agents/fluent-bit/config';
import { FLUENTD_OUTPUT_PLUGIN, fluentdShutdown, renderFluentdConfig } from './agents/fluentd/config';
import { LogOutputConfig } from './agents/log-output-config';
import { ShutdownModel } from './agents/shutdown-model';
import { VECTOR_SECRETS, renderVectorConfig, vectorHealthEndpoint, vectorShutdown } from './agents/vector/config';
import { checkImage, checkListenPort, durationSeconds, positiveSeconds, snapshot } from './bind/checks';
import { DEFAULT_IMAGES, imageTagVersion, releaseRangeWarning, withoutDigest } from './facts/images';
import { Images } from './images';
import { Where } from './private/errors';
import { Json } from './private/json';
import { shared } from './private/memo';

/**
 * What a log agent is told by `WithLogAgent`. Every agent gets the same context, so a new
 * agent plugs in by implementing `_render` alone: the engine never changes.
 * @internal
 */
export interface LogAgentContext {
  /** `WithLogAgent 'chart/logs'`, for messages. */
  readonly who: Where;
  /** The shared directory the app writes log files into (the agent mounts it too). */
  readonly logDirectory: string;
  /** Glob of the files to tail inside logDirectory. */
  readonly filePattern: string;
  /** `sizeLimit` of the log volume in MiB (an agent that buffers on it stays well inside). */
  readonly logVolumeSizeLimitMiB: number;
  /** Where the agent's ConfigMap is mounted. */
  readonly configDirectory: string;
  readonly output: LogOutputConfig;
  /** secret id -> the env var that holds it, or the file (`LogAgentRendering.secretDirectory`): see outputSecretEnv. */
  readonly secretVars: Record<string, string>;
  /**
   * The other sources the agent reads besides `logDirectory/filePattern` (docs/log-agents.md "Three ways in").
   * @default - the log files only
   */
  readonly sources?: AgentSources;
}

/** The sources besides the app's own log files (`WithLogAgent` `captureStdout`, `podLogs`). @internal */
export interface AgentSources {
  /** The glob of the capture files (`captureStdout`). */
  readonly capture?: string;
  /** The env var with the glob of the app container's kubelet log files, CRI format (`podLogs`). */
  readonly podLogsEnv?: string;
}

/** What a log agent gives back: its container details and config files. @internal */
export interface LogAgentRendering {
  readonly image: string;
  readonly command: string[];
  readonly args: string[];
  /** file name -> content, mounted at the context's configDirectory. */
  readonly files: Record<string, string>;
  /** Port and path of a health endpoint the kubelet can reach. */
  readonly healthPort: number;
  readonly healthPath: string;
  /** Name of the health port (at most 15 characters). */
  readonly healthPortName: string;
  /**
   * The path of the liveness probe, on the health port: one that answers while the process is
   * alive and does NOT fail while the backend is down (src/agents/liveness.ts).
   * @default - `healthPath`, the startup probe's endpoint
   */
  readonly livenessPath?: string;
  /** Non-root uid the image runs as. */
  readonly uid: number;
  /** The agent's shutdown (the model beside its renderer): stop time and read delay. */
  readonly shutdown: ShutdownModel;
  /** Extra env (besides the output's secrets and the pod's identity). */
  readonly env: Json[];
  /**
   * Where the agent reads the output's secrets as files, each named after its name in the
   * context's `secretVars` (`WithLogAgent` mounts them there from their Secrets, read-only)
   * instead of environment variables.
   * @default - environment variables, named as in `secretVars`
   */
  readonly secretDirectory?: string;
  /**
   * A directory the agent must be able to write besides the shared log directory (the root
   * filesystem stays read-only), e.g. `/tmp` for Fluentd's supervisor socket. `WithLogAgent`
   * mounts a small emptyDir of the agent's own there.
   */
  readonly scratchDirectory?: string;
  /** CPU and memory requests and limits; the ephemeral-storage request the agent's disk buffer needs (`agentDiskRequest`). */
  readonly defaultResources: { cpuRequest: string; cpuLimit: string; memoryRequest: string; memoryLimit: string; ephemeralStorageRequest: string };
  /** Warnings about the agent as given, e.g. an image outside its release range (`releaseRangeWarning`). */
  readonly warnings?: string[];
}

/**
 * What an agent keeps on the pod's disk besides its buffer, in MiB: the offsets DB (Fluent Bit's
 * SQLite file with its -wal and -shm, Fluentd's pos file, Vector's checkpoints) and the one chunk
 * Fluent Bit may write past its buffer's limit (`FLB_INPUT_CHUNK_FS_MAX_SIZE`, 2,048,000 bytes,
 * include/fluent-bit/flb_input_chunk.h, v5.1.1).
 */
const AGENT_FILES_MIB = 4;

/**
 * An agent's ephemeral-storage request: the limit of its disk buffer on the log volume, in MiB,
 * and what it keeps beside it. A request, never a limit (docs/log-agents.md, "Disk: an
 * ephemeral-storage request, no limit").
 */
function agentDiskRequest(bufferMiB: number): string {
  return `${bufferMiB + AGENT_FILES_MIB}Mi`;
}

/**
 * A built-in multiline parser of Fluent Bit (`multiline.parser` of the tail input): joins the
 * lines of one record, e.g. a stack trace, into one record.
 * @see https://docs.fluentbit.io/manual/administration/configuring-fluent-bit/multiline-parsing
 */
export enum FluentBitMultilineParser {
  /** Java stack traces (`Exception ...` then `at ...` lines). */
  JAVA = 'java',
  /** Go panics and goroutine dumps. */
  GO = 'go',
  /** Python tracebacks. */
  PYTHON = 'python',
  /** Ruby backtraces. */
  RUBY = 'ruby',
  /** Lines in the CRI log format (containerd, CRI-O), joining partial lines. */
  CRI = 'cri',
  /** Lines in Docker's JSON log format, joining partial lines. */
  DOCKER = 'docker',
}

/**
 * The format of the config file Fluent Bit is given. Both hold the same config; Fluent Bit picks
 * the reader by the file's extension (`fluent-bit.conf` or `fluent-bit.yaml`).
 * @see https://docs.fluentbit.io/manual/administration/configuring-fluent-bit/yaml
 */
export enum FluentBitConfigFormat {
  /** The classic format (`[SERVICE]`, `[INPUT]`, ... and `Key Value` lines), announced deprecated at the end of 2026. */
  CLASSIC = 'classic',
  /** The YAML format (`service:` and `pipeline:` with `inputs`, `filters`, `outputs`), which replaces it. */
  YAML = 'yaml',
}

/**
 * Options of the Fluent Bit agent.
 */
export interface FluentBitOptions {
  /**
   * The Fluent Bit image. The rendered config is written for Fluent Bit 5.1.x: another release
   * (or a tag without one) is a warning at synthesis (`SidecarWarnings`).
   * @default 'fluent/fluent-bit:5.1.1'
   */
  readonly image?: string;
  /**
   * How often Fluent Bit flushes records to the output (`[SERVICE] Flush`).
   * @default Duration.seconds(1)
   */
  readonly flushInterval?: Duration;
  /**
   * How long Fluent Bit keeps flushing after SIGTERM (`[SERVICE] Grace`); keep it above
   * `flushInterval`. Counts toward the pod's grace period, with a second to exit and, for a
   * network output, a send in flight at the end (`net.connect_timeout` + `net.io_timeout`, 5 s
   * each, noticed up to 2.5 s late each): 21 s by default, `stdout` 6 s.
   * @default Duration.seconds(5)
   */
  readonly grace?: Duration;
  /**
   * Port of Fluent Bit's HTTP server (health check for the probes, metrics).
   * 1024 or above: the agent runs as non-root without NET_BIND_SERVICE.
   * @default 2020
   */
  readonly httpPort?: number;
  /**
   * Built-in multiline parsers, tried in order (`multiline.parser`): the lines of a stack trace
   * become one record. A record is emitted once its next line starts a new one, or 4 s after its
   * last line (the parsers' flush timeout), which the agent's shutdown budget counts.
   * @default - none: every line is a record
   */
  readonly multilineParsers?: FluentBitMultilineParser[];
  /**
   * The format of the config file: the same config either way, proven with the real Fluent Bit
   * 5.1.1 (`--dry-run` of every output and the delivery tests over both). Fluent Bit announced
   * the classic format deprecated at the end of 2026 in favour of YAML; the default stays classic
   * for now so that existing ConfigMaps (`fluent-bit.conf`) do not change under you.
   * @default FluentBitConfigFormat.CLASSIC
   */
  readonly configFormat?: FluentBitConfigFormat;
}

/**
 * Options of the Vector agent.
 */
export interface VectorOptions {
  /**
   * The Vector image. The rendered config is written for Vector 0.54.0 up to, not including,
   * 0.58.0; an image outside that range, or whose tag names no version, is a warning.
   * @default 'timberio/vector:0.57.0-distroless-libc'
   */
  readonly image?: string;
  /**
   * How long Vector keeps draining its pipeline after SIGTERM before it exits anyway
   * (`--graceful-shutdown-limit-secs`). Counts toward the pod's grace period.
   * @default Duration.seconds(5)
   */
  readonly gracefulShutdownLimit?: Duration;
  /**
   * Port of the probes' endpoint `GET /health`, bound to 0.0.0.0 so that the kubelet can reach
   * it. It is an `http_server` source that answers only that request (its events go nowhere),
   * not Vector's API, which stays off (the name is kept from the releases that probed the API).
   * 1024 or above: the agent runs as non-root without NET_BIND_SERVICE.
   * @default 8686
   */
  readonly apiPort?: number;
  /**
   * No effect (kept so that existing code compiles). It let Vector 0.55+ serve the probes from
   * its API, which also serves the gRPC observability API; the probes no longer use the API,
   * which stays off with any image.
   * @default false
   * @deprecated the probes use an http_server source; Vector's API is off with every image.
   */
  readonly exposeGrpcApi?: boolean;
}

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
 * The log shipper that runs in the sidecar. Choose one with a static method.
 */
export abstract class LogAgent {
  /**
   * Fluent Bit: tails the log files, keeps offsets and a filesystem buffer in `.fluent-bit/` on
   * the shared volume (retrying without a count limit, so an outage or a restart loses nothing
   * the buffer holds), flushes for `grace` after SIGTERM, and serves `/api/v1/health` for the probes.
   * @see https://docs.fluentbit.io/manual/
   */
  public static fluentBit(options: FluentBitOptions = {}): LogAgent {
    options = snapshot(options); // each option read once: checked and used, the same value
    const who = new Where('LogAgent.fluentBit()');
    checkImage(who, 'image', options.image ?? Images.FLUENT_BIT, Images.FLUENT_BIT);
    checkMultilineParsers(who, options.multilineParsers);
    checkConfigFormat(who, options.configFormat);
    if (options.httpPort !== undefined) checkListenPort(who, 'httpPort', options.httpPort);
    positiveSeconds(who, 'flushInterval', options.flushInterval, 1);
    durationSeconds(who, 'grace', options.grace, 5);
    return new FluentBitAgent(options);
  }

  /**
   * Vector: tails the log files with its file source (checkpoints in its data_dir on the
   * shared volume), adds the pod's identity with a remap transform, drains for
   * `gracefulShutdownLimit` after SIGTERM, and answers the probes' `GET /health` with an
   * http_server source (Vector's API stays off). Ships to
   * stdout, HTTP, Loki, Elasticsearch and OpenSearch; Vector has no Fluent forward sink.
   * @see https://vector.dev/docs/
   */
  public static vector(options: VectorOptions = {}): LogAgent {
    options = snapshot(options); // each option read once: checked and used, the same value
    const who = new Where('LogAgent.vector()');
    checkImage(who, 'image', options.image ?? Images.VECTOR, Images.VECTOR);
    if (options.apiPort !== undefined) checkListenPort(who, 'apiPort', options.apiPort);
    positiveSeconds(who, 'gracefulShutdownLimit', options.gracefulShutdownLimit, 5, 'Vector accepts only a positive limit');
    return new VectorAgent(options);
  }

  /**
   * Fluentd: tails the log files with in_tail (position file on the shared volume), adds the
   * pod's identity with record_transformer, buffers in files on the log volume (resumed after a
   * restart) and flushes them at shutdown, and serves
   * in_monitor_agent's `GET /api/plugins.json` for the probes.
   * @see https://docs.fluentd.org/
   */
  public static fluentd(options: FluentdOptions = {}): LogAgent {
    options = snapshot(options); // each option read once: checked and used, the same value
    const who = new Where('LogAgent.fluentd()');
    checkImage(who, 'image', options.image ?? Images.FLUENTD, Images.FLUENTD);
    if (options.monitorPort !== undefined) checkListenPort(who, 'monitorPort', options.monitorPort);
    positiveSeconds(who, 'flushInterval', options.flushInterval, 1);
    positiveSeconds(who, 'shutdownGrace', options.shutdownGrace, 10, 'Fluentd needs time to flush its buffer');
    positiveSeconds(who, 'requestTimeout', options.requestTimeout, 15, 'a request needs time to be answered');
    return new FluentdAgent(options);
  }

  /** The agent's name, e.g. `fluent-bit`. */
  public abstract readonly name: string;

  /** @internal */
  public abstract _render(ctx: LogAgentContext): LogAgentRendering;
}


class FluentBitAgent extends LogAgent {
  public readonly name = 'fluent-bit';

  constructor(private readonly options: FluentBitOptions) {
    super();
  }

  public _render(ctx: LogAgentContext): LogAgentRendering {
    const flushSeconds = positiveSeconds(ctx.who, 'fluentBit flushInterval', this.options.flushInterval, 1);
    const graceSeconds = durationSeconds(ctx.who, 'fluentBit grace', this.options.grace, 5);
    const httpPort = this.options.httpPort ?? 2020;
    const multilineParsers = [...this.options.multilineParsers ?? []];
    const format = this.options.configFormat ?? FluentBitConfigFormat.CLASSIC;
    const file = FLUENT_BIT_CONFIG_FILE[format];
    const render = () => renderFluentBitConfig({
      logDirectory: ctx.logDirectory,
      filePattern: ctx.filePattern,
      logVolumeSizeLimitMiB: ctx.logVolumeSizeLimitMiB,
      multilineParsers,
      flushSeconds,
      graceSeconds,
      httpPort,
      output: ctx.output,
      secretVars: ctx.secretVars,
      sources: ctx.sources ?? {},
      ...(format === FluentBitConfigFormat.YAML ? { format: 'yaml' as const } : {}),
    });
    let config: string;
    try {
      config = render();
    } catch (e) {
      throw ctx.who.place(e); // a value Fluent Bit's config cannot hold, with the construct's path
    }
    const image = this.options.image ?? Images.FLUENT_BIT;
    const warning = releaseRangeWarning(ctx.who, image, DEFAULT_IMAGES.fluentBit);
    return {
      image,
      command: shared(['/fluent-bit/bin/fluent-bit']),
      args: shared(['--config', `${ctx.configDirectory}/${file}`]),
      files: { [file]: config },
      healthPort: httpPort,
      // 200 "ok" unless, within the last HC_Period (60 s), the outputs' errors passed
      // HC_Errors_Count (5) or their failed retries HC_Retry_Failure_Count (5), then 500
      // (src/http_server/api/v1/health.c, defaults include/fluent-bit/flb_config.h, v5.1.1). With
      // Retry_Limit no_limits no retry fails for good; only the startup probe uses it anyway.
      healthPath: '/api/v1/health',
      healthPortName: 'fb-http',
      // Liveness: not /api/v1/health (nor /api/v2/health, the same state as JSON), which answer 500
      // once more than HC_Errors_Count (5) flushes failed for good (FLB_ERROR) within HC_Period
      // (60 s) (src/http_server/api/v1/health.c): a backend that refuses the records (the http
      // output on a 4xx other than 408/429, plugins/out_http/http.c; loki on a 400,
      // plugins/out_loki/loki.c) makes it fail, and a restart would not help. A backend that is
      // down only makes retries, which fail for good never (Retry_Limit no_limits): measured in
      // test/agents/fluent-bit.agent-test.ts. /api/v1/uptime answers 200 with `time(NULL) - init_time` from the HTTP server
      // (src/http_server/api/v1/uptime.c, v5.1.1), whatever the outputs do. The server runs its
      // own event loop (`use_caller_event_loop = FLB_FALSE`, src/http_server/flb_hs.c, v5.1.1), so
      // this proves the process answers (not stopped, deadlocked or thrashing), not that the
      // engine thread makes progress: no endpoint of 5.1.1 tells that apart by its status.
      livenessPath: '/api/v1/uptime',
      // dockerfiles/Dockerfile (v5.1.1) sets no USER: the image would run as root; the library
      // runs it as distroless' `nonroot` uid instead (runAsUser), with the log volume writable.
      uid: 65532,
      shutdown: fluentBitShutdown(graceSeconds, ctx.output.type, multilineParsers.length > 0),
      env: [],
      // the filesystem buffer (`storage.total_limit_size`: n M, Fluent Bit's 10^6-byte megabytes, less than n MiB)
      defaultResources: {
        cpuRequest: '20m',
        cpuLimit: '200m',
        memoryRequest: '32Mi',
        memoryLimit: '128Mi',
        ephemeralStorageRequest: agentDiskRequest(fluentBitBufferMiB(ctx.logVolumeSizeLimitMiB)),
      },
      ...(warning ? { warnings: [warning] } : {}),
    };
  }
}

const MULTILINE_PARSERS = new Set<string>(Object.values(FluentBitMultilineParser));
const CONFIG_FORMATS = new Set<string>(Object.values(FluentBitConfigFormat));

function checkConfigFormat(who: Where, format: FluentBitConfigFormat | undefined): void {
  if (format !== undefined && !CONFIG_FORMATS.has(format)) {
    throw who.error(`configFormat ${JSON.stringify(format)} is not a config format of Fluent Bit`, format,
      `use FluentBitConfigFormat values (${[...CONFIG_FORMATS].join(', ')})`);
  }
}

function checkMultilineParsers(who: Where, parsers: FluentBitMultilineParser[] | undefined): void {
  if (parsers === undefined) return;
  if (!Array.isArray(parsers)) {
    throw who.error('multilineParsers must be a list of FluentBitMultilineParser values', parsers, 'e.g. [FluentBitMultilineParser.JAVA]', ', ');
  }
  for (const p of parsers) {
    if (!MULTILINE_PARSERS.has(p)) {
      throw who.error(`multilineParsers has ${JSON.stringify(p)}, which is not a built-in parser of Fluent Bit`, p,
        `use FluentBitMultilineParser values (${[...MULTILINE_PARSERS].join(', ')})`);
    }
  }
  if (new Set(parsers).size !== parsers.length) {
    throw who.error(`multilineParsers ${JSON.stringify(parsers)} names a parser twice`, parsers, 'give each once');
  }
}


class VectorAgent extends LogAgent {
  public readonly name = 'vector';

  constructor(private readonly options: VectorOptions) {
    super();
  }

  public _render(ctx: LogAgentContext): LogAgentRendering {
    const limitSeconds = positiveSeconds(ctx.who, 'vector gracefulShutdownLimit', this.options.gracefulShutdownLimit, 5,
      'Vector accepts only a positive limit');
    const apiPort = this.options.apiPort ?? 8686;
    const image = this.options.image ?? Images.VECTOR;
    const warning = releaseRangeWarning(ctx.who, image, DEFAULT_IMAGES.vector);
    const health = vectorHealthEndpoint(apiPort);
    let rendered;
    try {
      rendered = renderVectorConfig({
        logDirectory: ctx.logDirectory,
        filePattern: ctx.filePattern,
        healthPort: health.port,
        output: ctx.output,
        secretVars: ctx.secretVars,
        sources: ctx.sources ?? {},
      });
    } catch (e) {
      // an output Vector has no sink for, or a value its YAML cannot hold (src/private/values.ts)
      throw ctx.who.place(e);
    }
    return {
      image,
      command: ['/usr/bin/vector'],
      args: ['--config', `${ctx.configDirectory}/vector.yaml`, '--graceful-shutdown-limit-secs', String(limitSeconds)],
      files: { 'vector.yaml': rendered.yaml },
      healthPort: health.port,
      healthPath: health.path,
      healthPortName: health.portName,
      // `nonroot` of the distroless base image.
      uid: 65532,
      shutdown: vectorShutdown(limitSeconds),
      // the pod-logs path is an env var the config names (`${POD_LOG_PATH}`), built by the kubelet from
      // the app container's name and the pod's uid (src/engine/capture.ts `podLogsEnv`): Vector 0.57
      // reads `${NAME}` only with this switch (src/cli.rs and src/config/loading/mod.rs, v0.57.0; older
      // releases of the range interpolate by default and ignore the variable). Nothing else of the
      // config holds a `$` (values with one are refused), and the secrets are put in after it.
      env: ctx.sources?.podLogsEnv !== undefined ? [{ name: 'VECTOR_DANGEROUSLY_ALLOW_ENV_VAR_INTERPOLATION', value: 'true' }] : [],
      // the output's secrets: files its directory secret backend reads (VECTOR_SECRETS), never `${NAME}`
      secretDirectory: VECTOR_SECRETS.directory,
      // no disk buffer (the log files are the durable buffer, src/agents/vector/config.ts): its checkpoints only
      defaultResources: { cpuRequest: '20m', cpuLimit: '250m', memoryRequest: '64Mi', memoryLimit: '256Mi', ephemeralStorageRequest: agentDiskRequest(0) },
      ...(warning ? { warnings: [warning] } : {}),
    };
  }
}

class FluentdAgent extends LogAgent {
  public readonly name = 'fluentd';

  constructor(private readonly options: FluentdOptions) {
    super();
  }

  public _render(ctx: LogAgentContext): LogAgentRendering {
    const flushSeconds = positiveSeconds(ctx.who, 'fluentd flushInterval', this.options.flushInterval, 1);
    const graceSeconds = positiveSeconds(ctx.who, 'fluentd shutdownGrace', this.options.shutdownGrace, 10, 'Fluentd needs time to flush its buffer');
    const requestSeconds = positiveSeconds(ctx.who, 'fluentd requestTimeout', this.options.requestTimeout, 15, 'a request needs time to be answered');
    const monitorPort = this.options.monitorPort ?? 24220;
    const image = this.options.image ?? Images.FLUENTD;
    // Only the upstream images' tags are Fluentd versions; the tag of an image of your own is not.
    const repo = image.split('@')[0].replace(/:[^/]*$/, '');
    const upstream = ['fluentd', 'fluentd-kubernetes-daemonset'].includes(repo.slice(repo.lastIndexOf('/') + 1));
    const v = upstream ? imageTagVersion(image) : undefined;
    const leaksDebugInfo = v !== undefined && (v.major < 1 || (v.major === 1 && (v.minor < 19 || (v.minor === 19 && v.patch < 3))));
    if (leaksDebugInfo && !this.options.allowMonitorDebugInfo) {
      throw ctx.who.error(
        `Fluentd image '${image}' is older than 1.19.3, whose in_monitor_agent (on the pod IP for the probes) ` +
        "still answers ?debug=1 and ?with_ivars= with the plugins' settings, output passwords included",
        image, `Use ${Images.FLUENTD} or later, or set \`allowMonitorDebugInfo: true\` and keep other pods off port ${monitorPort} with a NetworkPolicy`, '. ',
      );
    }
    // The tag of an image of your own names your release, not Fluentd's: read as naming none.
    const untagged = image.split('@')[0].replace(/:[^/]*$/, '');
    const warning = releaseRangeWarning(ctx.who, upstream ? image : untagged, DEFAULT_IMAGES.fluentd)?.replace(`'${untagged}'`, `'${image}'`);
    const plugin = FLUENTD_OUTPUT_PLUGIN[ctx.output.type];
    if (plugin !== undefined && withoutDigest(image) === Images.FLUENTD) {
      throw ctx.who.error(
        `the ${ctx.output.type} output needs the ${plugin} gem, which the default Fluentd image ${Images.FLUENTD} ` +
        'does not ship (it has the core plugins only: stdout, forward, http)',
        image, 'Pass `LogAgent.fluentd({ image })` with an image ' +
        `that has it (e.g. one built FROM ${Images.FLUENTD} with \`gem install ${plugin}\`), or use LogAgent.fluentBit() or ` +
        'LogAgent.vector(), which support this output natively', '. ',
      );
    }
    if (ctx.sources?.podLogsEnv !== undefined && withoutDigest(image) === Images.FLUENTD) {
      throw ctx.who.error(
        `podLogs joins the kubelet's partial lines (CRI tag P) with the fluent-plugin-concat gem, which the default Fluentd image ${Images.FLUENTD} ` +
        'does not ship', image, 'Pass `LogAgent.fluentd({ image })` with an image that has it (one built FROM ' +
        `${Images.FLUENTD} with \`gem install fluent-plugin-concat\`), or use LogAgent.fluentBit(), whose cri parser is built in`, '. ',
      );
    }
    // the file buffer's `total_limit_size` (`<n>m`: Fluentd's sizes are 1024-based, lib/fluent/config/types.rb, v1.19.3)
    const bufferLimitMiB = Math.max(1, Math.floor(ctx.logVolumeSizeLimitMiB / 4));
    let config: string;
    try {
      config = renderFluentdConfig({
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
      files: { 'fluent.conf': config },
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
      shutdown: fluentdShutdown(graceSeconds, ctx.output, requestSeconds),
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
  }
}
