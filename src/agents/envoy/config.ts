/**
 * Envoy v3 bootstrap rendering for the `WithEnvoy` sidecar. Pure: options in, JSON out.
 *
 * What it renders (all static, no control plane):
 * - `admin` on 127.0.0.1 only (it can drain and shut the proxy down, SIDECARS.md §6);
 * - `inbound`: the pod-facing listener (TLS / mutual TLS optional) that forwards to the app on
 *   127.0.0.1:<appPort>; `traffic_direction: INBOUND`, so `POST /drain_listeners?inboundonly&graceful`
 *   drains it;
 * - `health`: a pod-facing listener whose `envoy.filters.http.health_check` filter answers the kubelet's
 *   probes itself (`pass_through_mode: false`): 200 while Envoy is live, 503 after `POST /healthcheck/fail`;
 * - one `outbound-<name>` listener per upstream on 127.0.0.1:<localPort>, `traffic_direction: OUTBOUND`
 *   and `drain_type: MODIFY_ONLY`, so neither the inbound drain nor `/healthcheck/fail` touches the app's
 *   own outgoing calls while it shuts down.
 *
 * Transparent to the app (Istio's sidecar defaults are the reference, istio/istio
 * `pilot/pkg/networking/core/listener_builder.go`, `cluster_traffic_policy.go`, `route/retry/retry.go`):
 * `use_remote_address: false` (client headers pass unchanged), no stream idle timeout, no circuit
 * breaker limits, `reset-before-request` retries and a short idle timeout towards the app; the
 * overload manager and buffer / HTTP/2 window limits of Envoy's edge best practices keep Envoy
 * inside its memory limit (`docs/root/configuration/best_practices/edge.rst`).
 *
 * Certificates are never copied into the config: the listener reads them through file-based SDS
 * (`path_config_source`) from the Secret volumes, with `watched_directory` on each mount so a
 * rotated Secret (cert-manager) is picked up without a restart (Kubernetes swaps the mount's
 * `..data` symlink; Envoy watches the directory for that move).
 *
 * @see https://www.envoyproxy.io/docs/envoy/latest/api-v3/config/bootstrap/v3/bootstrap.proto
 * @see https://www.envoyproxy.io/docs/envoy/latest/configuration/security/secret
 */

import { CutText, Memo, joinCut } from '../../private/memo';
import { setOwn } from '../../private/order';
import { asciiJson } from '../../private/values';

/** A plain JSON object. */
export type EnvoyJson = { [key: string]: any };

const TYPE = 'type.googleapis.com/';
const T = {
  hcm: `${TYPE}envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager`,
  router: `${TYPE}envoy.extensions.filters.http.router.v3.Router`,
  healthCheck: `${TYPE}envoy.extensions.filters.http.health_check.v3.HealthCheck`,
  downstreamTls: `${TYPE}envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext`,
  upstreamTls: `${TYPE}envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext`,
  secret: `${TYPE}envoy.extensions.transport_sockets.tls.v3.Secret`,
  httpOptions: `${TYPE}envoy.extensions.upstreams.http.v3.HttpProtocolOptions`,
  stdoutLog: `${TYPE}envoy.extensions.access_loggers.stream.v3.StdoutAccessLog`,
  fixedHeap: `${TYPE}envoy.extensions.resource_monitors.fixed_heap.v3.FixedHeapConfig`,
} as const;

/** Names used inside the bootstrap (clusters, listeners, secrets). */
export const ENVOY_NAMES = {
  inboundListener: 'inbound',
  healthListener: 'health',
  appCluster: 'local-app',
  serverCertSecret: 'server-cert',
  clientCaSecret: 'client-ca',
  /** prefix of an upstream's listener and cluster */
  outboundPrefix: 'outbound-',
} as const;

