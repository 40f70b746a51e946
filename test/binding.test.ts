/**
 * The binding: how the engine's output reaches every synth path.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { ApiObject, App, Chart, Include, JsonPatch, Testing, Yaml, YamlOutputType } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import { parseAllDocuments } from 'yaml';
import { Errors, LogOutput, SidecarWarnings, WithEnvoy, WithLogAgent, WithTracer } from '../src';
import { containerOf, kplusWorkload, layoutOf, manifestOf, newChart, podSpecOf, rawDeployment } from './util/fixtures';
import { expectValidManifests } from './util/k8s-schema';
import { applySidecars } from '../src/engine/pod-template';
import { SidecarBase, SidecarProps } from '../src/sidecar';

function nativeApp(outdir?: string) {
  const app = outdir ? new App({ outdir }) : Testing.app();
  const chart = new Chart(app, 'test');
  const dep = kplusWorkload(chart, 'Deployment') as kplus.Deployment;
  new WithLogAgent(chart, 'logs', { workload: dep, kubernetesVersion: '1.29' });
  return { app, chart, dep };
}

function expectNative(manifest: any) {
  const spec = podSpecOf(manifest);
  expect(spec.initContainers.find((c: any) => c.name === 'log-agent')).toMatchObject({ name: 'log-agent', restartPolicy: 'Always' });
}

describe('every synth path emits the sidecar (cdk8s-plus-27 filters restartPolicy in its own toJson)', () => {
  test('Testing.synth', () => {
    expectNative(manifestOf(Testing.synth(nativeApp().chart), 'Deployment'));
  });

  test('Chart.toJson', () => {
    expectNative(manifestOf(nativeApp().chart.toJson(), 'Deployment'));
  });

  test('App.synthYaml', () => {
    const docs = parseAllDocuments(nativeApp().app.synthYaml()).map(d => d.toJSON());
    expectNative(manifestOf(docs, 'Deployment'));
  });

  test('App.synth writes it to disk', () => {
    const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecars-'));
    nativeApp(outdir).app.synth();
    const files = fs.readdirSync(outdir);
    expect(files).toEqual(['test.k8s.yaml']);
    const docs = Yaml.load(path.join(outdir, files[0]));
    expectNative(manifestOf(docs, 'Deployment'));
  });

  test('a JSON patch cannot do it (cdk8s#2172), which is why the binding exists', () => {
    const { chart } = newChart();
    const dep = new kplus.Deployment(chart, 'web', { containers: [{ image: 'nginx', portNumber: 8080 }] });
    dep.addInitContainer({ name: 'side', image: 'busybox' });
    ApiObject.of(dep).addJsonPatch(JsonPatch.add('/spec/template/spec/initContainers/0/restartPolicy', 'Always'));
    expect(podSpecOf(manifestOf(Testing.synth(chart), 'Deployment')).initContainers[0].restartPolicy).toBeUndefined();
  });
});

describe('order of construction does not matter, and user patches are kept', () => {
  test('containers, init containers and volumes added after the construct are all there', () => {
    const { chart, dep } = nativeApp();
    dep.addContainer({ name: 'late', image: 'ghcr.io/example/late:1', securityContext: { user: 1000 } });
    dep.addInitContainer({ name: 'late-init', image: 'ghcr.io/example/init:1' });
    dep.addVolume(kplus.Volume.fromEmptyDir(chart, 'cache', 'cache'));
    const m = manifestOf(Testing.synth(chart), 'Deployment');
    // (sidecar-tools first: a native Fluent Bit's SIGTERM hold runs under its busybox)
    expect(layoutOf(m)).toEqual({ init: ['sidecar-tools', 'log-agent', 'late-init'], containers: ['app', 'late'] });
    expect(containerOf(m, 'late').volumeMounts).toContainEqual({ mountPath: '/var/log/app', name: 'log-agent-logs' });
    expect(podSpecOf(m).volumes.map((v: any) => v.name)).toEqual(['cache', 'log-agent-logs', 'log-agent-config', 'sidecar-tools']);
  });

  test('a user JSON patch is applied and survives', () => {
    const { chart, dep } = nativeApp();
    ApiObject.of(dep).addJsonPatch(JsonPatch.add('/spec/template/spec/priorityClassName', 'high'));
    ApiObject.of(dep).addJsonPatch(JsonPatch.add('/metadata/labels', { team: 'shop' }));
    const m = manifestOf(Testing.synth(chart), 'Deployment');
    expect(podSpecOf(m).priorityClassName).toBe('high');
    expect(m.metadata.labels).toEqual({ team: 'shop' });
    expectNative(m);
  });
});

describe('plain ApiObjects: raw Kube* objects, Include and Helm output', () => {
  test('a raw Deployment ApiObject', () => {
    const { chart } = newChart();
    const raw = rawDeployment(chart);
    new WithLogAgent(chart, 'logs', { workload: raw, kubernetesVersion: '1.29' });
    const manifests = Testing.synth(chart);
    const m = manifestOf(manifests, 'Deployment');
    expect(layoutOf(m)).toEqual({ init: ['sidecar-tools', 'log-agent'], containers: ['app'] });
    // absent grace period: Kubernetes' 30 s cover the sidecars (10 s app + 2 s hold + 6 s), so none is written
    expect(podSpecOf(m).terminationGracePeriodSeconds).toBeUndefined();
    expectValidManifests(manifests, '1.29');
  });

  test('a KubeDeployment from the cdk8s-plus-27 imports (the 1.27 filter) still gets the native field', () => {
    const { chart } = newChart();
    const kube = new kplus.k8s.KubeDeployment(chart, 'kube', {
      spec: {
        selector: { matchLabels: { app: 'kube' } },
        template: { metadata: { labels: { app: 'kube' } }, spec: { containers: [{ name: 'app', image: 'a:1' }] } },
      },
    });
    new WithLogAgent(chart, 'logs', { workload: kube, kubernetesVersion: '1.30' });
    expectNative(manifestOf(Testing.synth(chart), 'Deployment'));
  });

  test('objects brought in with Include (ReplicaSet and Deployment from a YAML file)', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'include-'));
    const file = path.join(dir, 'third-party.yaml');
    fs.writeFileSync(file, [
      'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: vendor\nspec:\n  selector:\n    matchLabels: {app: vendor}\n  template:\n    metadata:\n      labels: {app: vendor}\n    spec:\n      containers:\n      - name: vendor\n        image: vendor/app:2\n',
      'apiVersion: v1\nkind: Service\nmetadata:\n  name: vendor\nspec:\n  ports: [{port: 80}]\n',
    ].join('---\n'));
    const { chart } = newChart();
    const inc = new Include(chart, 'vendor', { url: file });
    const dep = inc.apiObjects.find(o => o.kind === 'Deployment')!;
    new WithLogAgent(chart, 'logs', { workload: dep, kubernetesVersion: '1.27' });
    const manifests = Testing.synth(chart);
    const m = manifestOf(manifests, 'Deployment');
    expect(layoutOf(m)).toEqual({ init: ['sidecar-tools'], containers: ['vendor', 'log-agent'] });
    expectValidManifests(manifests, '1.27');
    // the Service is not a workload
    const svc = inc.apiObjects.find(o => o.kind === 'Service')!;
    expect(() => new WithLogAgent(chart, 'logs2', { workload: svc })).toThrow(/is a v1 Service, which has no pod template/);
  });

  test('a construct that is no workload at all', () => {
    const { chart } = newChart();
    const empty = new Chart(chart, 'empty');
    expect(() => new WithLogAgent(chart, 'logs', { workload: empty })).toThrow(
      "WithLogAgent 'test/logs': workload 'test/empty' is neither a cdk8s-plus workload nor a cdk8s ApiObject.",
    );
  });
});

test('a ReplicaSet and a Pod ApiObject work too', () => {
  const { chart } = newChart();
  const rs = new ApiObject(chart, 'rs', {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name: 'rs' },
    spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'app', image: 'a' }] } } },
  });
  const pod = new ApiObject(chart, 'pod', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'app', image: 'a' }] } });
  new WithLogAgent(chart, 'l1', { workload: rs, kubernetesVersion: '1.33' });
  new WithLogAgent(chart, 'l2', { workload: pod, kubernetesVersion: '1.33' });
  const manifests = Testing.synth(chart);
  expectNative(manifestOf(manifests, 'ReplicaSet'));
  expectNative(manifestOf(manifests, 'Pod'));
  expectValidManifests(manifests, '1.33');
});

describe('no render is kept: every synth path sees every change', () => {
  test('synth, change the workload, synth again (same synchronous run)', () => {
    const { chart, dep } = nativeApp();
    expect(layoutOf(manifestOf(Testing.synth(chart), 'Deployment')).containers).toEqual(['app']);
    dep.addContainer({ name: 'late', image: 'ghcr.io/example/late:1' });
    expect(layoutOf(manifestOf(Testing.synth(chart), 'Deployment')).containers).toEqual(['app', 'late']);
  });

  test('a failed synth, a fix, and a synth again', () => {
    const { chart } = newChart();
    const dep = new kplus.Deployment(chart, 'web', { containers: [{ name: 'log-agent', image: 'x', portNumber: 8080 }] });
    new WithLogAgent(chart, 'logs', { workload: dep, kubernetesVersion: '1.29', containerName: 'shipper' });
    expect(layoutOf(manifestOf(Testing.synth(chart), 'Deployment')).init).toEqual(['sidecar-tools', 'shipper']);
    dep.addContainer({ name: 'shipper', image: 'y' });
    expect(() => Testing.synth(chart)).toThrow(/container name 'shipper' is already used/);
  });

  test('synthesize chart A, add a container to chart B\'s workload, then a direct toJson() of B\'s Deployment has it (fails with a render kept from validation)', () => {
    const { app, chart } = nativeApp();
    const other = new Chart(app, 'other');
    const depB = kplusWorkload(other, 'Deployment') as kplus.Deployment;
    new WithLogAgent(other, 'logs', { workload: depB, kubernetesVersion: '1.29' });
    Testing.synth(chart); // validates (and renders) chart B as well
    depB.addContainer({ name: 'late', image: 'ghcr.io/example/late:1' });
    const json = ApiObject.of(depB).toJson();
    expect(json.spec.template.spec.containers.map((c: any) => c.name)).toEqual(['app', 'late']);
    expect(json.spec.template.spec.initContainers.map((c: any) => c.name)).toContain('log-agent');
  });

  test('every synth path after a change sees the change: Testing.synth, Chart.toJson, App.synthYaml, a direct toJson()', () => {
    const paths: Array<[string, (app: App, chart: Chart, dep: kplus.Deployment) => any]> = [
      ['Testing.synth', (_a, chart) => manifestOf(Testing.synth(chart), 'Deployment')],
      ['Chart.toJson', (_a, chart) => manifestOf(chart.toJson(), 'Deployment')],
      ['App.synthYaml', (app) => manifestOf(parseAllDocuments(app.synthYaml()).map(d => d.toJSON()), 'Deployment')],
      ['toJson', (_a, _c, dep) => ApiObject.of(dep).toJson()],
    ];
    for (const [first] of paths) {
      for (const [then, synth] of paths) {
        const { app, chart, dep } = nativeApp();
        paths.find(([n]) => n === first)![1](app, chart, dep);
        dep.addContainer({ name: 'late', image: 'ghcr.io/example/late:1' });
        expect([first, then, layoutOf(synth(app, chart, dep)).containers]).toEqual([first, then, ['app', 'late']]);
      }
    }
  });

  test('a manifest handed out is the caller\'s: changing it changes nothing of the next toJson()', () => {
    const { dep } = nativeApp();
    const json = ApiObject.of(dep).toJson();
    json.spec.template.spec.containers.push({ name: 'mutated-by-caller' });
    expect(layoutOf(ApiObject.of(dep).toJson()).containers).toEqual(['app']);
  });

  test('two charts: synthesizing one validates the other too; a change to the other before its own synth is seen', () => {
    const { app, chart } = nativeApp();
    const other = new Chart(app, 'other');
    const dep2 = kplusWorkload(other, 'Deployment') as kplus.Deployment;
    new WithLogAgent(other, 'logs', { workload: dep2, kubernetesVersion: '1.29' });
    Testing.synth(chart); // validates (and renders) 'other' as well
    dep2.addContainer({ name: 'late', image: 'ghcr.io/example/late:1' });
    expect(layoutOf(manifestOf(Testing.synth(other), 'Deployment')).containers).toEqual(['app', 'late']);
  });
});

/**
 * A raw Deployment whose own toJson() counts its calls (the binding wraps the object's toJson as
 * it finds it, so the count is of the renders of this workload).
 */
