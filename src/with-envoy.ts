import { ApiObject, Duration } from 'cdk8s';
import { Construct, IConstruct, IValidation } from 'constructs';
import { BOOTSTRAP_FILE, ENVOY_HEALTH_PATH, ENVOY_LIMITS, ENVOY_UID, OutboundRoute, envoyConfigFileCuts } from './agents/envoy/config';
import { envoyShutdown } from './agents/envoy/shutdown';
import { AGENT_LIVENESS } from './agents/liveness';
import { appFact } from './bind/binding';
import {
  checkBoolean, checkDnsLabel, checkImage, checkInteger, checkListenPort, checkPort, checkSecretName, checkString, describeValue,
  durationSeconds, hostReading, isHost, isLoopbackHost, isPortName, isPropsObject, listOf, positiveSeconds, snapshot,
} from './bind/checks';
import { RANK } from './engine/spec';
import { DEFAULT_IMAGES, releaseRangeWarning } from './facts/images';
import { COMPLETING_KINDS } from './facts/kinds';
import { selectorSelects } from './facts/services';
import { SelectorIndex } from './facts/workload-index';
import { Images } from './images';
import { Where } from './private/errors';
import { Json } from './private/json';
import { CutText, shared } from './private/memo';
import { SecretReference } from './secret-ref';
import { SidecarServicePort, addServicePort, checkServicePorts, claimServicePortCheck, serviceManifest } from './service-port';
import { AgentDescription, AgentVolume, SidecarBase, SidecarProps } from './sidecar';


/**
 * How Envoy talks to the app on 127.0.0.1.
 */
export enum EnvoyAppProtocol {
  /** HTTP/1.1 (clients may still use HTTP/2 with Envoy; Envoy translates). */
  HTTP1 = 'HTTP1',
  /** HTTP/2 without TLS (h2c, prior knowledge), e.g. a gRPC server. */
  HTTP2 = 'HTTP2',
}

/**
 * TLS termination on Envoy's listener.
 */
export interface EnvoyTlsOptions {
  /**
   * A `kubernetes.io/tls` Secret (keys `tls.crt` and `tls.key`) in the workload's namespace, e.g.
   * one that cert-manager keeps renewed, given as every Secret of the library is (`basicAuth`,
   * `secretEnv`, `SidecarVolume.secret`): any cdk8s-plus `ISecret`
   * (`kplus.Secret.fromSecretName(this, 'tls', 'web-tls')`), or `{ name: 'web-tls' }`. It is
   * mounted read-only into Envoy only; a renewed certificate is picked up without a restart. Give
   * it or `podCertificateSigner`, not both.
   * @default - none: `podCertificateSigner` gives the certificate
   */
  readonly secret?: SecretReference;

  /**
   * Kubernetes 1.37+: the certificate and key come from a pod certificate instead of a Secret: a
   * `podCertificate` projected volume (PodCertificateRequest, GA in 1.37) asks this signer (e.g.
   * `'example.com/serving'`, a `<domain>/<path>` name) for a key pair per pod and keeps it renewed,
   * written as `tls.crt` and `tls.key` where Envoy reads them. No private key ever sits in a Secret.
   * Refused below 1.37 (the API server drops the source: the files would be missing).
   * @see https://kubernetes.io/docs/reference/access-authn-authz/certificate-signing-requests/#pod-certificate-requests
   * @default - none: `secret` gives the certificate
   */
  readonly podCertificateSigner?: string;

  /**
   * The key type of the pod certificate (`podCertificateSigner`): RSA3072, RSA4096, ECDSAP256,
   * ECDSAP384, ECDSAP521 or ED25519 (validation.go, v1.37.2).
   * @default 'ECDSAP256'
   */
  readonly podCertificateKeyType?: string;

  /**
   * Kubernetes 1.37+: mutual TLS with the CA(s) of a ClusterTrustBundle signer instead of a
   * Secret's `ca.crt`: a `clusterTrustBundle` projected volume (ClusterTrustBundleProjection, GA in
   * 1.37) of every bundle of this signer, written as `ca.crt`. Give it or `clientCaSecret`.
   * Refused below 1.37.
   * @default - none: `clientCaSecret`, or no client certificates
   */
  readonly clientCaTrustBundleSigner?: string;

  /**
   * A Secret whose key `ca.crt` holds the CA(s) that sign client certificates: turns on mutual
   * TLS. Clients without a certificate signed by it are refused; Envoy passes the verified
   * certificate's subject, URI and DNS SANs to the app in `X-Forwarded-Client-Cert`. May be the
   * same Secret as `secret` (cert-manager writes `ca.crt` there). A cdk8s-plus `ISecret` or `{ name }`.
   * @default - no client certificates are asked for
   */
  readonly clientCaSecret?: SecretReference;
}

/**
 * An outbound route: the app calls `http://127.0.0.1:<localPort>` and Envoy forwards to
 * `host:port` (originating TLS when `tls` is set).
 */
export interface EnvoyUpstream {
  /** A DNS-1123 label of at most 50 characters; names the route's listener, cluster and stats. */
  readonly name: string;

  /** The port the app calls on 127.0.0.1 (bound on localhost only, never on the pod IP). */
  readonly localPort: number;

  /** DNS name (e.g. `payments.shop.svc.cluster.local`, `api.example.com`) or IPv4 address. */
  readonly host: string;

  /**
   * The upstream's port.
   * @default - 443 with `tls`, 80 without
   */
  readonly port?: number;

  /**
   * Originate TLS to the upstream: the system CAs of the Envoy image verify its certificate,
   * whose SAN must match `host`; SNI is `host`.
   * @default false
   */
  readonly tls?: boolean;
}

/**
 * Options of `WithEnvoy.servicePort()` and `WithEnvoy.exposeVia()`.
 */
export interface EnvoyServicePortOptions {
  /**
   * The Service's port.
   * @default - 443 with TLS, 80 without
   */
  readonly port?: number;

