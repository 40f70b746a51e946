import { Duration, Size } from 'cdk8s';
import { Construct } from 'constructs';
import {
  checkBoolean, checkConfigMapKey, checkDnsLabel, checkEnvName, checkHttpPath, checkImage, checkInteger, checkListenPort, checkMountPath,
  checkObjectName, checkPort, checkString, checkStringList, copyData, describeValue, durationSeconds, isSecretKey, isSecretName, listOf, ownEntries,
  sizeLimitMiB, snapshot,
} from './bind/checks';
import { checkManifestList, checkManifestString } from './bind/manifest-values';
import { defaultPullPolicy } from './engine/pull-policy';
import { TOOLS, restrictedSecurityContext } from './engine/shutdown';
import { HoldSpec, QuitSpec, RANK } from './engine/spec';
import { Where } from './private/errors';
import { Json } from './private/json';
import { hasOwn } from './private/order';
import { SecretKeyReference, SecretReference } from './secret-ref';
import { SidecarBase, SidecarProps } from './sidecar';

/**
 * Options of a check (a startup, liveness or readiness check of a sidecar).
 */
export interface SidecarCheckOptions {
  /**
   * How often the kubelet runs the check.
   * @default Duration.seconds(1)
   */
  readonly period?: Duration;

  /**
   * How long the check may keep failing before the kubelet gives up (startup and liveness:
   * restarts the container; readiness: marks it not ready). Rounded up to whole periods.
   * @default Duration.minutes(2)
   */
  readonly timeout?: Duration;
}

/**
 * Options of an HTTP check.
 */
export interface SidecarHttpCheckOptions extends SidecarCheckOptions {
  /**
   * The path to GET; any status from 200 to 399 passes.
   * @default '/'
   */
  readonly path?: string;
}

/**
 * How the kubelet tells that a sidecar has started (or is alive, or ready): an HTTP GET, a TCP
 * connect or a command in the container. Native layout: the `startupProbe`, which the kubelet
 * waits for before it starts the next init container and the app. Legacy layout: the container's
 * `startupProbe` too, and (HTTP only) the optional hold of the app. As `livenessCheck`: the
 * `livenessProbe`, in both layouts.
 * @see https://kubernetes.io/docs/tasks/configure-pod-container/configure-liveness-readiness-startup-probes/
 */
export class SidecarCheck {
  /**
   * An HTTP GET on the pod IP: the endpoint must listen on `0.0.0.0` (the kubelet connects to
   * the pod IP, not to the container's loopback).
   */
  public static http(port: number, options: SidecarHttpCheckOptions = {}): SidecarCheck {
    options = snapshot(options); // each option read once
    const path = options.path ?? '/';
    checkHttpPath(new Where('SidecarCheck.http()'), 'path', path, '/ready');
    checkPort(new Where('SidecarCheck.http()'), 'port', port);
    return new SidecarCheck({ httpGet: { path, port } }, options, `http://127.0.0.1:${port}${path}`);
  }

  /** A TCP connect to the pod IP. */
  public static tcp(port: number, options: SidecarCheckOptions = {}): SidecarCheck {
    options = snapshot(options); // each option read once
    checkPort(new Where('SidecarCheck.tcp()'), 'port', port);
    return new SidecarCheck({ tcpSocket: { port } }, options);
  }

  /** A command run in the sidecar's container (its image must have it); exit 0 passes. */
  public static exec(command: string[], options: SidecarCheckOptions = {}): SidecarCheck {
    options = snapshot(options); // each option read once
    command = copyData(command); // read once
    // every index, holes too (.some() skips a hole, which would be written as null)
    const bad = (c: string[]) => c.length === 0 || Array.from({ length: c.length }, (_, i) => i).some(i => !(i in c) || typeof c[i] !== 'string' || c[i] === '');
    if (!Array.isArray(command) || bad(command)) {
      throw new Where('SidecarCheck.exec()').error(`command ${describeValue(command)} must be a non-empty list of non-empty strings`, command,
        "e.g. ['/bin/sh', '-c', 'test -s /vault/secrets/db']", ', ');
    }
    checkManifestList(new Where('SidecarCheck.exec()'), 'command', command);
    return new SidecarCheck({ exec: { command: [...command] } }, options);
  }

