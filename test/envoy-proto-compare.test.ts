/**
 * Issue 17 experiment: the same bad configs through both Envoy checkers, one mistake at a
 * time (the multi-mistake cases of envoy-proto.test.ts split up, plus probes of the corners
 * where a JSON parser and the hand-written walk could differ). Every case must be caught
 * by both; the valid fixture must pass both.
 */
import { HCM, ROUTER, TYPE, sidecarBootstrap } from './util/envoy-bootstrap-fixture';
import * as OLD from './util/envoy-proto';
import * as NEW from './util/envoy-proto-buf';

const HCM0 = (b: any) => b.static_resources.listeners[0].filter_chains[0].filters[0].typed_config;
const ROUTE0 = (b: any) => HCM0(b).route_config.virtual_hosts[0].routes[0];
const HEALTH = (b: any) => b.static_resources.listeners[1].filter_chains[0].filters[0].typed_config.http_filters[0].typed_config;
const TLS0 = (b: any) => b.static_resources.listeners[0].filter_chains[0].transport_socket.typed_config;

/** [name, mutation of the valid fixture]: each one mistake. */
const BAD: Array<[string, (b: any) => void]> = [
  ['misspelled key', (b) => { ROUTE0(b).route.clustr = ROUTE0(b).route.cluster; delete ROUTE0(b).route.cluster; }],
  ['required oneof missing', (b) => { delete ROUTE0(b).route.cluster; }],
  ['misspelled top-level key', (b) => { b.static_resource = {}; }],
  ['removed (reserved) field', (b) => { b.static_resources.clusters[0].hosts = []; }],
  ['wrong @type (known message)', (b) => { HCM0(b)['@type'] = ROUTER; }],
  ['wrong @type (no such message)', (b) => { HCM0(b)['@type'] = `${HCM}Typo`; }],
  ['@type in a file whose imports are not shipped', (b) => { HCM0(b).access_log[0].typed_config = { '@type': `${TYPE}envoy.extensions.access_loggers.open_telemetry.v3.OpenTelemetryAccessLogConfig` }; }],
  ['Any without @type', (b) => { delete b.static_resources.listeners[2].filter_chains[0].filters[0].typed_config['@type']; }],
  ['Any as {}', (b) => { HCM0(b).http_filters[0].typed_config = {}; }],
  ['bad enum name', (b) => { b.static_resources.clusters[0].lb_policy = 'ROUND_ROBN'; }],
  ['enum number naming no value', (b) => { b.static_resources.clusters[0].lb_policy = 99; }],
  ['duration string', (b) => { b.static_resources.clusters[1].connect_timeout = '5 seconds'; }],
  ['duration number', (b) => { b.static_resources.clusters[2].connect_timeout = 5; }],
  ['duration out of range', (b) => { b.static_resources.clusters[2].connect_timeout = '315576000001s'; }],
  ['uint32 given a word', (b) => { b.static_resources.clusters[1].circuit_breakers.thresholds[0].max_retries = 'three'; }],
  ['uint32 negative', (b) => { b.admin.address.socket_address.port_value = -1; }],
  ['uint32 fraction', (b) => { b.admin.address.socket_address.port_value = 1.5; }],
  ['uint32 too large', (b) => { b.admin.address.socket_address.port_value = 2 ** 32; }],
  ['bool as string', (b) => { TLS0(b).require_client_certificate = 'true'; }],
  ['string as number', (b) => { b.node.id = 42; }],
  ['object for a repeated field', (b) => { b.static_resources.listeners[0].filter_chains[0].filters = { name: 'x' }; }],
  ['null in a repeated field', (b) => { HCM0(b).route_config.virtual_hosts[0].domains = [null]; }],
  ['two members of a oneof (route match)', (b) => { ROUTE0(b).match.path = '/exact'; }],
  ['two members of a oneof (cluster type)', (b) => { b.static_resources.clusters[0].cluster_type = { name: 'envoy.clusters.aggregate' }; }],
  ['same field under proto and JSON names', (b) => { b.static_resources.clusters[0].connectTimeout = '2s'; }],
  ['deprecated field (in an Any)', (b) => { HEALTH(b).headers = [{ name: ':path', exact_match: '/ready' }]; }],
  ['deprecated field', (b) => { b.static_resources.clusters[0].use_tcp_for_dns_lookups = true; }],
  ['deprecated field given its default value', (b) => { b.static_resources.clusters[0].use_tcp_for_dns_lookups = false; }],
  ['deprecated enum value', (b) => { b.dynamic_resources = { lds_config: { ads: {}, resource_api_version: 'V2' } }; }],
  ['PGV string.min_len', (b) => { b.static_resources.clusters[0].name = ''; }],
  ['PGV duration.gt', (b) => { b.static_resources.clusters[1].connect_timeout = '0s'; }],
  ['PGV uint32.lte', (b) => { b.admin.address.socket_address.port_value = 70000; }],
  ['PGV message.required', (b) => { delete HEALTH(b).pass_through_mode; }],
  ['PGV repeated.min_items', (b) => { HCM0(b).route_config.virtual_hosts[0].domains = []; }],
  ['PGV well_known_regex HTTP_HEADER_NAME (strict: false)', (b) => { HEALTH(b).headers[0].name = 'bad\nheader'; }],
  ['PGV string.min_len (in an Any)', (b) => { HCM0(b).stat_prefix = ''; }],
  ['PGV enum.defined_only / unknown number', (b) => { b.static_resources.clusters[1].dns_lookup_family = 17; }],
  ['unknown field in a lazily loaded @type', (b) => {
    HCM0(b).http_filters.unshift({ name: 'rl', typed_config: { '@type': `${TYPE}envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit`, 'stat_prefix': 'rl', 'tokn_bucket': {} } });
  }],
  ['TypedStruct payload with an unknown field', (b) => {
    HCM0(b).http_filters[0].typed_config = { '@type': `${TYPE}xds.type.v3.TypedStruct`, 'type_url': ROUTER, 'value': { supress_envoy_headers: true } };
  }],
  ['TypedStruct naming no message', (b) => {
    HCM0(b).http_filters[0].typed_config = { '@type': `${TYPE}xds.type.v3.TypedStruct`, 'type_url': `${ROUTER}Typo`, 'value': {} };
  }],
  ['Any holding a WKT with an extra key', (b) => {
    HCM0(b).http_filters[0].typed_config = { '@type': `${TYPE}google.protobuf.Duration`, 'value': '1s', 'extra': 1 };
  }],
];

