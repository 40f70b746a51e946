/**
 * One way into the manifest, and nothing patched into cdk8s (issue 35, point 3): the library
 * never assigns or redefines a method of a cdk8s class (the App.prototype.synth / synthYaml
 * wrapper it had showed in every user's stack trace), and every change it makes to an object's
 * output is one of the hooks of src/bind/hooks.ts, one per kind of object: the `toJson()` of an
 * object the user created (a workload, a Service given to exposeVia()) wrapped on the instance,
 * the library's own objects (ConfigMaps, the guard's) of ApiObject subclasses. Checked at run
 * time, after every public construct was built and the app synthesized in every way, and in the
 * source.
 */
import * as fs from 'fs';
import * as path from 'path';
import { ApiObject, App, Chart, Include, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import {
  AdoptSidecar, Mesh, NativeSidecarGuard, SidecarCheck, SidecarTimeline, SidecarValidation, Sidecars, WithEnvoy, WithLogAgent,
  WithMeshProxy, WithSidecar, WithTracer,
} from '../src';
import { APP_CONTAINER, rawDeployment } from './util/fixtures';

const CLASSES: Array<[string, any]> = [['App', App], ['Chart', Chart], ['ApiObject', ApiObject], ['Include', Include], ['Testing', Testing]];

/** Every own property of each cdk8s class and its prototype, as descriptors. */
function snapshot(): Map<string, PropertyDescriptor | undefined> {
  const out = new Map<string, PropertyDescriptor | undefined>();
  for (const [name, cls] of CLASSES) {
    for (const [where, o] of [['', cls], ['.prototype', cls.prototype]] as const) {
      for (const key of Reflect.ownKeys(o)) out.set(`${name}${where}.${String(key)}`, Object.getOwnPropertyDescriptor(o, key));
    }
  }
  return out;
}

const before = snapshot();

function buildEverything(): { app: App; chart: Chart; web: kplus.Deployment; envoy: WithEnvoy; raw: ApiObject; meshed: kplus.Deployment } {
  const app = Testing.app();
  Sidecars.configure(app, { kubernetesVersion: '1.31' });
  const chart = new Chart(app, 'test');
  const web = new kplus.Deployment(chart, 'web', { containers: [APP_CONTAINER] });
  new WithLogAgent(chart, 'logs', { workload: web });
  new WithTracer(chart, 'tracer', { workload: web, exporterEndpoint: 'otel-gateway.observability:4317' });
  const envoy = new WithEnvoy(chart, 'envoy', { workload: web, appPort: 8080, appListensOnPodIp: true });
  const other = new Chart(app, 'other');
  const raw = rawDeployment(other, 'raw', { containers: [{ name: 'app', image: 'ghcr.io/example/app:1' }, { name: 'proxy', image: 'ghcr.io/example/proxy:1' }] });
  new AdoptSidecar(other, 'adopt', { workload: raw, containerName: 'proxy', startupCheck: SidecarCheck.tcp(9901) });
  new WithSidecar(other, 'agent', { workload: raw, containerName: 'auth-proxy', image: 'ghcr.io/example/auth-proxy:1.0.0' });
  const meshed = new kplus.Deployment(other, 'meshed', { containers: [APP_CONTAINER] });
  new WithMeshProxy(other, 'mesh', { workload: meshed, mesh: Mesh.ISTIO });
  new NativeSidecarGuard(other, 'guard', { namespaces: ['shop'] });
  SidecarValidation.addTo(app);
  return { app, chart, web, envoy, raw, meshed };
}

describe('no cdk8s class is patched', () => {
  let stderr: jest.SpyInstance;
  beforeEach(() => { stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true); });
  afterEach(() => stderr.mockRestore());

  test('after building every construct and synthesizing in every way, every method of App, Chart, ApiObject, Include and Testing is cdk8s\' own', () => {
    const { app, chart, web } = buildEverything();
    app.synthYaml();
    app.synth();
    Testing.synth(chart);
    ApiObject.of(web).toJson();
    SidecarTimeline.of(web);
    expect(snapshot()).toEqual(before);
    // and the App instance has no method of its own either
    expect(Reflect.ownKeys(app).filter(k => typeof (app as any)[k] === 'function')).toEqual([]);
  });

  test('the objects with a toJson() of their own are the user\'s workloads with sidecars and the raw Service given to exposeVia(); the library\'s own objects are of its subclasses', () => {
    const { app, chart, web, envoy, raw, meshed } = buildEverything();
    const svc = new ApiObject(chart, 'svc', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { selector: { app: 'web' } } });
    envoy.exposeVia(svc);
    envoy.exposeVia(svc, envoy.servicePort({ port: 8080, name: 'alt' }));
    app.synthYaml();
    const objects = app.node.findAll().filter(ApiObject.isApiObject);
    const own = objects.filter(o => Object.prototype.hasOwnProperty.call(o, 'toJson')).map(o => o.node.path).sort();
    expect(own).toEqual([ApiObject.of(web), raw, ApiObject.of(meshed), svc].map(o => o.node.path).sort());
    // the library's objects (created in a construct of the library): its ConfigMaps (one per agent with a config) and the guard's two
    const constructs = [WithLogAgent, WithTracer, WithEnvoy, WithSidecar, AdoptSidecar, WithMeshProxy, NativeSidecarGuard];
    const library = objects.filter(o => o.node.scopes.some(s => constructs.some(c => s instanceof c)));
    expect(library.map(o => `${o.kind} ${o.constructor.name}`).sort()).toEqual([
      ...Array(3).fill('ConfigMap AgentConfigMap'), 'ValidatingAdmissionPolicy TargetVersionedApiObject', 'ValidatingAdmissionPolicyBinding TargetVersionedApiObject',
    ]);
    // the Service's hook appends the ports once each, after its own
    expect(svc.toJson().spec.ports.map((p: any) => p.name)).toEqual(['http', 'alt']);
  });

  test('the stack of an error thrown in a user\'s validation during app.synthYaml() has no frame of the library', () => {
    const { app } = buildEverything();
    new Chart(app, 'late').node.addValidation({ validate: () => { throw new Error('user'); } });
    let stack = '';
    try {
      app.synthYaml();
    } catch (e) {
      stack = (e as Error).stack ?? '';
    }
    expect(stack).toMatch(/synthYaml/);
    const src = path.join(__dirname, '..', 'src') + path.sep;
    expect(stack.split('\n').filter(l => l.includes(src))).toEqual([]);
  });
});