  /**
   * The name of the Service port (a DNS label, unique in the Service).
   * @default - 'https' with TLS, 'http' without
   */
  readonly name?: string;

  /**
   * The node port (Services of type NodePort or LoadBalancer).
   * @default - allocated by Kubernetes when the Service type needs one
   */
  readonly nodePort?: number;
}

/**
 * Props of `WithEnvoy`.
 */
export interface WithEnvoyProps extends SidecarProps {
  /**
   * The port the app listens on. Envoy forwards to `127.0.0.1:<appPort>`: bind the app to
   * 127.0.0.1 (or keep the port out of every Service) so that traffic cannot bypass Envoy.
   *
   * When the app's containers declare ports, one of them must be `appPort` (an error at synthesis
   * otherwise). Declare it with cdk8s-plus `ports: [{ number: 8080 }]`, not `portNumber`:
   * `portNumber` also adds a TCP startup probe on the pod IP, which an app bound to 127.0.0.1 never
   * passes (see `appListensOnPodIp`).
   */
  readonly appPort: number;

  /**
   * The app also listens on the pod IP (e.g. `0.0.0.0:<appPort>`), so the kubelet's probes on
   * `appPort` can reach it. Traffic on the pod IP then bypasses Envoy (and its TLS): keep
   * `appPort` out of every Service and NetworkPolicy ingress rule.
   *
   * Off by default: a probe of an app container on `appPort` on the pod IP (cdk8s-plus'
   * startup probe for `portNumber`, or your own `tcpSocket` / `httpGet` / `grpc` probe without
   * `host`) is an error at synthesis, because the kubelet can never reach an app bound to
   * 127.0.0.1 and the pod would restart forever.
   * @default false
   */
  readonly appListensOnPodIp?: boolean;

  /**
   * How many proxies in front of the pod (the Ingress controller, a cloud load balancer) append to
   * `X-Forwarded-For` (Envoy's `xff_num_trusted_hops`). Envoy leaves the header alone
   * (`use_remote_address: false`, as Istio's sidecars); this only tells Envoy which entry is the
   * client, for its access log and its internal/external decision.
   * @default 0
   */
  readonly trustedProxyHops?: number;

  /**
   * How long a request or stream may stay idle (no bytes either way) before Envoy resets it
   * (`stream_idle_timeout`). `Duration.seconds(0)` turns it off, as Istio does for its sidecars: the
   * app decides how long idle gRPC streams, WebSockets, long polls and server-sent events live.
   * Envoy's own default (5 minutes) would cut them.
   * @default Duration.seconds(0) (off)
   */
  readonly streamIdleTimeout?: Duration;

  /**
   * How long Envoy keeps an idle connection to the app open. It must be shorter than the app's
   * keep-alive timeout (Node.js 5 s, uvicorn 5 s, gunicorn 2 s), or Envoy may send a request on a
   * connection the app is closing (503 `UC`). Envoy's own default is 1 hour.
   * @default Duration.seconds(1)
   */
  readonly appIdleTimeout?: Duration;

  /**
   * How Envoy talks to the app.
   * @default EnvoyAppProtocol.HTTP1
   */
  readonly appProtocol?: EnvoyAppProtocol;

  /**
   * The pod-facing port Envoy listens on; point Services here (`servicePort()`, `exposeVia()`).
   * Must differ from every port of the app's containers.
   * @default - 8443 with `tls`, 10000 without
   */
  readonly listenerPort?: number;

  /**
   * Terminate TLS (and optionally verify client certificates) on the listener.
   * @default - plain HTTP on the listener
   */
  readonly tls?: EnvoyTlsOptions;

  /**
   * Outbound routes the app reaches through Envoy on localhost ports.
   * @default - none
   */
  readonly upstreams?: EnvoyUpstream[];

  /**
   * The Envoy image. Needs Envoy 1.34 or later (`drain_listeners?inboundonly&graceful` that leaves
   * outbound routes alone); the container runs `/usr/local/bin/envoy` as `user`.
   * @default 'envoyproxy/envoy:v1.40.0'
   */
  readonly image?: string;

  /**
   * The uid Envoy runs as (`runAsUser`), e.g. one of the range a platform assigns to the namespace
   * (OpenShift's `MustRunAsRange`) or one an admission policy asks for. Never 0. Envoy needs no
   * file of its image's `envoy` user (101): the library runs the binary itself, its config comes
   * from the ConfigMap and the TLS files from the Secret (both readable by every uid), its logs go to
   * stdout (docs/envoy.md, "The user Envoy runs as").
   * @default 10101 (`WithEnvoy.UID`: 10000 or more, as kube-score and most policies ask)
   */
  readonly user?: number;

  /**
   * The primary gid Envoy runs as (`runAsGroup`).
   * @default - the same number as `user`
   */
  readonly group?: number;

  /**
   * How long Envoy drains its pod-facing listeners when the pod stops (`--drain-time-s`, with
   * `--drain-strategy immediate`): from the `preStop` hook on, every response asks the client to
   * close the connection (HTTP/1.1 `Connection: close`, HTTP/2 GOAWAY); then the listeners stop
   * accepting. Requests already accepted are still answered. Must not exceed `appShutdownTime`,
   * so the drain ends while the app can still answer.
   *
   * The app gets SIGTERM at the same moment: it must keep accepting and answering requests for
   * `drainTime` after it (Envoy still forwards what arrives meanwhile), or those requests fail with
   * 503 `UF`. Many servers stop accepting at once on SIGTERM: delay that in the app.
   * @default Duration.seconds(5)
   */
  readonly drainTime?: Duration;

  /**
   * Legacy layout only: start Envoy first in `containers` with a `postStart` hook that waits
   * (up to 60 s) until Envoy is ready, so that the app starts only then (Istio's
   * `holdApplicationUntilProxyStarts`). The native layout always starts Envoy first.
   *
   * On by default, unlike Istio: this construct's promise is "ready before the app" in both
   * layouts, and an app that calls out through `upstreams` at startup fails without it. It costs
   * the app Envoy's startup time (about a second). Turn it off to start both at once.
   * @default true
   */
  readonly holdApplicationUntilProxyStarts?: boolean;