  private constructor(
    private readonly action: Json,
    private readonly options: SidecarCheckOptions,
    /** The URL the legacy hold waits for (HTTP checks only). */
    private readonly url?: string,
  ) {
    const who = new Where('SidecarCheck');
    const period = durationSeconds(who, 'period', options.period, 1);
    const timeout = durationSeconds(who, 'timeout', options.timeout, 120);
    if (period < 1) throw who.error(`period must be at least 1 second (got ${period}s)`, options.period, 'use e.g. Duration.seconds(1)');
    if (timeout < period) throw who.error(`timeout ${timeout}s is shorter than period ${period}s`, options.timeout, 'use a timeout of at least one period');
  }

  /** The probe. @internal */
  public _probe(): Json {
    const period = durationSeconds(new Where('SidecarCheck'), 'period', this.options.period, 1);
    const timeout = durationSeconds(new Where('SidecarCheck'), 'timeout', this.options.timeout, 120);
    return { ...this.action, failureThreshold: Math.ceil(timeout / period), periodSeconds: period, timeoutSeconds: 1 };
  }

  /** The port an HTTP or TCP check connects to (none for exec). @internal */
  public _port(): number | undefined {
    return this.action.httpGet?.port ?? this.action.tcpSocket?.port;
  }

  /** The legacy hold, for HTTP checks. @internal */
  public _hold(): HoldSpec | undefined {
    if (!this.url) return undefined;
    return { readyUrl: this.url, timeoutSeconds: durationSeconds(new Where('SidecarCheck'), 'timeout', this.options.timeout, 120) };
  }
}

/**
 * Options of an emptyDir volume of a sidecar.
 */
export interface SidecarEmptyDirOptions {
  /**
   * Also mount it at this path in every app container (e.g. the directory a Vault agent renders
   * secrets into). With `serveInitContainers`, the user's init containers get it too.
   * @default - the sidecar's alone
   */
  readonly appMountPath?: string;

  /**
   * Mount it read-only in the app containers.
   * @default true
   */
  readonly appReadOnly?: boolean;

  /**
   * Keep it in memory (tmpfs; counts toward the sidecar's memory limit): for secrets.
   * @default false
   */
  readonly memory?: boolean;

  /**
   * Its size limit.
   * @default Size.mebibytes(16)
   */
  readonly sizeLimit?: Size;
}

/**
 * A volume the sidecar mounts: a new emptyDir, Secret or ConfigMap volume named by you, or a
 * volume the workload already has.
 */
export class SidecarVolume {
  /** A new emptyDir volume, optionally shared with the app containers. */
  public static emptyDir(name: string, mountPath: string, options: SidecarEmptyDirOptions = {}): SidecarVolume {
    options = snapshot(options); // each option read once
    const size = sizeLimitMiB(new Where(`SidecarVolume.emptyDir('${name}')`), 'sizeLimit', options.sizeLimit, 16, 'Size.mebibytes(16)');
    if (options.appMountPath !== undefined) checkMountPath(new Where(`SidecarVolume.emptyDir('${name}')`), 'appMountPath', options.appMountPath);
    return new SidecarVolume(name, mountPath, false, { emptyDir: { ...(options.memory ? { medium: 'Memory' } : {}), sizeLimit: `${size}Mi` } },
      options.appMountPath, options.appReadOnly ?? true);
  }

  /** A new volume of a Secret's keys (read-only); any cdk8s-plus `ISecret` is a `SecretReference`. */
  public static secret(name: string, secret: SecretReference, mountPath: string): SidecarVolume {
    const secretName = secret?.name;
    checkObjectName(new Where(`SidecarVolume.secret('${name}')`), 'Secret name', secretName, 'a Secret name', 'db-credentials');
    return new SidecarVolume(name, mountPath, true, { secret: { secretName } });
  }

  /** A new volume of a ConfigMap's keys (read-only). */
  public static configMap(name: string, configMapName: string, mountPath: string): SidecarVolume {
    checkObjectName(new Where(`SidecarVolume.configMap('${name}')`), 'configMapName', configMapName, 'a ConfigMap name', 'proxy-config');
    return new SidecarVolume(name, mountPath, true, { configMap: { name: configMapName } });
  }

  /** A volume the workload already has (checked at synthesis like every mount). */
  public static fromPod(volumeName: string, mountPath: string, readOnly: boolean = true): SidecarVolume {
    return new SidecarVolume(volumeName, mountPath, readOnly);
  }

