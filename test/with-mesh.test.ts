/**
 * WithMeshProxy: the mesh's per-pod annotations follow the library's target, and the engine
 * accounts for the injected proxy (ports, grace budget, position), tested against the injectors'
 * real layout (test/util/mesh-injection.ts, written from the Istio and Linkerd sources).
 */
import { Duration, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { engineSpec, kplusWorkload, newChart, podMetadataOf, podSpecOf } from './util/fixtures';
import { ISTIO, LINKERD, Injection, injectIstio, injectLinkerd, simulateTermination } from './util/mesh-injection';
// Imported module by module (not from '../src'), so that other constructs in progress cannot break this suite.
import { InjectedProxy, MeshKind } from '../src/engine/injected';
import { applySidecars } from '../src/engine/pod-template';
import { RANK } from '../src/engine/spec';
import { Json } from '../src/private/json';
import { Sidecars } from '../src/settings';
import { SidecarMode } from '../src/target/capabilities';
import { WithEnvoy } from '../src/with-envoy';
import { WithLogAgent } from '../src/with-log-agent';
import { Mesh, WithMeshProxy } from '../src/with-mesh';

const MARKER = 'sidecars.cdk8s.io/native-sidecars';

function synthWorkload(version: string, mesh: Mesh, extra: (chart: any, workload: kplus.AbstractPod) => void = () => undefined) {
  const { chart } = newChart();
  const workload = kplusWorkload(chart, 'Deployment');
  new WithLogAgent(chart, 'logs', { workload, kubernetesVersion: version });
  new WithMeshProxy(chart, 'mesh', { workload, mesh, kubernetesVersion: version });
  extra(chart, workload);
  const manifests = Testing.synth(chart);
  return manifests.find(m => m.kind === 'Deployment');
}

describe('annotations follow the target (1.27 legacy, 1.29 and 1.33 native)', () => {
  // Expected values written by hand from the injectors' annotations (see test/util/mesh-injection.ts):
  // app shutdown 10 s and proxy stop 5 s are the construct's defaults.
  test.each([
    ['1.27', { 'sidecar.istio.io/nativeSidecar': 'false', 'proxy.istio.io/config': '{"holdApplicationUntilProxyStarts":true,"terminationDrainDuration":"15s"}' }],
    ['1.29', { 'sidecar.istio.io/nativeSidecar': 'true', 'proxy.istio.io/config': '{"terminationDrainDuration":"5s"}' }],
    ['1.33', { 'sidecar.istio.io/nativeSidecar': 'true', 'proxy.istio.io/config': '{"terminationDrainDuration":"5s"}' }],
  ])('Istio on %s', (version, expected) => {
    const annotations = podMetadataOf(synthWorkload(version, Mesh.ISTIO)).annotations;
    expect(annotations).toMatchObject(expected);
    expect(annotations[MARKER]).toBe(version === '1.27' ? undefined : 'istio-proxy,log-agent');
  });

  // Linkerd 2.20 (the default meshRelease) reads config.linkerd.io/proxy-enable-native-sidecar (issue 37)
  test.each([
    ['1.27', {
      'config.linkerd.io/proxy-enable-native-sidecar': 'false',
      'config.linkerd.io/proxy-await': 'enabled',
      'config.alpha.linkerd.io/proxy-wait-before-exit-seconds': '10',
      'config.linkerd.io/shutdown-grace-period': '5s',
    }],
    ['1.29', { 'config.linkerd.io/proxy-enable-native-sidecar': 'true', 'config.linkerd.io/proxy-await': 'enabled', 'config.linkerd.io/shutdown-grace-period': '5s' }],
    ['1.33', { 'config.linkerd.io/proxy-enable-native-sidecar': 'true', 'config.linkerd.io/proxy-await': 'enabled', 'config.linkerd.io/shutdown-grace-period': '5s' }],
  ])('Linkerd on %s', (version, expected) => {
    const annotations = podMetadataOf(synthWorkload(version, Mesh.LINKERD)).annotations;
    expect(annotations).toMatchObject(expected);
    // no meshRelease: the alpha name too, which Linkerd 2.15 to 2.19 read (2.20 gives the current one precedence)
    expect(annotations['config.alpha.linkerd.io/proxy-enable-native-sidecar']).toBe(annotations['config.linkerd.io/proxy-enable-native-sidecar']);
    // Linkerd 2.15 fails injection when wait-before-exit is set together with native sidecars.
    if (version !== '1.27') expect(annotations['config.alpha.linkerd.io/proxy-wait-before-exit-seconds']).toBeUndefined();
    expect(annotations[MARKER]).toBe(version === '1.27' ? undefined : 'linkerd-proxy,log-agent');
  });

  test('the injector, fed the synthesized pod, uses the library\'s layout for its proxy', () => {
    for (const [version, native] of [['1.27', false], ['1.29', true], ['1.33', true]] as const) {
      const istio = synthWorkload(version, Mesh.ISTIO);
      // Istio >= 1.27 defaults to `auto` (native only when every kubelet is 1.33+): the annotation wins.
      expect(injectIstio(podMetadataOf(istio), podSpecOf(istio), version === '1.33').native).toBe(native);
      const linkerd = synthWorkload(version, Mesh.LINKERD);
      // Linkerd 2.20 defaults to native everywhere: on 1.27 the annotation keeps it legacy.
      expect(injectLinkerd(podMetadataOf(linkerd), podSpecOf(linkerd)).native).toBe(native);
    }
  });

  test('Linkerd layout annotation: alpha name below 2.20, current name from 2.20, both without meshRelease', () => {
    for (const [version, native] of [['1.27', false], ['1.33', true]] as const) {
      const { chart } = newChart();
      const workload = kplusWorkload(chart, 'Deployment');
      new WithLogAgent(chart, 'logs', { workload, kubernetesVersion: version });
      new WithMeshProxy(chart, 'mesh', { workload, mesh: Mesh.LINKERD, kubernetesVersion: version, meshRelease: '2.19' });
      const d = Testing.synth(chart).find(m => m.kind === 'Deployment');
      const a = podMetadataOf(d).annotations;
      expect(a['config.alpha.linkerd.io/proxy-enable-native-sidecar']).toBe(String(native));
      expect(a['config.linkerd.io/proxy-enable-native-sidecar']).toBeUndefined();
      expect(injectLinkerd(podMetadataOf(d), podSpecOf(d), [2, 19]).native).toBe(native);
    }
    // no meshRelease: both names, so a 2.19 injector (legacy by default) and a 2.20 one both take the library's layout
    for (const [version, native] of [['1.27', false], ['1.33', true]] as const) {
      const d = synthWorkload(version, Mesh.LINKERD);
      for (const release of [[2, 15], [2, 19], [2, 20]] as Array<[number, number]>) {
        expect(injectLinkerd(podMetadataOf(d), podSpecOf(d), release).native).toBe(native);
      }
    }
    // meshRelease 2.20: the current name alone
    const { chart } = newChart();
    const workload = kplusWorkload(chart, 'Deployment');
    new WithMeshProxy(chart, 'mesh', { workload, mesh: Mesh.LINKERD, kubernetesVersion: '1.33', meshRelease: '2.20' });
    const a20 = podMetadataOf(Testing.synth(chart).find(m => m.kind === 'Deployment')).annotations;
    expect(a20['config.linkerd.io/proxy-enable-native-sidecar']).toBe('true');
    expect(a20['config.alpha.linkerd.io/proxy-enable-native-sidecar']).toBeUndefined();
    expect(() => new WithMeshProxy(newChart().chart, 'mesh', { workload: kplusWorkload(newChart().chart, 'Deployment'), mesh: Mesh.LINKERD, meshRelease: 'stable' }))
      .toThrow("meshRelease 'stable' is not a release; give the injector's major.minor, e.g. '2.19' (Linkerd) or '1.17' (Dapr).");
  });

  test('properties: proxyStopTime and appShutdownTime reach the annotations; holdApplication false', () => {
    const { chart } = newChart();
    const workload = kplusWorkload(chart, 'Deployment');
    new WithMeshProxy(chart, 'mesh', {
      workload, mesh: Mesh.ISTIO, kubernetesVersion: '1.27', proxyStopTime: Duration.seconds(7), appShutdownTime: Duration.seconds(20), holdApplication: false,
    });
    const d = Testing.synth(chart).find(m => m.kind === 'Deployment');
    expect(podMetadataOf(d).annotations['proxy.istio.io/config']).toBe('{"terminationDrainDuration":"27s"}');
    expect(podSpecOf(d).terminationGracePeriodSeconds).toBe(30);
  });

  test('the target comes from Sidecars.configure / the environment like the sidecars\' (layout getter)', () => {
    const { chart } = newChart();
    const workload = kplusWorkload(chart, 'Deployment');
    const mesh = new WithMeshProxy(chart, 'mesh', { workload, mesh: Mesh.LINKERD, kubernetesVersion: '1.30' });
    expect(mesh.layout).toBe('NATIVE');
    expect(mesh.targetVersion).toBe('1.30');
    expect(mesh.proxyContainerName).toBe('linkerd-proxy');
  });
});

describe('port clashes with the injected proxy', () => {
  test('WithEnvoy\'s default health port 15021 is Istio\'s Envoy health port', () => {
    expect(() => synthWorkload('1.29', Mesh.ISTIO, (chart, workload) => {
      new WithEnvoy(chart, 'envoy', { workload, kubernetesVersion: '1.29', appPort: 8080 });
    })).toThrow(/WithMeshProxy 'test\/mesh': port 15021 is bound by the injected Istio proxy \('istio-proxy', Envoy health\) and also by sidecar 'envoy' \(WithEnvoy 'test\/envoy'\).*Give WithEnvoy 'test\/envoy' another port/s);
  });

  test('an app port Linkerd reserves', () => {
    const { chart } = newChart();
    const workload = new kplus.Deployment(chart, 'web', { containers: [{ name: 'app', image: 'app:1', portNumber: 4191, securityContext: { user: 1000 } }] });
    new WithMeshProxy(chart, 'mesh', { workload, mesh: Mesh.LINKERD, kubernetesVersion: '1.29' });
    expect(() => Testing.synth(chart)).toThrow(/port 4191 is bound by the injected Linkerd proxy \('linkerd-proxy', admin\) and also by container 'app'.*Move the app's port 4191 \(Linkerd reserves 4140, 4143, 4190, 4191\)/s);
  });
});

describe('other mistakes', () => {
  test('a container named like the injector\'s', () => {
    const { chart } = newChart();
    const workload = new kplus.Deployment(chart, 'web', { containers: [{ name: 'istio-proxy', image: 'app:1', portNumber: 8080, securityContext: { user: 1000 } }] });
    new WithMeshProxy(chart, 'mesh', { workload, mesh: Mesh.ISTIO, kubernetesVersion: '1.29' });
    expect(() => Testing.synth(chart)).toThrow(/container name 'istio-proxy' on Deployment '.*' is the name of a container the Istio injector adds/);
  });

  test('the workload sets the annotation itself', () => {
    const { chart } = newChart();
    const workload = new kplus.Deployment(chart, 'web', {
      containers: [{ name: 'app', image: 'app:1', portNumber: 8080, securityContext: { user: 1000 } }],
      podMetadata: { annotations: { 'sidecar.istio.io/nativeSidecar': 'true' } },
    });
    new WithMeshProxy(chart, 'mesh', { workload, mesh: Mesh.ISTIO, kubernetesVersion: '1.27' });
    expect(() => Testing.synth(chart)).toThrow(/already sets the annotation 'sidecar.istio.io\/nativeSidecar' \('true'\)/);
  });

  test('a legacy proxy next to native sidecars (explicit modes) is refused', () => {
    expect(() => {
      const { chart } = newChart();
      const workload = kplusWorkload(chart, 'Deployment');
      new WithLogAgent(chart, 'logs', { workload, kubernetesVersion: '1.29' });
      new WithMeshProxy(chart, 'mesh', { workload, mesh: Mesh.ISTIO, kubernetesVersion: '1.29', mode: SidecarMode.LEGACY });
      Testing.synth(chart);
    }).toThrow(/the Istio proxy is injected in the legacy layout but WithLogAgent 'test\/logs' is native/);
  });

  test('a legacy proxy on a Job, unless allowed', () => {
    const make = (allowLegacyOnJob: boolean) => {
      const { chart } = newChart();
      const workload = kplusWorkload(chart, 'Job');
      new WithMeshProxy(chart, 'mesh', { workload, mesh: Mesh.LINKERD, kubernetesVersion: '1.27', allowLegacyOnJob });
      return Testing.synth(chart);
    };
    expect(() => make(false)).toThrow(/a legacy Linkerd proxy on Job '.*' never exits/);
    expect(() => make(true)).not.toThrow();
  });

  test('bad props, at construction', () => {
    const { chart } = newChart();
    const workload = kplusWorkload(chart, 'Deployment');
    expect(() => new WithMeshProxy(chart, 'a', { workload, mesh: 'APP_MESH' as Mesh })).toThrow(/^WithMeshProxy 'test\/a': mesh "APP_MESH" is not supported; use one of Mesh.ISTIO, Mesh.LINKERD, Mesh.OPENTELEMETRY_OPERATOR, .*Mesh.DATADOG./);
    expect(() => new WithMeshProxy(chart, 'b', { workload, mesh: Mesh.ISTIO, proxyStopTime: Duration.seconds(0) })).toThrow(/proxyStopTime must be at least 1 second/);
    expect(() => new WithMeshProxy(chart, 'c', { workload, mesh: Mesh.ISTIO, kubernetesVersion: '1.x' })).toThrow(/'1.x' is not a Kubernetes version/);
    expect(() => new WithMeshProxy(chart, 'd', { workload, mesh: Mesh.ISTIO, kubernetesVersion: '1.27', mode: SidecarMode.NATIVE }).layout).toThrow(/mode NATIVE on Kubernetes 1.27/);
  });
});

// ---------------------------------------------------------------------------------------------
// The engine against the injectors' layout and the kubelet's termination order.

const spec = (name: string, rank: number, stopSeconds: number, layout: 'NATIVE' | 'LEGACY') => engineSpec(name, rank, stopSeconds, layout, 9000);

function deployment(grace?: number): Json {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web' },
    spec: {
      template: {
        metadata: {},
        spec: {
          containers: [{ name: 'app', image: 'app:1', ports: [{ containerPort: 8080 }] }],
          initContainers: [{ name: 'migrate', image: 'm:1' }],
          ...(grace !== undefined ? { terminationGracePeriodSeconds: grace } : {}),
        },
      },
    },
  };
}

const CASES: Array<[MeshKind, number]> = [['ISTIO', 27], ['ISTIO', 29], ['ISTIO', 33], ['LINKERD', 27], ['LINKERD', 29], ['LINKERD', 33]];

describe.each(CASES)('%s on 1.%s: injected as the real injector would', (mesh, minor) => {
  const layout = minor >= 29 ? 'NATIVE' : 'LEGACY';
  const proxy: InjectedProxy = {
    owner: "WithMeshProxy 'mesh'", mesh, layout, stopSeconds: 9, appShutdownSeconds: 10, holdApplication: true, allowLegacyOnJob: false,
  };
  // Stop times large enough that Kubernetes' default 30 s is too short when native (10 + 6 + 8 + 9).
  const sidecars = [spec('log-agent', RANK.LOG_AGENT, 8, layout), spec('tracer', RANK.TRACER, 6, layout)];
  const r = applySidecars(deployment(), sidecars, { minor, gate: false, injected: [proxy] });
  const template = r.manifest.spec.template;
  const injected: Injection = mesh === 'ISTIO' ? injectIstio(template.metadata, template.spec) : injectLinkerd(template.metadata, template.spec);
  const facts = mesh === 'ISTIO' ? ISTIO : LINKERD;

  test('no errors; the proxy lands where the library said', () => {
    expect(r.errors).toEqual([]);
    expect(injected.native).toBe(layout === 'NATIVE');
    const init = injected.spec.initContainers.map((c: Json) => c.name);
    const containers = injected.spec.containers.map((c: Json) => c.name);
    if (layout === 'NATIVE') {
      // Native: the mesh's init container, its proxy, then the library's sidecars, then the user's init containers.
      expect(init.slice(0, 2)).toEqual([facts.init, facts.proxy]);
      expect(init.indexOf('log-agent')).toBeGreaterThan(1);
      expect(init.indexOf('migrate')).toBeGreaterThan(init.indexOf('tracer'));
      expect(containers).toEqual(['app']);
    } else {
      // Legacy with the hold: the proxy first among the containers, the redirect init container last.
      expect(containers[0]).toBe(facts.proxy);
      expect(init[init.length - 1]).toBe(facts.init);
    }
  });

  test('every container exits within the grace period, and the sidecars and the proxy outlive the app (kubelet order)', () => {
    // unset: Kubernetes' default 30 s (pkg/apis/core/v1/defaults.go); the library writes it only when it needs more
    const grace = injected.spec.terminationGracePeriodSeconds ?? 30;
    const stops: Record<string, number> = { 'app': 10, 'log-agent': 8, 'tracer': 6, [facts.proxy]: injected.proxyStopSeconds };
    const exits = simulateTermination(injected.spec, name => stops[name] ?? 0);
    const app = exits.find(e => e.name === 'app')!.at;
    for (const e of exits) {
      expect(e.at).toBeLessThanOrEqual(grace);
      if (e.name !== 'app') expect(e.at).toBeGreaterThanOrEqual(app);
    }
    if (layout === 'NATIVE') {
      // The proxy is stopped last: the log agent can still ship its last lines through the mesh.
      expect(exits[exits.length - 1].name).toBe(facts.proxy);
      // 10 (app) + 6 (tracer) + 8 (log agent) + 9 (proxy), sequential.
      expect(exits[exits.length - 1].at).toBe(33);
    }
  });
});

test('the proxy\'s stop time counts toward an explicit grace period (native 1.29: 10 + 5 + 3 + 5 = 23 > 20)', () => {
  const sidecars = [spec('log-agent', RANK.LOG_AGENT, 5, 'NATIVE'), spec('tracer', RANK.TRACER, 3, 'NATIVE')];
  const proxy: InjectedProxy = { owner: "WithMeshProxy 'mesh'", mesh: 'ISTIO', layout: 'NATIVE', stopSeconds: 5, appShutdownSeconds: 10, holdApplication: true, allowLegacyOnJob: false };
  expect(applySidecars(deployment(20), sidecars, { minor: 29, gate: false }).errors).toEqual([]);
  const r = applySidecars(deployment(20), sidecars, { minor: 29, gate: false, injected: [proxy] });
  expect(r.errors).toEqual([expect.stringMatching(/terminationGracePeriodSeconds is 20, but its sidecars need 23 .*istio-proxy 5s/)]);
});

test('without a mesh, the engine output carries the marker in the native layout only', () => {
  const native = applySidecars(deployment(), [spec('log-agent', RANK.LOG_AGENT, 5, 'NATIVE')], { minor: 29, gate: false });
  expect(native.manifest.spec.template.metadata.annotations[MARKER]).toBe('log-agent');
  const legacy = applySidecars(deployment(), [spec('log-agent', RANK.LOG_AGENT, 5, 'LEGACY')], { minor: 27, gate: false });
  expect(legacy.manifest.spec.template.metadata.annotations?.[MARKER]).toBeUndefined();
});

describe('the target is read as the sidecar constructs read it (src/bind/target-reader.ts)', () => {
  test('a workload of another App is refused', () => {
    const { chart } = newChart();
    const other = newChart().chart;
    const workload = kplusWorkload(other, 'Deployment');
    expect(() => new WithMeshProxy(chart, 'mesh', { workload, mesh: Mesh.ISTIO, kubernetesVersion: '1.29' }))
      .toThrow(/^WithMeshProxy 'test\/mesh': workload '.*' belongs to another cdk8s App than this construct/);
  });

  test('layout is fixed once read: a later Sidecars.configure() that flips it fails the synthesis, naming both targets', () => {
    const { app, chart } = newChart();
    const workload = kplusWorkload(chart, 'Deployment');
    const mesh = new WithMeshProxy(chart, 'mesh', { workload, mesh: Mesh.LINKERD });
    expect(mesh.layout).toBe('LEGACY'); // the default, 1.27
    Sidecars.configure(app, { kubernetesVersion: '1.29' });
    expect(() => Testing.synth(chart)).toThrow(/`layout` was read as LEGACY \(Kubernetes 1\.27, from the default\), but at synthesis the target is Kubernetes 1\.29 from Sidecars\.configure\(\)/);
  });
});