  /**
   * Envoy's admin port, bound to 127.0.0.1 only (never a container port): it can drain and shut
   * Envoy down. A legacy sidecar on a Job is stopped by the app with
   * `POST http://127.0.0.1:<adminPort>/quitquitquit`.
   * @default 9901
   */
  readonly adminPort?: number;

  /**
   * The pod-facing port of the health listener that the kubelet's probes call
   * (`GET /ready`: 200 while Envoy is live, 503 once it drains).
   * @default 15021
   */
  readonly healthPort?: number;

  /**
   * Envoy worker threads (`--concurrency`). Envoy's own default is one per CPU of the NODE,
   * not of the container.
   * @default 2
   */
  readonly concurrency?: number;

  /**
   * Write an access log line per request of the inbound and outbound listeners to Envoy's stdout.
   * @default true
   */
  readonly accessLog?: boolean;
}

const DEFAULTS = {
  containerName: 'envoy',
  adminPort: 9901,
  healthPort: 15021,
  listenerPortTls: 8443,
  listenerPortPlain: 10000,
  drainSeconds: 5,
  concurrency: 2,
  holdTimeoutSeconds: 60,
  appIdleSeconds: 1,
} as const;


const CONFIG_DIRECTORY = '/etc/envoy/config';
/** Envoy's command, frozen and shared by every workload (not one copy per workload). */
const COMMAND = shared(['/usr/local/bin/envoy']);
const TLS_DIRECTORY = '/etc/envoy/tls';
const CLIENT_CA_DIRECTORY = '/etc/envoy/client-ca';


/**
 * Attaches an Envoy proxy sidecar to a workload: traffic enters the pod on Envoy's listener
 * (optionally terminating TLS or mutual TLS) and reaches the app on `127.0.0.1:<appPort>`; the
 * app can call named upstreams through Envoy on localhost ports.
 *
 * Start: native layout (Kubernetes >= 1.29): Envoy is an init container with `restartPolicy:
 * Always` and a startupProbe on its health listener, so the app starts only once Envoy is
 * ready. Legacy layout: Envoy is the first container with a blocking `postStart` wait
 * (`holdApplicationUntilProxyStarts`).
 *
 * Stop: in both layouts the `preStop` hook fails Envoy's health check (readiness drops) and
 * starts a graceful drain of the pod-facing listeners (`POST /drain_listeners?inboundonly&graceful`
 * on the localhost admin port) that lasts `drainTime`; outbound routes keep working. Native:
 * Envoy is stopped after the app has exited. Legacy: the `preStop` hook then waits
 * `appShutdownTime` before Envoy gets SIGTERM.
 *
 * Traffic must enter through Envoy: point a Service at `listenerPort` with `servicePort()` or
 * `exposeVia()`.
 */
export class WithEnvoy extends SidecarBase {
  /** The uid (and gid) Envoy runs as unless `user` (and `group`) say otherwise: 10101. */
  public static readonly UID: number = ENVOY_UID;

  /** The readiness path of the health listener. */
  public static readonly HEALTH_PATH: string = ENVOY_HEALTH_PATH;

  /** The app's port on 127.0.0.1. */
  public readonly appPort: number;
  /** The pod-facing port Envoy listens on. */
  public readonly listenerPort: number;
  /** The name of the listener's container port (`envoy-https` or `envoy-http`). */
  public readonly listenerPortName: string;
  /** The admin port (127.0.0.1 only). */
  public readonly adminPort: number;
  /** The health listener's port (kubelet probes). */
  public readonly healthPort: number;
  /** Whether the listener terminates TLS. */
  public readonly terminatesTls: boolean;
  /** How long the listeners drain when the pod stops. */
  public readonly drainTime: Duration;
  /** The Envoy image. */
  public readonly image: string;

  private readonly appListensOnPodIp: boolean;

  /** The names of the TLS Secrets (`tls.secret`, `tls.clientCaSecret`), each read once. */
  private readonly tlsSecrets?: { readonly cert?: string; readonly clientCa?: string };

  constructor(scope: Construct, id: string, props: WithEnvoyProps) {
    super(scope, id, props, DEFAULTS.containerName);
    // from here on the copy SidecarBase made (a props object changed afterwards changes nothing)
    props = this._props as WithEnvoyProps;
    const who = this._where();
    this.appPort = props.appPort;
    // `'false'` from JavaScript would count as true below (a hold the user turned off)
    checkBoolean(who, 'holdApplicationUntilProxyStarts', props.holdApplicationUntilProxyStarts);
    // before anything reads it: `tls: null` would count as given here and as absent below (a
    // listener named envoy-https serving plain HTTP)
    if (props.tls !== undefined && !isPropsObject(props.tls)) {
      throw who.error(`tls ${describeValue(props.tls)} is not TLS options`, props.tls, "give { secret: { name: 'web-tls' } } to terminate TLS, or leave tls out for plain HTTP");
    }
    this.terminatesTls = props.tls !== undefined;
    this.listenerPort = props.listenerPort ?? (this.terminatesTls ? DEFAULTS.listenerPortTls : DEFAULTS.listenerPortPlain);
    this.listenerPortName = this.terminatesTls ? 'envoy-https' : 'envoy-http';
    this.adminPort = props.adminPort ?? DEFAULTS.adminPort;
    this.healthPort = props.healthPort ?? DEFAULTS.healthPort;
    this.image = props.image ?? Images.ENVOY;
    const upstreams = resolveUpstreams(who, props.upstreams ?? []);
    // the ports Envoy listens on
    const ownPorts: Array<[string, number]> = [
      ['listenerPort', this.listenerPort],
      ['adminPort', this.adminPort],
      ['healthPort', this.healthPort],
      ...upstreams.map((u, i): [string, number] => [`upstreams[${i}] '${u.name}' localPort`, u.localPort]),
    ];
    checkPorts(who, this.appPort, ownPorts);
    checkUpstreamLoops(who, upstreams, ownPorts);
    this.tlsSecrets = checkTls(who, props.tls);
    checkImage(who, 'image', this.image, Images.ENVOY);
    const times = checkTimes(who, props, this.appShutdownSeconds());
    this.drainTime = Duration.seconds(times.drainSeconds);
    const trustedProxyHops = props.trustedProxyHops ?? 0;
    checkInteger(who, 'trustedProxyHops', trustedProxyHops, 0, 10, 'a number of proxies', 'e.g. 1 behind an Ingress controller');
    if (props.user !== undefined) checkInteger(who, 'user', props.user, 1, 2147483647, 'a non-root uid', `e.g. ${ENVOY_UID}`);
    if (props.group !== undefined) checkInteger(who, 'group', props.group, 0, 2147483647, 'a gid', `e.g. ${ENVOY_UID}`);
    const concurrency = props.concurrency ?? DEFAULTS.concurrency;
    checkInteger(who, 'concurrency', concurrency, 1, 64, 'a number of worker threads', 'e.g. 2');
    const resources = this._resources({ cpuRequest: '100m', cpuLimit: '1000m', memoryRequest: '64Mi', memoryLimit: '256Mi' });
    const files = this.renderConfig(props, upstreams, times, trustedProxyHops, resources);
    this.appListensOnPodIp = props.appListensOnPodIp ?? false;
    this._attach(this.describeAgent(props, { files, resources, upstreams, drainSeconds: times.drainSeconds, concurrency }));
  }

