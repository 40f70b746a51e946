/**
 * One way into the manifest, and nothing patched into cdk8s (issue 35, point 3): the library
 * hooks the `toJson()` of the objects it owns or binds (instance properties, in src/ only) and
 * never assigns or redefines a method of a cdk8s class (the App.prototype.synth / synthYaml
 * wrapper it had showed in every user's stack trace). Checked at run time, after every public
 * construct was built and the app synthesized in every way, and in the source.
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

function buildEverything(): { app: App; chart: Chart; web: kplus.Deployment } {
  const app = Testing.app();
  Sidecars.configure(app, { kubernetesVersion: '1.31' });
  const chart = new Chart(app, 'test');
  const web = new kplus.Deployment(chart, 'web', { containers: [APP_CONTAINER] });
  new WithLogAgent(chart, 'logs', { workload: web });
  new WithTracer(chart, 'tracer', { workload: web, exporterEndpoint: 'otel-gateway.observability:4317' });
  new WithEnvoy(chart, 'envoy', { workload: web, appPort: 8080, appListensOnPodIp: true });
  const other = new Chart(app, 'other');
  const raw = rawDeployment(other, 'raw', { containers: [{ name: 'app', image: 'ghcr.io/example/app:1' }, { name: 'proxy', image: 'ghcr.io/example/proxy:1' }] });
  new AdoptSidecar(other, 'adopt', { workload: raw, containerName: 'proxy', startupCheck: SidecarCheck.tcp(9901) });
  new WithSidecar(other, 'agent', { workload: raw, containerName: 'auth-proxy', image: 'ghcr.io/example/auth-proxy:1.0.0' });
  const meshed = new kplus.Deployment(other, 'meshed', { containers: [APP_CONTAINER] });
  new WithMeshProxy(other, 'mesh', { workload: meshed, mesh: Mesh.ISTIO });
  new NativeSidecarGuard(other, 'guard', { namespaces: ['shop'] });
  SidecarValidation.addTo(app);
  return { app, chart, web };
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

describe('the source assigns no prototype', () => {
  /** Every .ts file under src/. */
  function sources(dir: string): string[] {
    return fs.readdirSync(dir, { withFileTypes: true }).flatMap(e => {
      const p = path.join(dir, e.name);
      return e.isDirectory() ? sources(p) : e.name.endsWith('.ts') ? [p] : [];
    });
  }
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
    const hits: string[] = [];
    for (const file of sources(path.join(__dirname, '..', 'src'))) {
      fs.readFileSync(file, 'utf8').split('\n').forEach((line, i) => {
        if (PATTERNS.some(p => p.test(line))) hits.push(`${path.relative(path.join(__dirname, '..'), file)}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(hits).toEqual([]);
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
