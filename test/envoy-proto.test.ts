import { HCM, INBOUND_HCM, INBOUND_ROUTE, ROUTER, TYPE, sidecarBootstrap } from './util/envoy-bootstrap-fixture';
import { envoyBootstrapErrors, envoyMessageErrors, envoyProtos, expectValidEnvoyBootstrap } from './util/envoy-proto';

const HCM0 = (b: any) => b.static_resources.listeners[0].filter_chains[0].filters[0].typed_config;
const ROUTE0 = (b: any) => HCM0(b).route_config.virtual_hosts[0].routes[0];
const HEALTH = (b: any) => b.static_resources.listeners[1].filter_chains[0].filters[0].typed_config.http_filters[0].typed_config;
const HEALTH_AT = 'static_resources.listeners[1].filter_chains[0].filters[0].typed_config.http_filters[0].typed_config';
const TLS0 = (b: any) => b.static_resources.listeners[0].filter_chains[0].transport_socket.typed_config;
const decode = (what: string, reason: string) => `cannot decode ${what} from JSON: ${reason}`;

/**
 * One mistake each, made on the valid fixture, and the one error it must give. The JSON-mapping
 * mistakes are fromJson's (first error only, no path); the others the walk's (with the path).
 * In issue 17 the hand-written checker this one replaced caught every one of them too.
 */
