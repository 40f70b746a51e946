import * as path from 'path';
import { ApiObject, Size } from 'cdk8s';
import { Construct } from 'constructs';
import { AGENT_LIVENESS } from './agents/liveness';
import { LogOutputConfig, SecretRef } from './agents/log-output-config';
import { checkBoolean, checkInteger, checkListenPort, checkMadeBy, checkPort, checkString, describeValue, isPropsObject, sizeLimitMiB } from './bind/checks';
import { CaptureSpec, POD_LOGS_ROOT, PodLogsSpec, captureGlob } from './engine/capture';
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
 * Options of `WithLogAgent`'s `captureStdout`: the app's stdout and stderr, copied into files the
 * agent tails (docs/log-agents.md, "Three ways in").
 */
export interface CaptureStdoutOptions {
  /**
   * The app containers whose output is captured, by name.
   * @default - every app container of the workload (`spec.containers`, also those added later)
   */
  readonly containers?: string[];
  /**
   * The app's program, for an app container that has no `command` of its own and runs its image's
   * entrypoint: the image's ENTRYPOINT (from `docker inspect`), followed by its CMD when the
   * container has no `args` (the container's `args` follow it as the kubelet would run them). The
   * library cannot read an image and never guesses: a captured container with neither is an error.
   * @default - the container's own `command`
   */
  readonly command?: string[];
  /**
   * The size at which a capture file is closed and the next one begun (counted in characters of
   * the lines written).
   * @default Size.mebibytes(10)
   */
  readonly maxFileSize?: Size;
  /**
   * The most files per container and stream at once (the one being written included). A closed
   * file is deleted 10 s after it was closed, when every agent has found it; an app that fills
   * `maxFiles - 1` files faster waits for a deletion. With the defaults: 50 MiB per stream at most.
   * @default 5
   */
  readonly maxFiles?: number;
}

/**
 * Options of `WithLogAgent`'s `podLogs`: the kubelet's own log files of the app container of this
 * pod, read through a read-only hostPath of `/var/log/pods` (docs/log-agents.md, "Three ways in").
 */
export interface PodLogsOptions {
  /**
   * The app container whose log files are read, by name.
   * @default - the workload's only app container (with several, an error asks for this prop)
   */
  readonly container?: string;
  /**
   * The workload is exempt from the Pod Security admission of its namespace (an exemption by user,
   * runtime class or namespace in the API server's admission configuration). A hostPath volume is
   * outside the `baseline` and `restricted` profiles: without this, a workload whose namespace is a
   * Namespace of the app with `pod-security.kubernetes.io/enforce: baseline` or `restricted` is an
   * error at synthesis (the API server would refuse its pods).
   * @default false
   */
  readonly exemptFromPodSecurity?: boolean;
}

/**
 * Props of `WithLogAgent`.
 */
export interface WithLogAgentProps extends SidecarProps {
  /**
   * The log shipper, made with one of `LogAgent`'s static methods.
   * @default - the first of `LogAgent`'s static methods, with no options
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
   * An agent that buffers on disk keeps its buffer here too (what it has read but not yet
   * delivered), limited to a quarter of this limit (`max(1, floor(MiB / 4))`), which it may pass
   * by one chunk of at most 2 MB: from 16 MiB on, the buffer stays below half the volume
   * (docs/log-agents.md says what each agent does when its buffer is full).
   * @default Size.gibibytes(1)
   */
  readonly logVolumeSizeLimit?: Size;

  /**
   * The user the agent runs as (`runAsUser`), e.g. the app's user, to read log files the app
   * writes with mode 0600. Must not be 0 (the agent runs as non-root).
   * @default - the agent image's own user (docs/log-agents.md lists each agent's)
   */
  readonly agentUser?: number;

  /**
   * The primary group the agent runs as (`runAsGroup`), e.g. the app's group, to read log files
   * the app writes with mode 0640. A pod `fsGroup` is another way (see `logDirectory`).
   * @default - the same number as the agent's user; 0 with `podLogs` (the kubelet's log files are root's, mode 0640)
   */
  readonly agentGroup?: number;

