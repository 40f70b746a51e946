import * as path from 'path';
import { Size } from 'cdk8s';
import { Construct } from 'constructs';
import { AGENT_LIVENESS } from './agents/liveness';
import { LogOutputConfig, SecretRef } from './agents/log-output-config';
import { checkInteger, checkListenPort, checkMadeBy, checkPort, checkString, sizeLimitMiB } from './bind/checks';
import { TOOLS } from './engine/shutdown';
import { RANK } from './engine/spec';
import { LogAgent, LogAgentRendering } from './log-agent';
import { LogOutput, outputSecretEnv } from './log-output';
import { Where } from './private/errors';
import { Json } from './private/json';
import { shared } from './private/memo';
import { sortedKeys } from './private/order';
import { AgentDescription, AgentVolume, SidecarBase, SidecarProps, fieldEnv } from './sidecar';

/**
 * Props of `WithLogAgent`.
 */
export interface WithLogAgentProps extends SidecarProps {
  /**
   * The log shipper: `LogAgent.fluentBit()`, `LogAgent.vector()` or `LogAgent.fluentd()`.
   * @default LogAgent.fluentBit()
   */
  readonly agent?: LogAgent;

  /**
   * Where the logs go.
   * @default LogOutput.stdout()
   */
  readonly output?: LogOutput;

  /**
   * The directory the app writes its log files into: an emptyDir mounted into every app
   * container (also those added later) and into the agent, which tails it. Letters, digits,
   * `.`, `_`, `-` and `/` only (the path is written into the agent's config).
   *
   * The agent runs as its own user (see `agentUser`): it can read only the files the app makes
   * readable to it. Files the app creates with mode 0644 (umask 022) are readable as they are.
   * For files written 0640, give the pod an `fsGroup` (the kubelet gives the emptyDir that group
   * with the setgid bit, so new files get it, and every container, the agent included, gets it as
   * a supplementary group) or set `agentGroup` to the app's group. Files written 0600 are readable
   * only by their owner: make the app write them 0640, or set `agentUser` to the app's user.
   * @default '/var/log/app'
   */
  readonly logDirectory?: string;

  /**
   * Glob of the files to tail inside `logDirectory`: letters, digits, `.`, `_`, `-`, `*` and `?`.
   * @default '*.log'
   */
  readonly filePattern?: string;

  /**
   * Size limit of the log emptyDir (`sizeLimit`). When the files in it (rotated files, the
   * agent's offsets, files the agent still holds open after the app deleted them) grow past it,
   * the kubelet evicts the pod. The app must rotate and delete its log files so that they stay
   * well below the limit; the agent only reads them.
   *
   * Fluent Bit also keeps its filesystem buffer here (`<logDirectory>/.fluent-bit/storage`, what
   * it has read but not yet delivered): `storage.total_limit_size` is a quarter of this limit
   * (`max(1, floor(MiB / 4))` in Fluent Bit's megabytes of 10^6 bytes, 256M of the default), which
   * it may pass by one chunk of at most 2 MB: from 16 MiB on, the buffer stays below half the
   * volume. When the buffer is full (a long outage) the oldest chunks are dropped.
   * @default Size.gibibytes(1)
   */
  readonly logVolumeSizeLimit?: Size;

  /**
   * The user the agent runs as (`runAsUser`), e.g. the app's user, to read log files the app
   * writes with mode 0600. Must not be 0 (the agent runs as non-root).
   * @default - the agent image's own user (Fluent Bit and Vector 65532, Fluentd 999)
   */
  readonly agentUser?: number;

  /**
   * The primary group the agent runs as (`runAsGroup`), e.g. the app's group, to read log files
   * the app writes with mode 0640. A pod `fsGroup` is another way (see `logDirectory`).
   * @default - the same number as the agent's user
   */
  readonly agentGroup?: number;
}

/**
 * Attaches a log shipper sidecar (Fluent Bit by default) to a workload: the app writes log
 * files into a shared directory, the agent tails them and ships them to `output`.
 *
 * Native layout: the agent starts before the app and stops after it, so the last lines of a
 * dying app are shipped. Legacy layout: a `preStop` delay keeps it alive while the app shuts
 * down.
 */
