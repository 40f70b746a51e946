/**
 * The baseline: the same three sidecars (Fluent Bit, OpenTelemetry Collector, Envoy) written by
 * hand with cdk8s-plus-27 alone, in the legacy layout (one more entry in `spec.containers`), the
 * way a platform team writes them without this library: `addContainer`, `addInitContainer`,
 * `kplus.ConfigMap` with the config text, `Volume.from*` + `addVolume`/`mount`, a checksum
 * annotation per ConfigMap.
 *
 * It mirrors what the library emits for Kubernetes 1.27 with its defaults, field for field as
 * far as cdk8s-plus-27 can express it (see `equivalence.ts` for what it cannot, and how the two
 * outputs are compared). The config files are constant text with the workload's name
 * substituted, as one writes them by hand.
 *
 * The native layout cannot be written with cdk8s-plus-27 at all (its containers have no
 * `restartPolicy`, and `addInitContainer` refuses probes), so there is no hand-written native
 * app: the library's native output is timed against this legacy one.
 */
import { createHash } from 'crypto';
import { ApiObject, Duration, JsonPatch, Size } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { Construct } from 'constructs';

const BUSYBOX = '/sidecar-tools/busybox';
/** A busybox shell script; its arguments are passed as $1, $2, ... (never spliced into the script). */
const shell = (script: string, ...args: string[]) => kplus.Handler.fromCommand([BUSYBOX, 'sh', '-c', script, 'sh', ...args]);
const field = (path: kplus.EnvFieldPaths) => kplus.EnvValue.fromFieldRef(path);
const value = (v: string) => kplus.EnvValue.fromValue(v);
const httpProbe = (path: string, port: number, periodSeconds: number, failureThreshold: number, timeoutSeconds = 1) =>
  kplus.Probe.fromHttpGet(path, {
    port,
    periodSeconds: Duration.seconds(periodSeconds),
    failureThreshold,
    timeoutSeconds: Duration.seconds(timeoutSeconds),
  });
/** Every agent's liveness probe: its health endpoint every 10 s, restarted after a minute without an answer. */
const liveness = (path: string, port: number) => httpProbe(path, port, 10, 6, 5);
const resources = (cpuRequest: number, cpuLimit: number, memoryRequest: number, memoryLimit: number): kplus.ContainerResources => ({
  cpu: { request: kplus.Cpu.millis(cpuRequest), limit: kplus.Cpu.millis(cpuLimit) },
  memory: { request: Size.mebibytes(memoryRequest), limit: Size.mebibytes(memoryLimit) },
});
/**
 * The Pod Security Standard "restricted" context, as far as cdk8s-plus-27 goes: it has no
 * `seccompProfile`, and its `Capability` enum has no `ALL` (the value is passed through as is).
 */
const restricted = (uid: number): kplus.ContainerSecurityContextProps => ({
  user: uid,
  group: uid,
  ensureNonRoot: true,
  privileged: false,
  readOnlyRootFilesystem: true,
  allowPrivilegeEscalation: false,
  capabilities: { drop: ['ALL' as kplus.Capability] },
});
const checksum = (data: Record<string, string>) => createHash('sha256').update(JSON.stringify(data)).digest('hex');

const FLUENT_BIT_CONF = `[SERVICE]
    Flush                 1
    Grace                 5
    Daemon                Off
    Log_Level             info
    HTTP_Server           On
    HTTP_Listen           0.0.0.0
    HTTP_Port             2020
    Health_Check          On
    storage.path          /var/log/app/.fluent-bit/storage
    storage.sync          normal
    storage.max_chunks_up 16
    scheduler.cap         30

[INPUT]
    Name                tail
    Tag                 app.*
    Path                /var/log/app/*.log
    DB                  /var/log/app/.fluent-bit/offsets.db
    DB.locking          true
    Refresh_Interval    1
    Read_from_Head      true
    Buffer_Chunk_Size   32k
    Buffer_Max_Size     1048576
    Truncate_Long_Lines On
    Skip_Long_Lines     On
    storage.type        filesystem

[FILTER]
    Name   record_modifier
    Match  *
    Record pod \${POD_NAME}
    Record namespace \${POD_NAMESPACE}
    Record node \${NODE_NAME}

[OUTPUT]
    Name                     stdout
    Match                    *
    Format                   json_lines
    Retry_Limit              no_limits
    storage.total_limit_size 256M
`;