  /**
   * Capture what the app writes to stdout and stderr: the app's own command runs under a small
   * wrapper (busybox from the `sidecar-tools` init container) that still writes every line to the
   * container's stdout or stderr (`kubectl logs` unchanged) and also, line by line, to files in
   * `<logDirectory>/.stdout-<container>/` that the agent tails; signals go to the app at once and the
   * container exits with the app's exit code. For apps that log to stdout only.
   * @default - not captured: only the files the app writes into `logDirectory` are shipped
   */
  readonly captureStdout?: CaptureStdoutOptions;

  /**
   * Read the kubelet's own log files of the app container of this pod
   * (`/var/log/pods/<namespace>_<pod>_<uid>/<container>/*.log`, CRI format, partial lines joined),
   * through a read-only hostPath of `/var/log/pods`, the path built from the downward API. For apps
   * that cannot be wrapped (images without a shell, commands you must not change). A hostPath is
   * outside the Pod Security `baseline` and `restricted` profiles (see `PodLogsOptions`).
   * @default - not read
   */
  readonly podLogs?: PodLogsOptions;
}

/**
 * Attaches a log shipper sidecar (`LogAgent`) to a workload: the app writes log
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
  /** `captureStdout`, checked. */
  private readonly capture?: CaptureSpec;
  /** `podLogs`, checked. */
  private readonly podLogs?: PodLogsSpec;

  constructor(scope: Construct, id: string, props: WithLogAgentProps) {
    super(scope, id, props, 'log-agent');
    // from here on the copy SidecarBase made (a props object changed afterwards changes nothing)
    props = this._props as WithLogAgentProps;
    const who = this._where();
    checkMadeBy(who, 'agent', props.agent, LogAgent, registeredFactories());
    checkMadeBy(who, 'output', props.output, LogOutput, 'LogOutput.stdout(), .forward(), .http(), .loki(), .elasticsearch() or .opensearch()');
    checkString(who, 'logDirectory', props.logDirectory, "'/var/log/app'");
    checkString(who, 'filePattern', props.filePattern, "'*.log'");
    this.agent = props.agent ?? LogAgent._default();
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
    this.capture = captureSpec(who, this.logDirectory, props.captureStdout, sizeLimit);
    this.podLogs = podLogsSpec(who, props.podLogs);
    const r = this.agent._render({
      who,
      logDirectory: this.logDirectory,
      filePattern,
      logVolumeSizeLimitMiB: sizeLimit,
      configDirectory: CONFIG_DIRECTORY,
      output: o,
      secretVars: secrets.vars,
      sources: {
        ...(this.capture ? { capture: captureGlob(this.logDirectory) } : {}),
        ...(this.podLogs ? { podLogsEnv: this.podLogs.envName } : {}),
      },
    });
    if (this.podLogs && props.podLogs?.exemptFromPodSecurity !== true) {
      const workload = this.workloadObject;
      this.node.addValidation({ validate: () => enforcedNamespaceErrors(who, this, workload.metadata.namespace) });
    }
    checkListenPort(who, `${this.agent.name} health port`, r.healthPort);
    checkMounts(who, this.logDirectory, r.scratchDirectory, r.secretDirectory);
    this._attach(this.describeAgent(props, r, secrets, sizeLimit));
  }

  /**
   * The files the app says it writes into `logDirectory` (a path in its containers' command, args
   * or env values, as the manifest has them) that `filePattern` does not match: the agent would
   * never read them, and nothing else would say so.
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
      // the kubelet's log files are root:root 0640 (containerd opens them with 0640:
      // internal/cri/io/logger.go `NewCRILogger` callers, openLogFile): group 0 reads them
      group: props.agentGroup ?? (this.podLogs ? 0 : undefined),
      env: [...POD_ENV, ...(this.podLogs ? [fieldEnv('POD_UID', 'metadata.uid')] : []), ...r.env, ...(r.secretDirectory === undefined ? secrets.env : [])],
      ports: shared([{ containerPort: r.healthPort, name: r.healthPortName, protocol: 'TCP' }]),
      // No readinessProbe: the agent is not in the request path, and a log backend outage (the
      // health check fails after output errors) must not take the app out of its Services.
      // Liveness: a hung agent is restarted; the endpoint does not fail while the backend is down
      // (each agent's `livenessPath`; without one, the startup probe's).
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
        ...(this.podLogs ? [{ suffix: '-pod-logs', source: POD_LOGS_SOURCE, mountPath: POD_LOGS_ROOT, readOnly: true }] : []),
      ],
      shutdown: r.shutdown,
      warnings: [...r.warnings ?? [], ...(this.podLogs ? [hostPathWarning(this.describe(), props.podLogs?.exemptFromPodSecurity === true)] : [])],
      ...(this.capture ? { capture: this.capture } : {}),
      ...(this.podLogs ? { podLogs: this.podLogs } : {}),
    };
  }
}

const CONFIG_DIRECTORY = '/etc/log-agent';

/** The agent's env var with the glob of the app container's kubelet log files (src/engine/capture.ts `podLogsEnv`). */
const POD_LOG_PATH_ENV = 'POD_LOG_PATH';