  private constructor(
    /** @internal */ public readonly _name: string,
    /** @internal */ public readonly _mountPath: string,
    /** @internal */ public readonly _readOnly: boolean,
    /** @internal */ public readonly _source?: Json,
    /** @internal */ public readonly _appMountPath?: string,
    /** @internal */ public readonly _appReadOnly?: boolean,
  ) {
    const who = new Where(`SidecarVolume '${_name}'`);
    checkDnsLabel(who, 'name', _name);
    checkMountPath(who, 'mountPath', _mountPath);
  }
}

/**
 * A declared container port of the sidecar.
 */
export interface SidecarPort {
  /** The port number. */
  readonly number: number;
  /**
   * Its name (an IANA_SVC_NAME: at most 15 characters).
   * @default - none
   */
  readonly name?: string;
}

/**
 * How the app stops a legacy sidecar on a Job, so the Job can complete.
 */
export class SidecarQuit {
  /**
   * The app sends a request to `http://127.0.0.1:<port><path>` when it is done (e.g. the Cloud SQL
   * Auth Proxy's `/quitquitquit` with `--quitquitquit`, admin port 9091). The engine gives every
   * app container the URL in the env var `envName`, only where the app must call it (a legacy
   * sidecar on a Job, CronJob or completing Pod). The URL is written so that the kubelet, which
   * expands `$(NAME)` in env values, passes it as given (each `$` as `$$`).
   */
  public static http(port: number, path: string, envName?: string): SidecarQuit {
    checkPort(new Where('SidecarQuit.http()'), 'port', port);
    checkHttpPath(new Where('SidecarQuit.http()'), 'path', path, '/quitquitquit');
    if (envName !== undefined) checkEnvName(new Where('SidecarQuit.http()'), 'envName', envName);
    return new SidecarQuit(`http://127.0.0.1:${port}${path}`, envName);
  }

  private constructor(/** @internal */ public readonly _url: string, /** @internal */ public readonly _env?: string) {}
}

/**
 * Options that say how the engine runs a sidecar, shared by `WithSidecar` and `AdoptSidecar`.
 */
export interface SidecarRunOptions {
  /**
   * How the kubelet tells that the sidecar has started: its `startupProbe`. Native layout: the
   * app (and the init containers after the sidecar) start only once it passes.
   * @default - none: the sidecar counts as started as soon as it runs
   */
  readonly startupCheck?: SidecarCheck;

  /**
   * How the kubelet tells that the sidecar is alive: its `livenessProbe`. The kubelet restarts the
   * sidecar once the check has kept failing for `timeout` (in both layouts). It runs only after the
   * startup check has passed, and no longer once the pod is being deleted. Check something that
   * fails when the process hangs, not when a backend it talks to is down: a restart does not bring
   * the backend back (e.g. a log agent's uptime endpoint, not its health endpoint that fails with its outputs). Give it a
   * `timeout` well above the longest pause the sidecar can have (a garbage collection, a blocked
   * request), e.g. `SidecarCheck.http(port, { path, period: Duration.seconds(10), timeout: Duration.minutes(1) })`.
   * @default - none: the sidecar is restarted only when it exits
   */
  readonly livenessCheck?: SidecarCheck;

  /**
   * Legacy layout: hold the app containers until the (HTTP) startup check passes: the sidecar goes
   * first in `spec.containers` with a `postStart` wait (Istio's holdApplicationUntilProxyStarts).
   * Native layout: not needed (the startup probe does it).
   * @default false
   */
  readonly holdApplicationUntilStarted?: boolean;

  /**
   * How long the sidecar needs after SIGTERM to finish and exit; counted in the grace period.
   * @default Duration.seconds(5)
   */
  readonly stopTime?: Duration;

  /**
   * Whether the sidecar must outlive the app's shutdown where it is stopped together with the
   * app (legacy layout, and 1.28): a `preStop` delay of `appShutdownTime`. From 1.29 a native
   * sidecar is stopped after the app anyway.
   * @default true
   */
  readonly outliveApp?: boolean;

  /**
   * Legacy layout on a Job or CronJob: how the app stops the sidecar so the Job completes. Without
   * one (and without `allowLegacyOnJob`), a sidecar with a `command` runs under a wrapper that
   * exits with the app (`restartPolicy: Never`); otherwise a legacy sidecar on a Job is an error.
   * @default - none: the wrapper, where it can work
   */
  readonly jobQuit?: SidecarQuit;
}

