/**
 * Issue 25, point 2, for Fluentd, Vector, Envoy and the collector: an image of the user's own outside the release
 * range the rendered config was written for (src/facts/images.ts `releases`), or one whose tag names no
 * release, is a warning at synthesis naming the range (the mechanism of test/fluent-bit-survival.test.ts).
 */
import * as kplus from 'cdk8s-plus-27';
import { Images, LogAgent, LogOutput, SidecarWarnings, WithEnvoy, WithLogAgent, WithTracer } from '../src';
import { APP_CONTAINER, kplusWorkload, newChart } from './util/fixtures';

function warningsOf(build: (chart: any) => void): string[] {
  const { app, chart } = newChart();
  build(chart);
  const write = process.stderr.write;
  process.stderr.write = (() => true) as any;
  try {
    app.synth();
  } finally {
    process.stderr.write = write;
  }
  return SidecarWarnings.of(app);
}

const logAgent = (agent: LogAgent) => warningsOf(chart => new WithLogAgent(chart, 'logs', {
  workload: kplusWorkload(chart, 'Deployment'), kubernetesVersion: '1.30', agent, output: LogOutput.http({ host: 'logs.example.com' }),
}));
const envoy = (image?: string) => warningsOf(chart => new WithEnvoy(chart, 'envoy', {
  workload: new kplus.Deployment(chart, 'web', {
    containers: [{ ...APP_CONTAINER, portNumber: undefined, ports: [{ number: 8080 }], readiness: kplus.Probe.fromCommand(['/ready']) }],
  }),
  kubernetesVersion: '1.30',
  appPort: 8080,
  ...(image === undefined ? {} : { image }),
}));

describe('Fluentd 1.19.3 up to 1.20.0', () => {
  test.each([undefined, 'fluent/fluentd:v1.19.3-debian-2.2', 'fluent/fluentd:v1.19.9-debian-1.0'])('%s: none', (image) => {
    expect(logAgent(LogAgent.fluentd(image === undefined ? {} : { image }))).toEqual([]);
  });
  test.each([
    ['fluent/fluentd:v1.20.0-debian-1.0', 'is Fluentd 1.20.0, outside'],
    ['fluent/fluentd:latest', 'names no Fluentd release in its tag'],
    // the tag of an image of your own names your release, not Fluentd's
    ['registry.local/fluentd-plugins:1.0.0', 'names no Fluentd release in its tag'],
  ])('%s: a warning naming the range', (image, what) => {
    const w = logAgent(LogAgent.fluentd({ image }));
    expect(w).toHaveLength(1);
    expect(w[0]).toContain(`WithLogAgent 'test/logs': image '${image}' ${what}`);
    expect(w[0]).toContain('Fluentd 1.19.3 up to, not including, 1.20.0');
    expect(w[0]).toContain(`use ${Images.FLUENTD}`);
  });
});

describe('Vector 0.54.0 up to, not including, 0.58.0', () => {
  test.each([undefined, 'timberio/vector:0.54.0-debian', 'timberio/vector:0.55.0-distroless-libc', 'timberio/vector:0.57.0-alpine'])('%s: none', (image) => {
    expect(logAgent(LogAgent.vector(image === undefined ? {} : { image }))).toEqual([]);
  });
  test.each([
    ['timberio/vector:0.53.0-distroless-libc', 'is Vector 0.53.0, outside'],
    ['timberio/vector:0.58.0-distroless-libc', 'is Vector 0.58.0, outside'],
    ['timberio/vector', 'names no Vector release in its tag'],
  ])('%s: a warning naming the range', (image, what) => {
    const w = logAgent(LogAgent.vector({ image }));
    expect(w).toHaveLength(1);
    expect(w[0]).toContain(what);
    expect(w[0]).toContain('Vector 0.54.0 up to, not including, 0.58.0');
    expect(w[0]).toContain(`use ${Images.VECTOR}`);
  });
});

describe('Envoy 1.37.0 up to, not including, 1.41.0 (each line run with its real binary)', () => {
  test.each([undefined, 'envoyproxy/envoy:v1.37.0', 'envoyproxy/envoy:v1.37.11', 'envoyproxy/envoy:v1.38.3', 'envoyproxy/envoy:v1.40.2'])('%s: none', (image) => {
    expect(envoy(image)).toEqual([]);
  });
  test.each([
    ['envoyproxy/envoy:v1.36.4', 'is Envoy 1.36.4, outside'],
    ['envoyproxy/envoy:v1.41.0', 'is Envoy 1.41.0, outside'],
    ['envoyproxy/envoy:latest', 'names no Envoy release in its tag'],
  ])('%s: a warning naming the range', (image, what) => {
    const w = envoy(image);
    expect(w).toHaveLength(1);
    expect(w[0]).toContain(`WithEnvoy 'test/envoy': image '${image}' ${what}`);
    expect(w[0]).toContain('Envoy 1.37.0 up to, not including, 1.41.0');
    expect(w[0]).toContain(`use ${Images.ENVOY}`);
  });
});

const tracer = (image?: string) => warningsOf(chart => new WithTracer(chart, 'tracer', {
  workload: kplusWorkload(chart, 'Deployment'), kubernetesVersion: '1.30', exporterEndpoint: 'otel-gateway.observability.svc:4317', ...(image ? { image } : {}),
}));

describe('the OpenTelemetry Collector 0.144.0 up to, not including, 0.166.0 (the exporter type otlp_grpc)', () => {
  test.each([
    undefined, 'otel/opentelemetry-collector:0.144.0', 'otel/opentelemetry-collector-contrib:0.159.0', 'otel/opentelemetry-collector-contrib:0.165.1',
    'ghcr.io/open-telemetry/opentelemetry-collector-releases/opentelemetry-collector-k8s:0.150.1',
  ])('%s: none', (image) => {
    expect(tracer(image)).toEqual([]);
  });
  test.each([
    // before 0.144.0 the exporter is `otlp` only: the collector refuses the config at start
    ['otel/opentelemetry-collector:0.143.0', 'is OpenTelemetry Collector 0.143.0, outside'],
    ['otel/opentelemetry-collector-contrib:0.166.0', 'is OpenTelemetry Collector 0.166.0, outside'],
    ['otel/opentelemetry-collector:latest', 'names no OpenTelemetry Collector release in its tag'],
    // the tag of an image of your own names your build, not the collector's release
    ['registry.local/otelcol-custom:1.0.0', 'names no OpenTelemetry Collector release in its tag'],
  ])('%s: a warning naming the range', (image, what) => {
    const w = tracer(image);
    expect(w).toHaveLength(1);
    expect(w[0]).toContain(`WithTracer 'test/tracer': image '${image}' ${what}`);
    expect(w[0]).toContain('OpenTelemetry Collector 0.144.0 up to, not including, 0.166.0');
    expect(w[0]).toContain(`use ${Images.OTEL_COLLECTOR}`);
  });
});