/** The kubelet's log directory of every pod of the node, read-only in the agent (the config reads this pod's only). */
const POD_LOGS_SOURCE = shared({ hostPath: { path: POD_LOGS_ROOT, type: 'Directory' } });

const PSS_PROFILES_WITHOUT_HOSTPATH = ['baseline', 'restricted'];

function captureSpec(who: Where, logDirectory: string, o: CaptureStdoutOptions | undefined, volumeMiB: number): CaptureSpec | undefined {
  if (o === undefined) return undefined;
  if (!isPropsObject(o)) throw who.error(`captureStdout ${describeValue(o)} is not an options object`, o, 'e.g. captureStdout: {} (every app container)', ', ');
  if (o.containers !== undefined) {
    if (!Array.isArray(o.containers) || o.containers.length === 0) {
      throw who.error('captureStdout.containers must name at least one app container', o.containers, "leave it out for every app container, or e.g. ['web']", ', ');
    }
    o.containers.forEach((c, i) => checkString(who, `captureStdout.containers[${i}]`, c, "'web'"));
  }
  if (o.command !== undefined) {
    if (!Array.isArray(o.command) || o.command.length === 0) {
      throw who.error('captureStdout.command must hold the program and its arguments', o.command, "e.g. ['/app/server', '--port', '8080']", ', ');
    }
    o.command.forEach((c, i) => checkString(who, `captureStdout.command[${i}]`, c, "'/app/server'"));
  }
  const fileMiB = sizeLimitMiB(who, 'captureStdout.maxFileSize', o.maxFileSize, 10, 'Size.mebibytes(10)');
  const maxFiles = o.maxFiles ?? 5;
  checkInteger(who, 'captureStdout.maxFiles', maxFiles, 1, 1000, 'a whole number of files', 'e.g. 5');
  // two streams per container; the volume holds the app's own files and the agent's state too
  if (2 * fileMiB * maxFiles > volumeMiB / 2) {
    throw who.error(
      `captureStdout keeps up to 2 x ${maxFiles} files of ${fileMiB} MiB per container (stdout and stderr), more than half of the log volume ` +
      `(logVolumeSizeLimit ${volumeMiB} MiB), whose limit the kubelet enforces by evicting the pod`, o.maxFileSize ?? maxFiles,
      'lower captureStdout.maxFileSize or maxFiles, or raise logVolumeSizeLimit', '; ');
  }
  return {
    logDirectory,
    ...(o.containers ? { containers: [...o.containers] } : {}),
    ...(o.command ? { command: [...o.command] } : {}),
    maxFileBytes: fileMiB * 1024 * 1024,
    maxFiles,
  };
}

function podLogsSpec(who: Where, o: PodLogsOptions | undefined): PodLogsSpec | undefined {
  if (o === undefined) return undefined;
  if (!isPropsObject(o)) throw who.error(`podLogs ${describeValue(o)} is not an options object`, o, "e.g. podLogs: {} or podLogs: { container: 'web' }", ', ');
  if (o.container !== undefined) checkString(who, 'podLogs.container', o.container, "'web'");
  checkBoolean(who, 'podLogs.exemptFromPodSecurity', o.exemptFromPodSecurity);
  return { ...(o.container !== undefined ? { container: o.container } : {}), envName: POD_LOG_PATH_ENV };
}