/**
 * The uid (and gid) Envoy runs as by default (`WithEnvoy.UID`, the `user` prop's default). Not the
 * image's `envoy` user (101, `adduser --group --system envoy` in ci/Dockerfile-envoy, envoyproxy/envoy at commit 019f458): the
 * library runs `/usr/local/bin/envoy` itself, not the image's entrypoint (which would switch to that
 * user), and Envoy needs no file of that user's: the binary and `/etc/ssl/certs` are root's and
 * world-readable, the config comes from the ConfigMap, logs go to stdout, hot restart (shared
 * memory) is off. The distroless image runs it as 65532. A uid of 10000 or more is what
 * kube-score (`container-security-context-user-group-id`) and many admission policies ask for, and
 * it is not one of the small system uids images hand out (nginx's image runs as 101 too, which,
 * with a shared process namespace, would let the app read Envoy's TLS key through /proc).
 */
export const ENVOY_UID = 10101;

/** The path of the health listener's readiness answer (the health_check filter): `WithEnvoy.HEALTH_PATH`. */
export const ENVOY_HEALTH_PATH = '/ready';

/** The system CA bundle of the envoyproxy/envoy images (Ubuntu and distroless). */
export const SYSTEM_CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';

/** How Envoy talks to the app. */
export type AppProtocol = 'HTTP1' | 'HTTP2';

/** TLS termination, as file locations inside the Envoy container. */
export interface InboundTls {
  /** Mount directory of the `kubernetes.io/tls` Secret (`tls.crt`, `tls.key`). */
  readonly certDirectory: string;
  /** Mount directory of the client CA Secret (`ca.crt`): mutual TLS when set. */
  readonly clientCaDirectory?: string;
}

/** An outbound route: the app calls 127.0.0.1:<localPort>, Envoy forwards to host:port. */
export interface OutboundRoute {
  /** A DNS-1123 label; names the listener, cluster and stats (`outbound-<name>`). */
  readonly name: string;
  readonly localPort: number;
  /** DNS name or IPv4 address. */
  readonly host: string;
  readonly port: number;
  /** Originate TLS (system CAs, SNI and a SAN check on `host`). */
  readonly tls: boolean;
}

export interface EnvoyBootstrapOptions {
  /** `node.id` / `node.cluster` (required by SDS). */
  readonly nodeId: string;
  readonly nodeCluster: string;
  /** Admin port, bound to 127.0.0.1. */
  readonly adminPort: number;
  /** Pod-facing listener port. */
  readonly listenerPort: number;
  /** The app's port on 127.0.0.1. */
  readonly appPort: number;
  readonly appProtocol: AppProtocol;
  /** Pod-facing health listener port and the path that answers readiness. */
  readonly healthPort: number;
  readonly healthPath: string;
  readonly tls?: InboundTls;
  readonly upstreams: OutboundRoute[];
  /** Access log of the inbound and outbound listeners on stdout. */
  readonly accessLog: boolean;
  /** Where the config files (this bootstrap and the SDS files) are mounted. */
  readonly configDirectory: string;
  /**
   * `xff_num_trusted_hops` of the inbound listener: how many proxies in front of the pod (the
   * Ingress) append to `X-Forwarded-For`. Only Envoy's own view of the client (access log,
   * internal/external) depends on it; the headers reach the app unchanged. Default 0.
   */
  readonly xffNumTrustedHops?: number;
  /** `stream_idle_timeout` of the inbound and outbound listeners, in seconds; 0 turns it off. Default 0. */
  readonly streamIdleTimeoutSeconds?: number;
  /** Idle timeout of Envoy's connections to the app, in seconds (below the app's keep-alive). Default 1. */
  readonly appIdleTimeoutSeconds?: number;
  /** The heap size the overload manager guards (bytes), from the container's memory limit. */
  readonly maxHeapBytes: number;
}

/**
 * Buffer and HTTP/2 flow-control limits of Envoy's edge best practices
 * (envoyproxy/envoy `docs/root/configuration/best_practices/edge.rst`): without them a few large
 * uploads or slow readers let Envoy buffer up to 1 MiB per connection, and HTTP/2 up to 16 MiB per
 * stream, 24 MiB per connection and 1024 streams per connection (Envoy 1.36's defaults,
 * `changelogs/1.36.0.yaml`, "safe_http2_options"; 256 MiB windows before).
 */