function otelConfig(): string {
  // The collector's YAML with every key and string quoted (no YAML 1.1/1.2 surprises), as the library writes it.
  const pipeline = (signal: string) => `      "receivers":
        - "otlp"
      "processors":
        - "memory_limiter"
        - "resource"
      "exporters":
        - "otlp_grpc/${signal}"
`;
  // One exporter per signal: the collector stops them one after another, so their timeouts share drainTime (10 s).
  const exporter = (signal: string, timeout: number) => `  "otlp_grpc/${signal}":
    "endpoint": "otel-collector.observability:4317"
    "tls":
      "insecure": true
    "timeout": "${timeout}s"
    "sending_queue":
      "enabled": true
      "sizer": "requests"
      "num_consumers": 10
      "queue_size": 10
      "batch":
        "flush_timeout": "1s"
        "sizer": "items"
        "min_size": 512
    "retry_on_failure":
      "enabled": true
      "initial_interval": "1s"
      "max_interval": "10s"
      "max_elapsed_time": "60s"
`;
  const attribute = (key: string, env: string) => `      - "action": "insert"
        "key": "${key}"
        "value": "\${env:${env}}"
`;
  return `"extensions":
  "health_check":
    "endpoint": "0.0.0.0:13133"
    "path": "/"
"receivers":
  "otlp":
    "protocols":
      "grpc":
        "endpoint": "127.0.0.1:4317"
      "http":
        "endpoint": "127.0.0.1:4318"
"processors":
  "memory_limiter":
    "check_interval": "1s"
    "limit_mib": 102
    "spike_limit_mib": 20
  "resource":
    "attributes":
${attribute('k8s.deployment.name', 'K8S_WORKLOAD_NAME')}${attribute('k8s.namespace.name', 'POD_NAMESPACE')}${attribute('k8s.node.name', 'NODE_NAME')}${attribute('k8s.pod.name', 'POD_NAME')}${attribute('k8s.pod.uid', 'POD_UID')}"exporters":
${exporter('traces', 4)}${exporter('metrics', 3)}${exporter('logs', 3)}"service":
  "extensions":
    - "health_check"
  "telemetry":
    "metrics":
      "level": "none"
  "pipelines":
    "traces":
${pipeline('traces')}    "metrics":
${pipeline('metrics')}    "logs":
${pipeline('logs')}`;
}