function hostPathWarning(owner: string, exempt: boolean): string {
  return `${owner}: podLogs mounts the node's ${POD_LOGS_ROOT} read-only into the agent (a hostPath volume), which the Pod Security ` +
    '`baseline` and `restricted` profiles forbid: the API server refuses the pods in a namespace that enforces either' +
    (exempt ? ' (exemptFromPodSecurity says this workload is exempt)' : ' unless the workload is exempt') +
    ', and the agent can read the log files of every pod of the node (its config reads only this pod\'s app container). ' +
    'Prefer captureStdout where the app\'s command can be wrapped.';
}

/**
 * A Namespace object of the app with the workload's name that enforces `baseline` or `restricted`
 * (`pod-security.kubernetes.io/enforce`, kubernetes staging/src/k8s.io/pod-security-admission/api/constants.go):
 * the hostPath of `podLogs` would be refused (policy/check_hostPathVolumes.go, baseline).
 */
function enforcedNamespaceErrors(who: Where, scope: Construct, namespace: string | undefined): string[] {
  const ns = namespace ?? 'default';
  const errors: string[] = [];
  for (const c of scope.node.root.node.findAll()) {
    if (!(c instanceof ApiObject) || c.kind !== 'Namespace' || c.metadata.name !== ns) continue;
    const level = c.metadata.getLabel('pod-security.kubernetes.io/enforce');
    if (level !== undefined && PSS_PROFILES_WITHOUT_HOSTPATH.includes(level)) {
      errors.push(
        `${who}: podLogs needs a hostPath volume (${POD_LOGS_ROOT}, read-only), but namespace '${ns}' (${c.node.path}) enforces the ` +
        `Pod Security '${level}' profile (pod-security.kubernetes.io/enforce), which forbids hostPath volumes: the API server would refuse the pods. ` +
        'Use captureStdout instead, or set podLogs.exemptFromPodSecurity: true if the workload is exempt from the namespace\'s enforcement.',
      );
    }
  }
  return errors;
}

const SCRATCH_SOURCE = shared({ emptyDir: { medium: 'Memory', sizeLimit: '16Mi' } });

const POD_ENV = [fieldEnv('POD_NAME', 'metadata.name'), fieldEnv('POD_NAMESPACE', 'metadata.namespace'), fieldEnv('NODE_NAME', 'spec.nodeName')];

/** The registry's factories as a message names them: `LogAgent.a(), .b() or .c()`. */
function registeredFactories(): string {
  // (kept per registry size: every construct names them in its check of the agent prop)
  const registered = LogAgent._registered;
  if (factoriesText?.count !== registered.length) {
    const calls = registered.map((a, i) => `${i === 0 ? 'LogAgent' : ''}.${a.factory}()`);
    factoriesText = { count: registered.length, text: `${calls.slice(0, -1).join(', ')} or ${calls[calls.length - 1]}` };
  }
  return factoriesText.text;
}
let factoriesText: { readonly count: number; readonly text: string } | undefined;

/**
 * A writable directory of the agent's own, when it needs one (the root filesystem is read-only).
 * A tmpfs: the kubelet mounts it without a mode option (kubernetes pkg/volume/emptydir/
 * empty_dir.go `setupTmpfs`), so its root has tmpfs's default 1777. A disk-backed emptyDir is
 * 0777 without the sticky bit, which Ruby's Dir.tmpdir refuses (ruby/tmpdir lib/tmpdir.rb:
 * "world-writable" is skipped, then "could not find a temporary directory"): a Ruby agent's
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
  // Written into every agent's config: `,` splits the agents' path lists, `$`
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
 * `*` any run of characters, `?` one; as glob(3), Rust's glob crate and Ruby's
 * Dir.glob read it (the agents' globs), a leading '.' is matched only by a leading '.' of the pattern.
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