  /** Envoy's bootstrap and its xDS files, from checked values. */
  private renderConfig(
    props: WithEnvoyProps, upstreams: OutboundRoute[], times: ReturnType<typeof checkTimes>, trustedProxyHops: number, resources: Json,
  ): Record<string, CutText> {
    return envoyConfigFileCuts({
      adminPort: this.adminPort,
      listenerPort: this.listenerPort,
      appPort: this.appPort,
      healthPort: this.healthPort,
      upstreams,
      nodeId: this.workloadObject.name,
      nodeCluster: this.workloadObject.name,
      appProtocol: props.appProtocol === EnvoyAppProtocol.HTTP2 ? 'HTTP2' : 'HTTP1',
      healthPath: ENVOY_HEALTH_PATH,
      tls: props.tls
        ? {
          certDirectory: TLS_DIRECTORY,
          clientCaDirectory: this.tlsSecrets?.clientCa || props.tls.clientCaTrustBundleSigner ? CLIENT_CA_DIRECTORY : undefined,
        }
        : undefined,
      accessLog: props.accessLog ?? true,
      configDirectory: CONFIG_DIRECTORY,
      xffNumTrustedHops: trustedProxyHops,
      streamIdleTimeoutSeconds: times.streamIdleSeconds,
      appIdleTimeoutSeconds: times.appIdleSeconds,
      maxHeapBytes: maxHeapBytes(resources.limits.memory),
    });
  }

  /** Envoy as data: every value here has been checked. */
  private describeAgent(props: WithEnvoyProps, r: {
    files: Record<string, CutText>; resources: Json; upstreams: OutboundRoute[]; drainSeconds: number; concurrency: number;
  }): AgentDescription {
    const admin = `http://127.0.0.1:${this.adminPort}`;
    const tls = props.tls;
    const warning = releaseRangeWarning(this._where(), this.image, DEFAULT_IMAGES.envoy);
    return {
      ...(warning ? { warnings: [warning] } : {}),
      kind: 'WithEnvoy',
      rank: RANK.PROXY,
      image: this.image,
      command: COMMAND,
      args: shared([
        '--config-path', `${CONFIG_DIRECTORY}/${BOOTSTRAP_FILE}`,
        '--drain-time-s', String(r.drainSeconds),
        '--drain-strategy', 'immediate',
        '--disable-hot-restart',
        '--concurrency', String(r.concurrency),
        '--log-level', 'info',
      ]),
      user: props.user ?? ENVOY_UID,
      group: props.group,
      ports: shared([
        { containerPort: this.listenerPort, name: this.listenerPortName, protocol: 'TCP' },
        { containerPort: this.healthPort, name: 'envoy-health', protocol: 'TCP' },
      ]),
      // Up to two minutes to become ready (Envoy resolves its upstreams' DNS names first).
      health: {
        path: ENVOY_HEALTH_PATH,
        port: this.healthPort,
        startup: { periodSeconds: 1, failureThreshold: 120 },
        readiness: { periodSeconds: 5, failureThreshold: 3 },
        // Liveness on the health listener too, never the admin (127.0.0.1 only; it can stop
        // Envoy): the health_check filter (pass_through_mode false, no
        // cluster_min_healthy_percentages) answers 200 from a worker thread whatever the
        // upstreams do, and 503 only after `/healthcheck/fail`, which the preStop posts once the
        // pod is being deleted, when the kubelet has stopped liveness probes (src/agents/liveness.ts).
        liveness: { path: ENVOY_HEALTH_PATH, ...AGENT_LIVENESS },
      },
      resources: r.resources,
      // the bootstrap cut at the node's id and cluster, the workload's name
      fileCuts: r.files,
      filesPerWorkload: true,
      // The Secrets are read by Envoy only, never copied into the ConfigMap.
      volumes: this.envoyVolumes(tls),
      localPorts: [this.adminPort, ...r.upstreams.map(u => u.localPort)],
      appPorts: [this.appPort],
      // Envoy exits at once on SIGTERM; the drain happens before (src/agents/envoy/shutdown.ts).
      shutdown: envoyShutdown(),
      // Readiness drops first (the health listener answers 503), then the pod-facing listeners
      // drain for drainTime; outbound listeners (MODIFY_ONLY, OUTBOUND) are left alone.
      preStopPosts: [`${admin}/healthcheck/fail`, `${admin}/drain_listeners?inboundonly&graceful`],
      hold: (props.holdApplicationUntilProxyStarts ?? true)
        ? { readyUrl: `http://127.0.0.1:${this.healthPort}${ENVOY_HEALTH_PATH}`, timeoutSeconds: DEFAULTS.holdTimeoutSeconds }
        : undefined,
    };
  }