export const ENVOY_LIMITS = {
  perConnectionBufferBytes: 32768,
  http2InitialStreamWindowBytes: 65536,
  http2InitialConnectionWindowBytes: 1048576,
  /**
   * Envoy 1.36's own default, written out (the edge guide's 100 would stall the 101st long-lived
   * gRPC stream a client multiplexes on one connection; Istio leaves Envoy's default). Memory is
   * bounded by the connection window, not by the stream count.
   */
  http2MaxConcurrentStreams: 1024,
  /** Overload manager: shrink the heap at 95 % of max_heap_size_bytes, stop accepting requests at 98 %. */
  shrinkHeapAt: 0.95,
  stopAcceptingRequestsAt: 0.98,
  /** The share of the container's memory limit the heap may use (the rest: binary, stacks, fragmentation). */
  heapShareOfMemoryLimit: 0.8,
  /**
   * Circuit breaker thresholds: Istio sets every one to MaxUint32 (`getDefaultCircuitBreakerThresholds`);
   * Envoy's own defaults (1024 connections / pending / requests, 3 retries) would answer the
   * 1025th concurrent request with a 503.
   */
  circuitBreakerMax: 4294967295,
  /**
   * Retries of a request the upstream never received, so safe for every method (Istio's
   * `defaultInboundRetryOn` with its 2 retries, `pilot/pkg/networking/core/route/retry/retry.go`;
   * `reset-before-request` exists since Envoy 1.31).
   */
  retryOn: 'reset-before-request',
  numRetries: 2,
} as const;

/** The files of the Envoy ConfigMap: `envoy.json` plus one SDS file per secret. */
export interface EnvoyConfigFiles {
  /** The bootstrap, as an object (for tests and validation). */
  readonly bootstrap: EnvoyJson;
  /** SDS files (`DiscoveryResponse` JSON) by file name, as objects. */
  readonly sds: Record<string, EnvoyJson>;
  /** Every file by name, as text (deterministic JSON). */
  readonly files: Record<string, string>;
}

/** The name of the bootstrap file in the config directory. */
export const BOOTSTRAP_FILE = 'envoy.json';

const sdsFile = (secret: string) => `sds-${secret}.json`;

const socketAddress = (address: string, port: number): EnvoyJson => ({ socket_address: { address, port_value: port } });

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/** True when `host` is an IPv4 literal (no DNS, no SNI, IP SAN). */
export function isIpv4(host: string): boolean {
  return IPV4.test(host);
}

function stdoutAccessLog(): EnvoyJson[] {
  return [{ name: 'envoy.access_loggers.stdout', typed_config: { '@type': T.stdoutLog } }];
}

/** HTTP/2 limits of the edge best practices (see ENVOY_LIMITS). */
function http2Limits(): EnvoyJson {
  return {
    initial_connection_window_size: ENVOY_LIMITS.http2InitialConnectionWindowBytes,
    initial_stream_window_size: ENVOY_LIMITS.http2InitialStreamWindowBytes,
    max_concurrent_streams: ENVOY_LIMITS.http2MaxConcurrentStreams,
  };
}

/**
 * What the inbound and outbound HTTP connection managers share: WebSocket upgrades pass
 * (`upgrade_configs`, as Istio's listeners), long streams live (`stream_idle_timeout`, 0 = off as
 * in Istio's listener_builder.go; Envoy's default cuts a stream idle for 5 minutes), and HTTP/2
 * clients get bounded windows.
 */
function transparentHcm(o: EnvoyBootstrapOptions): EnvoyJson {
  return {
    stream_idle_timeout: `${o.streamIdleTimeoutSeconds ?? 0}s`,
    upgrade_configs: [{ upgrade_type: 'websocket' }],
    http2_protocol_options: http2Limits(),
  };
}

/** Retry a request only when the upstream never received it: safe for every method. */
function retryPolicy(): EnvoyJson {
  return { num_retries: ENVOY_LIMITS.numRetries, retry_on: ENVOY_LIMITS.retryOn };
}

