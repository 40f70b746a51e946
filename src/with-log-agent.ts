import * as path from 'path';
import { Construct } from 'constructs';
import { TOOLS, restrictedSecurityContext, shutdownOf } from './engine/shutdown';
import { RANK } from './engine/spec';
import { LogAgent } from './log-agent';
import { LogOutput, outputSecretEnv } from './log-output';
import { SidecarBase, SidecarProps, checkListenPort, checkPort, fieldEnv, httpProbe } from './sidecar';

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
   * container (also those added later) and into the agent, which tails it.
   * @default '/var/log/app'
   */
  readonly logDirectory?: string;

  /**
   * Glob of the files to tail inside `logDirectory`.
   * @default '*.log'
   */
  readonly filePattern?: string;
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

  constructor(scope: Construct, id: string, props: WithLogAgentProps) {
    super(scope, id, props, 'log-agent');
    const who = this.describe();
    this.agent = props.agent ?? LogAgent.fluentBit();
    this.output = props.output ?? LogOutput.stdout();
    this.logDirectory = props.logDirectory ?? '/var/log/app';
    const filePattern = props.filePattern ?? '*.log';
    checkLogDirectory(who, this.logDirectory);
    if (filePattern === '' || filePattern.includes('/') || /\s/.test(filePattern)) {
      throw new Error(`${who}: filePattern '${filePattern}' must be a file-name glob without '/' or spaces, e.g. '*.log'.`);
    }
    const o = this.output._config;
    if ('host' in o) {
      if (o.host.trim() === '') {
        throw new Error(
          `${who}: the ${o.type} output needs a host; got an empty string. ` +
          `Set host to the destination's DNS name or IP address, e.g. LogOutput.${o.type}({ host: 'logs.example.com' }).`,
        );
      }
      checkPort(who, `${o.type} output port`, o.port);
    }

    const configDirectory = '/etc/log-agent';
    const secrets = outputSecretEnv(o);
    const r = this.agent._render({
      who, logDirectory: this.logDirectory, filePattern, configDirectory, output: o, secretVars: secrets.vars,
    });
    checkListenPort(who, `${this.agent.name} health port`, r.healthPort);
    // A second mount at one path is rejected by the API server; one inside a read-only mount cannot be created.
    for (const [what, dir, nested] of [
      ['config directory', configDirectory, true],
      ['hook tools directory', TOOLS.mountPath, true],
      ...(r.scratchDirectory ? [['scratch directory', r.scratchDirectory, false] as const] : []),
    ] as const) {
      if (this.logDirectory === dir || (nested && this.logDirectory.startsWith(`${dir}/`))) {
        throw new Error(
          `${who}: logDirectory '${this.logDirectory}' is ${this.logDirectory === dir ? '' : 'inside '}the agent's ${what} '${dir}'; ` +
          "choose a directory of its own, e.g. '/var/log/app'.",
        );
      }
    }
    const config = this._configMap(r.files);
    const logVolume = `${this.containerName}-logs`;
    const configVolume = `${this.containerName}-config`;
    // A writable directory of the agent's own, when it needs one (the root filesystem is read-only).
    const scratch = r.scratchDirectory === undefined ? undefined : {
      volume: { emptyDir: { sizeLimit: '64Mi' }, name: `${this.containerName}-tmp` },
      mount: { mountPath: r.scratchDirectory, name: `${this.containerName}-tmp` },
    };
    const probe = (periodSeconds: number, failureThreshold: number) => httpProbe(r.healthPath, r.healthPort, periodSeconds, failureThreshold);

    this._agent = {
      rank: RANK.LOG_AGENT,
      container: {
        args: r.args,
        command: r.command,
        env: [
          fieldEnv('POD_NAME', 'metadata.name'),
          fieldEnv('POD_NAMESPACE', 'metadata.namespace'),
          fieldEnv('NODE_NAME', 'spec.nodeName'),
          ...r.env,
          ...secrets.env,
        ],
        image: r.image,
        imagePullPolicy: 'IfNotPresent',
        name: this.containerName,
        ports: [{ containerPort: r.healthPort, name: r.healthPortName, protocol: 'TCP' }],
        // No readinessProbe: the agent is not in the request path, and a log backend outage (the
        // health check fails after output errors) must not take the app out of its Services.
        resources: this._resources(r.defaultResources),
        securityContext: restrictedSecurityContext(r.uid),
        startupProbe: probe(1, 30),
        volumeMounts: [
          { mountPath: this.logDirectory, name: logVolume },
          { mountPath: configDirectory, name: configVolume, readOnly: true },
          ...(scratch ? [scratch.mount] : []),
        ],
      },
      volumes: [
        { emptyDir: {}, name: logVolume },
        { configMap: { name: config.name }, name: configVolume },
        ...(scratch ? [scratch.volume] : []),
      ],
      appMounts: [{ mountPath: this.logDirectory, name: logVolume }],
      appEnv: [],
      podAnnotations: config.annotations,
      shutdown: { ...shutdownOf(r.shutdown), appShutdownSeconds: this.appShutdownSeconds() },
    };
  }

}


function checkLogDirectory(who: string, dir: string): void {
  const reserved = ['/', '/etc', '/bin', '/usr', '/proc', '/sys', '/dev', '/var', '/tmp'];
  if (!path.posix.isAbsolute(dir) || path.posix.normalize(dir) !== dir || dir.endsWith('/') || reserved.includes(dir)) {
    throw new Error(
      `${who}: logDirectory '${dir}' must be an absolute, normalized directory of its own (no trailing '/', not a system ` +
      "directory such as '/var'), e.g. '/var/log/app'.",
    );
  }
}