  /** Envoy's volumes: its config, and the TLS certificate and client CA from Secrets or projected from signers. */
  private envoyVolumes(tls: WithEnvoyProps['tls']): AgentVolume[] {
    return [
      { suffix: '-config', mountPath: CONFIG_DIRECTORY, readOnly: true },
      ...(tls ? [{
        suffix: '-tls',
        // the same file names from a pod certificate (1.37+: src/engine/rules.ts refuses it below)
        source: tls.podCertificateSigner !== undefined
          ? {
            projected: {
              sources: [{
                podCertificate: {
                  certificateChainPath: 'tls.crt', keyPath: 'tls.key', keyType: tls.podCertificateKeyType ?? 'ECDSAP256', signerName: tls.podCertificateSigner,
                },
              }],
            },
          }
          : { secret: { items: [{ key: 'tls.crt', path: 'tls.crt' }, { key: 'tls.key', path: 'tls.key' }], secretName: this.tlsSecrets?.cert } },
        mountPath: TLS_DIRECTORY,
        readOnly: true,
      }] : []),
      ...(this.tlsSecrets?.clientCa || tls?.clientCaTrustBundleSigner ? [{
        suffix: '-client-ca',
        // an empty labelSelector: every bundle of the signer (unset would match none)
        source: tls?.clientCaTrustBundleSigner !== undefined
          ? { projected: { sources: [{ clusterTrustBundle: { labelSelector: {}, path: 'ca.crt', signerName: tls.clientCaTrustBundleSigner } }] } }
          : { secret: { items: [{ key: 'ca.crt', path: 'ca.crt' }], secretName: this.tlsSecrets?.clientCa } },
        mountPath: CLIENT_CA_DIRECTORY,
        readOnly: true,
      }] : []),
    ];
  }

  /**
   * The app's side, seen in the workload's own pod template at synthesis (containers can be
   * added to a workload after this constructor): probes on `appPort` and the declared ports.
   * @internal
   */
  protected _checkWorkload(podSpec: Json | undefined): string[] {
    return checkAppContainers(this._where(), this.appPort, this.appListensOnPodIp || this.manifestProbes(podSpec).length > 0, podSpec);
  }

  /**
   * A probe the manifest itself declares on `appPort` (a workload that is a plain `ApiObject`:
   * `Include`, `Helm`, a `KubeDeployment`) proves that the app listens on the pod IP: accepted as
   * `appListensOnPodIp: true`, with a warning that the port bypasses Envoy. Not on a cdk8s-plus
   * workload, where cdk8s-plus adds a TCP startupProbe for `portNumber` by itself (it proves nothing).
   * @internal
   */
  protected _workloadWarnings(podSpec: Json | undefined, labels: Record<string, string>): string[] {
    const out: string[] = [];
    const probes = this.appListensOnPodIp ? [] : this.manifestProbes(podSpec);
    if (probes.length > 0) {
      out.push(
        `${this.describe()}: the manifest probes appPort ${this.appPort} on the pod IP (${probes.join(', ')}), so the app listens there ` +
        'and the probes are kept (taken as appListensOnPodIp: true). Traffic to the pod IP on that port bypasses Envoy (and its TLS): ' +
        'keep it out of every Service and NetworkPolicy ingress rule, or bind the app to 127.0.0.1 and probe Envoy\'s health port instead.',
      );
    }
    const unready = this.appWithoutReadiness(podSpec);
    if (unready) out.push(unready);
    const named = new Map<string, number>();
    for (const c of podSpec?.containers ?? []) for (const p of c.ports ?? []) if (p.name) named.set(p.name, p.containerPort);
    for (const svc of servicesTargeting(this, labels, this.appPort, named)) {
      out.push(
        `${this.describe()}: Service '${svc}' selects the workload's pods and sends traffic to appPort ${this.appPort}, the app's own port ` +
        `behind Envoy, bypassing it (and its TLS); set its targetPort to Envoy's listener (${this.listenerPort}), e.g. with servicePort() or exposeVia().`,
      );
    }
    return out;
  }

  /**
   * Envoy's readinessProbe counts toward the pod's Ready condition, and Envoy's `/ready` answers 200
   * whether or not the app behind it on 127.0.0.1 is up (the health_check filter, not passed
   * through: src/agents/envoy/config.ts). Without a readinessProbe of the app's own, the pod is
   * Ready, and gets traffic, as soon as Envoy is: while the app starts, and after it hangs. (Linters
   * that ask for a readinessProbe per pod, such as kube-score's `pod-probes`, see Envoy's and stop
   * asking.) Not on a Job or CronJob, whose pods serve no Service in the usual way.
   */
  private appWithoutReadiness(podSpec: Json | undefined): string | undefined {
    if (COMPLETING_KINDS.has(this.workloadObject.kind)) return undefined;
    const containers: Json[] = podSpec?.containers ?? [];
    if (containers.length === 0 || containers.some(c => c.readinessProbe)) return undefined;
    const names = containers.map(c => `'${c.name}'`).join(', ');
    return `${this.describe()}: no app container (${names}) has a readinessProbe, and Envoy's readiness (GET ${ENVOY_HEALTH_PATH} on its health ` +
      `port) answers 200 whether or not the app on 127.0.0.1:${this.appPort} is up: the pod is Ready, and gets traffic, as soon as Envoy is, ` +
      `also while the app starts and after it hangs. Give the app a readinessProbe of its own: an exec probe that calls 127.0.0.1:${this.appPort} ` +
      `(e.g. \`wget -q -O /dev/null http://127.0.0.1:${this.appPort}/ready\`), or an httpGet on another port the app serves on the pod IP.`;
  }