/** No circuit breaker limits (Istio's defaults): the app, not Envoy, decides how much load it takes. */
function circuitBreakers(): EnvoyJson {
  const max = ENVOY_LIMITS.circuitBreakerMax;
  return {
    thresholds: [{
      max_connections: max,
      max_pending_requests: max,
      max_requests: max,
      max_retries: max,
      track_remaining: true,
    }],
  };
}

function router(): EnvoyJson {
  return { name: 'envoy.filters.http.router', typed_config: { '@type': T.router } };
}

/** A file-based SDS reference: Envoy reads `<configDirectory>/sds-<name>.json`. */
function sdsRef(o: EnvoyBootstrapOptions, name: string): EnvoyJson {
  return {
    name,
    sds_config: {
      path_config_source: { path: `${o.configDirectory}/${sdsFile(name)}` },
      resource_api_version: 'V3',
    },
  };
}

function inboundTransportSocket(o: EnvoyBootstrapOptions, tls: InboundTls): EnvoyJson {
  const common: EnvoyJson = {
    alpn_protocols: ['h2', 'http/1.1'],
    tls_certificate_sds_secret_configs: [sdsRef(o, ENVOY_NAMES.serverCertSecret)],
    tls_params: { tls_minimum_protocol_version: 'TLSv1_2' },
  };
  const context: EnvoyJson = { '@type': T.downstreamTls, 'common_tls_context': common };
  if (tls.clientCaDirectory) {
    common.validation_context_sds_secret_config = sdsRef(o, ENVOY_NAMES.clientCaSecret);
    context.require_client_certificate = true;
  }
  return { name: 'envoy.transport_sockets.tls', typed_config: context };
}

function inboundListener(o: EnvoyBootstrapOptions): EnvoyJson {
  const mtls = o.tls?.clientCaDirectory !== undefined;
  const hcm: EnvoyJson = {
    '@type': T.hcm,
    'stat_prefix': 'inbound',
    'codec_type': 'AUTO',
    // A sidecar, not an edge proxy (Istio leaves it false for sidecars: PILOT_SIDECAR_USE_REMOTE_ADDRESS).
    // With false, envoy source/common/http/conn_manager_utility.cc (mutateRequestHeaders) appends
    // nothing to X-Forwarded-For, keeps the X-Forwarded-Proto the Ingress set (it only fills in a
    // missing one) and keeps the client's x-request-id (a new one only where there is none).
    'use_remote_address': false,
    ...(o.xffNumTrustedHops ? { xff_num_trusted_hops: o.xffNumTrustedHops } : {}),
    // The app can trust X-Forwarded-Client-Cert: clients' own values are always removed; with
    // mutual TLS, Envoy sets it from the verified client certificate.
    'forward_client_cert_details': mtls ? 'SANITIZE_SET' : 'SANITIZE',
    ...(mtls ? { set_current_client_cert_details: { dns: true, subject: true, uri: true } } : {}),
    ...transparentHcm(o),
    'route_config': {
      name: 'inbound',
      virtual_hosts: [{
        name: 'app',
        domains: ['*'],
        // A transparent sidecar: no route timeout (Envoy's default is 15 s); the app decides.
        routes: [{
          match: { prefix: '/' },
          route: { cluster: ENVOY_NAMES.appCluster, retry_policy: retryPolicy(), timeout: '0s' },
        }],
      }],
    },
    'http_filters': [router()],
    ...(o.accessLog ? { access_log: stdoutAccessLog() } : {}),
  };
  const chain: EnvoyJson = {
    filters: [{ name: 'envoy.filters.network.http_connection_manager', typed_config: hcm }],
  };
  if (o.tls) chain.transport_socket = inboundTransportSocket(o, o.tls);
  return {
    name: ENVOY_NAMES.inboundListener,
    address: socketAddress('0.0.0.0', o.listenerPort),
    traffic_direction: 'INBOUND',
    per_connection_buffer_limit_bytes: ENVOY_LIMITS.perConnectionBufferBytes,
    filter_chains: [chain],
  };
}