/**
 * Props of `WithSidecar`.
 */
export interface WithSidecarProps extends SidecarProps, SidecarRunOptions {
  /** The image, e.g. 'gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.25.3'. */
  readonly image: string;

  /**
   * The entrypoint.
   * @default - the image's
   */
  readonly command?: string[];

  /**
   * The arguments.
   * @default - the image's
   */
  readonly args?: string[];

  /**
   * Env vars of the sidecar, in the order given (after the `secretEnv` vars): the kubelet expands
   * a `$(NAME)` in a value only when NAME comes earlier in the container's env, so list a var
   * before the ones that refer to it, e.g. `{ DB_HOST: 'db', DB_URL: 'postgres://$(DB_HOST)/app' }`.
   * @default - none
   */
  readonly env?: { [name: string]: string };

  /**
   * Env vars of the sidecar from Secret keys, in the order given, before the `env` vars (so an
   * `env` value can refer to one of them as `$(NAME)`).
   * @default - none
   */
  readonly secretEnv?: { [name: string]: SecretKeyReference };

  /**
   * Declared container ports (those the kubelet or a Service reaches).
   * @default - none
   */
  readonly ports?: SidecarPort[];

  /**
   * Ports it binds on 127.0.0.1 only (not declared): checked against the app's and the other
   * sidecars' ports.
   * @default - none
   */
  readonly localPorts?: number[];

  /**
   * Volumes it mounts.
   * @default - none
   */
  readonly volumes?: SidecarVolume[];

  /**
   * Config files, in a ConfigMap of the sidecar's own (a checksum annotation rolls the pods when
   * they change), mounted read-only at `configDirectory`. No secrets here: use `secretEnv` or a
   * `SidecarVolume.secret`.
   * @default - none
   */
  readonly configFiles?: { [fileName: string]: string };

  /**
   * Where `configFiles` are mounted.
   * @default '/etc/<containerName>'
   */
  readonly configDirectory?: string;

  /**
   * The uid the sidecar runs as (never root).
   * @default 65532 (distroless `nonroot`)
   */
  readonly user?: number;

  /**
   * The gid it runs as.
   * @default - the same as `user`
   */
  readonly group?: number;

  /**
   * A read-only root filesystem (give the sidecar an emptyDir where it writes).
   * @default true
   */
  readonly readOnlyRootFilesystem?: boolean;

  /**
   * A readiness check (counts toward the pod's Ready condition: only for sidecars in the request path).
   * @default - none
   */
  readonly readinessCheck?: SidecarCheck;

  /**
   * Env vars added to every app container (a variable the container sets itself wins), e.g. the
   * address of the sidecar: after the container's own env, in the order given.
   * @default - none
   */
  readonly appEnv?: { [name: string]: string };
}

const DEFAULT_USER = 65532;
const DEFAULT_STOP_SECONDS = 5;
const RESERVED_PATHS = [TOOLS.mountPath];

/**
 * Any container as a version-aware sidecar of a workload: the same engine as the library's own
 * agents places it (native init container with `restartPolicy: Always` from 1.29, legacy entry
 * of `spec.containers` below), with its startup check, shutdown, grace budget and Job handling.
 * Restricted security context (non-root, no privilege escalation, all capabilities dropped,
 * RuntimeDefault seccomp, read-only root filesystem).
 */