function envoyBootstrap(deploymentName: string, appPort: number): string {
  const hcm = 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
  const router = { name: 'envoy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } };
  const address = (host: string, port: number) => ({ socket_address: { address: host, port_value: port } });
  const heap = 'envoy.resource_monitors.fixed_heap';
  const MAX = 4294967295; // the circuit breakers' limits, lifted
  const bootstrap = {
    node: { cluster: deploymentName, id: deploymentName },
    admin: { address: address('127.0.0.1', 9901) },
    static_resources: {
      listeners: [
        {
          name: 'inbound',
          address: address('0.0.0.0', 10000),
          traffic_direction: 'INBOUND',
          per_connection_buffer_limit_bytes: 32768,
          filter_chains: [{
            filters: [{
              name: 'envoy.filters.network.http_connection_manager',
              typed_config: {
                '@type': hcm,
                'stat_prefix': 'inbound',
                'codec_type': 'AUTO',
                'use_remote_address': false,
                'forward_client_cert_details': 'SANITIZE',
                'stream_idle_timeout': '0s',
                'upgrade_configs': [{ upgrade_type: 'websocket' }],
                'http2_protocol_options': { initial_connection_window_size: 1048576, initial_stream_window_size: 65536, max_concurrent_streams: 1024 },
                'route_config': {
                  name: 'inbound',
                  virtual_hosts: [{
                    name: 'app',
                    domains: ['*'],
                    routes: [{
                      match: { prefix: '/' },
                      route: { cluster: 'local-app', retry_policy: { num_retries: 2, retry_on: 'reset-before-request' }, timeout: '0s' },
                    }],
                  }],
                },
                'http_filters': [router],
                'access_log': [{
                  name: 'envoy.access_loggers.stdout',
                  typed_config: { '@type': 'type.googleapis.com/envoy.extensions.access_loggers.stream.v3.StdoutAccessLog' },
                }],
              },
            }],
          }],
        },
        {
          name: 'health',
          address: address('0.0.0.0', 15021),
          traffic_direction: 'INBOUND',
          filter_chains: [{
            filters: [{
              name: 'envoy.filters.network.http_connection_manager',
              typed_config: {
                '@type': hcm,
                'stat_prefix': 'health',
                'codec_type': 'AUTO',
                'route_config': {
                  name: 'health',
                  virtual_hosts: [{ name: 'health', domains: ['*'], routes: [{ match: { prefix: '/' }, direct_response: { status: 404 } }] }],
                },
                'http_filters': [
                  {
                    name: 'envoy.filters.http.health_check',
                    typed_config: {
                      '@type': 'type.googleapis.com/envoy.extensions.filters.http.health_check.v3.HealthCheck',
                      'pass_through_mode': false,
                      'headers': [{ name: ':path', string_match: { exact: '/ready' } }],
                    },
                  },
                  router,
                ],
              },
            }],
          }],
        },
      ],
      clusters: [{
        name: 'local-app',
        type: 'STATIC',
        connect_timeout: '1s',
        lb_policy: 'ROUND_ROBIN',
        circuit_breakers: {
          thresholds: [{ max_connections: MAX, max_pending_requests: MAX, max_requests: MAX, max_retries: MAX, track_remaining: true }],
        },
        per_connection_buffer_limit_bytes: 32768,
        load_assignment: { cluster_name: 'local-app', endpoints: [{ lb_endpoints: [{ endpoint: { address: address('127.0.0.1', appPort) } }] }] },
        typed_extension_protocol_options: {
          'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': {
            '@type': 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions',
            'common_http_protocol_options': { idle_timeout: '1s' },
            'explicit_http_config': { http_protocol_options: {} },
          },
        },
      }],
    },
    overload_manager: {
      refresh_interval: '0.25s',
      resource_monitors: [{
        name: heap,
        typed_config: {
          '@type': 'type.googleapis.com/envoy.extensions.resource_monitors.fixed_heap.v3.FixedHeapConfig',
          // 80 % of the container's 256 MiB memory limit
          'max_heap_size_bytes': 214748364,
        },
      }],
      actions: [
        { name: 'envoy.overload_actions.shrink_heap', triggers: [{ name: heap, threshold: { value: 0.95 } }] },
        { name: 'envoy.overload_actions.stop_accepting_requests', triggers: [{ name: heap, threshold: { value: 0.98 } }] },
      ],
    },
  };
  return `${JSON.stringify(bootstrap, null, 2)}\n`;
}

/** A ConfigMap in its own group construct (`<id>/config`), and its checksum. */
function configMap(group: Construct, data: Record<string, string>): { cm: kplus.ConfigMap; checksum: string } {
  return { cm: new kplus.ConfigMap(group, 'config', { data }), checksum: checksum(data) };
}

/**
 * A Deployment of `app` with the log agent, the tracer and Envoy added by hand, legacy layout,
 * with the library's defaults. `ids` name the groups that own each sidecar's ConfigMap (the
 * construct ids the library variant gives its sidecar constructs, so the generated names match).
 */
export function handWrittenDeployment(
  scope: Construct,
  id: string,
  app: kplus.ContainerProps,
  ids: { logs: string; tracer: string; envoy: string },
  appPort: number,
): kplus.Deployment {
  const deployment = new kplus.Deployment(scope, id);
  const name = deployment.name;
  // The configs, one ConfigMap each (log agent, tracer, Envoy).
  const logsGroup = new Construct(scope, ids.logs);
  const logsConfig = configMap(logsGroup, { 'fluent-bit.conf': FLUENT_BIT_CONF });
  const tracerGroup = new Construct(scope, ids.tracer);
  const tracerConfig = configMap(tracerGroup, { 'config.yaml': otelConfig() });
  const envoyGroup = new Construct(scope, ids.envoy);
  const envoyConfig = configMap(envoyGroup, { 'envoy.json': envoyBootstrap(name, appPort) });

  const tools = kplus.Volume.fromEmptyDir(deployment, 'sidecar-tools', 'sidecar-tools', { sizeLimit: Size.mebibytes(8) });
  const toolsMount: kplus.VolumeMount = { volume: tools, path: '/sidecar-tools', readOnly: true };

  // Envoy: first container, holds the app until ready (postStart), drains on preStop.
  const envoyVolume = kplus.Volume.fromConfigMap(envoyGroup, 'volume', envoyConfig.cm, { name: 'envoy-config' });
  const post = (arg: string) => `${BUSYBOX} wget -q -T 2 -O /dev/null --post-data '' "${arg}"`;
  deployment.addContainer({
    name: 'envoy',
    image: 'envoyproxy/envoy:v1.40.0',
    imagePullPolicy: kplus.ImagePullPolicy.IF_NOT_PRESENT,
    command: ['/usr/local/bin/envoy'],
    args: [
      '--config-path', '/etc/envoy/config/envoy.json',
      '--drain-time-s', '5',
      '--drain-strategy', 'immediate',
      '--disable-hot-restart',
      '--concurrency', '2',
      '--log-level', 'info',
    ],
    ports: [
      { number: 10000, name: 'envoy-http', protocol: kplus.Protocol.TCP },
      { number: 15021, name: 'envoy-health', protocol: kplus.Protocol.TCP },
    ],
    readiness: httpProbe('/ready', 15021, 5, 3),
    startup: httpProbe('/ready', 15021, 1, 120),
    liveness: liveness('/ready', 15021),
    lifecycle: {
      postStart: shell(
        `i=0; until ${BUSYBOX} wget -q -T 1 -O /dev/null "$1"; do ` +
        `i=$((i+1)); if [ $i -ge "$2" ]; then exit 0; fi; ${BUSYBOX} sleep 1; done`,
        'http://127.0.0.1:15021/ready', '60',
      ),
      preStop: shell(`${post('$1')}; ${post('$2')}; ${BUSYBOX} sleep 10`,
        'http://127.0.0.1:9901/healthcheck/fail', 'http://127.0.0.1:9901/drain_listeners?inboundonly&graceful'),
    },
    resources: resources(100, 1000, 64, 256),
    securityContext: restricted(10101),
    volumeMounts: [{ volume: envoyVolume, path: '/etc/envoy/config', readOnly: true }, toolsMount],
  });

  // The app container, after Envoy: the shared log directory and the OTEL_* variables.
  // a size limit, so an app that never rotates cannot fill the node's disk (issue 11)
  const logs = kplus.Volume.fromEmptyDir(logsGroup, 'logs', 'log-agent-logs', { sizeLimit: Size.gibibytes(1) });
  const appContainer = deployment.addContainer(app);
  appContainer.mount('/var/log/app', logs);
  appContainer.env.addVariable('OTEL_EXPORTER_OTLP_ENDPOINT', value('http://127.0.0.1:4317'));
  appContainer.env.addVariable('OTEL_EXPORTER_OTLP_PROTOCOL', value('grpc'));
  // the construct id where cdk8s generated the object's name, as WithTracer does (the OTel operator's order)
  appContainer.env.addVariable('OTEL_SERVICE_NAME', value(id));
  appContainer.env.addVariable('OTEL_RESOURCE_ATTRIBUTES_POD_NAMESPACE', field(kplus.EnvFieldPaths.POD_NAMESPACE));
  appContainer.env.addVariable('OTEL_RESOURCE_ATTRIBUTES_NODE_NAME', field(kplus.EnvFieldPaths.NODE_NAME));
  appContainer.env.addVariable('OTEL_RESOURCE_ATTRIBUTES_POD_NAME', field(kplus.EnvFieldPaths.POD_NAME));
  appContainer.env.addVariable('OTEL_RESOURCE_ATTRIBUTES_POD_UID', field(kplus.EnvFieldPaths.POD_UID));
  appContainer.env.addVariable('OTEL_RESOURCE_ATTRIBUTES', value(
    'k8s.namespace.name=$(OTEL_RESOURCE_ATTRIBUTES_POD_NAMESPACE),k8s.node.name=$(OTEL_RESOURCE_ATTRIBUTES_NODE_NAME),' +
    'k8s.pod.name=$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME),k8s.pod.uid=$(OTEL_RESOURCE_ATTRIBUTES_POD_UID),' +
    `k8s.deployment.name=${encodeURIComponent(name)}`,
  ));

  // Fluent Bit.
  const logsConfigVolume = kplus.Volume.fromConfigMap(logsGroup, 'volume', logsConfig.cm, { name: 'log-agent-config' });
  // A plain delay: busybox sleep, no shell. Fluent Bit stops reading at SIGTERM: 2 s more for the app's last line.
  const sleep = (seconds: number) => kplus.Handler.fromCommand([BUSYBOX, 'sleep', String(seconds)]);
  deployment.addContainer({
    name: 'log-agent',
    image: 'fluent/fluent-bit:5.1.1',
    imagePullPolicy: kplus.ImagePullPolicy.IF_NOT_PRESENT,
    command: ['/fluent-bit/bin/fluent-bit'],
    args: ['--config', '/etc/log-agent/fluent-bit.conf'],
    envVariables: {
      POD_NAME: field(kplus.EnvFieldPaths.POD_NAME),
      POD_NAMESPACE: field(kplus.EnvFieldPaths.POD_NAMESPACE),
      NODE_NAME: field(kplus.EnvFieldPaths.NODE_NAME),
    },
    ports: [{ number: 2020, name: 'fb-http', protocol: kplus.Protocol.TCP }],
    startup: httpProbe('/api/v1/health', 2020, 1, 30),
    liveness: liveness('/api/v1/uptime', 2020),
    lifecycle: { preStop: sleep(12) },
    resources: resources(20, 200, 32, 128),
    securityContext: restricted(65532),
    volumeMounts: [
      { volume: logs, path: '/var/log/app' },
      { volume: logsConfigVolume, path: '/etc/log-agent', readOnly: true },
      toolsMount,
    ],
  });

  // OpenTelemetry Collector.
  const tracerVolume = kplus.Volume.fromConfigMap(tracerGroup, 'volume', tracerConfig.cm, { name: 'tracer-config' });
  deployment.addContainer({
    name: 'tracer',
    image: 'otel/opentelemetry-collector:0.165.0',
    imagePullPolicy: kplus.ImagePullPolicy.IF_NOT_PRESENT,
    args: ['--config=/etc/otelcol/config.yaml'],
    envVariables: {
      POD_NAMESPACE: field(kplus.EnvFieldPaths.POD_NAMESPACE),
      NODE_NAME: field(kplus.EnvFieldPaths.NODE_NAME),
      POD_NAME: field(kplus.EnvFieldPaths.POD_NAME),
      POD_UID: field(kplus.EnvFieldPaths.POD_UID),
      K8S_WORKLOAD_NAME: value(name),
      GOMEMLIMIT: value('102MiB'),
    },
    ports: [{ number: 13133, name: 'otel-health', protocol: kplus.Protocol.TCP }],
    startup: httpProbe('/', 13133, 1, 30),
    liveness: liveness('/', 13133),
    lifecycle: { preStop: sleep(10) },
    resources: resources(50, 500, 64, 128),
    securityContext: restricted(10001),
    volumeMounts: [{ volume: tracerVolume, path: '/etc/otelcol', readOnly: true }, toolsMount],
  });

  // busybox for the hooks (distroless agents have no shell).
  deployment.addInitContainer({
    name: 'sidecar-tools',
    image: 'busybox:1.36.1-musl',
    imagePullPolicy: kplus.ImagePullPolicy.IF_NOT_PRESENT,
    command: ['/bin/busybox', 'cp', '/bin/busybox', '/sidecar-tools/busybox'],
    resources: resources(10, 50, 16, 16),
    securityContext: restricted(65532),
    volumeMounts: [{ volume: tools, path: '/sidecar-tools' }],
  });
  for (const v of [logs, logsConfigVolume, tracerVolume, envoyVolume, tools]) deployment.addVolume(v);
  // The ephemeral-storage requests of the log agent (its disk buffer) and of the tools (their volume):
  // cdk8s-plus-27 writes ephemeral storage in whole GiB only, so by a JSON patch; its KubeDeployment
  // applies patches before it filters the object through its types (cdk8s#2172), which read a
  // quantity from an object's `value`, so the patch gives that shape.
  ApiObject.of(deployment).addJsonPatch(
    JsonPatch.add('/spec/template/spec/containers/2/resources/requests/ephemeral-storage', { value: '260Mi' }),
    JsonPatch.add('/spec/template/spec/initContainers/0/resources/requests/ephemeral-storage', { value: '8Mi' }),
  );

  // Roll the pods when a config changes.
  deployment.podMetadata.addAnnotation('checksum.sidecars.cdk8s.io/envoy', envoyConfig.checksum);
  deployment.podMetadata.addAnnotation('checksum.sidecars.cdk8s.io/log-agent', logsConfig.checksum);
  deployment.podMetadata.addAnnotation('checksum.sidecars.cdk8s.io/tracer', tracerConfig.checksum);
  // Each sidecar's stop time after its SIGTERM, as the library records it for `cdk8s-sidecars timeline`
  // (issue 40), so the timeline of this output shows no SIGKILL.
  deployment.podMetadata.addAnnotation('sidecars.cdk8s.io/stop-times', 'log-agent=6s,tracer=11s,envoy=1s');
  // The app's budget the grace was planned with, which the timeline reads back (issue 48): the default 10 s.
  deployment.podMetadata.addAnnotation('sidecars.cdk8s.io/app-shutdown-time', '10s');
  // Envoy is first in spec.containers: kubectl logs/exec without -c should reach the app (issue 16)
  deployment.podMetadata.addAnnotation('kubectl.kubernetes.io/default-container', 'app');
  return deployment;
}

/**
 * The Service in front of a hand-written Deployment: port 80 to Envoy's listener (what
 * `WithEnvoy.exposeVia()` adds to the library's Service).
 */
export function handWrittenService(scope: Construct, id: string, deployment: kplus.Deployment): kplus.Service {
  return new kplus.Service(scope, id, {
    selector: deployment,
    ports: [{ name: 'http', port: 80, targetPort: 10000, protocol: kplus.Protocol.TCP }],
  });
}
