/**
 * Issue 28: WithMeshProxy for six more injectors (OpenTelemetry operator, Consul, Kuma, GKE Cloud
 * Storage FUSE, Vault agent injector, Datadog). The expected annotations are written by hand from
 * the injectors' sources; the layouts and stop times are checked by feeding the synthesized pod
 * to the webhooks' behaviour (test/util/injectors.ts, written from their sources) and the
 * kubelet's termination (test/util/kubelet-termination.ts), not from the library's formulas.
 */
import { Duration, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { engineSpec, kplusWorkload, newChart, podMetadataOf, podSpecOf } from './util/fixtures';
import { Cluster, injectConsul, injectDapr, injectDatadog, injectGcsFuse, injectKuma, injectOtelOperator, injectVault } from './util/injectors';
import { expectValidManifests } from './util/k8s-schema';
import { cutShort, simulateTermination } from './util/kubelet-termination';
import { Injection } from './util/mesh-injection';
// Imported module by module (not from '../src'), so that other constructs in progress cannot break this suite.
import { InjectedProxy, MeshKind } from '../src/engine/injected';
import { applySidecars } from '../src/engine/pod-template';
import { RANK } from '../src/engine/spec';
import { Json } from '../src/private/json';
import { SidecarLayout, SidecarMode } from '../src/target/capabilities';
import { SidecarTimeline } from '../src/timeline';
import { SidecarWarnings } from '../src/warnings';
import { WithEnvoy } from '../src/with-envoy';
import { WithLogAgent } from '../src/with-log-agent';
import { Mesh, WithMeshProxy } from '../src/with-mesh';
import { WithTracer } from '../src/with-tracer';

const NEW: Mesh[] = [Mesh.OPENTELEMETRY_OPERATOR, Mesh.CONSUL, Mesh.KUMA, Mesh.GCS_FUSE, Mesh.VAULT_AGENT, Mesh.DATADOG, Mesh.DAPR];
const LEGACY_ONLY: Mesh[] = [Mesh.VAULT_AGENT, Mesh.DATADOG];

interface Setup {
  readonly version: string;
  readonly mesh: Mesh;
  readonly kind?: 'Deployment' | 'Job';
  /** the log agent's mode (Vault and Datadog on 1.29+: legacy) */
  readonly logMode?: SidecarMode;
  readonly meshMode?: SidecarMode;
  readonly injectorLayout?: SidecarLayout;
  readonly gate?: boolean;
  readonly allowLegacyOnJob?: boolean;
  readonly extra?: (chart: any, workload: kplus.AbstractPod) => void;
}

function build(s: Setup) {
  const { chart } = newChart();
  const workload = kplusWorkload(chart, s.kind ?? 'Deployment');
  const common = { kubernetesVersion: s.version, ...(s.gate ? { sidecarContainersGate: true } : {}) };
  new WithLogAgent(chart, 'logs', { workload, ...common, ...(s.logMode ? { mode: s.logMode } : {}) });
  new WithMeshProxy(chart, 'mesh', {
    workload,
    mesh: s.mesh,
    ...common,
    ...(s.meshMode ? { mode: s.meshMode } : {}),
    ...(s.injectorLayout ? { injectorLayout: s.injectorLayout } : {}),
    ...(s.allowLegacyOnJob !== undefined ? { allowLegacyOnJob: s.allowLegacyOnJob } : {}),
  });
  s.extra?.(chart, workload);
  return chart;
}

function synth(s: Setup): Json {
  const chart = build(s);
  return Testing.synth(chart).find(m => m.kind === (s.kind ?? 'Deployment'));
}

/** the library's layout for the log agent where the injector cannot follow a native one */
function logModeFor(mesh: Mesh, version: string): SidecarMode | undefined {
  return LEGACY_ONLY.includes(mesh) && version !== '1.27' ? SidecarMode.LEGACY : undefined;
}

describe('annotations written in both layouts (1.27 legacy, 1.29 native): app shutdown 10 s, proxy stop 5 s', () => {
  // Written by hand from the annotations in each injector's source (test/util/injectors.ts);
  // the log agent's native stop time enters Kuma's drain (its preStop drains from the start):
  // 8 s, WithLogAgent's documented native stop with the stdout output: its SIGTERM held 2 s (issue 51),
  // then Grace 5 s and the exit (src/log-agent.ts, `grace`).
  const LOG_AGENT_STOP = 8;
  test.each([
    [Mesh.CONSUL, '1.27', {
      'consul.hashicorp.com/enable-consul-dataplane-as-sidecar': 'false',
      'consul.hashicorp.com/enable-sidecar-proxy-lifecycle': 'true',
      'consul.hashicorp.com/sidecar-proxy-lifecycle-shutdown-grace-period-seconds': '15',
    }],
    [Mesh.CONSUL, '1.29', {
      'consul.hashicorp.com/enable-consul-dataplane-as-sidecar': 'true',
      'consul.hashicorp.com/enable-sidecar-proxy-lifecycle': 'true',
      'consul.hashicorp.com/sidecar-proxy-lifecycle-shutdown-grace-period-seconds': '5',
    }],
    [Mesh.KUMA, '1.27', { 'kuma.io/sidecar-drain-time': '15s', 'kuma.io/wait-for-dataplane-ready': 'enabled' }],
    [Mesh.KUMA, '1.29', { 'kuma.io/sidecar-drain-time': `${10 + LOG_AGENT_STOP + 5}s`, 'kuma.io/wait-for-dataplane-ready': 'enabled' }],
    [Mesh.GCS_FUSE, '1.27', { 'gke-gcsfuse/enable-native-sidecar': 'false' }],
    [Mesh.GCS_FUSE, '1.29', { 'gke-gcsfuse/enable-native-sidecar': 'true' }],
    // issue 37: Dapr 1.18 (dapr#9450)
    [Mesh.DAPR, '1.27', { 'dapr.io/enable-native-sidecar': 'false', 'dapr.io/graceful-shutdown-seconds': '15' }],
    [Mesh.DAPR, '1.29', { 'dapr.io/enable-native-sidecar': 'true', 'dapr.io/graceful-shutdown-seconds': '5' }],
  ])('%s on %s', (mesh, version, expected) => {
    const annotations = podMetadataOf(synth({ version, mesh })).annotations;
    expect(annotations).toMatchObject(expected);
  });

  test.each(NEW.flatMap(m => [[m, '1.27'], [m, '1.29']] as Array<[Mesh, string]>))('%s on %s writes no key of another injector, and no key at all for those that read none', (mesh, version) => {
    const annotations = podMetadataOf(synth({ version, mesh, logMode: logModeFor(mesh, version) })).annotations ?? {};
    const vendorKeys = Object.keys(annotations).filter(k => !k.includes('sidecars.cdk8s.io/') && !k.startsWith('kubectl.kubernetes.io/'));
    const prefix: Record<string, string | undefined> = { CONSUL: 'consul.hashicorp.com/', KUMA: 'kuma.io/', GCS_FUSE: 'gke-gcsfuse/', DAPR: 'dapr.io/' };
    const mine = prefix[mesh];
    if (mine === undefined) expect(vendorKeys).toEqual([]);
    else for (const k of vendorKeys) expect(k.startsWith(mine)).toBe(true);
  });

  test('the native-sidecar marker lists the injected native proxy where its injector puts it, and no legacy-only or uncertain one', () => {
    const marker = (mesh: Mesh, version: string) => podMetadataOf(synth({ version, mesh, logMode: logModeFor(mesh, version) })).annotations['sidecars.cdk8s.io/native-sidecars'];
    expect(marker(Mesh.GCS_FUSE, '1.29')).toBe('gke-gcsfuse-sidecar,log-agent');
    expect(marker(Mesh.CONSUL, '1.29')).toBe('log-agent,consul-dataplane');
    expect(marker(Mesh.OPENTELEMETRY_OPERATOR, '1.29')).toBe('log-agent,otc-container');
    // Dapr appends daprd after every init container ("/-", sidecar_patcher.go)
    expect(marker(Mesh.DAPR, '1.29')).toBe('log-agent,daprd');
    // Kuma's layout depends on its control plane: not marked (the guard would refuse a pod for the cluster's choice)
    expect(marker(Mesh.KUMA, '1.29')).toBe('log-agent');
    expect(marker(Mesh.VAULT_AGENT, '1.29')).toBeUndefined();
  });
});

describe('the injector, fed the synthesized pod, uses the library\'s layout', () => {
  // A cluster whose every component is at the target (the target is the lowest of them).
  const at = (minor: number): Cluster => ({ apiServerMinor: minor, kubeletMinor: minor });
  test.each(['1.27', '1.29', '1.33'])('on %s', version => {
    const minor = Number(version.split('.')[1]);
    const native = minor >= 29;
    for (const mesh of NEW) {
      const d = synth({ version, mesh, logMode: logModeFor(mesh, version) });
      const meta = podMetadataOf(d);
      const podSpec = podSpecOf(d);
      const injected: Record<string, () => Injection> = {
        OPENTELEMETRY_OPERATOR: () => injectOtelOperator(meta, podSpec, at(minor), 5),
        CONSUL: () => injectConsul(meta, podSpec),
        KUMA: () => injectKuma(meta, podSpec, at(minor)),
        GCS_FUSE: () => injectGcsFuse(meta, podSpec, at(minor), 5),
        VAULT_AGENT: () => injectVault(meta, podSpec, 5),
        DATADOG: () => injectDatadog(meta, podSpec, 5),
        DAPR: () => injectDapr(meta, podSpec),
      };
      const r = injected[mesh]();
      expect([mesh, r.native]).toEqual([mesh, LEGACY_ONLY.includes(mesh) ? false : native]);
      // the library's own sidecar and the injected one in the same layout
      const logNative = (r.spec.initContainers ?? []).some((c: Json) => c.name === 'log-agent' && c.restartPolicy === 'Always');
      expect([mesh, logNative]).toEqual([mesh, r.native]);
    }
  });

  test('Kuma holds the app behind a blocking postStart of its proxy in the legacy layout (first in containers), and not with holdApplication: false', () => {
    for (const holdApplication of [true, false]) {
      const { chart } = newChart();
      const workload = kplusWorkload(chart, 'Deployment');
      new WithMeshProxy(chart, 'mesh', { workload, mesh: Mesh.KUMA, kubernetesVersion: '1.27', holdApplication });
      const d = Testing.synth(chart).find(m => m.kind === 'Deployment');
      const r = injectKuma(podMetadataOf(d), podSpecOf(d), { apiServerMinor: 27, kubeletMinor: 27 });
      expect(r.spec.containers[0].name).toBe('kuma-sidecar');
      expect(r.spec.containers[0].lifecycle?.postStart !== undefined).toBe(holdApplication);
    }
  });

  test('where each one puts its native container: Kuma and GCS FUSE before the library\'s sidecars, the operator and Consul after every init container', () => {
    const names = (r: Injection) => r.spec.initContainers.map((c: Json) => c.name);
    const d = (mesh: Mesh) => synth({ version: '1.29', mesh });
    const at29: Cluster = { apiServerMinor: 29, kubeletMinor: 29 };
    expect(names(injectKuma(podMetadataOf(d(Mesh.KUMA)), podSpecOf(d(Mesh.KUMA)), at29))).toEqual(['kuma-init', 'kuma-sidecar', 'sidecar-tools', 'log-agent']);
    expect(names(injectGcsFuse(podMetadataOf(d(Mesh.GCS_FUSE)), podSpecOf(d(Mesh.GCS_FUSE)), at29, 5))).toEqual(['gke-gcsfuse-sidecar', 'sidecar-tools', 'log-agent']);
    expect(names(injectConsul(podMetadataOf(d(Mesh.CONSUL)), podSpecOf(d(Mesh.CONSUL))))).toEqual(['sidecar-tools', 'log-agent', 'consul-connect-inject-init', 'consul-dataplane']);
    expect(names(injectOtelOperator(podMetadataOf(d(Mesh.OPENTELEMETRY_OPERATOR)), podSpecOf(d(Mesh.OPENTELEMETRY_OPERATOR)), at29, 5))).toEqual(['sidecar-tools', 'log-agent', 'otc-container']);
  });
});

describe('port collisions with the injected container', () => {
  test('WithEnvoy\'s admin port 9901 is Kuma\'s Envoy admin', () => {
    expect(() => synth({
      version: '1.29',
      mesh: Mesh.KUMA,
      injectorLayout: SidecarLayout.NATIVE,
      extra: (chart, workload) => new WithEnvoy(chart, 'envoy', { workload, kubernetesVersion: '1.29', appPort: 8080, healthPort: 15022 }),
    })).toThrow(/WithMeshProxy 'test\/mesh': port 9901 is bound by the injected Kuma proxy \('kuma-sidecar', Envoy admin\) and also by sidecar 'envoy' \(WithEnvoy 'test\/envoy'\).*Give WithEnvoy 'test\/envoy' another port/s);
  });

  test('WithTracer\'s OTLP receiver and the OpenTelemetry operator\'s collector', () => {
    expect(() => synth({
      version: '1.29',
      mesh: Mesh.OPENTELEMETRY_OPERATOR,
      extra: (chart, workload) => new WithTracer(chart, 'tracer', { workload, kubernetesVersion: '1.29', exporterEndpoint: 'collector.observability:4317' }),
    })).toThrow(/port 4317 is bound by the injected OpenTelemetry operator proxy \('otc-container', OTLP gRPC receiver/);
  });

  test.each([
    [Mesh.CONSUL, 20000, /port 20000 is bound by the injected Consul proxy \('consul-dataplane', inbound\) and also by container 'app'.*Move the app's port 20000/s],
    [Mesh.DATADOG, 8126, /port 8126 is bound by the injected Datadog admission controller \(agent sidecar\) proxy \('datadog-agent-injected', APM receiver\)/],
    [Mesh.VAULT_AGENT, 8200, /port 8200 is bound by the injected Vault agent injector proxy \('vault-agent', agent cache listener/],
  ])('an app port %s reserves (%s)', (mesh, port, message) => {
    const { chart } = newChart();
    const workload = new kplus.Deployment(chart, 'web', { containers: [{ name: 'app', image: 'app:1', portNumber: port, securityContext: { user: 1000 } }] });
    new WithMeshProxy(chart, 'mesh', { workload, mesh, kubernetesVersion: '1.27' });
    expect(() => Testing.synth(chart)).toThrow(message);
  });

  test('a container named like the one an injector adds', () => {
    const { chart } = newChart();
    const workload = new kplus.Deployment(chart, 'web', { containers: [{ name: 'vault-agent', image: 'app:1', portNumber: 8080, securityContext: { user: 1000 } }] });
    new WithMeshProxy(chart, 'mesh', { workload, mesh: Mesh.VAULT_AGENT, kubernetesVersion: '1.27' });
    expect(() => Testing.synth(chart)).toThrow(/container name 'vault-agent' on Deployment '.*' is the name of a container the Vault agent injector injector adds/);
  });
});

describe('one layout per pod', () => {
  test.each(LEGACY_ONLY)('%s next to native sidecars is refused; next to legacy ones it is not', mesh => {
    expect(() => synth({ version: '1.29', mesh })).toThrow(
      /the .* container is injected in the legacy layout but WithLogAgent 'test\/logs' is native on Deployment .*injects in the legacy layout only .*: give the workload's sidecar constructs `mode: SidecarMode.LEGACY`/s,
    );
    expect(() => synth({ version: '1.29', mesh, logMode: SidecarMode.LEGACY })).not.toThrow();
    expect(() => synth({ version: '1.27', mesh })).not.toThrow();
  });

  test('GCS FUSE on 1.28 with the gate: the driver injects legacy (it needs every component at 1.29), the library native: refused', () => {
    expect(() => synth({ version: '1.28', mesh: Mesh.GCS_FUSE, gate: true })).toThrow(
      /GKE Cloud Storage FUSE container is injected in the legacy layout but WithLogAgent 'test\/logs' is native.*target 1.29\+, or give the workload's sidecar constructs `mode: SidecarMode.LEGACY`/s,
    );
    // and the driver would indeed inject legacy there (API server or a kubelet at 1.28)
    const d = synth({ version: '1.28', mesh: Mesh.GCS_FUSE, gate: true, logMode: SidecarMode.LEGACY, meshMode: SidecarMode.LEGACY });
    expect(injectGcsFuse(podMetadataOf(d), podSpecOf(d), { apiServerMinor: 29, kubeletMinor: 28 }, 5).native).toBe(false);
  });

  test('Kuma: the layout is the control plane\'s: a warning without injectorLayout, an error when it says legacy next to native sidecars', () => {
    const chart = build({ version: '1.29', mesh: Mesh.KUMA });
    Testing.synth(chart);
    expect(SidecarWarnings.of(chart)).toEqual([expect.stringMatching(
      /the Kuma proxy may be injected in the legacy layout but WithLogAgent 'test\/logs' is native.*experimental.sidecarContainers.*pass `injectorLayout`/s,
    )]);
    expect(() => synth({ version: '1.29', mesh: Mesh.KUMA, injectorLayout: SidecarLayout.LEGACY })).toThrow(
      /the Kuma proxy is injected in the legacy layout but WithLogAgent 'test\/logs' is native.*redirected to a proxy that is not running/s,
    );
    const declared = build({ version: '1.29', mesh: Mesh.KUMA, injectorLayout: SidecarLayout.NATIVE });
    Testing.synth(declared);
    expect(SidecarWarnings.of(declared)).toEqual([]);
    // the warned case is real: Kuma 2.13's default (sidecarContainers false) injects legacy next to the native log agent
    const d = synth({ version: '1.29', mesh: Mesh.KUMA });
    const r = injectKuma(podMetadataOf(d), podSpecOf(d), { apiServerMinor: 29, kubeletMinor: 29, kumaSidecarContainers: false });
    expect(r.native).toBe(false);
    expect(r.spec.initContainers.map((c: Json) => c.name)).toEqual(['sidecar-tools', 'log-agent', 'kuma-init']);
  });

  test('OpenTelemetry operator: native for certain on 1.29+ (no warning, also next to legacy sidecars); below, it depends on the API server', () => {
    const quiet = build({ version: '1.29', mesh: Mesh.OPENTELEMETRY_OPERATOR, logMode: SidecarMode.LEGACY, meshMode: SidecarMode.LEGACY });
    Testing.synth(quiet);
    expect(SidecarWarnings.of(quiet)).toEqual([]);
    const old = build({ version: '1.27', mesh: Mesh.OPENTELEMETRY_OPERATOR });
    Testing.synth(old);
    expect(SidecarWarnings.of(old)).toEqual([expect.stringMatching(/OpenTelemetry operator decides its layout from the cluster \(native when the API server is 1.29\+.*hangs in Init/)]);
    // 1.28 with the gate: the library is native, the operator legacy unless the API server is 1.29+
    const gate = build({ version: '1.28', mesh: Mesh.OPENTELEMETRY_OPERATOR, gate: true });
    Testing.synth(gate);
    expect(SidecarWarnings.of(gate)).toEqual([expect.stringMatching(/the OpenTelemetry operator container may be injected in the legacy layout but WithLogAgent 'test\/logs' is native/)]);
    expect(() => synth({ version: '1.28', mesh: Mesh.OPENTELEMETRY_OPERATOR, gate: true, injectorLayout: SidecarLayout.LEGACY })).toThrow(/OpenTelemetry operator container is injected in the legacy layout/);
  });

  test('Consul appends its native dataplane after every init container: the library\'s native sidecars start before it and stop after it (warning)', () => {
    const chart = build({ version: '1.29', mesh: Mesh.CONSUL });
    Testing.synth(chart);
    expect(SidecarWarnings.of(chart)).toEqual([expect.stringMatching(/Consul appends 'consul-dataplane' after every init container .*WithLogAgent 'test\/logs' is native/)]);
  });

  test('injectorLayout is refused for an injector the pod\'s annotation (or nothing) steers', () => {
    const { chart } = newChart();
    const workload = kplusWorkload(chart, 'Deployment');
    expect(() => new WithMeshProxy(chart, 'a', { workload, mesh: Mesh.CONSUL, injectorLayout: SidecarLayout.NATIVE }))
      .toThrow(/^WithMeshProxy 'test\/a': injectorLayout is only for meshes that decide their layout from the cluster .*Mesh.CONSUL follows the annotation this construct writes: remove injectorLayout\./);
    expect(() => new WithMeshProxy(chart, 'b', { workload, mesh: Mesh.VAULT_AGENT, injectorLayout: SidecarLayout.LEGACY })).toThrow(/Mesh.VAULT_AGENT is always legacy/);
    expect(() => new WithMeshProxy(chart, 'c', { workload, mesh: Mesh.KUMA, injectorLayout: 'SIDEWAYS' as SidecarLayout })).toThrow(/injectorLayout "SIDEWAYS" is not a SidecarLayout/);
  });
});

describe('Jobs: a legacy container that never exits', () => {
  test('Vault on a Job is refused (1.27 and 1.33: legacy only), with the pre-populate-only way out; allowLegacyOnJob accepts it', () => {
    const make = (version: string, allowLegacyOnJob: boolean) => () => {
      const { chart } = newChart();
      const workload = kplusWorkload(chart, 'Job');
      new WithMeshProxy(chart, 'mesh', { workload, mesh: Mesh.VAULT_AGENT, kubernetesVersion: version, allowLegacyOnJob });
      Testing.synth(chart);
    };
    for (const version of ['1.27', '1.33']) {
      expect(make(version, false)).toThrow(/a legacy Vault agent injector container on Job '.*' never exits.*agent-pre-populate-only/s);
      expect(make(version, true)).not.toThrow();
    }
  });

  test('Kuma on a Job at 1.29: a warning while its layout is unknown, nothing once declared native, an error once declared legacy', () => {
    const job = (injectorLayout?: SidecarLayout) => {
      const { chart } = newChart();
      const workload = kplusWorkload(chart, 'Job');
      new WithMeshProxy(chart, 'mesh', { workload, mesh: Mesh.KUMA, kubernetesVersion: '1.29', ...(injectorLayout ? { injectorLayout } : {}) });
      return chart;
    };
    const unknown = job();
    Testing.synth(unknown);
    expect(SidecarWarnings.of(unknown)).toEqual([expect.stringMatching(/where it injects 'kuma-sidecar' in the legacy layout, the container never exits and the Job of .* never completes/)]);
    const native = job(SidecarLayout.NATIVE);
    Testing.synth(native);
    expect(SidecarWarnings.of(native)).toEqual([]);
    expect(() => Testing.synth(job(SidecarLayout.LEGACY))).toThrow(/a legacy Kuma proxy on Job '.*' never exits/);
  });

  test('GCS FUSE and Datadog exit by themselves on a Job (the exit file, DD_AUTO_EXIT_NOPROCESS_ENABLED)', () => {
    for (const mesh of [Mesh.GCS_FUSE, Mesh.DATADOG]) {
      const { chart } = newChart();
      const workload = kplusWorkload(chart, 'Job');
      new WithMeshProxy(chart, 'mesh', { workload, mesh, kubernetesVersion: '1.27' });
      expect(() => Testing.synth(chart)).not.toThrow();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// The engine against the injectors' layout and the kubelet's termination order.

const spec = (name: string, rank: number, stopSeconds: number, layout: 'NATIVE' | 'LEGACY') => engineSpec(name, rank, stopSeconds, layout, 9100);

function deployment(): Json {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web' },
    spec: { template: { metadata: {}, spec: { containers: [{ name: 'app', image: 'app:1', ports: [{ containerPort: 8080 }] }] } } },
  };
}

const STOP_CASES: Array<[MeshKind, number]> = (['OPENTELEMETRY_OPERATOR', 'CONSUL', 'KUMA', 'GCS_FUSE', 'VAULT_AGENT', 'DATADOG', 'DAPR'] as MeshKind[])
  .flatMap(m => [[m, 27], [m, 33]] as Array<[MeshKind, number]>);

describe.each(STOP_CASES)('%s on 1.%s: the grace period covers the injected container (kubelet simulation)', (mesh, minor) => {
  const legacyOnly = mesh === 'VAULT_AGENT' || mesh === 'DATADOG';
  const layout = minor >= 29 && !legacyOnly ? 'NATIVE' : 'LEGACY';
  const proxy: InjectedProxy = {
    owner: "WithMeshProxy 'mesh'",
    mesh,
    layout,
    stopSeconds: 9,
    appShutdownSeconds: 10,
    holdApplication: true,
    allowLegacyOnJob: false,
    ...(mesh === 'KUMA' ? { declaredLayout: layout } : {}),
  };
  // 10 + 8 + 6 + 9 = 33 > Kubernetes' default 30 when native
  const sidecars = [spec('log-agent', RANK.LOG_AGENT, 8, layout), spec('tracer', RANK.TRACER, 6, layout)];
  const r = applySidecars(deployment(), sidecars, { minor, gate: false, injected: [proxy] });
  const template = r.manifest.spec.template;
  const cluster: Cluster = { apiServerMinor: minor, kubeletMinor: minor };
  const inject: Record<MeshKind, () => Injection> = {
    ISTIO: () => { throw new Error('not here'); },
    LINKERD: () => { throw new Error('not here'); },
    OPENTELEMETRY_OPERATOR: () => injectOtelOperator(template.metadata, template.spec, cluster, 9),
    CONSUL: () => injectConsul(template.metadata, template.spec),
    KUMA: () => injectKuma(template.metadata, template.spec, cluster),
    GCS_FUSE: () => injectGcsFuse(template.metadata, template.spec, cluster, 9),
    VAULT_AGENT: () => injectVault(template.metadata, template.spec, 9),
    DATADOG: () => injectDatadog(template.metadata, template.spec, 9),
    DAPR: () => injectDapr(template.metadata, template.spec),
  };
  const injected = inject[mesh]();

  test('no errors; the injector uses the library\'s layout', () => {
    expect(r.errors).toEqual([]);
    expect(injected.native).toBe(layout === 'NATIVE');
  });

  test('nobody is cut short, and the library\'s sidecars outlive the app', () => {
    const stops: Record<string, number> = { 'app': 10, 'log-agent': 8, 'tracer': 6 };
    const proxyName = [...(injected.spec.initContainers ?? []), ...injected.spec.containers]
      .map((c: Json) => c.name as string).find(n => !(n in stops) && !['kuma-init', 'consul-connect-inject-init', 'vault-agent-init'].includes(n))!;
    const sim = simulateTermination({
      spec: injected.spec,
      minor,
      behaviour: name => ({ exitAfterSigterm: name === proxyName ? injected.proxyStopSeconds : stops[name] ?? 0 }),
    });
    expect(cutShort(sim)).toEqual([]);
    const app = sim.containers.get('app')!.exit;
    for (const name of ['log-agent', 'tracer']) expect(sim.containers.get(name)!.exit).toBeGreaterThanOrEqual(app);
  });
});

describe('SidecarTimeline counts the injected container where its injector puts it', () => {
  const timeline = (mesh: Mesh, version: string) => {
    const { chart } = newChart();
    const workload = kplusWorkload(chart, 'Deployment');
    new WithLogAgent(chart, 'logs', { workload, kubernetesVersion: version, ...(logModeFor(mesh, version) ? { mode: SidecarMode.LEGACY } : {}) });
    new WithMeshProxy(chart, 'mesh', { workload, mesh, kubernetesVersion: version, proxyStopTime: Duration.seconds(7) });
    return SidecarTimeline.of(workload);
  };

  test('Consul native on 1.29: appended last, so the kubelet stops it first after the app, then the log agent; it fits the grace period', () => {
    const t = timeline(Mesh.CONSUL, '1.29');
    const stop = (name: string) => t.termination.find(e => e.name === name)!;
    const app = stop('app').exitSeconds;
    // the kubelet's order (kuberuntime_termination_order.go): reverse initContainers, the last one first
    expect(stop('consul-dataplane').sigtermSeconds).toBe(app);
    expect(stop('consul-dataplane').exitSeconds).toBe(app + 7);
    expect(stop('log-agent').sigtermSeconds).toBe(app + 7);
    expect(t.endSeconds).toBeLessThanOrEqual(t.graceSeconds);
    expect(t.termination.every(e => !e.killed)).toBe(true);
    expect(t.assumptions).toContainEqual(expect.stringMatching(/'consul-dataplane' is injected by Consul at admission \(native\)/));
  });

  test('GCS FUSE native on 1.29: first, so stopped last; Vault on 1.29: legacy, stopped with the app', () => {
    const gcs = timeline(Mesh.GCS_FUSE, '1.29');
    const last = [...gcs.termination].sort((a, b) => a.exitSeconds - b.exitSeconds).pop()!;
    expect(last.name).toBe('gke-gcsfuse-sidecar');
    const vault = timeline(Mesh.VAULT_AGENT, '1.29');
    const agent = vault.termination.find(e => e.name === 'vault-agent')!;
    expect(agent.role).toBe('legacy sidecar');
    expect(agent.sigtermSeconds).toBe(0);
  });
});

describe('kubernetes#125880 (src/facts/known-bugs.ts) counts the injected native sidecar where its injector puts it', () => {
  test.each([
    // Consul appends its dataplane: the log agent is the earlier sidecar, the one the bug holds
    [Mesh.CONSUL, /native sidecar 'log-agent' has another native sidecar after it \('consul-dataplane'\)/],
    // GCS FUSE inserts first: its mounter is the one held
    [Mesh.GCS_FUSE, /native sidecar 'gke-gcsfuse-sidecar' has another native sidecar after it \('log-agent'\)/],
  ])('%s on 1.29.7', (mesh, message) => {
    const chart = build({ version: '1.29.7', mesh });
    let text = '';
    try {
      Testing.synth(chart);
      text = SidecarWarnings.of(chart).join('\n');
    } catch (e) {
      text = (e as Error).message;
    }
    expect(text).toMatch(message);
  });
});

describe('snapshots: one pod per injector and layout, valid for the target\'s schema', () => {
  test.each(NEW.flatMap(m => [[m, '1.27'], [m, '1.29']] as Array<[Mesh, string]>))('%s on %s', (mesh, version) => {
    const chart = build({ version, mesh, logMode: logModeFor(mesh, version), injectorLayout: mesh === Mesh.KUMA ? (version === '1.27' ? SidecarLayout.LEGACY : SidecarLayout.NATIVE) : undefined });
    const manifests = Testing.synth(chart);
    expectValidManifests(manifests, version);
    expect(manifests.find(m => m.kind === 'Deployment').spec.template).toMatchSnapshot();
  });
});

describe('issue 37: Dapr before 1.18 (meshRelease) reads no layout annotation: legacy daprd', () => {
  test('no dapr.io/enable-native-sidecar is written; next to a native sidecar it is refused like a legacy-only injector; legacy targets are fine', () => {
    const build17 = (version: string, logMode?: SidecarMode) => {
      const { chart } = newChart();
      const workload = kplusWorkload(chart, 'Deployment');
      new WithLogAgent(chart, 'logs', { workload, kubernetesVersion: version, ...(logMode ? { mode: logMode } : {}) });
      new WithMeshProxy(chart, 'mesh', { workload, mesh: Mesh.DAPR, kubernetesVersion: version, meshRelease: '1.17', ...(logMode ? { mode: logMode } : {}) });
      return chart;
    };
    const legacy = Testing.synth(build17('1.27')).find(m => m.kind === 'Deployment');
    expect(podMetadataOf(legacy).annotations['dapr.io/enable-native-sidecar']).toBeUndefined();
    expect(injectDapr(podMetadataOf(legacy), podSpecOf(legacy), [1, 17]).native).toBe(false);
    expect(() => Testing.synth(build17('1.29'))).toThrow(
      "WithMeshProxy 'test/mesh': the Dapr container is injected in the legacy layout but WithLogAgent 'test/logs' is native on Deployment 'test-web-c8ba1bf5': " +
      'its legacy container gets SIGTERM with the app while the native sidecars outlive it, so the pod has two shutdown orders. The Dapr reads its layout ' +
      'annotation only from 1.18 and meshRelease is 1.17: upgrade it to 1.18+ (and drop meshRelease), or give the workload\'s sidecar constructs `mode: SidecarMode.LEGACY`.');
    // with the library's sidecars legacy too, the pod is one layout again
    const both = Testing.synth(build17('1.29', SidecarMode.LEGACY)).find(m => m.kind === 'Deployment');
    expect(injectDapr(podMetadataOf(both), podSpecOf(both), [1, 17]).native).toBe(false);
  });
});