function countedWorkload(chart: Chart, id: string): { obj: ApiObject; calls: () => number } {
  const obj = rawDeployment(chart, id);
  let calls = 0;
  const own = obj.toJson.bind(obj);
  Object.defineProperty(obj, 'toJson', { value: () => { calls++; return own(); }, configurable: true, writable: true });
  return { obj, calls: () => calls };
}

/** Counts the engine's runs (applySidecars, the costly part of a render) while `body` runs. */
function engineRuns(body: (runs: () => number) => void): void {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const engine = require('../src/engine/pod-template');
  const spy = jest.spyOn(engine, 'applySidecars');
  try {
    body(() => spy.mock.calls.length);
  } finally {
    spy.mockRestore();
  }
}

describe('one synthesis runs the engine once per workload, whatever the number of charts', () => {
  // cdk8s may validate the whole app more than once per synthesis (2.70 does once per chart it
  // emits, and once before), and nothing marks where a synthesis ends. A render per validation
  // made synthesis quadratic in the number of charts (200 one-workload charts took 9x the
  // hand-written time; 6x again with a read of the workload's own toJson() per validation). The
  // binding validates a workload once per synthesis (src/bind/binding.ts AppState: a synthesis is
  // over when every bound workload was emitted), reading its own toJson() (the key of its render),
  // and one engine run. In App.synth() and App.synthYaml() the render is made in the first chart's
  // pass, and the emit takes it without reading the workload again: 1 read per call (as a
  // hand-written workload's one toJson()); elsewhere (Testing.synth) the emit reads it again: 2.
  const build = (charts: number) => {
    const app = Testing.app();
    const workloads = Array.from({ length: charts }, (_x, i) => {
      const chart = new Chart(app, `c${i}`);
      const w = countedWorkload(chart, `w${i}`);
      new WithLogAgent(chart, 'logs', { workload: w.obj, kubernetesVersion: '1.29' });
      return w;
    });
    return { app, workloads };
  };

  test.each([1, 2, 7])('app.synthYaml() with %i chart(s): one engine run per workload and call', (charts) => engineRuns((runs) => {
    const { app, workloads } = build(charts);
    app.synthYaml();
    expect(runs()).toBe(charts);
    expect(workloads.map(w => w.calls())).toEqual(workloads.map(() => 1));
    // a second call: validated again; the kept render's errors serve the passes, its manifest was handed out
    app.synthYaml();
    expect(runs()).toBe(2 * charts);
    expect(workloads.map(w => w.calls())).toEqual(workloads.map(() => 2));
  }));

  test('the sources\' checks of the workload run once per workload and call: the emit of a render kept in the call takes its findings', () => {
    const { app } = build(3);
    const checks = jest.spyOn(WithLogAgent.prototype as any, '_checkWorkload');
    const inferred = jest.spyOn(WithLogAgent.prototype as any, '_workloadWarnings');
    try {
      app.synthYaml();
      expect([checks.mock.calls.length, inferred.mock.calls.length]).toEqual([3, 3]);
      // a second call: its first chart's pass renders anew (the kept manifest was handed out) and
      // checks, and the emit takes that render
      app.synthYaml();
      expect([checks.mock.calls.length, inferred.mock.calls.length]).toEqual([6, 6]);
      // a direct toJson() (no validation of a call kept a render for it) checks again
      ApiObject.of(app.node.findChild('c0')!.node.findChild('w0')).toJson();
      expect(checks.mock.calls.length).toBe(7);
    } finally {
      checks.mockRestore();
      inferred.mockRestore();
    }
  });

  test('app.synth() (files written) with 5 charts: one engine run per workload', () => engineRuns((runs) => {
    const { app, workloads } = build(5);
    app.synth();
    expect(runs()).toBe(5);
    expect(workloads.map(w => w.calls())).toEqual([1, 1, 1, 1, 1]);
    expect(fs.readdirSync(app.outdir).filter(f => f.endsWith('.k8s.yaml'))).toHaveLength(5);
  }));

  test('Testing.synth(chart) validates the whole app (one render per workload), then its own chart\'s takes the kept render', () => engineRuns((runs) => {
    const { app, workloads } = build(3);
    Testing.synth(app.node.findChild('c1') as Chart);
    expect(workloads.map(w => w.calls())).toEqual([1, 2, 1]);
    expect(runs()).toBe(3);
  }));

  test('a synthesis that fails validation, a fix, and another synthesis: the failed one\'s errors are not reused', () => {
    const { app } = build(3);
    const bad = rawDeployment(app.node.findChild('c0') as Chart, 'bad', { containers: [{ name: 'log-agent', image: 'x' }] });
    new WithLogAgent(app.node.findChild('c0') as Chart, 'logs-bad', { workload: bad, kubernetesVersion: '1.29' });
    expect(() => app.synthYaml()).toThrow(/container name 'log-agent' is already used/);
    ApiObject.of(bad).addJsonPatch(JsonPatch.replace('/spec/template/spec/containers/0/name', 'app'));
    const docs = parseAllDocuments(app.synthYaml()).map(d => d.toJSON());
    expect(layoutOf(docs.find((m: any) => m.metadata?.name === 'bad')).containers).toEqual(['app']);
  });

  test('toJson() takes the kept render when nothing changed: the engine runs once per workload and call, in every synth path', () => engineRuns((runs) => {
    const { app, workloads } = build(4);
    app.synthYaml();
    expect(runs()).toBe(4);
    app.synthYaml();
    expect(runs()).toBe(8);
    // Testing.synth: its validation takes the kept errors; its chart's toJson() renders (the kept manifest was handed out)
    Testing.synth(app.node.findChild('c0') as Chart);
    expect(runs()).toBe(9);
    // a change: the first pass renders the changed workload, and its toJson() takes that render;
    // the others' passes take their kept errors, and their toJson() renders: still one run each
    workloads[2].obj.addJsonPatch(JsonPatch.add('/metadata/annotations', { changed: 'yes' }));
    app.synthYaml();
    expect(runs()).toBe(9 + 4);
  }));

  test('a change made within the call after the binding\'s validation (a user validation that adds a container) is in the output', () => {
    const { app, chart, dep } = nativeApp();
    // validated after the workload's object (cdk8s validates in construct-tree order)
    const late = new Construct(chart, 'late-adder');
    late.node.addValidation({
      validate: () => {
        if (!dep.containers.some(c => c.name === 'late')) dep.addContainer({ name: 'late', image: 'ghcr.io/example/late:1' });
        return [];
      },
    });
    const docs = parseAllDocuments(app.synthYaml()).map(d => d.toJSON());
    expect(layoutOf(manifestOf(docs, 'Deployment')).containers).toEqual(['app', 'late']);
  });

  test('two toJson() of one workload in one call: the second renders afresh, and the two manifests share no object', () => {
    const { app, dep } = nativeApp();
    let first: any;
    let second: any;
    const own = app.synthYaml.bind(app);
    // a resolver-free way to call toJson twice inside one synthesis call: from a chart's toJson
    const chart = ApiObject.of(dep).node.scope!.node.scope as Chart;
    const chartToJson = chart.toJson.bind(chart);
    Object.defineProperty(chart, 'toJson', {
      value: () => {
        const out = chartToJson();
        first = ApiObject.of(dep).toJson();
        second = ApiObject.of(dep).toJson();
        return out;
      },
      configurable: true,
    });
    own();
    expect(second).toEqual(first);
    first.spec.template.spec.containers.push({ name: 'mutated' });
    expect(second.spec.template.spec.containers.map((c: any) => c.name)).toEqual(['app']);
  });

  test('a jsii host subclass (Python/Java) that overrides synthYaml: construction works, and its super call runs the engine once per workload', () => engineRuns((runs) => {
    // The jsii kernel defines a host override on the instance, non-configurable and read-only
    // (@jsii/kernel _defineOverridenMethod), and runs `super` and plain calls through the class's
    // prototype: the binding relies on neither (it hooks no App method).
    const app = Testing.app();
    Object.defineProperty(app, 'synthYaml', {
      value: function (this: App) { return App.prototype.synthYaml.call(this); },
      configurable: false,
      writable: false,
    });
    const workloads = Array.from({ length: 5 }, (_x, i) => {
      const chart = new Chart(app, `c${i}`);
      const w = countedWorkload(chart, `w${i}`);
      new WithLogAgent(chart, 'logs', { workload: w.obj, kubernetesVersion: '1.29' });
      return w;
    });
    app.synthYaml();
    expect(runs()).toBe(5);
    expect(workloads.map(w => w.calls())).toEqual([1, 1, 1, 1, 1]);
    // the kernel's call of a method the host did not override: through the prototype
    App.prototype.synth.call(app);
    expect(runs()).toBe(10);
  }));

  test('a workload broken between two calls fails the second call: in its validation, or (after charts without sidecars) in its emit', () => {
    const validationError = (synth: () => unknown) => {
      try {
        synth();
      } catch (e) {
        return (e as Error).message;
      }
      return '';
    };
    // two app.synthYaml() calls
    const { app, workloads } = build(2);
    app.synthYaml();
    workloads[0].obj.addJsonPatch(JsonPatch.add('/spec/template/spec/containers/-', { name: 'log-agent', image: 'x' }));
    expect(validationError(() => app.synthYaml())).toMatch(/^Validation failed with the following errors:[\s\S]*container name 'log-agent' is already used/);
    // the last chart has no sidecar: its validation passes come after every bound workload was
    // emitted, and look like the next call's (cdk8s does not say which they are); the break is
    // then found by the workload's toJson(), which throws the same refusal
    const plain = build(2);
    new Chart(plain.app, 'plain');
    plain.app.synthYaml();
    plain.workloads[0].obj.addJsonPatch(JsonPatch.add('/spec/template/spec/containers/-', { name: 'log-agent', image: 'x' }));
    expect(validationError(() => plain.app.synthYaml())).toMatch(/container name 'log-agent' is already used/);
    // Testing.synth of one chart, then of another whose workload was broken in between: the first
    // synthesis is not over (one chart's workloads emitted), so the break is found by the emit
    const second = build(2);
    Testing.synth(second.app.node.findChild('c0') as Chart);
    second.workloads[1].obj.addJsonPatch(JsonPatch.add('/spec/template/spec/containers/-', { name: 'log-agent', image: 'x' }));
    const thrown = validationError(() => Testing.synth(second.app.node.findChild('c1') as Chart));
    expect(thrown).toMatch(/^cdk8s-sidecars: WithLogAgent 'c1\/logs': container name 'log-agent' is already used/);
    expect(Errors.isSidecarError(thrown)).toBe(true);
  });

  test('Testing.synth of one chart twice, with a Service added in between, sees the Service (an object emitted again starts another synthesis)', () => {
    // two charts with sidecars: synthesizing only the first never emits the second's workload
    const app = Testing.app();
    const web = new Chart(app, 'web');
    const raw = rawDeployment(web, 'raw', { containers: [{ name: 'app', image: 'x', ports: [{ containerPort: 8080 }], readinessProbe: { exec: { command: ['/ready'] } } }] });
    new WithEnvoy(web, 'envoy', { workload: raw, kubernetesVersion: '1.29', appPort: 8080, appListensOnPodIp: true });
    const other = new Chart(app, 'other');
    new WithLogAgent(other, 'logs', { workload: rawDeployment(other, 'raw'), kubernetesVersion: '1.29' });
    Testing.synth(web);
    expect(SidecarWarnings.of(web)).toEqual([]);
    new ApiObject(web, 'svc', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'raw' }, spec: { selector: { app: 'raw' }, ports: [{ port: 80, targetPort: 8080 }] } });
    Testing.synth(web);
    expect(SidecarWarnings.of(web)).toEqual([expect.stringMatching(/^WithEnvoy 'web\/envoy': Service 'web\/svc' selects the workload's pods and sends traffic to appPort 8080/)]);
  });

  test('a change between two app.synthYaml() calls of one synchronous run is seen by the second', () => {
    const { app, chart, dep } = nativeApp();
    new Chart(app, 'second');
    app.synthYaml();
    dep.addContainer({ name: 'late', image: 'ghcr.io/example/late:1' });
    const docs = parseAllDocuments(app.synthYaml()).map(d => d.toJSON());
    expect(layoutOf(manifestOf(docs, 'Deployment')).containers).toEqual(['app', 'late']);
    expect(chart).toBeDefined();
  });
});

describe('App.synth() and App.synthYaml() read each workload once (the call path tells their passes apart)', () => {
  test('the first chart\'s pass renders: an error is still thrown before any file is written', () => {
    const app = Testing.app();
    const a = new Chart(app, 'a');
    new WithLogAgent(a, 'logs', { workload: rawDeployment(a, 'ok'), kubernetesVersion: '1.29' });
    const b = new Chart(app, 'b');
    const bad = rawDeployment(b, 'bad', { containers: [{ name: 'log-agent', image: 'x' }] });
    new WithLogAgent(b, 'logs', { workload: bad, kubernetesVersion: '1.29' });
    expect(() => app.synth()).toThrow(/^Validation failed with the following errors:[\s\S]*container name 'log-agent' is already used/);
    expect(fs.existsSync(app.outdir) ? fs.readdirSync(app.outdir) : []).toEqual([]);
  });

  test.each([YamlOutputType.FOLDER_PER_CHART_FILE_PER_RESOURCE, YamlOutputType.FILE_PER_RESOURCE, YamlOutputType.FILE_PER_APP])(
    'App.synth() with output type %s: one read per workload, the sidecars in the files, a later chart\'s error before any file', (yamlOutputType) => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'per-resource-'));
      const app = new App({ outdir: dir, yamlOutputType });
      const workloads = ['a', 'b'].map(c => {
        const chart = new Chart(app, c);
        const w = countedWorkload(chart, `w${c}`);
        new WithLogAgent(chart, 'logs', { workload: w.obj, kubernetesVersion: '1.29' });
        return w;
      });
      app.synth();
      expect(workloads.map(w => w.calls())).toEqual([1, 1]);
      const files = (fs.readdirSync(dir, { recursive: true }) as string[]).filter(f => f.endsWith('.yaml'));
      const docs = files.flatMap(f => parseAllDocuments(fs.readFileSync(path.join(dir, f), 'utf8')).map(d => d.toJSON()));
      expect(docs.filter((m: any) => m?.kind === 'Deployment').map((m: any) => layoutOf(m).init)).toEqual([['sidecar-tools', 'log-agent'], ['sidecar-tools', 'log-agent']]);
      // the same app with a broken workload in its last chart: refused in validation, nothing written
      const out = fs.mkdtempSync(path.join(os.tmpdir(), 'per-resource-bad-'));
      const bad = new App({ outdir: path.join(out, 'dist'), yamlOutputType });
      const first = new Chart(bad, 'a');
      new WithLogAgent(first, 'logs', { workload: rawDeployment(first, 'ok'), kubernetesVersion: '1.29' });
      const last = new Chart(bad, 'b');
      new WithLogAgent(last, 'logs', { workload: rawDeployment(last, 'bad', { containers: [{ name: 'log-agent', image: 'x' }] }), kubernetesVersion: '1.29' });
      expect(() => bad.synth()).toThrow(/^Validation failed with the following errors:[\s\S]*container name 'log-agent' is already used/);
      expect(fs.existsSync(path.join(out, 'dist')) ? fs.readdirSync(path.join(out, 'dist'), { recursive: true }).filter(f => String(f).endsWith('.yaml')) : []).toEqual([]);
    });

  test('App.synth() that fails writing a file, then a change to a later chart\'s workload: its direct toJson() has the change', () => {
    const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'failed-write-'));
    fs.mkdirSync(path.join(outdir, 'a.k8s.yaml')); // chart a's file cannot be written (EISDIR)
    const app = new App({ outdir });
    const a = new Chart(app, 'a');
    new kplus.ConfigMap(a, 'cm', { data: { x: '1' } });
    const b = new Chart(app, 'b');
    const dep = kplusWorkload(b, 'Deployment') as kplus.Deployment;
    new WithLogAgent(b, 'logs', { workload: dep, kubernetesVersion: '1.29' });
    expect(() => app.synth()).toThrow(/EISDIR/);
    dep.addContainer({ name: 'late', image: 'ghcr.io/example/late:1' });
    expect(layoutOf(ApiObject.of(dep).toJson()).containers).toEqual(['app', 'late']);
  });

  test('another construct\'s validation fails the App\'s own pass: that call names it alone, the next (or a direct validate()) the sidecar\'s', () => {
    const app = Testing.app();
    const a = new Chart(app, 'a');
    const bad = rawDeployment(a, 'bad', { containers: [{ name: 'log-agent', image: 'x' }] });
    new WithLogAgent(a, 'logs', { workload: bad, kubernetesVersion: '1.29' });
    let broken = true;
    new Construct(a, 'user-thing').node.addValidation({ validate: () => (broken ? ['user error'] : []) });
    // the sidecars are rendered in the first chart's pass, which a failed App pass never reaches
    expect(() => app.synthYaml()).toThrow(/^Validation failed with the following errors:\n {2}\[a\/user-thing\] user error$/);
    expect(ApiObject.of(bad).node.validate()).toEqual([expect.stringMatching(/container name 'log-agent' is already used/)]);
    broken = false;
    expect(() => app.synthYaml()).toThrow(/\[a\/bad\] .*container name 'log-agent' is already used/);
  });

  test('a caller\'s Error.prepareStackTrace and stackTraceLimit are left as they were', () => {
    const { app } = nativeApp();
    const prepare = (_e: Error, sites: NodeJS.CallSite[]) => `custom ${sites.length}`;
    const saved = [Error.prepareStackTrace, Error.stackTraceLimit] as const;
    Error.prepareStackTrace = prepare;
    Error.stackTraceLimit = 3;
    try {
      app.synthYaml();
      expect([Error.prepareStackTrace, Error.stackTraceLimit]).toEqual([prepare, 3]);
    } finally {
      [Error.prepareStackTrace, Error.stackTraceLimit] = saved;
    }
  });

  test('a change between a Chart.toJson() of the user\'s and App.synthYaml() is emitted: the chart\'s own call is no whole-App call', () => {
    const { app, chart, dep } = nativeApp();
    new Chart(app, 'second');
    chart.toJson();
    dep.addContainer({ name: 'late', image: 'ghcr.io/example/late:1' });
    const docs = parseAllDocuments(app.synthYaml()).map(d => d.toJSON());
    expect(layoutOf(manifestOf(docs, 'Deployment')).containers).toEqual(['app', 'late']);
  });
});