  /** The probes of the workload's app containers on `appPort` on the pod IP, when the manifest is the user's own (see _workloadWarnings). */
  private manifestProbes(podSpec: Json | undefined): string[] {
    if (!ApiObject.isApiObject(this._props.workload)) return [];
    return appPortProbes(this.appPort, podSpec).map(p => `'${p.container}' ${p.kind} (${p.action})`);
  }

  /**
   * A Service port that sends traffic to Envoy's listener:
   * `new kplus.Service(scope, 'svc', { selector: deployment, ports: [envoy.servicePort()] })`,
   * with a Service of any cdk8s-plus major (27 to 34). The port is TCP (the Kubernetes default;
   * the value has no `protocol`, as a cdk8s-plus `Protocol` is each major's own enum).
   *
   * Not for `deployment.exposeViaService({ ports: [envoy.servicePort()] })`: cdk8s-plus checks
   * the target port against the workload's own containers only and throws "Port 8443 is not
   * exposed by any container". To add the port to an existing Service, use `exposeVia()`.
   */
  public servicePort(options: EnvoyServicePortOptions = {}): SidecarServicePort {
    const who = this._where();
    options = snapshot(options); // each option read once
    if (!isPropsObject(options)) throw who.error(`the options ${describeValue(options)} are not an object`, options, "give servicePort() e.g. { port: 443, name: 'https' }");
    const port = options.port ?? (this.terminatesTls ? 443 : 80);
    checkPort(who, 'service port', port);
    if (options.nodePort !== undefined) {
      // 30000-32767 is only the default --service-node-port-range: a cluster may set another, so any port is taken
      checkPort(who, 'service nodePort', options.nodePort,
        "(the API server's default --service-node-port-range is 30000-32767; a cluster may set another)");
    }
    const name = options.name ?? (this.terminatesTls ? 'https' : 'http');
    checkString(who, 'service port name', name, "'https'");
    if (!isPortName(name)) {
      throw who.error(
        `service port name ${describeValue(name)} is not a port name (an IANA_SVC_NAME: at most 15 lower-case letters, digits and ` +
        "single '-', with at least one letter, not starting or ending with '-')",
        name, "e.g. 'https'", ', ',
      );
    }
    return {
      name,
      ...(options.nodePort !== undefined ? { nodePort: options.nodePort } : {}),
      port,
      targetPort: this.listenerPort,
    };
  }

  /**
   * Adds a TCP port to `service` that sends traffic to Envoy's listener (the Service must select
   * the workload's pods). `service` is a Service of any cdk8s-plus major (27 to 34) or a v1
   * Service `ApiObject` (e.g. a `KubeService`). Do not expose the app's own port as well: that
   * traffic would bypass Envoy. A port whose name or number the Service already has is an error
   * at synthesis (the API server would reject the Service).
   */
  public exposeVia(service: IConstruct, options: EnvoyServicePortOptions = {}): void {
    const who = this._where();
    const obj = addServicePort(who, service, this.servicePort(options));
    if (claimServicePortCheck(obj)) this.node.addValidation(new ServicePortsValidation(who, obj));
  }

}

/** `checkServicePorts` of one Service, as a construct's validation (a class: see `WorkloadBinding.add`). */
class ServicePortsValidation implements IValidation {
  public constructor(private readonly who: Where, private readonly service: ApiObject) {}
  public validate(): string[] {
    return checkServicePorts(this.who, this.service);
  }
}

function resolveUpstreams(who: Where, given: EnvoyUpstream[]): OutboundRoute[] {
  const seen = new Map<string, number>();
  const upstreams = listOf(who, 'upstreams', given, "[{ name: 'payments', host: 'payments.shop.svc.cluster.local', port: 8080, localPort: 15001 }]");
  return upstreams.map((u, i) => {
    const at = `upstreams[${i}]`;
    if (!isPropsObject(u)) {
      throw who.error(`${at} ${describeValue(u)} is not an upstream`, u, "give e.g. { name: 'payments', host: 'payments.shop.svc.cluster.local', port: 8080, localPort: 15001 }");
    }
    checkString(who, `${at} name`, u.name, "'payments'");
    checkString(who, `${at} host`, u.host, "'payments.shop.svc.cluster.local'");
    checkDnsLabel(who, `${at} name`, u.name);
    if (u.name.length > 50) {
      throw who.error(`${at} name '${u.name}' is ${u.name.length} characters long`, u.name, "use at most 50 (Envoy limits listener and cluster names to 60, and 'outbound-' is prepended)");
    }
    const first = seen.get(u.name);
    if (first !== undefined) {
      throw who.error(`${at} name '${u.name}' is also the name of upstreams[${first}]`, u.name, 'give every upstream its own name');
    }
    seen.set(u.name, i);
    const host = u.host.trim();
    if (host === '') {
      throw who.error(`${at} '${u.name}' has an empty host`, u.host, "set the upstream's DNS name or IPv4 address, e.g. 'payments.shop.svc.cluster.local'");
    }
    const reading = hostReading(host);
    if (host === u.host && reading !== undefined) {
      throw who.error(
        `${at} '${u.name}' host '${u.host}' is not accepted: ${reading}. An upstream's host is a DNS name or an IPv4 ` +
        'address as four decimal numbers (the bootstrap makes a STATIC cluster of an address, a STRICT_DNS one of a name)',
        u.host, "give e.g. 'payments.shop.svc.cluster.local' or '10.0.0.1'",
      );
    }
    if (host !== u.host || !isHost(host)) {
      throw who.error(`${at} '${u.name}' host '${u.host}' is not a DNS name or IPv4 address`, u.host,
        "give the bare host (no scheme, port or path), e.g. 'api.example.com', and set port and tls separately");
    }
    checkBoolean(who, `${at} tls`, u.tls);
    const tls = u.tls ?? false;
    const port = u.port ?? (tls ? 443 : 80);
    checkPort(who, `${at} '${u.name}' port`, port);
    return { name: u.name, localPort: u.localPort, host, port, tls };
  });
}

/**
 * An upstream on this pod's loopback (any spelling: 'localhost', 127.0.0.0/8, '0.0.0.0',
 * src/bind/checks.ts isLoopbackHost) at a port Envoy itself listens on would send the app's
 * requests back into Envoy (or into its admin interface).
 */
