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
 * Certificates are never copied into the config: the listener reads them through file-based SDS
 * (`path_config_source`) from the Secret volumes, with `watched_directory` on each mount so a
 * rotated Secret (cert-manager) is picked up without a restart (Kubernetes swaps the mount's
 * `..data` symlink; Envoy watches the directory for that move).
 *
 * @see https://www.envoyproxy.io/docs/envoy/latest/api-v3/config/bootstrap/v3/bootstrap.proto
 * @see https://www.envoyproxy.io/docs/envoy/latest/configuration/security/secret
 */

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
}

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
    // The pod is the edge of the app: append the real client address to X-Forwarded-For and set
    // X-Forwarded-Proto from the connection.
    'use_remote_address': true,
    // The app can trust X-Forwarded-Client-Cert: clients' own values are always removed; with
    // mutual TLS, Envoy sets it from the verified client certificate.
    'forward_client_cert_details': mtls ? 'SANITIZE_SET' : 'SANITIZE',
    ...(mtls ? { set_current_client_cert_details: { dns: true, subject: true, uri: true } } : {}),
    'upgrade_configs': [{ upgrade_type: 'websocket' }],
    'route_config': {
      name: 'inbound',
      virtual_hosts: [{
        name: 'app',
        domains: ['*'],
        // A transparent sidecar: no route timeout (Envoy's default is 15 s); the app decides.
        routes: [{ match: { prefix: '/' }, route: { cluster: ENVOY_NAMES.appCluster, timeout: '0s' } }],
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
    filter_chains: [{
      filters: [{
        name: 'envoy.filters.network.http_connection_manager',
        typed_config: {
          '@type': T.hcm,
          'stat_prefix': `outbound_${u.name.replace(/-/g, '_')}`,
          'codec_type': 'AUTO',
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
  const explicit = o.appProtocol === 'HTTP2' ? { http2_protocol_options: {} } : { http_protocol_options: {} };
  return {
    name: ENVOY_NAMES.appCluster,
    type: 'STATIC',
    connect_timeout: '1s',
    lb_policy: 'ROUND_ROBIN',
    load_assignment: {
      cluster_name: ENVOY_NAMES.appCluster,
      endpoints: [{ lb_endpoints: [{ endpoint: { address: socketAddress('127.0.0.1', o.appPort) } }] }],
    },
    typed_extension_protocol_options: httpOptions({ explicit_http_config: explicit }),
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
    load_assignment: {
      cluster_name: name,
      endpoints: [{ lb_endpoints: [{ endpoint: { address: socketAddress(u.host, u.port) } }] }],
    },
    // The app picks the protocol: HTTP/1.1 stays HTTP/1.1, h2c (gRPC) stays HTTP/2.
    typed_extension_protocol_options: httpOptions({
      use_downstream_protocol_config: { http2_protocol_options: {}, http_protocol_options: {} },
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
export function renderEnvoyConfigFiles(o: EnvoyBootstrapOptions): EnvoyConfigFiles {
  const bootstrap = renderEnvoyBootstrap(o);
  const sds = renderEnvoySdsFiles(o);
  const files: Record<string, string> = { [BOOTSTRAP_FILE]: `${JSON.stringify(bootstrap, null, 2)}\n` };
  for (const [name, body] of Object.entries(sds)) files[name] = `${JSON.stringify(body, null, 2)}\n`;
  return { bootstrap, sds, files };
}
