/**
 * `LogAgent.otelCollector()` as synthesized: the collector's config.yaml (read back as YAML), the
 * container, the shutdown in both layouts and the refusals. The real collector runs every variant
 * in test/agents/otel-collector.agent-test.ts (`npm run test:agents`).
 */
import { Duration, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { parse as parseYaml } from 'yaml';
import { Images, LogAgent, LogOutput, SidecarMode, SidecarWarnings, WithLogAgent } from '../src';
import { containerOf, kplusWorkload, manifestOf, newChart, podSpecOf } from './util/fixtures';
import { expectValidManifests } from './util/k8s-schema';
import { agentArgvOf, sigtermHoldOf } from './util/sigterm-hold';

type Props = Partial<ConstructorParameters<typeof WithLogAgent>[2]>;

function synth(agent: LogAgent, extra: Props = {}, version = '1.29') {
  const { chart } = newChart();
  new WithLogAgent(chart, 'logs', { workload: kplusWorkload(chart, 'Deployment'), kubernetesVersion: version, agent, appShutdownTime: Duration.seconds(30), ...extra });
  const manifests = Testing.synth(chart);
  const workload = manifestOf(manifests, 'Deployment');
  const text: string = manifestOf(manifests, 'ConfigMap').data['config.yaml'];
  return { manifests, workload, sidecar: containerOf(workload, 'log-agent'), text, config: parseYaml(text) };
}

const loki = () => LogOutput.loki({ host: 'loki.monitoring', labels: { team: 'shop' }, tenantId: 'shop' });

test('stdout: file_log on the log files with offsets in file_storage, the debug exporter, the health_check probes', () => {
  const { config, sidecar, manifests } = synth(LogAgent.otelCollector(), { output: LogOutput.stdout(), logDirectory: '/var/log/app' });
  expectValidManifests(manifests, '1.29');
  expect(config.receivers).toEqual({
    file_log: {
      include: ['/var/log/app/*.log'],
      start_at: 'beginning',
      poll_interval: '200ms',
      max_log_size: '1MiB',
      storage: 'file_storage',
      include_file_path: true,
      resource: { 'k8s.namespace.name': '${env:POD_NAMESPACE}', 'k8s.node.name': '${env:NODE_NAME}', 'k8s.pod.name': '${env:POD_NAME}' },
    },
  });
  expect(config.extensions).toEqual({
    health_check: { endpoint: '0.0.0.0:13133', path: '/' },
    file_storage: { directory: '/var/log/app/.otel-collector', create_directory: true },
  });
  expect(config.exporters).toEqual({ debug: { verbosity: 'detailed', use_internal_logger: false } });
  expect(config.service.pipelines).toEqual({ logs: { receivers: ['file_log'], exporters: ['debug'] } });
  expect(sidecar.image).toBe(Images.OTEL_COLLECTOR_K8S);
  expect(agentArgvOf(sidecar)).toEqual(['/otelcol-k8s', '--config', '/etc/log-agent/config.yaml']);
  expect(sidecar.startupProbe.httpGet).toEqual({ path: '/', port: 13133 });
  expect(sidecar.livenessProbe.httpGet).toEqual({ path: '/', port: 13133 });
  expect(sidecar.securityContext).toMatchObject({ runAsUser: 10001, runAsNonRoot: true, readOnlyRootFilesystem: true });
});

test('loki: otlp_http to Loki\'s OTLP endpoint, the labels as resource attributes, the tenant header, a persistent queue of a quarter of the log volume', () => {
  const { config, sidecar, text } = synth(LogAgent.otelCollector({ exportTimeout: Duration.seconds(8) }), { output: loki() });
  expect(config.exporters).toEqual({
    'otlp_http/loki': {
      endpoint: 'http://loki.monitoring:3100/otlp',
      headers: { 'X-Scope-OrgID': 'shop' },
      timeout: '8s',
      // a quarter of the log volume (1 GiB by default)
      sending_queue: { enabled: true, storage: 'file_storage', sizer: 'bytes', queue_size: 256 * 1024 * 1024, num_consumers: 1 },
      retry_on_failure: { enabled: true, initial_interval: '1s', max_interval: '10s', max_elapsed_time: '0s' },
    },
  });
  expect(config.receivers.file_log.resource.team).toBe('shop');
  expect(config.service.pipelines.logs.exporters).toEqual(['otlp_http/loki']);
  // every string double-quoted: no value reads as another type
  expect(text).toContain('"sizer": "bytes"');
  // the queue and the offsets (4 MiB)
  expect(sidecar.resources.requests['ephemeral-storage']).toBe('260Mi');
});

test('every $ of a value is doubled: the collector reads $$ as one $', () => {
  const { config } = synth(LogAgent.otelCollector(), { output: LogOutput.loki({ host: 'loki', labels: { cost: 'a$$b$x' } }) });
  expect(config.receivers.file_log.resource.cost).toBe('a$$$$b$$x');
});

test('loki over TLS: https', () => {
  const { config } = synth(LogAgent.otelCollector(), { output: LogOutput.loki({ host: 'loki', port: 443, tls: true }) });
  expect(config.exporters['otlp_http/loki'].endpoint).toBe('https://loki:443/otlp');
});

test('captureStdout and podLogs: a file_log receiver each, the kubelet\'s CRI lines through the container parser', () => {
  const { config, sidecar } = synth(LogAgent.otelCollector(), { output: LogOutput.stdout(), captureStdout: { command: ['/app/run'] }, podLogs: {} });
  expect(Object.keys(config.receivers)).toEqual(['file_log', 'file_log/stdout', 'file_log/pod']);
  expect(config.receivers['file_log/pod'].include).toEqual(['${env:POD_LOG_PATH}']);
  expect(config.receivers['file_log/pod'].operators).toEqual([{ type: 'container', add_metadata_from_filepath: false }]);
  expect(config.service.pipelines.logs.receivers).toEqual(['file_log', 'file_log/stdout', 'file_log/pod']);
  expect(sidecar.env.map((e: any) => e.name)).toContain('POD_LOG_PATH');
});

test('shutdown: native holds SIGTERM 1 s (a poll and the flush period), then one export attempt and the exit', () => {
  const native = synth(LogAgent.otelCollector(), { output: loki() }, '1.29');
  expect(sigtermHoldOf(native.sidecar)).toBe(1);
  // 30 s app + 1 s hold + 5 s export attempt + 1 s exit
  expect(podSpecOf(native.workload).terminationGracePeriodSeconds).toBe(37);
  const stdout = synth(LogAgent.otelCollector(), { output: LogOutput.stdout() }, '1.29');
  expect(podSpecOf(stdout.workload).terminationGracePeriodSeconds).toBe(32);
  const legacy = synth(LogAgent.otelCollector(), { output: loki(), mode: SidecarMode.LEGACY }, '1.30');
  expect(sigtermHoldOf(legacy.sidecar)).toBe(0);
  expect(podSpecOf(legacy.workload).terminationGracePeriodSeconds).toBe(37);
});

test('outputs the collector has no exporter for are refused with the construct path and the agents that ship them', () => {
  const ref = (key: string) => ({ secret: kplus.Secret.fromSecretName(newChart().chart, `s-${key}`, 's'), key });
  for (const [name, output] of [
    ['http', () => LogOutput.http({ host: 'logs' })],
    ['elasticsearch', () => LogOutput.elasticsearch({ host: 'es' })],
    ['opensearch', () => LogOutput.opensearch({ host: 'os' })],
    ['forward', () => LogOutput.forward({ host: 'fluentd' })],
  ] as const) {
    expect(() => synth(LogAgent.otelCollector(), { output: output() })).toThrow(
      new RegExp(`^WithLogAgent 'test/logs': LogAgent\\.otelCollector\\(\\) cannot use LogOutput\\.${name}\\(\\).*keep LogOutput\\.${name}\\(\\) with LogAgent\\.`),
    );
  }
  expect(() => synth(LogAgent.otelCollector(), { output: LogOutput.loki({ host: 'loki', basicAuth: { username: ref('u'), password: ref('p') } }) }))
    .toThrow(/^WithLogAgent 'test\/logs'.*basicAuth.*leave basicAuth out/);
});

test('the factory checks its options before any file is written; another release is a warning', () => {
  expect(() => LogAgent.otelCollector({ healthPort: 80 })).toThrow(/LogAgent\.otelCollector\(\).*healthPort/);
  expect(() => LogAgent.otelCollector({ exportTimeout: Duration.seconds(0) })).toThrow(/LogAgent\.otelCollector\(\).*exportTimeout/);
  expect(() => LogAgent.otelCollector({ image: 'not an image' })).toThrow(/LogAgent\.otelCollector\(\).*image/);
  const { app, chart } = newChart();
  new WithLogAgent(chart, 'logs', {
    workload: kplusWorkload(chart, 'Deployment'),
    kubernetesVersion: '1.29',
    output: LogOutput.stdout(),
    agent: LogAgent.otelCollector({ image: 'otel/opentelemetry-collector-k8s:0.149.0' }),
  });
  const write = process.stderr.write;
  process.stderr.write = (() => true) as any;
  try {
    app.synth();
  } finally {
    process.stderr.write = write;
  }
  const warnings = SidecarWarnings.of(app);
  expect(warnings).toHaveLength(1);
  expect(warnings[0]).toContain("image 'otel/opentelemetry-collector-k8s:0.149.0' is OpenTelemetry Collector 0.149.0, outside");
  expect(warnings[0]).toContain('OpenTelemetry Collector 0.150.0 up to, not including, 0.166.0');
});