function healthListener(o: EnvoyBootstrapOptions): EnvoyJson {
  return {
    name: ENVOY_NAMES.healthListener,
    address: socketAddress('0.0.0.0', o.healthPort),
    traffic_direction: 'INBOUND',
    filter_chains: [{
      filters: [{
        name: 'envoy.filters.network.http_connection_manager',
        typed_config: {
          '@type': T.hcm,
          'stat_prefix': 'health',
          'codec_type': 'AUTO',
          'route_config': {
            name: 'health',
            virtual_hosts: [{
              name: 'health',
              domains: ['*'],
              routes: [{ match: { prefix: '/' }, direct_response: { status: 404 } }],
            }],
          },
          'http_filters': [
            {
              name: 'envoy.filters.http.health_check',
              typed_config: {
                '@type': T.healthCheck,
                'pass_through_mode': false,
                'headers': [{ name: ':path', string_match: { exact: o.healthPath } }],
              },
            },
            router(),
          ],
        },
      }],
    }],
  };
}

function outboundListener(o: EnvoyBootstrapOptions, u: OutboundRoute): EnvoyJson {
  const name = `${ENVOY_NAMES.outboundPrefix}${u.name}`;
  const defaultPort = u.tls ? 443 : 80;
  return {
    name,
    address: socketAddress('127.0.0.1', u.localPort),
    traffic_direction: 'OUTBOUND',
    // Not drained by /healthcheck/fail: the app may still call out while it shuts down.
    drain_type: 'MODIFY_ONLY',
    per_connection_buffer_limit_bytes: ENVOY_LIMITS.perConnectionBufferBytes,
    filter_chains: [{
      filters: [{
        name: 'envoy.filters.network.http_connection_manager',
        typed_config: {
          '@type': T.hcm,
          'stat_prefix': `outbound_${u.name.replace(/-/g, '_')}`,
          'codec_type': 'AUTO',
          ...transparentHcm(o),
          'route_config': {
            name,
            virtual_hosts: [{
              name: u.name,
              domains: ['*'],
              routes: [{
                match: { prefix: '/' },
                route: {
                  cluster: name,
                  host_rewrite_literal: u.port === defaultPort ? u.host : `${u.host}:${u.port}`,
                  retry_policy: retryPolicy(),
                  timeout: '0s',
                },
              }],
            }],
          },
          'http_filters': [router()],
          ...(o.accessLog ? { access_log: stdoutAccessLog() } : {}),
        },
      }],
    }],
  };
}

function httpOptions(config: EnvoyJson): EnvoyJson {
  return {
    'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': { '@type': T.httpOptions, ...config },
  };
}

function appCluster(o: EnvoyBootstrapOptions): EnvoyJson {
  const explicit = o.appProtocol === 'HTTP2' ? { http2_protocol_options: http2Limits() } : { http_protocol_options: {} };
  return {
    name: ENVOY_NAMES.appCluster,
    type: 'STATIC',
    connect_timeout: '1s',
    lb_policy: 'ROUND_ROBIN',
    circuit_breakers: circuitBreakers(),
    per_connection_buffer_limit_bytes: ENVOY_LIMITS.perConnectionBufferBytes,
    load_assignment: {
      cluster_name: ENVOY_NAMES.appCluster,
      endpoints: [{ lb_endpoints: [{ endpoint: { address: socketAddress('127.0.0.1', o.appPort) } }] }],
    },
    typed_extension_protocol_options: httpOptions({
      // Envoy closes an idle connection to the app before the app does (Node 5 s, uvicorn 5 s,
      // gunicorn 2 s keep-alive): a request then never lands on a connection the app is closing.
      // Envoy's default is 1 hour (HttpProtocolOptions.idle_timeout, envoy/config/core/v3/protocol.proto).
      common_http_protocol_options: { idle_timeout: `${o.appIdleTimeoutSeconds ?? 1}s` },
      explicit_http_config: explicit,
    }),
  };
}

