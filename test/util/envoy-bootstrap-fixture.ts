/**
 * A realistic Envoy sidecar bootstrap (mTLS inbound, health listener, TLS-originating outbound), written by
 * hand against the Envoy v3 API: the valid base that test/envoy-proto.test.ts mutates into bad configs.
 */
export const TYPE = 'type.googleapis.com/';
export const HCM = `${TYPE}envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager`;
export const ROUTER = `${TYPE}envoy.extensions.filters.http.router.v3.Router`;

const socketAddress = (address: string, port: number) => ({ socket_address: { address, port_value: port } });

const routerFilter = () => ({ name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER } });

const stdoutAccessLog = () => ({
  name: 'envoy.access_loggers.stdout',
  typed_config: { '@type': `${TYPE}envoy.extensions.access_loggers.stream.v3.StdoutAccessLog` },
});

const httpConnectionManager = (statPrefix: string, cluster: string, httpFilters: unknown[]) => ({
  name: 'envoy.filters.network.http_connection_manager',
  typed_config: {
    '@type': HCM,
    'stat_prefix': statPrefix,
    'codec_type': 'AUTO',
    'access_log': [stdoutAccessLog()],
    'route_config': {
      name: statPrefix,
      virtual_hosts: [{
        name: statPrefix,
        domains: ['*'],
        routes: [{
          match: { prefix: '/' },
          route: { cluster, timeout: '15s' },
        }],
      }],
    },
    'http_filters': httpFilters,
  },
});

const staticCluster = (name: string, address: string, port: number) => ({
  name,
  type: 'STATIC',
  connect_timeout: '1s',
  lb_policy: 'ROUND_ROBIN',
  load_assignment: {
    cluster_name: name,
    endpoints: [{ lb_endpoints: [{ endpoint: { address: socketAddress(address, port) } }] }],
  },
});

/** A realistic sidecar bootstrap: mTLS inbound, health listener, TLS-originating outbound. */
export function sidecarBootstrap(): any {
  return {
    node: { id: 'web-0', cluster: 'web' },
    admin: {
      address: socketAddress('127.0.0.1', 9901),
      access_log: [stdoutAccessLog()],
    },
    static_resources: {
      listeners: [
        {
          name: 'inbound',
          address: socketAddress('0.0.0.0', 8443),
          filter_chains: [{
            transport_socket: {
              name: 'envoy.transport_sockets.tls',
              typed_config: {
                '@type': `${TYPE}envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext`,
                'require_client_certificate': true,
                'common_tls_context': {
                  tls_params: { tls_minimum_protocol_version: 'TLSv1_2' },
                  tls_certificates: [{
                    certificate_chain: { filename: '/etc/envoy/tls/tls.crt' },
                    private_key: { filename: '/etc/envoy/tls/tls.key' },
                  }],
                  validation_context: {
                    trusted_ca: { filename: '/etc/envoy/tls/ca.crt' },
                  },
                },
              },
            },
            filters: [httpConnectionManager('inbound_http', 'app', [routerFilter()])],
          }],
        },
        {
          name: 'health',
          address: socketAddress('0.0.0.0', 15021),
          filter_chains: [{
            filters: [httpConnectionManager('health', 'app', [
              {
                name: 'envoy.filters.http.health_check',
                typed_config: {
                  '@type': `${TYPE}envoy.extensions.filters.http.health_check.v3.HealthCheck`,
                  'pass_through_mode': false,
                  'headers': [{ name: ':path', string_match: { exact: '/ready' } }],
                },
              },
              routerFilter(),
            ])],
          }],
        },
        {
          name: 'outbound',
          address: socketAddress('127.0.0.1', 9001),
          filter_chains: [{
            filters: [httpConnectionManager('outbound_http', 'upstream', [routerFilter()])],
          }],
        },
      ],
      clusters: [
        {
          ...staticCluster('app', '127.0.0.1', 8080),
          typed_extension_protocol_options: {
            'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': {
              '@type': `${TYPE}envoy.extensions.upstreams.http.v3.HttpProtocolOptions`,
              'explicit_http_config': { http_protocol_options: {} },
              'common_http_protocol_options': { idle_timeout: '300s' },
            },
          },
        },
        {
          name: 'upstream',
          type: 'STRICT_DNS',
          dns_lookup_family: 'V4_ONLY',
          connect_timeout: '0.25s',
          lb_policy: 'ROUND_ROBIN',
          load_assignment: {
            cluster_name: 'upstream',
            endpoints: [{ lb_endpoints: [{ endpoint: { address: socketAddress('api.example.com', 443) } }] }],
          },
          transport_socket: {
            name: 'envoy.transport_sockets.tls',
            typed_config: {
              '@type': `${TYPE}envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext`,
              'sni': 'api.example.com',
              'common_tls_context': {
                validation_context: { trusted_ca: { filename: '/etc/ssl/certs/ca-certificates.crt' } },
              },
            },
          },
          circuit_breakers: { thresholds: [{ priority: 'DEFAULT', max_connections: 1024, max_retries: 3 }] },
        },
        {
          name: 'collector',
          type: 'LOGICAL_DNS',
          connect_timeout: '5s',
          lb_policy: 'ROUND_ROBIN',
          load_assignment: {
            cluster_name: 'collector',
            endpoints: [{ lb_endpoints: [{ endpoint: { address: socketAddress('otel-collector.observability', 4317) } }] }],
          },
        },
      ],
    },
  };
}

export const INBOUND_HCM = 'static_resources.listeners[0].filter_chains[0].filters[0].typed_config';
export const INBOUND_ROUTE = `${INBOUND_HCM}.route_config.virtual_hosts[0].routes[0]`;
