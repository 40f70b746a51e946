/**
 * What a log agent is to the rest of the library: one `LogAgentSpec` in its folder
 * (`src/agents/<agent>/agent.ts`), listed once in the registry (`src/agents/registry.ts`). The
 * construct (`WithLogAgent`), the CLI's config schema, the image table, the cluster's image list
 * and the tests read the registry; none of them names an agent.
 */
import { LogOutputConfig } from './log-output-config';
import { ShutdownModel } from './shutdown-model';
import { DefaultImage } from '../facts/images';
import { Where } from '../private/errors';
import { Json } from '../private/json';

/**
 * What a log agent is told by `WithLogAgent`. Every agent gets the same context, so a new
 * agent plugs in by its `render` alone: the engine never changes.
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
   * filesystem stays read-only), e.g. `/tmp` for a supervisor's socket. `WithLogAgent`
   * mounts a small emptyDir of the agent's own there.
   */
  readonly scratchDirectory?: string;
  /** CPU and memory requests and limits; the ephemeral-storage request the agent's disk buffer needs (`agentDiskRequest`). */
  readonly defaultResources: { cpuRequest: string; cpuLimit: string; memoryRequest: string; memoryLimit: string; ephemeralStorageRequest: string };
  /** Warnings about the agent as given, e.g. an image outside its release range (`releaseRangeWarning`). */
  readonly warnings?: string[];
}

/**
 * The type of one option as `cdk8s-sidecars render` reads it from YAML (src/cli/render-config.ts
 * turns it into its reader): a string, a number, a boolean, a duration (`10s`), one of some
 * strings, or a list of them.
 */
export type AgentOptionType = 'string' | 'number' | 'boolean' | 'duration'
| { readonly oneOf: readonly string[] }
| { readonly listOf: { readonly oneOf: readonly string[] } };

/**
 * One log agent, all of it: the registry lists these, and `LogAgent.<factory>()` makes an agent of
 * one. `O` is the agent's public options interface (in the same folder).
 */
export interface LogAgentSpec<O> {
  /** The agent's name (`LogAgent.name`) and its folder's, `src/agents/<name>/`. */
  readonly name: string;
  /** The name of its static factory on `LogAgent` and its key in the CLI's config. */
  readonly factory: string;
  /** How people write it (docs, messages). */
  readonly title: string;
  /**
   * The words a file names it by: src/ files outside its folder and the registry hold none of
   * them, whatever the case (test/agent-folders.test.ts).
   */
  readonly names: readonly string[];
  /** Its default image, pinned, with the upstream source of the tag (README's image table, `Images`, the cluster's image list). */
  readonly image: DefaultImage;
  /** Every option, with its type as the CLI's config reads it (test/render-config.test.ts holds it to the .jsii). */
  readonly options: { readonly [K in keyof Required<O>]: AgentOptionType };
  /** The outputs it ships to with its default image (the others suggest it as a way out by these). */
  readonly outputs: ReadonlyArray<LogOutputConfig['type']>;
  /**
   * Why this agent's config cannot hold `value` as a Loki label value (the first reason), or
   * undefined. `LogOutput.loki()` asks every registered agent: an output is made before the agent
   * it goes to is chosen.
   */
  lokiLabelValueProblem?(value: string): string | undefined;
  /** The factory's checks, before any file is written; `options` is a snapshot (each option read once). */
  check(who: Where, options: O): void;
  /**
   * The container details and config files, for one construct. `others` names the other
   * registered agents that ship to `output` with their default image (all others without one),
   * as a message offers them: `LogAgent.a() or LogAgent.b()`.
   */
  render(options: O, ctx: LogAgentContext, others: OtherAgents): LogAgentRendering;
}

/** The other registered agents as a message offers them (`LogAgentSpec.render`). */
export type OtherAgents = (output?: LogOutputConfig['type']) => string;

/**
 * What an agent keeps on the pod's disk besides its buffer, in MiB: its offsets (a database,
 * a position file, checkpoints) and a chunk it may write past its buffer's limit (the largest:
 * 2,048,000 bytes, one agent's chunk size; see the agents' folders).
 */
const AGENT_FILES_MIB = 4;

/**
 * An agent's ephemeral-storage request: the limit of its disk buffer on the log volume, in MiB,
 * and what it keeps beside it. A request, never a limit (docs/log-agents.md, "Disk: an
 * ephemeral-storage request, no limit").
 */
export function agentDiskRequest(bufferMiB: number): string {
  return `${bufferMiB + AGENT_FILES_MIB}Mi`;
}