function upstreamCluster(u: OutboundRoute): EnvoyJson {
  const name = `${ENVOY_NAMES.outboundPrefix}${u.name}`;
  const ip = isIpv4(u.host);
  const cluster: EnvoyJson = {
    name,
    type: ip ? 'STATIC' : 'STRICT_DNS',
    connect_timeout: '5s',
    lb_policy: 'ROUND_ROBIN',
    circuit_breakers: circuitBreakers(),
    per_connection_buffer_limit_bytes: ENVOY_LIMITS.perConnectionBufferBytes,
    load_assignment: {
      cluster_name: name,
      endpoints: [{ lb_endpoints: [{ endpoint: { address: socketAddress(u.host, u.port) } }] }],
    },
    // The app picks the protocol: HTTP/1.1 stays HTTP/1.1, h2c (gRPC) stays HTTP/2.
    typed_extension_protocol_options: httpOptions({
      use_downstream_protocol_config: { http2_protocol_options: http2Limits(), http_protocol_options: {} },
    }),
  };
  if (!ip) {
    // IPv4 first: an AAAA answer in an IPv4-only cluster must not win.
    cluster.dns_lookup_family = 'V4_PREFERRED';
  }
  if (u.tls) {
    const context: EnvoyJson = {
      '@type': T.upstreamTls,
      'common_tls_context': {
        validation_context: {
          // Envoy checks no host name unless told to.
          match_typed_subject_alt_names: [{ san_type: ip ? 'IP_ADDRESS' : 'DNS', matcher: { exact: u.host } }],
          trusted_ca: { filename: SYSTEM_CA_BUNDLE },
        },
      },
    };
    if (!ip) context.sni = u.host;
    cluster.transport_socket = { name: 'envoy.transport_sockets.tls', typed_config: context };
  }
  return cluster;
}

/** The bootstrap (`envoy.json`). */
export function renderEnvoyBootstrap(o: EnvoyBootstrapOptions): EnvoyJson {
  return {
    node: { cluster: o.nodeCluster, id: o.nodeId },
    admin: { address: socketAddress('127.0.0.1', o.adminPort) },
    static_resources: {
      listeners: [inboundListener(o), healthListener(o), ...o.upstreams.map(u => outboundListener(o, u))],
      clusters: [appCluster(o), ...o.upstreams.map(upstreamCluster)],
    },
    overload_manager: overloadManager(o),
  };
}

/**
 * Envoy's overload manager (envoyproxy/envoy `docs/root/configuration/operations/overload_manager/
 * overload_manager.rst`, edge best practices): past 95 % of the heap Envoy returns free memory to
 * the system, past 98 % it answers new requests with 503 instead of being OOM-killed with every
 * request in flight.
 */
function overloadManager(o: EnvoyBootstrapOptions): EnvoyJson {
  const heap = 'envoy.resource_monitors.fixed_heap';
  const trigger = (value: number) => [{ name: heap, threshold: { value } }];
  return {
    refresh_interval: '0.25s',
    resource_monitors: [{ name: heap, typed_config: { '@type': T.fixedHeap, 'max_heap_size_bytes': o.maxHeapBytes } }],
    actions: [
      { name: 'envoy.overload_actions.shrink_heap', triggers: trigger(ENVOY_LIMITS.shrinkHeapAt) },
      { name: 'envoy.overload_actions.stop_accepting_requests', triggers: trigger(ENVOY_LIMITS.stopAcceptingRequestsAt) },
    ],
  };
}

/**
 * The file-based SDS resources (each a `DiscoveryResponse` with one `Secret`). `watched_directory`
 * is the Secret's mount directory: Kubernetes updates a Secret volume by swapping its `..data`
 * symlink, a move Envoy sees there.
 */
export function renderEnvoySdsFiles(o: EnvoyBootstrapOptions): Record<string, EnvoyJson> {
  if (!o.tls) return {};
  const resource = (name: string, body: EnvoyJson): EnvoyJson => ({ resources: [{ '@type': T.secret, 'name': name, ...body }] });
  const dir = o.tls.certDirectory;
  const files: Record<string, EnvoyJson> = {
    [sdsFile(ENVOY_NAMES.serverCertSecret)]: resource(ENVOY_NAMES.serverCertSecret, {
      tls_certificate: {
        certificate_chain: { filename: `${dir}/tls.crt` },
        private_key: { filename: `${dir}/tls.key` },
        watched_directory: { path: dir },
      },
    }),
  };
  const ca = o.tls.clientCaDirectory;
  if (ca) {
    files[sdsFile(ENVOY_NAMES.clientCaSecret)] = resource(ENVOY_NAMES.clientCaSecret, {
      validation_context: {
        trusted_ca: { filename: `${ca}/ca.crt` },
        watched_directory: { path: ca },
      },
    });
  }
  return files;
}