function checkUpstreamLoops(who: Where, upstreams: OutboundRoute[], own: Array<[string, number]>): void {
  upstreams.forEach((u, i) => {
    if (!isLoopbackHost(u.host)) return;
    const mine = own.find(([, port]) => port === u.port);
    if (mine) {
      throw who.error(
        `upstreams[${i}] '${u.name}' is ${u.host}:${u.port}, this pod's loopback at Envoy's own ${mine[0]}: the app's requests would come back into Envoy`,
        `${u.host}:${u.port}`, "Give the upstream's own address (a Service's DNS name, e.g. 'payments.shop.svc.cluster.local')", '. ',
      );
    }
  });
}

/** validation.go v1.37.2: the pod certificate key types. */
const POD_CERTIFICATE_KEY_TYPES = ['RSA3072', 'RSA4096', 'ECDSAP256', 'ECDSAP384', 'ECDSAP521', 'ED25519'];
/** A signer name as ValidateSignerName takes it: `<domain>/<path>` (k8s.io/kubernetes pkg/apis/certificates/validation). */
const SIGNER_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+\/[A-Za-z0-9._~%!$&'()*+,;=:@/-]+$/;

/** The TLS Secrets' names, each read once from its reference (a cdk8s-plus `ISecret` or `{ name }`), after every check. */
function checkTls(who: Where, tls: EnvoyTlsOptions | undefined): { cert?: string; clientCa?: string } | undefined {
  if (!tls) return undefined;
  const nameOf = (prop: string, ref: unknown): string => {
    if (ref === null || typeof ref !== 'object') {
      throw who.error(`${prop} ${describeValue(ref)} is not a Secret reference`, ref, "give kplus.Secret.fromSecretName(scope, 'tls', 'web-tls') or { name: 'web-tls' }");
    }
    const name = (ref as SecretReference).name;
    checkSecretName(who, `${prop}.name`, name);
    return name;
  };
  if ((tls.secret === undefined) === (tls.podCertificateSigner === undefined)) {
    throw who.error('tls needs its certificate from exactly one place', tls,
      'give tls.secret (a kubernetes.io/tls Secret) or, on Kubernetes 1.37+, ' +
      `tls.podCertificateSigner (a pod certificate); got ${tls.secret === undefined ? 'neither' : 'both'}`, ': ');
  }
  const cert = tls.secret !== undefined ? nameOf('tls.secret', tls.secret) : undefined;
  if (tls.clientCaSecret !== undefined && tls.clientCaTrustBundleSigner !== undefined) {
    throw who.error('give tls.clientCaSecret or tls.clientCaTrustBundleSigner', tls, 'for the client CA, not both', ' ');
  }
  const clientCa = tls.clientCaSecret !== undefined ? nameOf('tls.clientCaSecret', tls.clientCaSecret) : undefined;
  for (const [prop, signer] of [['tls.podCertificateSigner', tls.podCertificateSigner], ['tls.clientCaTrustBundleSigner', tls.clientCaTrustBundleSigner]] as const) {
    if (signer !== undefined && (typeof signer !== 'string' || !SIGNER_NAME.test(signer))) {
      throw who.error(`${prop} ${describeValue(signer)} is not a signer name`, signer, "give '<domain>/<path>', e.g. 'example.com/serving'");
    }
  }
  if (tls.podCertificateKeyType !== undefined && !POD_CERTIFICATE_KEY_TYPES.includes(tls.podCertificateKeyType)) {
    throw who.error(`tls.podCertificateKeyType ${describeValue(tls.podCertificateKeyType)} is not supported`, tls.podCertificateKeyType,
      `use one of ${POD_CERTIFICATE_KEY_TYPES.join(', ')}`);
  }
  if (tls.podCertificateKeyType !== undefined && tls.podCertificateSigner === undefined) {
    throw who.error('tls.podCertificateKeyType is for a pod certificate', tls.podCertificateKeyType, 'give tls.podCertificateSigner too, or drop it', ': ');
  }
  return { ...(cert !== undefined ? { cert } : {}), ...(clientCa !== undefined ? { clientCa } : {}) };
}

/** drainTime (within appShutdownTime), streamIdleTimeout and appIdleTimeout, in seconds. */
function checkTimes(who: Where, props: WithEnvoyProps, appShutdownSeconds: number) {
  const drainSeconds = durationSeconds(who, 'drainTime', props.drainTime, DEFAULTS.drainSeconds);
  if (drainSeconds < 1) {
    throw who.error(`drainTime ${drainSeconds}s leaves clients no time to move to other pods`, props.drainTime, 'use at least Duration.seconds(1)');
  }
  if (drainSeconds > appShutdownSeconds) {
    throw who.error(
      `drainTime ${drainSeconds}s is longer than appShutdownTime ${appShutdownSeconds}s: the listeners must finish ` +
      'draining while the app can still answer (Envoy is stopped once the app has shut down)',
      props.drainTime, `Shorten drainTime to at most Duration.seconds(${appShutdownSeconds}) or raise appShutdownTime`, '. ',
    );
  }
  const streamIdleSeconds = durationSeconds(who, 'streamIdleTimeout', props.streamIdleTimeout, 0);
  const appIdleSeconds = positiveSeconds(
    who, 'appIdleTimeout', props.appIdleTimeout, DEFAULTS.appIdleSeconds,
    "Envoy's 0 would mean no idle timeout; use one shorter than the app's keep-alive timeout, e.g. Duration.seconds(1)",
  );
  return { drainSeconds, streamIdleSeconds, appIdleSeconds };
}

/** Checks each port Envoy binds, and that no two of them (nor appPort) are the same. */
function checkPorts(who: Where, appPort: number, bound: Array<[string, number]>): void {
  checkPort(who, 'appPort', appPort);
  const all: Array<[string, number]> = [['appPort', appPort], ...bound];
  for (const [prop, port] of bound) {
    checkListenPort(who, prop, port, 'use a port from 1024 up (a Service can still expose 443 or 80: see servicePort())');
  }
  for (let i = 0; i < all.length; i++) {
    for (let j = i + 1; j < all.length; j++) {
      if (all[i][1] === all[j][1]) {
        throw who.error(
          `${all[j][0]} ${all[j][1]} is also ${all[i][0]}; every port of the pod's network namespace can be bound once`,
          all[j][1], `choose another ${all[j][0]}`, ': ',
        );
      }
    }
  }
}

/** The heap the overload manager guards: a share of the container's memory limit ('256Mi'). */
function maxHeapBytes(memoryLimit: string): number {
  const m = /^(\d+)Mi$/.exec(memoryLimit);
  const mebibytes = m ? Number(m[1]) : 256;
  return Math.floor(mebibytes * 1024 * 1024 * ENVOY_LIMITS.heapShareOfMemoryLimit);
}

/**
 * The workload's pod spec as the user wrote it (its class's own `toJson()`, before the sidecars
 * are added by the binding's hook on the instance's `toJson()`).
 */
const PROBES = ['startupProbe', 'readinessProbe', 'livenessProbe'] as const;


/**
 * The probes of the app's containers that the kubelet sends to the pod IP on `appPort`
 * (`tcpSocket`, `httpGet`, `grpc`; by number or by the name of one of the container's ports;
 * without `host`).
 */
function appPortProbes(appPort: number, spec: Json | undefined): Array<{ container: string; kind: string; action: string }> {
  const out: Array<{ container: string; kind: string; action: string }> = [];
  for (const c of spec?.containers ?? []) {
    const named = new Map<string, number>((c.ports ?? []).filter((p: Json) => p.name).map((p: Json) => [p.name, p.containerPort]));
    const portOf = (port: unknown) => (typeof port === 'string' ? named.get(port) ?? Number(port) : port);
    for (const kind of PROBES) {
      const probe = c[kind];
      if (!probe) continue;
      const action = probe.tcpSocket ? 'tcpSocket' : probe.httpGet ? 'httpGet' : probe.grpc ? 'grpc' : undefined;
      if (!action || portOf(probe[action].port) !== appPort || probe[action].host) continue;
      out.push({ container: c.name, kind, action });
    }
  }
  return out;
}

/** A v1 Service of the app as servicesTargeting reads it. */
interface AppService {
  readonly path: string;
  readonly selector: Json;
  readonly ports: Json[];
}

const APP_SERVICES = Symbol('cdk8s-sidecars.with-envoy.app-services');

/**
 * The v1 Services of the app of `scope` (rendered once), indexed by selector: once per synthesis
 * for the whole app (appFact), not once per workload.
 */
function appServices(scope: IConstruct): SelectorIndex<AppService> {
  return appFact(scope, APP_SERVICES, () => {
    const services: AppService[] = [];
    for (const c of scope.node.root.node.findAll()) {
      if (!ApiObject.isApiObject(c) || c.kind !== 'Service' || c.apiVersion !== 'v1') continue;
      let svc: Json;
      try {
        svc = serviceManifest(c);
      } catch {
        continue;
      }
      services.push({ path: c.node.path, selector: svc.spec?.selector ?? {}, ports: svc.spec?.ports ?? [] });
    }
    // (any namespace: a Service selects by labels here, as before)
    return new SelectorIndex(services, s => s.selector, () => '');
  });
}

/**
 * The paths of the v1 Services in the app of `scope` that select pods with `labels` and send
 * traffic to `port` (a `targetPort` by number, by the name of a container port, or, without
 * `targetPort`, the `port` itself: the Kubernetes default).
 */
function servicesTargeting(scope: IConstruct, labels: Record<string, string>, port: number, named: Map<string, number>): string[] {
  const out: string[] = [];
  for (const svc of appServices(scope).candidatesFor('', labels)) {
    if (!selectorSelects(svc.selector, labels)) continue;
    for (const p of svc.ports as Json[]) {
      const target = p.targetPort ?? p.port;
      if ((typeof target === 'string' ? named.get(target) : Number(target)) !== port) continue;
      out.push(svc.path);
      break;
    }
  }
  return out;
}

/**
 * The app's containers against `appPort`: a probe that the kubelet sends to the pod IP on
 * `appPort` never reaches an app bound to 127.0.0.1 (it would restart forever), and an `appPort`
 * that none of the declared ports matches is most likely the wrong port.
 */
function checkAppContainers(who: Where, appPort: number, appListensOnPodIp: boolean, spec: Json | undefined): string[] {
  const containers: Json[] = spec?.containers ?? [];
  const errors: string[] = [];
  if (!appListensOnPodIp) {
    for (const { container, kind, action } of appPortProbes(appPort, spec)) {
      errors.push(
        `${who}: container '${container}' has a ${kind} (${action}) on appPort ${appPort}. The kubelet probes the pod IP, but ` +
        `behind Envoy the app listens on 127.0.0.1:${appPort}: the probe can never pass and the pod restarts forever. ` +
        'cdk8s-plus (every major) adds a TCP startupProbe for `portNumber`: leave portNumber out (declare the port with ' +
        `\`ports: [{ number: ${appPort} }]\`), or probe with an exec command; if the app does listen on the pod IP too, ` +
        'set appListensOnPodIp: true.',
      );
    }
  }
  const declared: string[] = [];
  let matches = false;
  for (const c of containers) {
    for (const p of (c.ports ?? []) as Json[]) {
      declared.push(`${p.containerPort} ('${c.name}')`);
      if (p.containerPort === appPort) matches = true;
    }
  }
  if (declared.length > 0 && !matches) {
    errors.push(
      `${who}: appPort ${appPort} is none of the ports the app's containers declare (${declared.join(', ')}), so Envoy ` +
      "would forward to a port nothing listens on. Set appPort to the port the app listens on, or declare it on the app's " +
      `container (\`ports: [{ number: ${appPort} }]\`).`,
    );
  }
  return errors;
}