describe('both checkers on the same corpus (issue 17)', () => {
  test('the valid fixture and its lowerCamel / numeric-string / enum-number variant pass both', () => {
    const b = sidecarBootstrap();
    b.admin.address = { socketAddress: { address: '127.0.0.1', portValue: '9901' } };
    b.static_resources.clusters[2].lb_policy = 0;
    for (const config of [sidecarBootstrap(), b]) {
      expect(OLD.envoyBootstrapErrors(config)).toEqual([]);
      expect(NEW.envoyBootstrapErrors(config)).toEqual([]);
    }
  });

  test.each(BAD)('%s: caught by both', (_name, mutate) => {
    const b = sidecarBootstrap();
    mutate(b);
    const old = OLD.envoyBootstrapErrors(b);
    const now = NEW.envoyBootstrapErrors(JSON.parse(JSON.stringify(b)));
    expect({ old: old.length > 0, now: now.length > 0 }).toEqual({ old: true, now: true });
  });

  test('root not an object, deprecated enum value, SDS DiscoveryResponse typo: caught by both', () => {
    for (const [type, value] of [
      ['envoy.config.bootstrap.v3.Bootstrap', []],
      ['envoy.config.core.v3.ConfigSource', { ads: {}, resource_api_version: 'V2' }],
      ['envoy.service.discovery.v3.DiscoveryResponse', { resources: [{ '@type': `${TYPE}envoy.extensions.transport_sockets.tls.v3.Secret`, 'name': 's', 'tls_certificate': { private_ky: { filename: '/k' } } }] }],
    ] as const) {
      expect(OLD.envoyMessageErrors(type, value)).not.toEqual([]);
      expect(NEW.envoyMessageErrors(type, value)).not.toEqual([]);
    }
  });
});