export class WithSidecar extends SidecarBase {
  constructor(scope: Construct, id: string, props: WithSidecarProps) {
    super(scope, id, props, 'sidecar');
    // from here on the copy SidecarBase made (a props object changed afterwards changes nothing)
    props = this._props as WithSidecarProps;
    const who = new Where(this.describe());
    const configDirectory = props.configDirectory ?? `/etc/${this.containerName}`;
    const checked = checkSidecarProps(who, props, configDirectory);
    const run = runOptions(who, props, this.containerName);
    const volumes = props.volumes ?? [];
    const container: Json = {
      ...(props.args ? { args: [...props.args] } : {}),
      ...(props.command ? { command: [...props.command] } : {}),
      ...(checked.env.length > 0 ? { env: checked.env } : {}),
      image: props.image,
      imagePullPolicy: defaultPullPolicy(props.image),
      ...(run.livenessProbe ? { livenessProbe: run.livenessProbe } : {}),
      name: this.containerName,
      ...(checked.ports.length > 0 ? { ports: checked.ports } : {}),
      ...(props.readinessCheck ? { readinessProbe: props.readinessCheck._probe() } : {}),
      resources: this._resources({ cpuRequest: '50m', cpuLimit: '500m', memoryRequest: '64Mi', memoryLimit: '256Mi' }),
      securityContext: {
        ...restrictedSecurityContext(checked.user),
        ...(props.group !== undefined ? { runAsGroup: props.group } : {}),
        ...(props.readOnlyRootFilesystem === false ? { readOnlyRootFilesystem: false } : {}),
      },
      ...(run.startupProbe ? { startupProbe: run.startupProbe } : {}),
      ...(volumes.length > 0 ? { volumeMounts: volumes.map(mountOf) } : {}),
    };
    this._attachContainer({
      kind: `WithSidecar '${this.containerName}'`,
      rank: RANK.CUSTOM,
      container,
      files: props.configFiles,
      filesMountPath: configDirectory,
      volumes: volumes.filter(v => v._source !== undefined).map(v => ({ ...v._source, name: v._name })),
      appMounts: volumes.filter(v => v._appMountPath !== undefined)
        .map(v => ({ mountPath: v._appMountPath, name: v._name, ...(v._appReadOnly ? { readOnly: true } : {}) })),
      appEnv: checked.appEnv,
      localPorts: props.localPorts,
      shutdown: run.shutdown,
      hold: run.hold,
      quit: run.quit,
    });
  }
}

/** Every check of WithSidecar's own props (src/bind/checks.ts), and the values they give. */
function checkSidecarProps(who: Where, props: WithSidecarProps, configDirectory: string) {
  checkImage(who, 'image', props.image, 'gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.25.3');
  checkStringList(who, 'command', props.command);
  checkStringList(who, 'args', props.args);
  const user = props.user ?? DEFAULT_USER;
  checkInteger(who, 'user', user, 1, 2147483647, 'a non-root uid', 'e.g. 65532');
  if (props.group !== undefined) checkInteger(who, 'group', props.group, 0, 2147483647, 'a gid', 'e.g. 65532');
  const env = envList(who, props.env, props.secretEnv);
  const appEnv = envList(who, props.appEnv, undefined, 'appEnv');
  const ports = checkPorts(who, listOf(who, 'ports', props.ports, '[{ number: 9090 }]'), listOf(who, 'localPorts', props.localPorts, '[5432]'));
  if (props.configFiles !== undefined) {
    checkMountPath(who, 'configDirectory', configDirectory);
    for (const [name, text] of ownEntries(who, 'configFiles', props.configFiles, "{ 'config.hcl': '...' }")) {
      checkConfigMapKey(who, 'configFiles key', name, 'config.hcl');
      checkString(who, `configFiles '${name}'`, text, "the file's text");
      checkManifestString(who, `configFiles '${name}' content`, text);
    }
  }
  checkBoolean(who, 'readOnlyRootFilesystem', props.readOnlyRootFilesystem);
  const example = "[SidecarVolume.emptyDir('cache', '/var/cache/proxy')]";
  checkMountPaths(who, listOf(who, 'volumes', props.volumes, example), props.configFiles !== undefined ? configDirectory : undefined);
  if (props.readinessCheck !== undefined && !(props.readinessCheck instanceof SidecarCheck)) {
    throw who.error('readinessCheck must be made with', props.readinessCheck, 'SidecarCheck.http(), .tcp() or .exec()', ' ');
  }
  checkCheckPorts(who, props);
  return { user, env, appEnv, ports };
}