/** Every .ts file under src/. */
function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap(e => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sources(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

/** The lines of src/ that one of `patterns` finds, as `file:line: text`. */
function linesOf(patterns: RegExp[]): string[] {
  const hits: string[] = [];
  for (const file of sources(path.join(__dirname, '..', 'src'))) {
    fs.readFileSync(file, 'utf8').split('\n').forEach((line, i) => {
      if (patterns.some(p => p.test(line))) hits.push(`${path.relative(path.join(__dirname, '..'), file).split(path.sep).join('/')}:${i + 1}: ${line.trim()}`);
    });
  }
  return hits;
}

describe('the source assigns no prototype', () => {
  // an assignment to a prototype's member, a (re)definition on a prototype or one found by
  // getPrototypeOf (how the wrapper reached App.prototype), or a prototype swapped
  const PATTERNS = [
    /\.prototype(\.[\w$]+|\[[^\]]+\])\s*=[^=]/,
    /defineProperty\(\s*[^,]*(prototype|getPrototypeOf)/i,
    /defineProperty\(\s*(owner|proto)\b/,
    /setPrototypeOf\(/,
    /getPrototypeOf\([^)]*\)\s*\.\s*[\w$]+\s*=[^=]/,
  ];

  test('no line of src/ patches a prototype', () => {
    expect(linesOf(PATTERNS)).toEqual([]);
  });

  test('the patterns find the wrapper the library had and the usual forms', () => {
    const old = [
      '    Object.defineProperty(owner, method, { value: wrapper, configurable: true, writable: true, enumerable: false });',
      '  App.prototype.synth = function () {};',
      "  Object.defineProperty(App.prototype, 'synthYaml', { value: f });",
      "  ApiObject.prototype['toJson'] = f;",
      '  Object.setPrototypeOf(app, Other.prototype);',
    ];
    for (const line of old) expect([line, PATTERNS.some(p => p.test(line))]).toEqual([line, true]);
    // reading is fine
    expect(PATTERNS.some(p => p.test('  if (proto !== Object.prototype && proto !== null) {'))).toBe(false);
  });
});

describe('every toJson() hook is in src/bind/hooks.ts, one per kind of object', () => {
  // a toJson defined on an instance (defineProperty, Reflect, an assignment, Object.assign) or
  // declared as a method (a class's override or an object literal's)
  const TO_JSON = [
    /(defineProperty|Reflect\.set)\(\s*[^,]+,\s*['"`]toJson['"`]/,
    /(\.toJson|\[\s*['"`]toJson['"`]\s*\])\s*=[^=]/,
    /^\s*(public\s+|protected\s+|override\s+)*toJson\s*\([^)]*\)\s*(:[^{]*)?\{/,
    /\btoJson\s*:\s*(function\b|\([^)]*\)\s*=>|[\w$]+\s*=>)/,
  ];

  test('the hooks are the instance hook (a workload\'s, a raw Service\'s) and the two subclasses\' toJson(), in src/bind/hooks.ts; no other line of src/ defines a toJson', () => {
    expect(linesOf(TO_JSON).map(l => l.replace(/:\d+:/, ':'))).toEqual([
      "src/bind/hooks.ts: Object.defineProperty(obj, 'toJson', { value: () => emit(own), configurable: true, writable: true });",
      'src/bind/hooks.ts: public toJson(): any {',
      'src/bind/hooks.ts: public toJson(): any {',
    ]);
  });

  test('the patterns find the hooks src/ had outside src/bind/ and the usual forms; a call or a read is none', () => {
    const old = [
      // src/sidecar.ts (an agent's ConfigMap), src/service-port.ts (a raw Service), src/guard.ts (VersionedApiObject)
      "    Object.defineProperty(cm, 'toJson', {",
      "    Object.defineProperty(obj, 'toJson', {",
      '  public toJson(): any {',
      '  obj.toJson = () => json;',
      "  (obj as any)['toJson'] = f;",
      "  Reflect.set(obj, 'toJson', f);",
      '  Object.assign(obj, { toJson: () => json });',
      '  override toJson() {',
      '  toJson(): Json {',
      '  const o = { toJson: function () { return 1; } };',
    ];
    for (const line of old) expect([line, TO_JSON.some(p => p.test(line))]).toEqual([line, true]);
    const reads = [
      '    const cmToJson = cm.toJson.bind(cm);',
      '        svc = c.toJson();',
      "    if (!ApiObject.isApiObject(workload) && kplusMeta && typeof kplusMeta.toJson === 'function') return kplusMeta.toJson();",
      '  const byKey = new Map(objects.map((o, i) => [keyOf(o.toJson()), i]));',
      '      return this.originalToJson();',
      ' * (its `toJson()`, once per `app.synth()`)',
    ];
    for (const line of reads) expect([line, TO_JSON.some(p => p.test(line))]).toEqual([line, false]);
  });
});