const MISTAKES: Array<[string, (b: any) => void, string]> = [
  ['misspelled key', (b) => {
    ROUTE0(b).route.clustr = ROUTE0(b).route.cluster;
    delete ROUTE0(b).route.cluster;
  }, decode('message envoy.config.route.v3.RouteAction', 'key "clustr" is unknown')],
  ['misspelled top-level key', (b) => { b.static_resource = {}; }, decode('message envoy.config.bootstrap.v3.Bootstrap', 'key "static_resource" is unknown')],
  ['field removed from the v3 API', (b) => { b.static_resources.clusters[0].hosts = []; }, decode('message envoy.config.cluster.v3.Cluster', 'key "hosts" is unknown')],
  ['wrong @type: a known message that does not fit', (b) => { HCM0(b)['@type'] = ROUTER; },
    decode('message envoy.extensions.filters.http.router.v3.Router', 'key "stat_prefix" is unknown')],
  ['wrong @type: no such message', (b) => { HCM0(b)['@type'] = `${HCM}Typo`; }, decode('message google.protobuf.Any', `${HCM}Typo is not in the type registry`)],
  ['@type of a proto whose imports are not shipped', (b) => {
    HCM0(b).access_log[0].typed_config = { '@type': `${TYPE}envoy.extensions.access_loggers.open_telemetry.v3.OpenTelemetryAccessLogConfig` };
  }, decode('message google.protobuf.Any', `${TYPE}envoy.extensions.access_loggers.open_telemetry.v3.OpenTelemetryAccessLogConfig is not in the type registry`)],
  ['unknown field of an @type outside the bootstrap\'s imports', (b) => {
    HCM0(b).http_filters.unshift({
      name: 'envoy.filters.http.local_ratelimit',
      typed_config: {
        '@type': `${TYPE}envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit`,
        'stat_prefix': 'inbound_rl',
        'token_bucket': { max_tokens: 100, tokens_per_fill: 100, fill_interval: '1s' },
        'tokn_bucket': {},
      },
    });
  }, decode('message envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit', 'key "tokn_bucket" is unknown')],
  ['Any without @type', (b) => { delete b.static_resources.listeners[2].filter_chains[0].filters[0].typed_config['@type']; },
    decode('message google.protobuf.Any', '"@type" is empty')],
  ['Any as {} (valid proto3 JSON, refused by the walk)', (b) => { HCM0(b).http_filters[0].typed_config = {}; },
    `${INBOUND_HCM}.http_filters[0].typed_config: google.protobuf.Any without "@type"`],
  ['Any holding a well-known type, with a key beside "value"', (b) => {
    HCM0(b).http_filters[0].typed_config = { '@type': `${TYPE}google.protobuf.Duration`, 'value': '1s', 'extra': 1 };
  }, `${INBOUND_HCM}.http_filters[0].typed_config.extra: unknown field of google.protobuf.Any holding ${TYPE}google.protobuf.Duration`],
  ['TypedStruct payload with an unknown field', (b) => {
    HCM0(b).http_filters[0].typed_config = { '@type': `${TYPE}xds.type.v3.TypedStruct`, 'type_url': ROUTER, 'value': { suppress_envoy_headers: true, supress_envoy_headers: true } };
  }, `${INBOUND_HCM}.http_filters[0].typed_config.value: ${decode('message envoy.extensions.filters.http.router.v3.Router', 'key "supress_envoy_headers" is unknown')}`],
  ['TypedStruct naming no message', (b) => {
    HCM0(b).http_filters[0].typed_config = { '@type': `${TYPE}xds.type.v3.TypedStruct`, 'type_url': `${ROUTER}Typo`, 'value': {} };
  }, `${INBOUND_HCM}.http_filters[0].typed_config.type_url: ${ROUTER}Typo is not in the type registry`],
  ['bad enum name', (b) => { b.static_resources.clusters[0].lb_policy = 'ROUND_ROBN'; }, decode('enum envoy.config.cluster.v3.Cluster.LbPolicy', '"ROUND_ROBN"')],
  ['enum number naming no value', (b) => { b.static_resources.clusters[0].lb_policy = 99; },
    'static_resources.clusters[0].lb_policy: invalid enum value 99 for envoy.config.cluster.v3.Cluster.LbPolicy'],
  ['duration not in the JSON form', (b) => { b.static_resources.clusters[1].connect_timeout = '5 seconds'; }, decode('message google.protobuf.Duration', '"5 seconds"')],
  ['duration as a number', (b) => { b.static_resources.clusters[2].connect_timeout = 5; }, decode('message google.protobuf.Duration', '5')],
  ['duration out of range', (b) => { b.static_resources.clusters[2].connect_timeout = '315576000001s'; }, decode('message google.protobuf.Duration', '"315576000001s"')],
  ['uint32 given a word', (b) => { b.static_resources.clusters[0].load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.port_value = 'http'; },
    decode('field envoy.config.core.v3.SocketAddress.port_value', 'expected number (uint32), got "http"')],
  ['UInt32Value given a word', (b) => { b.static_resources.clusters[1].circuit_breakers.thresholds[0].max_retries = 'three'; },
    decode('field google.protobuf.UInt32Value.value', 'expected number (uint32), got "three"')],
  ['uint32 negative', (b) => { b.admin.address.socket_address.port_value = -1; }, decode('field envoy.config.core.v3.SocketAddress.port_value', 'expected number (uint32): -1 out of range')],
  ['uint32 fraction', (b) => { b.admin.address.socket_address.port_value = 1.5; }, decode('field envoy.config.core.v3.SocketAddress.port_value', 'expected number (uint32), got 1.5')],
  ['uint32 too large', (b) => { b.admin.address.socket_address.port_value = 2 ** 32; },
    decode('field envoy.config.core.v3.SocketAddress.port_value', 'expected number (uint32): 4294967296 out of range')],
  ['bool as a string', (b) => { TLS0(b).require_client_certificate = 'true'; }, decode('field google.protobuf.BoolValue.value', 'expected boolean, got "true"')],
  ['string as a number', (b) => { b.node.id = 42; }, decode('field envoy.config.core.v3.Node.id', 'expected string, got 42')],
  ['object for a repeated field', (b) => { b.static_resources.listeners[0].filter_chains[0].filters = { name: 'x' }; },
    decode('field envoy.config.listener.v3.FilterChain.filters', 'expected Array, got object')],
  ['null in a repeated field', (b) => { HCM0(b).route_config.virtual_hosts[0].domains = [null]; },
    decode('field envoy.config.route.v3.VirtualHost.domains', 'list item must not be null')],
  ['two members of a oneof', (b) => { ROUTE0(b).match.path = '/exact'; },
    decode('oneof envoy.config.route.v3.RouteMatch.path_specifier', 'oneof set multiple times by prefix and path')],
  ['two members of a oneof, one of them an enum', (b) => { b.static_resources.clusters[0].cluster_type = { name: 'envoy.clusters.aggregate' }; },
    decode('oneof envoy.config.cluster.v3.Cluster.cluster_discovery_type', 'oneof set multiple times by type and cluster_type')],
  ['the same field under its proto and JSON names', (b) => { b.static_resources.clusters[0].connectTimeout = '2s'; },
    decode('field envoy.config.cluster.v3.Cluster.connect_timeout', 'set multiple times')],
  ['deprecated field, inside an Any', (b) => { HEALTH(b).headers = [{ name: ':path', exact_match: '/ready' }]; },
    `${HEALTH_AT}.headers[0].exact_match: field envoy.config.route.v3.HeaderMatcher.exact_match is deprecated (since v3.0)`],
  ['deprecated field', (b) => { b.static_resources.clusters[0].use_tcp_for_dns_lookups = true; },
    'static_resources.clusters[0].use_tcp_for_dns_lookups: field envoy.config.cluster.v3.Cluster.use_tcp_for_dns_lookups is deprecated (since v3.0)'],
  ['deprecated field given its default value', (b) => { b.static_resources.clusters[0].use_tcp_for_dns_lookups = false; },
    'static_resources.clusters[0].use_tcp_for_dns_lookups: field envoy.config.cluster.v3.Cluster.use_tcp_for_dns_lookups is deprecated (since v3.0)'],
  ['deprecated enum value', (b) => { b.dynamic_resources = { lds_config: { ads: {}, resource_api_version: 'V2' } }; },
    'dynamic_resources.lds_config.resource_api_version: enum value V2 of envoy.config.core.v3.ApiVersion is deprecated'],
  ['PGV: required oneof', (b) => { delete ROUTE0(b).route.cluster; },
    `${INBOUND_ROUTE}.route: one of cluster, cluster_header, weighted_clusters, cluster_specifier_plugin, inline_cluster_specifier_plugin is required`
    + ' (oneof cluster_specifier of envoy.config.route.v3.RouteAction)'],
  ['PGV: string.min_len', (b) => { b.static_resources.clusters[0].name = ''; }, 'static_resources.clusters[0].name: violates (validate.rules).string.min_len = 1 (got 0)'],
  ['PGV: string.min_len, inside an Any', (b) => { HCM0(b).stat_prefix = ''; }, `${INBOUND_HCM}.stat_prefix: violates (validate.rules).string.min_len = 1 (got 0)`],
  ['PGV: string.well_known_regex HTTP_HEADER_NAME (strict: false)', (b) => { HEALTH(b).headers[0].name = 'bad\nheader'; },
    `${HEALTH_AT}.headers[0].name: violates (validate.rules).string.well_known_regex = HTTP_HEADER_NAME (got "bad\\nheader")`],
  ['PGV: duration.gt', (b) => { b.static_resources.clusters[1].connect_timeout = '0s'; }, 'static_resources.clusters[1].connect_timeout: violates (validate.rules).duration.gt = 0s (got 0s)'],
  ['PGV: uint32.lte', (b) => { b.admin.address.socket_address.port_value = 70000; }, 'admin.address.socket_address.port_value: violates (validate.rules).uint32.lte = 65535 (got number 70000)'],
  ['PGV: message.required', (b) => { delete HEALTH(b).pass_through_mode; },
    `${HEALTH_AT}.pass_through_mode: required field envoy.extensions.filters.http.health_check.v3.HealthCheck.pass_through_mode is missing ((validate.rules).message.required)`],
  ['PGV: repeated.min_items', (b) => { HCM0(b).route_config.virtual_hosts[0].domains = []; },
    `${INBOUND_HCM}.route_config.virtual_hosts[0].domains: violates (validate.rules).repeated.min_items = 1 (got 0)`],
  ['PGV: enum.defined_only', (b) => { b.static_resources.clusters[1].dns_lookup_family = 17; },
    'static_resources.clusters[1].dns_lookup_family: invalid enum value 17 for envoy.config.cluster.v3.Cluster.DnsLookupFamily'],
];

