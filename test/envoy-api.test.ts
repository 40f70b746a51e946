/**
 * Issue 25: the Envoy API the library relies on, at the pinned release. Every proto field a
 * rendered config sets (test/util/envoy-fields.ts walks the bootstrap and the SDS files of the
 * variants below through the vendored protos) must be
 * - in the vendored protos (@grpc/grpc-js-xds 1.14.1, test/util/envoy-proto.ts): otherwise the
 *   config checker cannot see it, and this test names it;
 * - not `deprecated = true` there;
 * - in CHECKED_AT_PIN: the fields read in the Envoy API for the pinned line, present and not
 *   deprecated. A field the library starts to emit fails here until someone reads it at the
 *   pinned tag and adds it (CONTRIBUTING.md, "Bumping an image").
 */
import { Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import * as protobuf from 'protobufjs';
import { Images, WithEnvoy } from '../src';
import { envoyFieldPaths } from './util/envoy-fields';
import { envoyProtos } from './util/envoy-proto';
import { ENVOY_VARIANTS as VARIANTS } from './util/envoy-variants';
import { APP_CONTAINER, newChart } from './util/fixtures';

/**
 * Read 2026-12-01 in envoyproxy/data-plane-api (api/ mirrored from envoyproxy/envoy @ f126920c,
 * 2026-01-29, after the 1.37.0 release), and 2026-12-07 in the Envoy API of each release 1.37.0,
 * 1.38.0, 1.39.0 and 1.40.0 (github.com/envoyproxy/go-control-plane/envoy at that version, generated
 * from the release's protos; 1.40.0's COMMIT: envoy 37b04b2316a3) by `node scripts/envoy-api-check.js
 * <version>`: each is declared there and not marked deprecated. The vendored protos are older and
 * have each too.
 */
const PINNED = 'envoyproxy/envoy:v1.40.0';
const CHECKED_AT_PIN = new Set([
  'envoy.config.accesslog.v3.AccessLog.name',
  'envoy.config.accesslog.v3.AccessLog.typed_config',
  'envoy.config.bootstrap.v3.Admin.address',
  'envoy.config.bootstrap.v3.Bootstrap.StaticResources.clusters',
  'envoy.config.bootstrap.v3.Bootstrap.StaticResources.listeners',
  'envoy.config.bootstrap.v3.Bootstrap.admin',
  'envoy.config.bootstrap.v3.Bootstrap.node',
  'envoy.config.bootstrap.v3.Bootstrap.overload_manager',
  'envoy.config.bootstrap.v3.Bootstrap.static_resources',
  'envoy.config.cluster.v3.CircuitBreakers.Thresholds.max_connections',
  'envoy.config.cluster.v3.CircuitBreakers.Thresholds.max_pending_requests',
  'envoy.config.cluster.v3.CircuitBreakers.Thresholds.max_requests',
  'envoy.config.cluster.v3.CircuitBreakers.Thresholds.max_retries',
  'envoy.config.cluster.v3.CircuitBreakers.Thresholds.track_remaining',
  'envoy.config.cluster.v3.CircuitBreakers.thresholds',
  'envoy.config.cluster.v3.Cluster.circuit_breakers',
  'envoy.config.cluster.v3.Cluster.connect_timeout',
  'envoy.config.cluster.v3.Cluster.dns_lookup_family',
  'envoy.config.cluster.v3.Cluster.lb_policy',
  'envoy.config.cluster.v3.Cluster.load_assignment',
  'envoy.config.cluster.v3.Cluster.name',
  'envoy.config.cluster.v3.Cluster.per_connection_buffer_limit_bytes',
  'envoy.config.cluster.v3.Cluster.transport_socket',
  'envoy.config.cluster.v3.Cluster.type',
  'envoy.config.cluster.v3.Cluster.typed_extension_protocol_options',
  'envoy.config.core.v3.Address.socket_address',
  'envoy.config.core.v3.ConfigSource.path_config_source',
  'envoy.config.core.v3.ConfigSource.resource_api_version',
  'envoy.config.core.v3.DataSource.filename',
  'envoy.config.core.v3.Http2ProtocolOptions.initial_connection_window_size',
  'envoy.config.core.v3.Http2ProtocolOptions.initial_stream_window_size',
  'envoy.config.core.v3.Http2ProtocolOptions.max_concurrent_streams',
  'envoy.config.core.v3.HttpProtocolOptions.idle_timeout',
  'envoy.config.core.v3.Node.cluster',
  'envoy.config.core.v3.Node.id',
  'envoy.config.core.v3.PathConfigSource.path',
  'envoy.config.core.v3.SocketAddress.address',
  'envoy.config.core.v3.SocketAddress.port_value',
  'envoy.config.core.v3.TransportSocket.name',
  'envoy.config.core.v3.TransportSocket.typed_config',
  'envoy.config.core.v3.WatchedDirectory.path',
  'envoy.config.endpoint.v3.ClusterLoadAssignment.cluster_name',
  'envoy.config.endpoint.v3.ClusterLoadAssignment.endpoints',
  'envoy.config.endpoint.v3.Endpoint.address',
  'envoy.config.endpoint.v3.LbEndpoint.endpoint',
  'envoy.config.endpoint.v3.LocalityLbEndpoints.lb_endpoints',
  'envoy.config.listener.v3.Filter.name',
  'envoy.config.listener.v3.Filter.typed_config',
  'envoy.config.listener.v3.FilterChain.filters',
  'envoy.config.listener.v3.FilterChain.transport_socket',
  'envoy.config.listener.v3.Listener.address',
  'envoy.config.listener.v3.Listener.drain_type',
  'envoy.config.listener.v3.Listener.filter_chains',
  'envoy.config.listener.v3.Listener.name',
  'envoy.config.listener.v3.Listener.per_connection_buffer_limit_bytes',
  'envoy.config.listener.v3.Listener.traffic_direction',
  'envoy.config.overload.v3.OverloadAction.name',
  'envoy.config.overload.v3.OverloadAction.triggers',
  'envoy.config.overload.v3.OverloadManager.actions',
  'envoy.config.overload.v3.OverloadManager.refresh_interval',
  'envoy.config.overload.v3.OverloadManager.resource_monitors',
  'envoy.config.overload.v3.ResourceMonitor.name',
  'envoy.config.overload.v3.ResourceMonitor.typed_config',
  'envoy.config.overload.v3.ThresholdTrigger.value',
  'envoy.config.overload.v3.Trigger.name',
  'envoy.config.overload.v3.Trigger.threshold',
  'envoy.config.route.v3.DirectResponseAction.status',
  'envoy.config.route.v3.HeaderMatcher.name',
  'envoy.config.route.v3.HeaderMatcher.string_match',
  'envoy.config.route.v3.RetryPolicy.num_retries',
  'envoy.config.route.v3.RetryPolicy.retry_on',
  'envoy.config.route.v3.Route.direct_response',
  'envoy.config.route.v3.Route.match',
  'envoy.config.route.v3.Route.route',
  'envoy.config.route.v3.RouteAction.cluster',
  'envoy.config.route.v3.RouteAction.host_rewrite_literal',
  'envoy.config.route.v3.RouteAction.retry_policy',
  'envoy.config.route.v3.RouteAction.timeout',
  'envoy.config.route.v3.RouteConfiguration.name',
  'envoy.config.route.v3.RouteConfiguration.virtual_hosts',
  'envoy.config.route.v3.RouteMatch.prefix',
  'envoy.config.route.v3.VirtualHost.domains',
  'envoy.config.route.v3.VirtualHost.name',
  'envoy.config.route.v3.VirtualHost.routes',
  'envoy.extensions.filters.http.health_check.v3.HealthCheck.headers',
  'envoy.extensions.filters.http.health_check.v3.HealthCheck.pass_through_mode',
  'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager.SetCurrentClientCertDetails.dns',
  'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager.SetCurrentClientCertDetails.subject',
  'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager.SetCurrentClientCertDetails.uri',
  'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager.UpgradeConfig.upgrade_type',
  'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager.access_log',
  'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager.codec_type',
  'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager.forward_client_cert_details',
  'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager.http2_protocol_options',
  'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager.http_filters',
  'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager.route_config',
  'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager.set_current_client_cert_details',
  'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager.stat_prefix',
  'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager.stream_idle_timeout',
  'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager.upgrade_configs',
  'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager.use_remote_address',
  'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager.xff_num_trusted_hops',
  'envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter.name',
  'envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter.typed_config',
  'envoy.extensions.resource_monitors.fixed_heap.v3.FixedHeapConfig.max_heap_size_bytes',
  'envoy.extensions.transport_sockets.tls.v3.CertificateValidationContext.match_typed_subject_alt_names',
  'envoy.extensions.transport_sockets.tls.v3.CertificateValidationContext.trusted_ca',
  'envoy.extensions.transport_sockets.tls.v3.CertificateValidationContext.watched_directory',
  'envoy.extensions.transport_sockets.tls.v3.CommonTlsContext.alpn_protocols',
  'envoy.extensions.transport_sockets.tls.v3.CommonTlsContext.tls_certificate_sds_secret_configs',
  'envoy.extensions.transport_sockets.tls.v3.CommonTlsContext.tls_params',
  'envoy.extensions.transport_sockets.tls.v3.CommonTlsContext.validation_context',
  'envoy.extensions.transport_sockets.tls.v3.CommonTlsContext.validation_context_sds_secret_config',
  'envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext.common_tls_context',
  'envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext.require_client_certificate',
  'envoy.extensions.transport_sockets.tls.v3.SdsSecretConfig.name',
  'envoy.extensions.transport_sockets.tls.v3.SdsSecretConfig.sds_config',
  'envoy.extensions.transport_sockets.tls.v3.Secret.name',
  'envoy.extensions.transport_sockets.tls.v3.Secret.tls_certificate',
  'envoy.extensions.transport_sockets.tls.v3.Secret.validation_context',
  'envoy.extensions.transport_sockets.tls.v3.SubjectAltNameMatcher.matcher',
  'envoy.extensions.transport_sockets.tls.v3.SubjectAltNameMatcher.san_type',
  'envoy.extensions.transport_sockets.tls.v3.TlsCertificate.certificate_chain',
  'envoy.extensions.transport_sockets.tls.v3.TlsCertificate.private_key',
  'envoy.extensions.transport_sockets.tls.v3.TlsCertificate.watched_directory',
  'envoy.extensions.transport_sockets.tls.v3.TlsParameters.tls_minimum_protocol_version',
  'envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext.common_tls_context',
  'envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext.sni',
  'envoy.extensions.upstreams.http.v3.HttpProtocolOptions.ExplicitHttpConfig.http2_protocol_options',
  'envoy.extensions.upstreams.http.v3.HttpProtocolOptions.ExplicitHttpConfig.http_protocol_options',
  'envoy.extensions.upstreams.http.v3.HttpProtocolOptions.UseDownstreamHttpConfig.http2_protocol_options',
  'envoy.extensions.upstreams.http.v3.HttpProtocolOptions.UseDownstreamHttpConfig.http_protocol_options',
  'envoy.extensions.upstreams.http.v3.HttpProtocolOptions.common_http_protocol_options',
  'envoy.extensions.upstreams.http.v3.HttpProtocolOptions.explicit_http_config',
  'envoy.extensions.upstreams.http.v3.HttpProtocolOptions.use_downstream_protocol_config',
  'envoy.service.discovery.v3.DiscoveryResponse.resources',
  'envoy.type.matcher.v3.StringMatcher.exact',
]);


function emitted(): Set<string> {
  const all = new Set<string>();
  for (const [, props] of VARIANTS) {
    const { chart } = newChart();
    const workload = new kplus.Deployment(chart, 'web', { containers: [{ ...APP_CONTAINER, portNumber: undefined, ports: [{ number: 8080 }] }] });
    new WithEnvoy(chart, 'envoy', { workload, kubernetesVersion: '1.29', appPort: 8080, ...props });
    const cm = Testing.synth(chart).find((m: any) => m.kind === 'ConfigMap' && m.metadata.name.includes('envoy'));
    for (const [file, text] of Object.entries<string>(cm.data)) {
      const type = file === 'envoy.json' ? 'envoy.config.bootstrap.v3.Bootstrap' : 'envoy.service.discovery.v3.DiscoveryResponse';
      for (const p of envoyFieldPaths(type, JSON.parse(text))) all.add(p);
    }
  }
  return all;
}

describe(`the Envoy API the library emits, at the pinned ${PINNED}`, () => {
  const fields = emitted();

  test('the list was read for the pinned image', () => {
    expect(Images.ENVOY).toBe(PINNED);
    expect(fields.size).toBeGreaterThan(100);
  });

  test('every emitted field is in the vendored protos (else the checker cannot see it)', () => {
    expect([...fields].filter(f => f.endsWith('(not in the vendored protos)'))).toEqual([]);
  });

  test('no emitted field is deprecated in the vendored protos', () => {
    const root = envoyProtos().root;
    const deprecated = [...fields].filter(f => {
      const at = f.lastIndexOf('.');
      const field = (root.lookupType(f.slice(0, at)) as protobuf.Type).fields[f.slice(at + 1)];
      return field?.options?.deprecated === true;
    });
    expect(deprecated).toEqual([]);
  });

  test('every emitted field was read at the pinned line (present, not deprecated)', () => {
    expect([...fields].filter(f => !CHECKED_AT_PIN.has(f)).sort()).toEqual([]);
  });

  test('the walker sees what it must: a key the protos lack is reported, Any payloads are entered', () => {
    const bad = envoyFieldPaths('envoy.config.cluster.v3.Cluster', { name: 'x', conect_timeout: '1s' });
    expect([...bad]).toEqual(['envoy.config.cluster.v3.Cluster.name', 'envoy.config.cluster.v3.Cluster.conect_timeout (not in the vendored protos)']);
    expect(fields.has('envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager.stat_prefix')).toBe(true);
  });
});