/** The engine's view of the run options, checked. */
export function runOptions(who: Where, props: SidecarRunOptions, containerName: string) {
  checkBoolean(who, 'holdApplicationUntilStarted', props.holdApplicationUntilStarted);
  checkBoolean(who, 'outliveApp', props.outliveApp);
  for (const [prop, check] of [['startupCheck', props.startupCheck], ['livenessCheck', props.livenessCheck]] as const) {
    if (check !== undefined && !(check instanceof SidecarCheck)) {
      throw who.error(`${prop} must be made with`, check, `SidecarCheck.http(), .tcp() or .exec() (got ${describeValue(check)})`, ' ');
    }
  }
  const hold = props.holdApplicationUntilStarted ? props.startupCheck?._hold() : undefined;
  if (props.holdApplicationUntilStarted && !hold) {
    throw who.error(
      "holdApplicationUntilStarted needs an HTTP startupCheck (the legacy hold waits for it with an HTTP GET from the sidecar's container)",
      props.startupCheck, 'use startupCheck: SidecarCheck.http(port, { path }), or drop holdApplicationUntilStarted',
    );
  }
  const stopSeconds = durationSeconds(who, 'stopTime', props.stopTime, DEFAULT_STOP_SECONDS);
  if (props.jobQuit !== undefined && !(props.jobQuit instanceof SidecarQuit)) {
    throw who.error('jobQuit must be made with', props.jobQuit, 'SidecarQuit.http()', ' ');
  }
  let quit: QuitSpec | undefined;
  if (props.jobQuit) {
    const env = props.jobQuit._env ?? `${containerName.toUpperCase().replace(/-/g, '_')}_QUIT_URL`;
    // A shell reads the var as "$NAME", so the name must be a C identifier (a digit cannot start it)
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(env)) {
      throw who.error(
        `jobQuit gives the app the env var '${env}' (from containerName '${containerName}'), which is not a variable name a ` +
        'shell or the API server takes (it starts with a digit)',
        env, "give it a name with SidecarQuit.http(port, path, 'PROXY_QUIT_URL')",
      );
    }
    quit = { url: props.jobQuit._url, env };
  }
  return {
    startupProbe: props.startupCheck?._probe(),
    livenessProbe: props.livenessCheck?._probe(),
    hold,
    quit,
    shutdown: { stopSeconds, ...(props.outliveApp === false ? { outliveApp: false } : {}) },
  };
}

/**
 * The env as the kubelet reads it: in order, each `$(NAME)` in a value expanded only when NAME is
 * defined EARLIER in the list (kubernetes pkg/kubelet/kubelet_pods.go makeEnvironmentVariables,
 * with third_party/forked/golang/expansion/expand.go). So the user's order is kept: the secretEnv
 * vars first (their values come from Secrets and are never expanded), then the env vars in the
 * order given, so a value can refer to any secretEnv var and to the env vars before it.
 */
function envList(who: Where, plain: { [name: string]: string } | undefined, secrets: { [name: string]: SecretKeyReference } | undefined, prop = 'env'): Json[] {
  // env is a list in the manifest: a var named '__proto__' is written `- name: __proto__` and read back intact
  const plainEntries = ownEntries(who, prop, plain, "{ DB_HOST: 'db' }", 'list');
  const secretEntries = ownEntries(who, 'secretEnv', secrets, "{ TOKEN: { secret, key: 'token' } }", 'list');
  const out: Json[] = [];
  for (const [name, ref] of secretEntries) {
    checkEnvName(who, 'secretEnv', name);
    // own properties only: 'constructor' or 'toString' is not in env because Object.prototype has it
    if (hasOwn(plain, name)) throw who.error(`'${name}' is both in env and secretEnv`, name, 'set it in one of them');
    if (!ref || !isSecretName(ref.secret?.name) || !isSecretKey(ref.key)) {
      throw who.error(`secretEnv '${name}' needs a Secret (its name a DNS-1123 subdomain) and a key`, ref,
        `e.g. { secret: { name: 'oauth2-proxy' }, key: 'client-secret' } (got ${describeValue(ref)})`, ', ');
    }
    checkManifestString(who, `secretEnv '${name}' Secret name`, ref.secret.name);
    checkManifestString(who, `secretEnv '${name}' key`, ref.key); // '0X1F' is a key that the API server reads as 31
    out.push({ name, valueFrom: { secretKeyRef: { key: ref.key, name: ref.secret.name } } });
  }
  for (const [name, value] of plainEntries) {
    checkEnvName(who, prop, name);
    if (typeof value !== 'string') throw who.error(`${prop} '${name}' must be a string (got ${describeValue(value)})`, value, "quote numbers, e.g. '5432'");
    checkManifestString(who, `${prop} '${name}' value`, value);
    out.push({ name, value });
  }
  return out;
}

/**
 * A check's port against the declared ones: the kubelet connects to the pod IP, so a check on a
 * `localPorts` entry (bound on localhost only) can never pass, and one on a port that none of the
 * declared `ports` is (when some are declared) is most likely a typo; either way the native pod
 * would stay in Init for ever (the startup probe never passes).
 */