/** Every file of the Envoy ConfigMap, rendered as deterministic JSON. */
/** Stand-ins for the node's id and cluster in a memoized config text (control characters: no real value holds them). */
const NODE_ID_TOKEN = '\u0000node-id\u0000';
const NODE_CLUSTER_TOKEN = '\u0000node-cluster\u0000';
/** The texts of a memoized file, and which value goes between each two (0: the id, 1: the cluster). */
interface CutTemplate { readonly texts: readonly string[]; readonly values: ReadonlyArray<0 | 1> }
const filesMemo = new Memo<Readonly<Record<string, CutTemplate>>>();

/**
 * `renderEnvoyConfigFiles(o).files`, rendered once per distinct options but for the node's id
 * and cluster (the workload's name), which are put into the text afterwards (as JSON string
 * contents): the same text, byte for byte (test/with-envoy.test.ts compares the two directly for
 * option sets and names, JSON-escaped ones too). The stand-ins can only be confused with a value
 * holding NUL characters, which no input that reaches the config can hold (checked at the props).
 */
export function envoyConfigFiles(o: EnvoyBootstrapOptions): Record<string, string> {
  const cuts = envoyConfigFileCuts(o);
  const out: Record<string, string> = {};
  for (const name of Object.keys(cuts)) setOwn(out, name, joinCut(cuts[name]));
  return out;
}

/** `envoyConfigFiles(o)`, each file as its cut text (the texts shared per distinct options, the node's id and cluster between). @internal */
export function envoyConfigFileCuts(o: EnvoyBootstrapOptions): Record<string, CutText> {
  const generic = { ...o, nodeId: NODE_ID_TOKEN, nodeCluster: NODE_CLUSTER_TOKEN };
  // as JSON string contents (escaped, without the quotes), wherever they stand in the text
  const inJson = (value: string) => asciiJson(value).slice(1, -1);
  const files = filesMemo.get(JSON.stringify(generic), () => {
    const cut: Record<string, CutTemplate> = {};
    const id = inJson(NODE_ID_TOKEN);
    const cluster = inJson(NODE_CLUSTER_TOKEN);
    for (const [name, text] of Object.entries(renderEnvoyConfigFiles(generic).files)) {
      const texts: string[] = [];
      const values: Array<0 | 1> = [];
      // (the same cuts as text.split(id), each piece then split(cluster))
      text.split(id).forEach((piece, i) => {
        if (i > 0) values.push(0);
        piece.split(cluster).forEach((part, j) => {
          if (j > 0) values.push(1);
          texts.push(part);
        });
      });
      setOwn(cut, name, Object.freeze({ texts: Object.freeze(texts), values: Object.freeze(values) }));
    }
    return Object.freeze(cut);
  });
  const values = [inJson(o.nodeId), inJson(o.nodeCluster)];
  const out: Record<string, CutText> = {};
  for (const name of Object.keys(files)) {
    const { texts, values: at } = files[name];
    setOwn(out, name, { texts, values: at.map(i => values[i]) });
  }
  return out;
}

export function renderEnvoyConfigFiles(o: EnvoyBootstrapOptions): EnvoyConfigFiles {
  const bootstrap = renderEnvoyBootstrap(o);
  const sds = renderEnvoySdsFiles(o);
  // Every character outside printable ASCII escaped (src/private/values.ts): the text reaches
  // Envoy through a ConfigMap, which carries ASCII exactly (a raw U+0085 or U+2028 it would not).
  const files: Record<string, string> = { [BOOTSTRAP_FILE]: `${asciiJson(bootstrap, 2)}\n` };
  for (const [name, body] of Object.entries(sds)) files[name] = `${asciiJson(body, 2)}\n`;
  return { bootstrap, sds, files };
}
