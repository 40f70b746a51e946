/**
 * The library records each sidecar's stop time in its pod template (issue 40; annotation
 * sidecars.cdk8s.io/stop-times, docs/shutdown.md), and `SidecarTimeline.ofManifest` (so
 * `cdk8s-sidecars timeline`) reads it: the library's own output is never timed as SIGKILLed for
 * want of a stop time, in either layout, for a Deployment, a StatefulSet and a Job. Without the
 * annotation (what the timeline had before) the same manifests show killed sidecars: the worst
 * case, said as an assumption.
 *
 * The stop times recorded are checked against the constructs' own timeline (`SidecarTimeline.of`,
 * which reads the sidecars' shutdown models), the expected names against the constructs used.
 */
import { Duration, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { LogAgent, SidecarMode, SidecarTimeline, WithEnvoy, WithLogAgent, WithTracer } from '../src';
import { kplusWorkload, manifestOf, newChart } from './util/fixtures';
import { STOP_TIMES_ANNOTATION } from '../src/facts/annotations';

const ENV = 'CDK8S_SIDECARS_KUBERNETES_VERSION';
const savedEnv = process.env[ENV];
beforeAll(() => { delete process.env[ENV]; });
afterAll(() => { if (savedEnv !== undefined) process.env[ENV] = savedEnv; });

type Kind = 'Deployment' | 'StatefulSet' | 'Job';

function synth(kind: Kind, version: string, mode?: SidecarMode) {
  const { chart } = newChart();
  // behind Envoy the app declares its port without portNumber (cdk8s-plus would add a TCP
  // startupProbe on the pod IP, which WithEnvoy refuses)
  const workload = kind === 'Deployment'
    ? new kplus.Deployment(chart, 'web', { containers: [{ name: 'app', image: 'ghcr.io/example/app:1.0.0', ports: [{ number: 8080 }] }] })
    : kplusWorkload(chart, kind);
  const common = { workload, kubernetesVersion: version, ...(mode ? { mode } : {}) };
  const legacyJob = kind === 'Job' && (mode === SidecarMode.LEGACY || version === '1.27');
  new WithLogAgent(chart, 'logs', { ...common, agent: LogAgent.fluentBit(), ...(legacyJob ? { allowLegacyOnJob: true } : {}) });
  new WithTracer(chart, 'tracer', { ...common, exporterEndpoint: 'otel-collector.observability:4317', ...(legacyJob ? { allowLegacyOnJob: true } : {}) });
  const names = ['log-agent', 'tracer'];
  if (kind === 'Deployment') {
    new WithEnvoy(chart, 'envoy', { ...common, appPort: 8080 });
    names.push('envoy');
  }
  const manifest = manifestOf(Testing.synth(chart), kind);
  return { manifest, names, of: SidecarTimeline.of(workload) };
}

const template = (m: any) => m.spec.template;
const entries = (t: SidecarTimeline) => [...t.termination, ...t.completion];

const CASES: Array<[Kind, string, SidecarMode | undefined]> = [
  ['Deployment', '1.29', undefined], ['Deployment', '1.33', undefined], ['Deployment', '1.27', undefined],
  ['Deployment', '1.29', SidecarMode.LEGACY], ['StatefulSet', '1.30', undefined], ['StatefulSet', '1.27', undefined],
  ['Job', '1.29', undefined], ['Job', '1.27', undefined],
];

describe.each(CASES)('%s on %s (mode %s)', (kind, version, mode) => {
  test('the pod template records each sidecar\'s stop time, in pod order, the same on every synth', () => {
    const a = synth(kind, version, mode);
    const recorded: string = template(a.manifest).metadata.annotations[STOP_TIMES_ANNOTATION];
    expect(recorded).toBe(synth(kind, version, mode).manifest.spec.template.metadata.annotations[STOP_TIMES_ANNOTATION]);
    const pairs = recorded.split(',').map(e => e.split('='));
    expect(pairs.map(([n]) => n).sort()).toEqual([...a.names].sort());
    // each value is the sidecar's stop time as the constructs' own timeline counts it (SIGTERM to exit)
    for (const [name, value] of pairs) {
      const stop = a.of.termination.find(e => e.name === name)!;
      expect([name, value]).toEqual([name, `${stop.exitSeconds - stop.sigtermSeconds}s`]);
    }
  });

  test('ofManifest (and so `cdk8s-sidecars timeline`) kills no sidecar of the library\'s output; without the annotation it did', () => {
    const { manifest, names } = synth(kind, version, mode);
    const timeline = SidecarTimeline.ofManifest(manifest, { kubernetesVersion: version });
    expect(entries(timeline).filter(e => e.killed).map(e => e.name)).toEqual([]);
    expect(timeline.assumptions.join('\n')).toContain(`annotation ${STOP_TIMES_ANNOTATION}`);
    expect(timeline.assumptions.join('\n')).not.toContain('its stop time is not known');
    // the same manifest as the timeline read it before the annotation existed: the worst case
    const bare = structuredClone(manifest);
    delete template(bare).metadata.annotations[STOP_TIMES_ANNOTATION];
    const before = SidecarTimeline.ofManifest(bare, { kubernetesVersion: version });
    const legacy = version === '1.27' || mode === SidecarMode.LEGACY;
    if (!legacy) {
      // native sidecars without a stop time run until the kubelet kills them
      expect(entries(before).filter(e => e.killed).map(e => e.name)).toEqual(expect.arrayContaining(names));
      expect(before.assumptions.join('\n')).toContain('its stop time is not known: it runs until it is killed');
    } else {
      // legacy sidecars in spec.containers: without the annotation they were taken for app containers
      expect(before.termination.filter(e => names.includes(e.name)).map(e => e.role)).toEqual(names.map(() => 'app'));
      expect(timeline.termination.filter(e => names.includes(e.name)).map(e => e.role)).toEqual(names.map(() => 'legacy sidecar'));
    }
  });
});

test('a flag wins over the annotation; a malformed annotation is an error naming it', () => {
  const { manifest } = synth('Deployment', '1.29');
  expect(entries(SidecarTimeline.ofManifest(manifest, { kubernetesVersion: '1.29' })).some(e => e.killed)).toBe(false);
  const given = SidecarTimeline.ofManifest(manifest, { kubernetesVersion: '1.29', stopTimes: { 'log-agent': Duration.seconds(1000) } });
  expect(entries(given).filter(e => e.killed).map(e => e.name)).toEqual(['log-agent']);
  const bad = structuredClone(manifest);
  template(bad).metadata.annotations[STOP_TIMES_ANNOTATION] = 'log-agent=7,tracer';
  expect(() => SidecarTimeline.ofManifest(bad, { kubernetesVersion: '1.29' })).toThrow(
    `SidecarTimeline.ofManifest: the pod template's annotation ${STOP_TIMES_ANNOTATION} is "log-agent=7,tracer"; ` +
    'cdk8s-sidecars writes it as name=Ns entries separated by commas (e.g. "log-agent=7s,envoy=20s"). Fix or remove it.');
});