export class WithLogAgent extends SidecarBase {
  /** The log shipper. */
  public readonly agent: LogAgent;
  /** Where the logs go. */
  public readonly output: LogOutput;
  /** The shared log directory. */
  public readonly logDirectory: string;

  /** The glob of the files the agent tails in `logDirectory`. */
  private readonly filePattern: string;

  constructor(scope: Construct, id: string, props: WithLogAgentProps) {
    super(scope, id, props, 'log-agent');
    // from here on the copy SidecarBase made (a props object changed afterwards changes nothing)
    props = this._props as WithLogAgentProps;
    const who = this._where();
    checkMadeBy(who, 'agent', props.agent, LogAgent, 'LogAgent.fluentBit(), .vector() or .fluentd()');
    checkMadeBy(who, 'output', props.output, LogOutput, 'LogOutput.stdout(), .forward(), .http(), .loki(), .elasticsearch() or .opensearch()');
    checkString(who, 'logDirectory', props.logDirectory, "'/var/log/app'");
    checkString(who, 'filePattern', props.filePattern, "'*.log'");
    this.agent = props.agent ?? LogAgent.fluentBit();
    this.output = props.output ?? LogOutput.stdout();
    this.logDirectory = props.logDirectory ?? '/var/log/app';
    const filePattern = props.filePattern ?? '*.log';
    checkLogDirectory(who, this.logDirectory);
    checkFilePattern(who, filePattern);
    this.filePattern = filePattern;
    const sizeLimit = sizeLimitMiB(who, 'logVolumeSizeLimit', props.logVolumeSizeLimit, 1024, 'Size.gibibytes(1)');
    if (props.agentUser !== undefined) checkInteger(who, 'agentUser', props.agentUser, 1, 2147483647, 'a non-root uid', "e.g. the app's uid");
    if (props.agentGroup !== undefined) checkInteger(who, 'agentGroup', props.agentGroup, 0, 2147483647, 'a gid', "e.g. the app's gid");
    const o = this.output._config;
    checkOutput(who, o);
    const secrets = outputSecretEnv(o);
    const r = this.agent._render({
      who,
      logDirectory: this.logDirectory,
      filePattern,
      logVolumeSizeLimitMiB: sizeLimit,
      configDirectory: CONFIG_DIRECTORY,
      output: o,
      secretVars: secrets.vars,
    });
    checkListenPort(who, `${this.agent.name} health port`, r.healthPort);
    checkMounts(who, this.logDirectory, r.scratchDirectory, r.secretDirectory);
    this._attach(this.describeAgent(props, r, secrets, sizeLimit));
  }

  /**
   * The files the app says it writes into `logDirectory` (a path in its containers' command, args
   * or env values, as the manifest has them) that `filePattern` does not match: the agent would
   * never read them, and nothing else would say so (issue 39).
   * @internal
   */
  protected _workloadWarnings(podSpec: Json | undefined, _labels: Record<string, string>): string[] {
    const out: string[] = [];
    for (const c of podSpec?.containers ?? []) {
      if (c?.name === this.containerName) continue;
      const said: Array<[string, unknown]> = [
        ...(Array.isArray(c.command) ? c.command.map((v: unknown) => ['command', v] as [string, unknown]) : []),
        ...(Array.isArray(c.args) ? c.args.map((v: unknown) => ['args', v] as [string, unknown]) : []),
        ...(Array.isArray(c.env) ? c.env.map((e: Json) => [`env ${e?.name}`, e?.value] as [string, unknown]) : []),
      ];
      for (const [where, value] of said) {
        for (const file of logFilesIn(this.logDirectory, value)) {
          if (globMatches(this.filePattern, file)) continue;
          out.push(
            `${this.describe()}: container '${c.name}' writes '${this.logDirectory}/${file}' (its ${where}), which filePattern ` +
            `'${this.filePattern}' does not match, so the agent never ships it; set filePattern to match it, e.g. '${suggestPattern(file)}'.`,
          );
        }
      }
    }
    return [...new Set(out)];
  }

