import { Duration } from 'cdk8s';
import { renderFluentBitConfig } from './agents/fluent-bit';
import { Json } from './engine/spec';
import { LogOutputConfig } from './log-output';
import { durationSeconds } from './sidecar';

/**
 * What a log agent is told by `WithLogAgent`. Every agent gets the same context, so a new
 * agent plugs in by implementing `_render` alone: the engine never changes.
 * @internal
 */
export interface LogAgentContext {
  /** `WithLogAgent 'chart/logs'`, for messages. */
  readonly who: string;
  /** The shared directory the app writes log files into (the agent mounts it too). */
  readonly logDirectory: string;
  /** Glob of the files to tail inside logDirectory. */
  readonly filePattern: string;
  /** Where the agent's ConfigMap is mounted. */
  readonly configDirectory: string;
  readonly output: LogOutputConfig;
  /** secret id -> env var that holds it (see outputSecretEnv). */
  readonly secretVars: Record<string, string>;
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
  /** Non-root uid the image runs as. */
  readonly uid: number;
  /** Seconds the agent needs after SIGTERM to flush and exit. */
  readonly stopSeconds: number;
  /** Extra env (besides the output's secrets and the pod's identity). */
  readonly env: Json[];
  readonly defaultResources: { cpuRequest: string; cpuLimit: string; memoryRequest: string; memoryLimit: string };
}

/**
 * Options of the Fluent Bit agent.
 */
export interface FluentBitOptions {
  /**
   * The Fluent Bit image.
   * @default 'fluent/fluent-bit:3.2.10'
   */
  readonly image?: string;
  /**
   * How often Fluent Bit flushes records to the output (`[SERVICE] Flush`).
   * @default Duration.seconds(1)
   */
  readonly flushInterval?: Duration;
  /**
   * How long Fluent Bit keeps flushing after SIGTERM (`[SERVICE] Grace`). Counts toward the
   * pod's grace period.
   * @default Duration.seconds(5)
   */
  readonly grace?: Duration;
  /**
   * Port of Fluent Bit's HTTP server (health check for the probes, metrics).
   * @default 2020
   */
  readonly httpPort?: number;
}

/**
 * The log shipper that runs in the sidecar. Choose one with a static method.
 */
export abstract class LogAgent {
  /**
   * Fluent Bit: tails the log files, keeps offsets in a DB file on the shared volume, flushes
   * for `grace` after SIGTERM, and serves `/api/v1/health` for the probes.
   * @see https://docs.fluentbit.io/manual/
   */
  public static fluentBit(options: FluentBitOptions = {}): LogAgent {
    return new FluentBitAgent(options);
  }

  /** The agent's name, e.g. `fluent-bit`. */
  public abstract readonly name: string;

  /** @internal */
  public abstract _render(ctx: LogAgentContext): LogAgentRendering;
}

/** The default Fluent Bit image (pinned). */
export const FLUENT_BIT_IMAGE = 'fluent/fluent-bit:3.2.10';

class FluentBitAgent extends LogAgent {
  public readonly name = 'fluent-bit';

  constructor(private readonly options: FluentBitOptions) {
    super();
  }

  public _render(ctx: LogAgentContext): LogAgentRendering {
    const flushSeconds = durationSeconds(ctx.who, 'fluentBit flushInterval', this.options.flushInterval, 1);
    const graceSeconds = durationSeconds(ctx.who, 'fluentBit grace', this.options.grace, 5);
    if (flushSeconds < 1) throw new Error(`${ctx.who}: fluentBit flushInterval must be at least 1 second (got ${flushSeconds}s).`);
    const httpPort = this.options.httpPort ?? 2020;
    const config = renderFluentBitConfig({
      logDirectory: ctx.logDirectory,
      filePattern: ctx.filePattern,
      dbPath: `${ctx.logDirectory}/.fluent-bit-offsets.db`,
      flushSeconds,
      graceSeconds,
      httpPort,
      output: ctx.output,
      secretVars: ctx.secretVars,
    });
    return {
      image: this.options.image ?? FLUENT_BIT_IMAGE,
      command: ['/fluent-bit/bin/fluent-bit'],
      args: ['--config', `${ctx.configDirectory}/fluent-bit.conf`],
      files: { 'fluent-bit.conf': config },
      healthPort: httpPort,
      healthPath: '/api/v1/health',
      healthPortName: 'fb-http',
      uid: 65532,
      // Grace, plus a second to exit.
      stopSeconds: graceSeconds + 1,
      env: [],
      defaultResources: { cpuRequest: '20m', cpuLimit: '200m', memoryRequest: '32Mi', memoryLimit: '128Mi' },
    };
  }
}