describe('errors are reported under the workload\'s path', () => {
  test('the second construct\'s error on a workload is not prefixed with the first construct\'s path', () => {
    const { chart } = newChart();
    const dep = kplusWorkload(chart, 'Deployment');
    new WithLogAgent(chart, 'logs', { workload: dep, kubernetesVersion: '1.29' });
    new WithTracer(chart, 'tracer', { workload: dep, kubernetesVersion: '1.29', exporterEndpoint: 'otel:4317', containerName: 'app' });
    let message = '';
    try {
      Testing.synth(chart);
    } catch (e) {
      message = (e as Error).message;
    }
    const line = message.split('\n').find(l => l.includes("WithTracer 'test/tracer': container name 'app'"));
    expect(line).toBeDefined();
    expect(line!.trim().startsWith(`[${ApiObject.of(dep).node.path}] `)).toBe(true);
    expect(message).not.toContain('[test/logs]');
  });
});

describe('a constructor that throws leaves nothing behind', () => {
  test('new WithEnvoy(..., { appPort: 70000 }) throws; the caller catches it; the next synth works and has no Envoy', () => {
    const { chart } = newChart();
    const dep = kplusWorkload(chart, 'Deployment');
    expect(() => new WithEnvoy(chart, 'envoy', { workload: dep, appPort: 70000, kubernetesVersion: '1.29' })).toThrow(/appPort 70000/);
    const manifests = Testing.synth(chart);
    expect(layoutOf(manifestOf(manifests, 'Deployment'))).toEqual({ init: [], containers: ['app'] });
    expect(manifests.filter((m: any) => m.kind === 'ConfigMap')).toEqual([]);
  });

  test('the same for a log agent whose output port is wrong, and a tracer without endpoint', () => {
    const { chart } = newChart();
    const dep = kplusWorkload(chart, 'Deployment');
    expect(() => new WithLogAgent(chart, 'logs', { workload: dep, output: LogOutput.http({ host: 'logs.example.com', port: 0 }) })).toThrow();
    expect(() => new WithTracer(chart, 'tracer', { workload: dep, exporterEndpoint: '' })).toThrow(/exporterEndpoint/);
    new WithLogAgent(chart, 'logs2', { workload: dep, kubernetesVersion: '1.29' });
    const layout = layoutOf(manifestOf(Testing.synth(chart), 'Deployment'));
    expect(layout.containers).toEqual(['app']);
    expect(layout.init.filter((n: string) => n !== 'sidecar-tools')).toEqual(['log-agent']);
  });

  test('a subclass of WithLogAgent is still one log agent: two on one workload are refused', () => {
    class MyLogs extends WithLogAgent {}
    const { chart } = newChart();
    const dep = kplusWorkload(chart, 'Deployment');
    new WithLogAgent(chart, 'logs', { workload: dep, kubernetesVersion: '1.29' });
    new MyLogs(chart, 'mine', { workload: dep, kubernetesVersion: '1.29', containerName: 'mine' });
    expect(() => Testing.synth(chart)).toThrow(/attach one WithLogAgent per workload/);
  });
});