function checkCheckPorts(who: Where, props: WithSidecarProps): void {
  const declared = (props.ports ?? []).map(p => p.number);
  const checks = [['startupCheck', props.startupCheck], ['readinessCheck', props.readinessCheck], ['livenessCheck', props.livenessCheck]] as const;
  for (const [prop, check] of checks) {
    const port = check instanceof SidecarCheck ? check._port() : undefined;
    if (port === undefined) continue;
    if ((props.localPorts ?? []).includes(port)) {
      throw who.error(
        `${prop} connects to port ${port}, which is in localPorts (bound on 127.0.0.1 only), but the kubelet probes the pod IP: ` +
        'the check can never pass',
        port, 'Check a port the sidecar serves on 0.0.0.0 (declare it in ports), or use SidecarCheck.exec()', '. ',
      );
    }
    if (declared.length > 0 && !declared.includes(port)) {
      throw who.error(
        `${prop} connects to port ${port}, which is none of the sidecar's declared ports (${declared.join(', ')}): the check would ` +
        'never pass and the pod would not start',
        port, `Use one of the declared ports in SidecarCheck, or declare ${port} in ports`, '. ',
      );
    }
  }
}

function checkPorts(who: Where, ports: SidecarPort[], localPorts: number[]): Json[] {
  const seen = new Set<number>();
  const names = new Set<string>();
  for (const p of [...ports.map(x => x?.number), ...localPorts]) {
    checkPort(who, 'port', p);
    // WithSidecar's container runs as non-root with every capability dropped (PSS restricted), as WithEnvoy's does
    checkListenPort(who, 'port', p, 'use a port from 1024 up (the sidecar runs as non-root with every capability dropped); a Service can still expose 80 or 443 with its targetPort on it');
    if (seen.has(p)) throw who.error(`port ${p} is listed twice (ports and localPorts)`, p, 'list it once');
    seen.add(p);
  }
  return ports.map(p => {
    if (p.name !== undefined) {
      // IANA_SVC_NAME: validation.go validateContainerPorts -> IsValidPortName
      if (!/^(?=.{1,15}$)(?=.*[a-z])[a-z0-9]([a-z0-9]|-(?!-))*[a-z0-9]?$/.test(p.name) || p.name.endsWith('-')) {
        throw who.error(`port name '${p.name}' is not an IANA service name (at most 15 lower-case letters, digits and single '-', with a letter)`, p.name, "e.g. 'http'", ', ');
      }
      checkManifestString(who, 'port name', p.name); // '0o17' is an IANA service name that the API server reads as 15
      if (names.has(p.name)) throw who.error(`port name '${p.name}' is used twice`, p.name, 'name each port once');
      names.add(p.name);
    }
    return { containerPort: p.number, ...(p.name ? { name: p.name } : {}), protocol: 'TCP' };
  });
}

function mountOf(v: SidecarVolume): Json {
  return { mountPath: v._mountPath, name: v._name, ...(v._readOnly ? { readOnly: true } : {}) };
}

function checkMountPaths(who: Where, volumes: SidecarVolume[], configDirectory: string | undefined): void {
  const paths = new Map<string, string>();
  const names = new Set<string>();
  for (const v of volumes) {
    if (!(v instanceof SidecarVolume)) throw who.error('volumes must be made with', v, 'SidecarVolume.emptyDir(), .secret(), .configMap() or .fromPod()', ' ');
    if (names.has(v._name)) throw who.error(`volume '${v._name}' is listed twice`, v._name, 'list it once');
    names.add(v._name);
  }
  const all: [string, string][] = [
    ...volumes.map(v => [v._mountPath, `volume '${v._name}'`] as [string, string]),
    ...(configDirectory ? [[configDirectory, 'configFiles'] as [string, string]] : []),
  ];
  for (const [path, what] of all) {
    const other = paths.get(path);
    if (other) throw who.error(`${what} and ${other} are both mounted at ${path}`, path, 'give each its own directory');
    paths.set(path, what);
    for (const reserved of RESERVED_PATHS) {
      if (path === reserved || path.startsWith(`${reserved}/`)) {
        throw who.error(`${what} is mounted at ${path}, the library's hook tools directory ${reserved}`, path, 'choose another directory');
      }
    }
  }
}