describe('envoyBootstrapErrors', () => {
  test('a realistic sidecar bootstrap is valid', () => {
    expect(envoyBootstrapErrors(sidecarBootstrap())).toEqual([]);
    expect(() => expectValidEnvoyBootstrap(sidecarBootstrap())).not.toThrow();
  });

  test('round-trips through YAML-like shapes: lowerCamel keys, numeric strings, enum numbers', () => {
    const b = sidecarBootstrap();
    b.admin.address = { socketAddress: { address: '127.0.0.1', portValue: '9901' } };
    b.static_resources.clusters[2].lb_policy = 0;
    b.static_resources.clusters[1].circuit_breakers.thresholds[0].max_connections = '2048';
    expect(envoyBootstrapErrors(b)).toEqual([]);
  });

  test.each(MISTAKES)('%s', (_name, mutate, error) => {
    const b = sidecarBootstrap();
    mutate(b);
    expect(envoyBootstrapErrors(b)).toEqual([error]);
  });

  test('the walk reports every rule a config breaks, with its path, in field-number order; options turn it off', () => {
    const b = sidecarBootstrap();
    b.static_resources.clusters[0].name = '';
    b.static_resources.clusters[1].connect_timeout = '0s';
    b.admin.address.socket_address.port_value = 70000;
    delete HEALTH(b).pass_through_mode;
    b.static_resources.listeners[2].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].domains = [];
    b.static_resources.clusters[0].use_tcp_for_dns_lookups = true;
    expect(envoyBootstrapErrors(b)).toEqual([
      `${HEALTH_AT}.pass_through_mode: required field envoy.extensions.filters.http.health_check.v3.HealthCheck.pass_through_mode is missing ((validate.rules).message.required)`,
      'static_resources.listeners[2].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].domains: violates (validate.rules).repeated.min_items = 1 (got 0)',
      'static_resources.clusters[0].name: violates (validate.rules).string.min_len = 1 (got 0)',
      'static_resources.clusters[0].use_tcp_for_dns_lookups: field envoy.config.cluster.v3.Cluster.use_tcp_for_dns_lookups is deprecated (since v3.0)',
      'static_resources.clusters[1].connect_timeout: violates (validate.rules).duration.gt = 0s (got 0s)',
      'admin.address.socket_address.port_value: violates (validate.rules).uint32.lte = 65535 (got number 70000)',
    ]);
    expect(envoyBootstrapErrors(b, { deprecated: false })).toHaveLength(5);
    expect(envoyBootstrapErrors(b, { validateRules: false })).toHaveLength(1);
    expect(envoyBootstrapErrors(b, { deprecated: false, validateRules: false })).toEqual([]);
    expect(() => expectValidEnvoyBootstrap(b)).toThrow(
      /^Invalid Envoy v3 bootstrap \(6 errors\):\n {2}- static_resources\.listeners\[1\]\.filter_chains\[0\].*pass_through_mode: required field/,
    );
  });

  test('the protos loaded are the whole vendored tree but the files whose imports are not shipped', () => {
    const { registry, skipped } = envoyProtos();
    // Outside the bootstrap's imports, found without naming them anywhere:
    expect(registry.getMessage('envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit')).toBeDefined();
    expect(registry.getMessage('envoy.extensions.filters.listener.original_dst.v3.OriginalDst')).toBeDefined();
    // Skipped, with the import that is missing:
    expect(skipped.get('envoy/extensions/access_loggers/open_telemetry/v3/logs_service.proto')).toBe('opentelemetry/proto/common/v1/common.proto');
    expect(registry.getMessage('envoy.extensions.access_loggers.open_telemetry.v3.OpenTelemetryAccessLogConfig')).toBeUndefined();
  });

  test('the root must be an object', () => {
    expect(envoyBootstrapErrors([])).toEqual([decode('message envoy.config.bootstrap.v3.Bootstrap', 'Array(0)')]);
  });

  test('individual messages can be validated too', () => {
    expect(envoyMessageErrors('envoy.config.cluster.v3.Cluster', { name: 'x', connect_timeout: '1s', type: 'EDS' })).toEqual([]);
    expect(envoyMessageErrors('envoy.config.core.v3.ConfigSource', { ads: {}, resource_api_version: 'V2' })).toEqual([
      'resource_api_version: enum value V2 of envoy.config.core.v3.ApiVersion is deprecated',
    ]);
    expect(() => envoyMessageErrors('envoy.config.cluster.v3.Clustr', {})).toThrow(/unknown @type/);
  });
});