  /** The log agent as data: every value here has been checked. */
  private describeAgent(
    props: WithLogAgentProps, r: LogAgentRendering, secrets: ReturnType<typeof outputSecretEnv>, logLimitMiB: number,
  ): AgentDescription {
    const secretFiles = r.secretDirectory !== undefined && secrets.env.length > 0 ? secretVolume(r.secretDirectory, secrets.refs) : undefined;
    return {
      kind: 'WithLogAgent',
      rank: RANK.LOG_AGENT,
      image: r.image,
      command: r.command,
      args: r.args,
      user: props.agentUser ?? r.uid,
      group: props.agentGroup,
      env: [...POD_ENV, ...r.env, ...(r.secretDirectory === undefined ? secrets.env : [])],
      ports: shared([{ containerPort: r.healthPort, name: r.healthPortName, protocol: 'TCP' }]),
      // No readinessProbe: the agent is not in the request path, and a log backend outage (the
      // health check fails after output errors) must not take the app out of its Services.
      // Liveness: a hung agent is restarted; the endpoint does not fail while the backend is down
      // (each agent's `livenessPath`; without one, the startup probe's: Vector's /health).
      health: {
        path: r.healthPath,
        port: r.healthPort,
        startup: { periodSeconds: 1, failureThreshold: 30 },
        liveness: { path: r.livenessPath ?? r.healthPath, ...AGENT_LIVENESS },
      },
      resources: this._resources(r.defaultResources),
      files: r.files,
      volumes: [
        {
          suffix: '-logs',
          source: shared({ emptyDir: { sizeLimit: logLimitMiB % 1024 === 0 ? `${logLimitMiB / 1024}Gi` : `${logLimitMiB}Mi` } }),
          mountPath: this.logDirectory,
          shareWithApp: true,
        },
        { suffix: '-config', mountPath: CONFIG_DIRECTORY, readOnly: true },
        ...(r.scratchDirectory === undefined ? [] : [scratchVolume(r.scratchDirectory)]),
        ...(secretFiles === undefined ? [] : [secretFiles]),
      ],
      shutdown: r.shutdown,
      warnings: r.warnings,
    };
  }
}

const CONFIG_DIRECTORY = '/etc/log-agent';

const SCRATCH_SOURCE = shared({ emptyDir: { medium: 'Memory', sizeLimit: '16Mi' } });

const POD_ENV = [fieldEnv('POD_NAME', 'metadata.name'), fieldEnv('POD_NAMESPACE', 'metadata.namespace'), fieldEnv('NODE_NAME', 'spec.nodeName')];

/**
 * A writable directory of the agent's own, when it needs one (the root filesystem is read-only).
 * A tmpfs: the kubelet mounts it without a mode option (kubernetes pkg/volume/emptydir/
 * empty_dir.go `setupTmpfs`), so its root has tmpfs's default 1777. A disk-backed emptyDir is
 * 0777 without the sticky bit, which Ruby's Dir.tmpdir refuses (ruby/tmpdir lib/tmpdir.rb:
 * "world-writable" is skipped, then "could not find a temporary directory"): Fluentd's
 * supervisor would crash at start. Its pages count toward the agent's memory limit.
 */
function scratchVolume(mountPath: string): AgentVolume {
  return { suffix: '-tmp', source: SCRATCH_SOURCE, mountPath };
}

/**
 * The output's secrets as files for an agent that reads them so (`LogAgentRendering.secretDirectory`):
 * one projected volume, read-only, with each Secret's keys under the names the agent's config
 * gives them (a projected volume because the keys may come from several Secrets). A missing Secret
 * or key keeps the pod from starting, as a `secretKeyRef` does.
 */
function secretVolume(directory: string, refs: Record<string, SecretRef>): AgentVolume {
  const bySecret = new Map<string, Array<{ key: string; path: string }>>();
  for (const file of sortedKeys(refs)) {
    const r = refs[file];
    bySecret.set(r.secretName, [...(bySecret.get(r.secretName) ?? []), { key: r.key, path: file }]);
  }
  const sources = [...bySecret.keys()].sort().map(name => ({ secret: { items: bySecret.get(name), name } }));
  return { suffix: '-secrets', source: { projected: { sources } }, mountPath: directory, readOnly: true };
}

function checkOutput(who: Where, o: LogOutputConfig): void {
  if (!('host' in o)) return;
  if (o.host.trim() === '') {
    throw who.error(`the ${o.type} output needs a host; got an empty string`, o.host,
      `Set host to the destination's DNS name or IP address, e.g. LogOutput.${o.type}({ host: 'logs.example.com' })`, '. ');
  }
  checkPort(who, `${o.type} output port`, o.port);
}

