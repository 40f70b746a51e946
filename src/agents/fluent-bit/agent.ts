/**
 * Fluent Bit as a log agent, all of it but the config writer (./config.ts): its options, its
 * default image, the factory's checks and the container it runs in.
 */
import { Duration } from 'cdk8s';
import { FLUENT_BIT_CONFIG_FILE, fluentBitBufferMiB, fluentBitShutdown, renderFluentBitConfig } from './config';
import { checkImage, checkListenPort, durationSeconds, positiveSeconds } from '../../bind/checks';
import { DefaultImage, releaseRangeWarning } from '../../facts/images';
import { Where } from '../../private/errors';
import { shared } from '../../private/memo';
import { LogAgentSpec, agentDiskRequest } from '../log-agent-spec';


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
 * The default image, pinned, with the upstream source of its tag and the releases the config is
 * written for (`Images`, the README's image table, the cluster's image list read it from the registry).
 */
const IMAGE = {
  image: 'fluent/fluent-bit:5.1.1',
  usedBy: 'LogAgent.fluentBit()',
  // dockerfiles/Dockerfile at v5.1.1: `ARG RELEASE_VERSION=5.1.1`, production stage FROM
  // gcr.io/distroless/cc-debian13 with no USER (the library sets runAsUser), binary at
  // /fluent-bit/bin/fluent-bit. MAINTENANCE.md at v5.1.1: v5.1 is the stable line, v5.0
  // maintenance only, older lines end of life.
  source: 'fluent/fluent-bit release v5.1.1 (git tag v5.1.1, 2026-08-14; the newest tag of the supported 5.1 line in the repository on 2026-12-01; ' +
      'images built from dockerfiles/Dockerfile, pushed as fluent/fluent-bit:<version>)',
  // The keys, the shutdown model, the long-line keys (Truncate_Long_Lines) and the IP-literal
  // TLS check (from 5.0.6) were read at v5.1.1 and run with the binary built at that tag.
  // Checked again 2026-12-07: Fluent Bit 5.2.1 was reported (2026-12-01), but the fluent/fluent-bit repository's
  // snapshot reachable here stops at tag v5.1.1 (2026-08), and no registry this project reaches serves a Fluent
  // Bit binary: 5.2.x can be neither confirmed nor built and run, so the pin stays at 5.1.1.
  releases: { program: 'Fluent Bit', from: '5.1.0', below: '5.2.0', checked: 'the keys, shutdown and buffering read at v5.1.1 and run against its binary' },
} as const satisfies DefaultImage;

/** Fluent Bit, registered in src/agents/registry.ts (`LogAgent.fluentBit()`). */
export const FLUENT_BIT_AGENT: LogAgentSpec<FluentBitOptions> = {
  name: 'fluent-bit',
  factory: 'fluentBit',
  title: 'Fluent Bit',
  names: ['fluent-bit', 'fluent bit', 'fluentbit', 'fluent_bit'],
  image: IMAGE,
  outputs: ['stdout', 'forward', 'http', 'loki', 'elasticsearch', 'opensearch'],
  options: {
    image: 'string',
    flushInterval: 'duration',
    grace: 'duration',
    httpPort: 'number',
    multilineParsers: { listOf: { oneOf: Object.values(FluentBitMultilineParser) } },
    configFormat: { oneOf: Object.values(FluentBitConfigFormat) },
  },

  lokiLabelValueProblem(v: string): string | undefined {
    const rules: Array<[boolean, string]> = [
      [v === '', 'is empty (Fluent Bit refuses an empty label value: plugins/out_loki/loki.c, v5.1.1 as v3.2.10)'],
      [v.trim() !== v, "starts or ends with white space, which Fluent Bit trims (its `Labels` list is split on ',' and trimmed)"],
      [v.includes(','), "has a ',', which splits Fluent Bit's `Labels` list (plugins/out_loki/loki.c, v5.1.1 as v3.2.10)"],
      [v.startsWith('$') || v.includes('${'), "starts with '$' or has '${', which Fluent Bit reads as a record accessor or an environment variable"],
    ];
    return rules.find(([broken]) => broken)?.[1];
  },

  check(who: Where, options: FluentBitOptions): void {
    checkImage(who, 'image', options.image ?? IMAGE.image, IMAGE.image);
    checkMultilineParsers(who, options.multilineParsers);
    checkConfigFormat(who, options.configFormat);
    if (options.httpPort !== undefined) checkListenPort(who, 'httpPort', options.httpPort);
    positiveSeconds(who, 'flushInterval', options.flushInterval, 1);
    durationSeconds(who, 'grace', options.grace, 5);
  },

  render(options, ctx) {
    const flushSeconds = positiveSeconds(ctx.who, 'fluentBit flushInterval', options.flushInterval, 1);
    const graceSeconds = durationSeconds(ctx.who, 'fluentBit grace', options.grace, 5);
    const httpPort = options.httpPort ?? 2020;
    const multilineParsers = [...options.multilineParsers ?? []];
    const format = options.configFormat ?? FluentBitConfigFormat.CLASSIC;
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
    const image = options.image ?? IMAGE.image;
    const warning = releaseRangeWarning(ctx.who, image, IMAGE);
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
  },
};

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
