import { HCM, INBOUND_HCM, INBOUND_ROUTE, ROUTER, TYPE, sidecarBootstrap } from './util/envoy-bootstrap-fixture';
import {
  envoyBootstrapErrors,
  envoyMessageErrors,
  envoyProtoStats,
  expectValidEnvoyBootstrap,
  loadedEnvoyTypeUrls,
} from './util/envoy-proto';

describe('envoyBootstrapErrors', () => {
  test('a realistic sidecar bootstrap is valid', () => {
    expect(envoyBootstrapErrors(sidecarBootstrap())).toEqual([]);
    expect(() => expectValidEnvoyBootstrap(sidecarBootstrap())).not.toThrow();
    const stats = envoyProtoStats();
    expect(stats.eagerLoadMs).toBeGreaterThan(0);
    expect(stats.loadedFiles).toBeGreaterThan(50);
  });

  test('round-trips through YAML-like shapes: lowerCamel keys, numeric strings, enum numbers', () => {
    const b = sidecarBootstrap();
    b.admin.address = { socketAddress: { address: '127.0.0.1', portValue: '9901' } };
    b.static_resources.clusters[2].lb_policy = 0;
    b.static_resources.clusters[1].circuit_breakers.thresholds[0].max_connections = '2048';
    expect(envoyBootstrapErrors(b)).toEqual([]);
  });

  test('misspelled key', () => {
    const b = sidecarBootstrap();
    const route = b.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes[0].route;
    route.clustr = route.cluster;
    delete route.cluster;
    const errors = envoyBootstrapErrors(b);
    expect(errors).toContain(`${INBOUND_ROUTE}.route.clustr: unknown field of envoy.config.route.v3.RouteAction`);
    // ...and, since the rename leaves RouteAction without a cluster, the required oneof fires too.
    expect(errors).toContain(
      `${INBOUND_ROUTE}.route: one of cluster, cluster_header, weighted_clusters, cluster_specifier_plugin, inline_cluster_specifier_plugin is required`
      + ' (oneof cluster_specifier of envoy.config.route.v3.RouteAction)',
    );
  });

  test('misspelled top-level key and removed (reserved) field', () => {
    const b = sidecarBootstrap();
    b.static_resource = {};
    b.static_resources.clusters[0].hosts = [];
    expect(envoyBootstrapErrors(b)).toEqual([
      'static_resources.clusters[0].hosts: unknown field of envoy.config.cluster.v3.Cluster (removed from the v3 API; the name is reserved)',
      'static_resource: unknown field of envoy.config.bootstrap.v3.Bootstrap',
    ]);
  });

  test('wrong @type: a known message that does not fit the config', () => {
    const b = sidecarBootstrap();
    b.static_resources.listeners[0].filter_chains[0].filters[0].typed_config['@type'] = ROUTER;
    const errors = envoyBootstrapErrors(b);
    expect(errors).toContain(`${INBOUND_HCM}.stat_prefix: unknown field of envoy.extensions.filters.http.router.v3.Router`);
    expect(errors).toContain(`${INBOUND_HCM}.route_config: unknown field of envoy.extensions.filters.http.router.v3.Router`);
  });

  test('wrong @type: no such message', () => {
    const b = sidecarBootstrap();
    b.static_resources.listeners[0].filter_chains[0].filters[0].typed_config['@type'] = `${HCM}Typo`;
    const errors = envoyBootstrapErrors(b);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(new RegExp(`^${escape(INBOUND_HCM)}\\.@type: unknown @type ${escape(HCM)}Typo: no message .* is declared`));
  });

  test('Any without @type', () => {
    const b = sidecarBootstrap();
    delete b.static_resources.listeners[2].filter_chains[0].filters[0].typed_config['@type'];
    expect(envoyBootstrapErrors(b)).toEqual([
      'static_resources.listeners[2].filter_chains[0].filters[0].typed_config: google.protobuf.Any without "@type"',
    ]);
  });

  test('bad enum value', () => {
    const b = sidecarBootstrap();
    b.static_resources.clusters[0].lb_policy = 'ROUND_ROBN';
    expect(envoyBootstrapErrors(b)).toEqual([
      'static_resources.clusters[0].lb_policy: invalid enum value string "ROUND_ROBN" for envoy.config.cluster.v3.Cluster.LbPolicy'
      + ' (expected one of ROUND_ROBIN, LEAST_REQUEST, RING_HASH, RANDOM, MAGLEV, CLUSTER_PROVIDED, LOAD_BALANCING_POLICY_CONFIG)',
    ]);
  });

  test('bad duration', () => {
    const b = sidecarBootstrap();
    b.static_resources.clusters[1].connect_timeout = '5 seconds';
    b.static_resources.clusters[2].connect_timeout = 5;
    expect(envoyBootstrapErrors(b)).toEqual([
      'static_resources.clusters[1].connect_timeout: invalid google.protobuf.Duration string "5 seconds" (expected a string like "5s" or "0.25s")',
      'static_resources.clusters[2].connect_timeout: invalid google.protobuf.Duration number 5 (expected a string like "5s" or "0.25s")',
    ]);
  });

  test('string where a number is required', () => {
    const b = sidecarBootstrap();
    b.static_resources.clusters[0].load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.port_value = 'http';
    b.static_resources.clusters[1].circuit_breakers.thresholds[0].max_retries = 'three';
    expect(envoyBootstrapErrors(b)).toEqual([
      'static_resources.clusters[0].load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.port_value:'
      + ' expected uint32 (an integer number or numeric string), got string "http"',
      'static_resources.clusters[1].circuit_breakers.thresholds[0].max_retries: expected uint32 (an integer number or numeric string), got string "three"',
    ]);
  });

  test('other scalar type errors', () => {
    const b = sidecarBootstrap();
    const tls = b.static_resources.listeners[0].filter_chains[0].transport_socket.typed_config;
    tls.require_client_certificate = 'true';
    b.admin.address.socket_address.port_value = -1;
    b.node.id = 42;
    b.static_resources.listeners[0].filter_chains[0].filters = { name: 'x' };
    expect(envoyBootstrapErrors(b)).toEqual([
      'node.id: expected string, got number 42',
      'admin.address.socket_address.port_value: number -1 is out of range for uint32 (0..4294967295)',
      'static_resources.listeners[0].filter_chains[0].transport_socket.typed_config.require_client_certificate: expected bool (true or false), got string "true"',
      'static_resources.listeners[0].filter_chains[0].filters: expected an array for repeated field filters, got an object',
    ]);
  });

  test('two members of one oneof', () => {
    const b = sidecarBootstrap();
    b.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes[0].match.path = '/exact';
    b.static_resources.clusters[0].cluster_type = { name: 'envoy.clusters.aggregate' };
    expect(envoyBootstrapErrors(b)).toEqual([
      `${INBOUND_ROUTE}.match: more than one member of oneof path_specifier of envoy.config.route.v3.RouteMatch is set: prefix, path`,
      'static_resources.clusters[0]: more than one member of oneof cluster_discovery_type of envoy.config.cluster.v3.Cluster is set: type, cluster_type',
    ]);
  });

  test('the same field given under its proto and JSON names', () => {
    const b = sidecarBootstrap();
    b.static_resources.clusters[0].connectTimeout = '2s';
    expect(envoyBootstrapErrors(b)).toEqual([
      'static_resources.clusters[0].connectTimeout: duplicate field: envoy.config.cluster.v3.Cluster.connect_timeout is also given as "connect_timeout"',
    ]);
  });

  test('deprecated fields and enum values', () => {
    const b = sidecarBootstrap();
    const health = b.static_resources.listeners[1].filter_chains[0].filters[0].typed_config.http_filters[0].typed_config;
    health.headers = [{ name: ':path', exact_match: '/ready' }];
    b.static_resources.clusters[0].use_tcp_for_dns_lookups = true;
    expect(envoyBootstrapErrors(b)).toEqual([
      'static_resources.listeners[1].filter_chains[0].filters[0].typed_config.http_filters[0].typed_config.headers[0].exact_match:'
      + ' field envoy.config.route.v3.HeaderMatcher.exact_match is deprecated (since v3.0)',
      'static_resources.clusters[0].use_tcp_for_dns_lookups: field envoy.config.cluster.v3.Cluster.use_tcp_for_dns_lookups is deprecated (since v3.0)',
    ]);
    expect(envoyBootstrapErrors(b, { deprecated: false })).toEqual([]);
    expect(envoyMessageErrors('envoy.config.core.v3.ConfigSource', { ads: {}, resource_api_version: 'V2' })).toEqual([
      'resource_api_version: enum value V2 of envoy.config.core.v3.ApiVersion is deprecated',
    ]);
  });

  test('protoc-gen-validate rules Envoy enforces at load time', () => {
    const b = sidecarBootstrap();
    b.static_resources.clusters[0].name = '';
    b.static_resources.clusters[1].connect_timeout = '0s';
    b.admin.address.socket_address.port_value = 70000;
    delete b.static_resources.listeners[1].filter_chains[0].filters[0].typed_config.http_filters[0].typed_config.pass_through_mode;
    b.static_resources.listeners[2].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].domains = [];
    const errors = envoyBootstrapErrors(b);
    expect(errors).toEqual([
      'admin.address.socket_address.port_value: violates (validate.rules).uint32.lte = 65535 (got number 70000)',
      'static_resources.listeners[1].filter_chains[0].filters[0].typed_config.http_filters[0].typed_config.pass_through_mode:'
      + ' required field envoy.extensions.filters.http.health_check.v3.HealthCheck.pass_through_mode is missing ((validate.rules).message.required)',
      'static_resources.listeners[2].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].domains:'
      + ' violates (validate.rules).repeated.min_items = 1 (got 0)',
      'static_resources.clusters[0].name: violates (validate.rules).string.min_len = 1 (got 0)',
      'static_resources.clusters[1].connect_timeout: violates (validate.rules).duration.gt = 0s (got string "0s")',
    ]);
    expect(envoyBootstrapErrors(b, { validateRules: false })).toEqual([]);
  });

  test('lazily resolves @types outside the eager set, from the dep tree', () => {
    const b = sidecarBootstrap();
    b.static_resources.listeners[0].listener_filters = [{
      name: 'envoy.filters.listener.original_dst',
      typed_config: { '@type': `${TYPE}envoy.extensions.filters.listener.original_dst.v3.OriginalDst` },
    }];
    b.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.http_filters.unshift({
      name: 'envoy.filters.http.local_ratelimit',
      typed_config: {
        '@type': `${TYPE}envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit`,
        'stat_prefix': 'inbound_rl',
        'token_bucket': { max_tokens: 100, tokens_per_fill: 100, fill_interval: '1s' },
        'filter_enabled': { default_value: { numerator: 100, denominator: 'HUNDRED' }, runtime_key: 'rl_enabled' },
        'tokn_bucket': {},
      },
    });
    expect(envoyBootstrapErrors(b)).toEqual([
      `${INBOUND_HCM}.http_filters[0].typed_config.tokn_bucket: unknown field of envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit`,
    ]);
    expect(envoyProtoStats().lazyLoaded).toMatchObject({
      [`${TYPE}envoy.extensions.filters.listener.original_dst.v3.OriginalDst`]: 'envoy/extensions/filters/listener/original_dst/v3/original_dst.proto',
      [`${TYPE}envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit`]: 'envoy/extensions/filters/http/local_ratelimit/v3/local_rate_limit.proto',
    });
    expect(loadedEnvoyTypeUrls()).toContain(`${TYPE}envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit`);
  });

  test('a @type whose proto imports are not shipped is reported, not crashed on', () => {
    const b = sidecarBootstrap();
    b.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.access_log[0].typed_config = {
      '@type': `${TYPE}envoy.extensions.access_loggers.open_telemetry.v3.OpenTelemetryAccessLogConfig`,
    };
    const errors = envoyBootstrapErrors(b);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain(`${INBOUND_HCM}.access_log[0].typed_config.@type: cannot resolve @type`);
    expect(errors[0]).toContain('opentelemetry/proto/common/v1/common.proto');
    // The shared root is still usable afterwards.
    expect(envoyBootstrapErrors(sidecarBootstrap())).toEqual([]);
  });

  test('TypedStruct payloads are checked against their type_url', () => {
    const b = sidecarBootstrap();
    b.static_resources.listeners[2].filter_chains[0].filters[0].typed_config.http_filters[0].typed_config = {
      '@type': `${TYPE}xds.type.v3.TypedStruct`,
      'type_url': ROUTER,
      'value': { suppress_envoy_headers: true, supress_envoy_headers: true },
    };
    expect(envoyBootstrapErrors(b)).toEqual([
      'static_resources.listeners[2].filter_chains[0].filters[0].typed_config.http_filters[0].typed_config.value.supress_envoy_headers:'
      + ' unknown field of envoy.extensions.filters.http.router.v3.Router',
    ]);
  });

  test('expectValidEnvoyBootstrap lists every error', () => {
    const b = sidecarBootstrap();
    b.static_resources.clusters[0].lb_policy = 'ROUND_ROBN';
    b.static_resources.clusters[1].connect_timeout = '5 seconds';
    expect(() => expectValidEnvoyBootstrap(b)).toThrow(
      /Invalid Envoy v3 bootstrap \(2 errors\):\n {2}- static_resources\.clusters\[0\]\.lb_policy: .*\n {2}- static_resources\.clusters\[1\]\.connect_timeout: /,
    );
  });

  test('the root must be an object', () => {
    expect(envoyBootstrapErrors([])).toEqual(['(root): expected an object for envoy.config.bootstrap.v3.Bootstrap, got an array']);
  });

  test('individual messages can be validated too', () => {
    expect(envoyMessageErrors('envoy.config.cluster.v3.Cluster', { name: 'x', connect_timeout: '1s', type: 'EDS' })).toEqual([]);
    expect(() => envoyMessageErrors('envoy.config.cluster.v3.Clustr', {})).toThrow(/unknown @type/);
  });
});

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