function checkFilePattern(who: Where, filePattern: string): void {
  if (filePattern === '' || filePattern.includes('/') || /\s/.test(filePattern)) {
    throw who.error(`filePattern '${filePattern}' must be a file-name glob without '/' or spaces`, filePattern, "e.g. '*.log'", ', ');
  }
  // Written into every agent's config: `,` splits Fluent Bit's and Fluentd's path lists, `$`
  // and `#` are read as variables or embedded code, `[` `{` as glob classes or templates.
  if (!/^[A-Za-z0-9._*?-]+$/.test(filePattern)) {
    throw who.error(`filePattern ${JSON.stringify(filePattern)} may hold only letters, digits, '.', '_', '-', '*' and '?' ` +
      "(the agents' config formats read other characters as lists, variables or templates)", filePattern, "e.g. '*.log'", ', ');
  }
}

/** A second mount at one path is rejected by the API server; one inside a read-only mount cannot be created. */
function checkMounts(who: Where, logDirectory: string, scratchDirectory: string | undefined, secretDirectory: string | undefined): void {
  for (const [what, dir, nested] of [
    ['config directory', CONFIG_DIRECTORY, true],
    ['hook tools directory', TOOLS.mountPath, true],
    ...(scratchDirectory ? [['scratch directory', scratchDirectory, false] as const] : []),
    ...(secretDirectory ? [['secrets directory', secretDirectory, true] as const] : []),
  ] as const) {
    if (logDirectory === dir || (nested && logDirectory.startsWith(`${dir}/`))) {
      throw who.error(`logDirectory '${logDirectory}' is ${logDirectory === dir ? '' : 'inside '}the agent's ${what} '${dir}'`, logDirectory,
        "choose a directory of its own, e.g. '/var/log/app'");
    }
  }
}

function checkLogDirectory(who: Where, dir: string): void {
  const reserved = ['/', '/etc', '/bin', '/usr', '/proc', '/sys', '/dev', '/var', '/tmp'];
  if (path.posix.isAbsolute(dir) && !/^[A-Za-z0-9._/-]+$/.test(dir)) {
    throw who.error(
      `logDirectory ${JSON.stringify(dir)} may hold only letters, digits, '.', '_', '-' and '/' (the path is written into ` +
      "the agent's config, whose formats read other characters as lists, variables or comments)",
      dir, "e.g. '/var/log/app'", ', ',
    );
  }
  if (!path.posix.isAbsolute(dir) || path.posix.normalize(dir) !== dir || dir.endsWith('/') || reserved.includes(dir)) {
    throw who.error(
      `logDirectory '${dir}' must be an absolute, normalized directory of its own (no trailing '/', not a system directory such as '/var')`,
      dir, "e.g. '/var/log/app'", ', ',
    );
  }
}

/**
 * The file names `text` gives directly in `directory` (`/var/log/app/app.json`, also after `=` or
 * `:` as in `--log=/var/log/app/app.json`); not a deeper path, a glob or a `$(VAR)`.
 */
function logFilesIn(directory: string, text: unknown): string[] {
  if (typeof text !== 'string') return [];
  const dir = directory.replace(/\/+$/, '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const re = new RegExp(`(?:^|[\\s=:,'"])${dir}/([A-Za-z0-9._-]+)(?=$|[\\s,;'"])`, 'g');
  return [...text.matchAll(re)].map(m => m[1]).filter(name => name !== '.' && name !== '..');
}

/**
 * Whether the agents' glob takes `name` for `pattern` (letters, digits, '.', '_', '-', '*', '?'):
 * `*` any run of characters, `?` one; as glob(3) (Fluent Bit), the glob crate (Vector) and Ruby's
 * Dir.glob (Fluentd), a leading '.' is matched only by a leading '.' of the pattern.
 */
function globMatches(pattern: string, name: string): boolean {
  if (name.startsWith('.') && !pattern.startsWith('.')) return false;
  const re = new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`);
  return re.test(name);
}

/** A pattern that matches `file`: `*.<its extension>`, or the name itself. */
function suggestPattern(file: string): string {
  const ext = /\.[A-Za-z0-9_-]+$/.exec(file)?.[0];
  return ext && !file.startsWith('.') ? `*${ext}` : file;
}