describe('the engine caches a placed container only for a frozen spec', () => {
  test('a spec changed between two applySidecars calls gives the changed container', () => {
    const spec: any = {
      owner: 'x',
      kind: 'X',
      rank: 1,
      layout: 'NATIVE',
      allowLegacyOnJob: false,
      container: {
        name: 'side',
        image: 'a:1',
        resources: { limits: { cpu: '100m', memory: '64Mi' }, requests: { cpu: '10m', memory: '64Mi' } },
        securityContext: { runAsNonRoot: true, runAsUser: 101 },
        startupProbe: { httpGet: { path: '/', port: 9000 } },
      },
      volumes: [],
      appMounts: [],
      appEnv: [],
      podAnnotations: {},
      shutdown: { stopSeconds: 1, appShutdownSeconds: 10 },
    };
    const pod = () => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'app', image: 'app:1' }] } });
    const first = applySidecars(pod(), [spec], { minor: 29, gate: false });
    expect(first.manifest.spec.initContainers[0].image).toBe('a:1');
    spec.container.image = 'b:2';
    const second = applySidecars(pod(), [spec], { minor: 29, gate: false });
    expect(second.manifest.spec.initContainers[0].image).toBe('b:2');
  });
});

describe('SidecarBase: the skeleton a generic sidecar plugs into', () => {
  class GivenSidecar extends SidecarBase {
    constructor(scope: Construct, id: string, props: SidecarProps) {
      super(scope, id, props, 'given');
      this._attach({
        kind: 'GivenSidecar',
        rank: 400,
        image: 'ghcr.io/example/given:1',
        args: ['--serve'],
        user: 1234,
        ports: [],
        resources: { limits: { cpu: '100m', memory: '64Mi' }, requests: { cpu: '10m', memory: '32Mi' } },
        files: { 'given.conf': 'a = 1\n' },
        volumes: [{ suffix: '-config', mountPath: '/etc/given', readOnly: true }],
        shutdown: { stopSeconds: 1, readAfterAppExitSeconds: 0 },
        containerOverrides: { workingDir: '/work', startupProbe: { exec: { command: ['/bin/ready'] }, periodSeconds: 1 } },
      });
    }
  }

  test('a user-given container (exec probe, workingDir) with a config file: container, config volume and checksum built once', () => {
    const { chart } = newChart();
    const dep = kplusWorkload(chart, 'Deployment');
    new GivenSidecar(chart, 'given', { workload: dep, kubernetesVersion: '1.29' });
    const manifests = Testing.synth(chart);
    const spec = podSpecOf(manifestOf(manifests, 'Deployment'));
    const given = spec.initContainers.find((c: any) => c.name === 'given');
    expect(given).toMatchObject({
      image: 'ghcr.io/example/given:1',
      args: ['--serve'],
      workingDir: '/work',
      restartPolicy: 'Always',
      startupProbe: { exec: { command: ['/bin/ready'] } },
      securityContext: { runAsUser: 1234, runAsNonRoot: true, readOnlyRootFilesystem: true },
      volumeMounts: [{ mountPath: '/etc/given', name: 'given-config', readOnly: true }],
    });
    const cm = manifests.find((m: any) => m.kind === 'ConfigMap');
    expect(cm.data).toEqual({ 'given.conf': 'a = 1\n' });
    expect(spec.volumes).toContainEqual({ configMap: { name: cm.metadata.name }, name: 'given-config' });
    const annotations = manifestOf(manifests, 'Deployment').spec.template.metadata.annotations;
    expect(annotations['checksum.sidecars.cdk8s.io/given']).toMatch(/^[0-9a-f]{64}$/);
  });
});
