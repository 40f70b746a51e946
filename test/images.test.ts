/**
 * Every default image is in one list (`Images._all`: the log agents' pins, each in its folder, read
 * from the registry, then src/facts/images.ts) that names the upstream source of its tag; the code
 * uses no other, and the README shows the same list.
 */
import * as fs from 'fs';
import * as path from 'path';
import { Chart, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { Images, LogAgent, LogOutput, SidecarWarnings, WithEnvoy, WithLogAgent, WithTracer } from '../src';
import { allDocs } from './util/docs';
import { TOOLS } from '../src/engine/shutdown';
import { imageTagVersion } from '../src/facts/images';

const ROOT = path.join(__dirname, '..');
const ALL = Images._all;
const LISTED: readonly string[] = ALL.map(i => i.image);
/** The file each image is pinned in: a log agent's in its folder, the others in src/facts/images.ts. */
const PINNED_IN = new Map<string, string>(ALL.map(i => [i.image, 'src/facts/images.ts']));
for (const agent of LogAgent._registered) PINNED_IN.set(agent.image.image, `src/agents/${agent.name}/agent.ts`);
/** The repositories of the listed images (`fluent/fluentd`, `busybox`, ...). */
const REPOS = new Set(LISTED.map(i => i.slice(0, i.lastIndexOf(':'))));

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap(e =>
    e.isDirectory() ? sourceFiles(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []);
}

test('each listed image is repository:tag with a named upstream source', () => {
  for (const [key, i] of Object.entries(ALL)) {
    expect({ key, image: i.image }).toEqual({ key, image: expect.stringMatching(/^[a-z0-9][a-z0-9._/-]*:[A-Za-z0-9][A-Za-z0-9._-]*$/) });
    expect({ key, source: i.source.length > 20 }).toEqual({ key, source: true });
  }
  expect(new Set(LISTED).size).toBe(LISTED.length);
});

test('the Fluentd image is a published v1.19.3 tag (fluent/fluentd-docker-image lists -2.0 to -2.2 for v1.19.3; -2.4 was v1.19.2)', () => {
  expect(Images.FLUENTD).toBe('fluent/fluentd:v1.19.3-debian-2.2');
  expect(Images.FLUENTD).not.toBe('fluent/fluentd:v1.19.3-debian-2.4');
});

test('every default image the code uses is in the list', () => {
  for (const image of [
    Images.FLUENT_BIT, Images.VECTOR, Images.FLUENTD, Images.ENVOY, Images.OTEL_COLLECTOR, TOOLS.image,
  ]) {
    expect(LISTED).toContain(image);
  }
});

test('no image literal of those repositories in src/ other than the listed ones', () => {
  const found: Array<{ file: string; image: string }> = [];
  for (const file of sourceFiles(path.join(ROOT, 'src'))) {
    const text = fs.readFileSync(file, 'utf8');
    for (const m of text.matchAll(/['"`]([a-z0-9][a-z0-9._/-]*):(v?\d[A-Za-z0-9._-]*)['"`]/g)) {
      if (REPOS.has(m[1])) found.push({ file: path.relative(ROOT, file), image: `${m[1]}:${m[2]}` });
    }
  }
  expect(found.length).toBeGreaterThan(0);
  for (const f of found) expect({ ...f, listed: LISTED.includes(f.image) }).toEqual({ ...f, listed: true });
});

test('each default image is pinned once: its literal is in the file that pins it only, a log agent\'s in its folder (a TSDoc @default may name it)', () => {
  const pins: string[] = [];
  for (const file of sourceFiles(path.join(ROOT, 'src'))) {
    const code = fs.readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
    for (const m of code.matchAll(/['"`]([a-z0-9][a-z0-9._/-]*):(v?\d[A-Za-z0-9._-]*)['"`]/g)) {
      if (REPOS.has(m[1])) pins.push(`${path.relative(ROOT, file).split(path.sep).join('/')}: ${m[1]}:${m[2]}`);
    }
  }
  expect([...new Set(pins)].sort()).toEqual(LISTED.map(i => `${PINNED_IN.get(i)}: ${i}`).sort());
});

test("the README's default-image table is the list", () => {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const table = /<!-- default-images:start -->\n([\s\S]*?)<!-- default-images:end -->/.exec(readme);
  expect(table).not.toBeNull();
  const rows = table![1].split('\n').filter(l => l.startsWith('| `')).map(l => l.split('|').map(c => c.trim()));
  expect(rows.map(r => [r[1].replace(/`/g, ''), r[2]])).toEqual(ALL.map(i => [i.image, i.usedBy.includes(' ') ? i.usedBy : `\`${i.usedBy}\``]));
});

test('every tag of those repositories the docs (README, CONTRIBUTING, docs/) mention is a listed one', () => {
  const docs = allDocs();
  const mentioned = [...docs.matchAll(/(?<![\w./-])([a-z0-9][a-z0-9._/-]*):(v?\d[A-Za-z0-9._-]*[A-Za-z0-9])/g)]
    .filter(m => REPOS.has(m[1]))
    .map(m => `${m[1]}:${m[2]}`);
  expect(mentioned.length).toBeGreaterThan(LISTED.length);
  for (const image of mentioned) expect({ image, listed: LISTED.includes(image) }).toEqual({ image, listed: true });
});

test('every default image has one public name, Images.<AGENT>, and the package exports no bare constant (jsii drops those for Python, Java, Go and C#)', () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const api = require('../src');
  // (an interface's name shows as undefined under ts-jest: a type, not a value); the only values that
  // are not classes are the enums, named here one by one: an exported object or array constant fails
  const ENUMS = ['EnvoyAppProtocol', 'FluentBitConfigFormat', 'FluentBitMultilineParser', 'InjectionFailurePolicy', 'Mesh', 'OtlpProtocol', 'SidecarLayout', 'SidecarMode'];
  expect(Object.keys(api).filter(k => api[k] !== undefined && typeof api[k] !== 'function' && !ENUMS.includes(k))).toEqual([]);
  expect(ENUMS.filter(k => typeof api[k] !== 'object')).toEqual([]);
  const names = Object.getOwnPropertyNames(Images).filter(k => /^[A-Z][A-Z0-9_]*$/.test(k)).sort();
  expect(names).toEqual(['ENVOY', 'FLUENTD', 'FLUENT_BIT', 'OTEL_COLLECTOR', 'OTEL_COLLECTOR_K8S', 'SIDECAR_TOOLS', 'VECTOR']);
  // the tools' busybox too (Images.SIDECAR_TOOLS, for Images.pin and toolsImage)
  expect(names.map(n => (Images as any)[n]).sort()).toEqual(LISTED.slice().sort());
});

test('one image-tag parser (imageTagVersion), over the one release-version grammar (parseReleasePrefix, src/target/capabilities.ts): no other file of src/ parses a version', () => {
  expect(imageTagVersion('fluent/fluentd:v1.19.3-debian-2.2')).toEqual({ major: 1, minor: 19, patch: 3 });
  expect(imageTagVersion('registry.example.com:5000/mirror/vector:0.57.0-distroless-libc@sha256:' + 'a'.repeat(64))).toEqual({ major: 0, minor: 57, patch: 0 });
  expect(imageTagVersion('fluent/fluentd-kubernetes-daemonset:v1.16-debian-elasticsearch8-1')).toEqual({ major: 1, minor: 16, patch: 0 });
  expect(imageTagVersion('envoyproxy/envoy:latest')).toBeUndefined();
  expect(imageTagVersion('registry.example.com:5000/envoy')).toBeUndefined();
  expect(imageTagVersion('fluent/fluent-bit:5.1.1_debug')).toEqual({ major: 5, minor: 1, patch: 1 });
  expect(imageTagVersion('fluent/fluent-bit:5.1.1x')).toBeUndefined();
  expect(imageTagVersion('fluent/fluent-bit:5')).toBeUndefined();
  const parsers: string[] = [];
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {walk(p);} else if (p.endsWith('.ts') && (/\(\\d\+\)\\\.\(\\d\+\)/.test(fs.readFileSync(p, 'utf8')) || /\.split\('\.'\)\.map\(Number\)/.test(fs.readFileSync(p, 'utf8')))) {
        parsers.push(path.relative(path.join(ROOT, 'src'), p).split(path.sep).join('/'));
      }
    }
  };
  walk(path.join(ROOT, 'src'));
  expect(parsers.sort()).toEqual(['target/capabilities.ts']);
});

describe('Images.pin: a default image pinned by digest', () => {
  const DIGEST = `sha256:${'0123456789abcdef'.repeat(4)}`;

  test('keeps the tag and adds the digest; the library still reads the release from it', () => {
    expect(Images.pin(Images.ENVOY, DIGEST)).toBe(`${Images.ENVOY}@${DIGEST}`);
    expect(imageTagVersion(Images.pin(Images.ENVOY, DIGEST))).toEqual(imageTagVersion(Images.ENVOY));
    expect(Images.pin('registry.example.com:5000/mirror/busybox:1.36.1-musl', DIGEST)).toBe(`registry.example.com:5000/mirror/busybox:1.36.1-musl@${DIGEST}`);
  });

  test.each([
    ['a digest of 63 hex digits', Images.ENVOY, DIGEST.slice(0, -1), 'Images.pin: digest "sha256:0123', 'is not a sha256 digest'],
    ['upper-case hex', Images.ENVOY, DIGEST.toUpperCase().replace('SHA256', 'sha256'), 'Images.pin: digest', 'is not a sha256 digest'],
    ['another algorithm', Images.ENVOY, `sha512:${'ab'.repeat(64)}`, 'Images.pin: digest', 'is not a sha256 digest'],
    ['an image pinned already', `${Images.ENVOY}@${DIGEST}`, DIGEST, 'Images.pin: image', 'is already pinned by a digest'],
    ['an image without a tag', 'envoyproxy/envoy', DIGEST, "Images.pin: image 'envoyproxy/envoy' has no tag", 'the library reads the release from the tag'],
    ['no image reference', 'Envoy Proxy', DIGEST, "Images.pin: image 'Envoy Proxy' is not an image reference", "use e.g. 'envoyproxy/envoy:"],
  ])('refuses %s, naming the value and what to give', (_name, image, digest, where, problem) => {
    let message = '';
    try {
      Images.pin(image, digest);
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain(where);
    expect(message).toContain(problem);
  });

  test('a pinned default image gets no warning and the same config as the default (Fluentd: the gem check still applies)', () => {
    const chart = new Chart(Testing.app(), 'pin');
    const web = new kplus.Deployment(chart, 'web', {
      containers: [{ image: 'app:1', ports: [{ number: 8080 }], readiness: kplus.Probe.fromCommand(['/ready']) }],
    });
    new WithEnvoy(chart, 'envoy', { workload: web, kubernetesVersion: '1.29', appPort: 8080, image: Images.pin(Images.ENVOY, DIGEST) });
    new WithTracer(chart, 'tracer', { workload: web, kubernetesVersion: '1.29', exporterEndpoint: 'collector:4317', image: Images.pin(Images.OTEL_COLLECTOR, DIGEST) });
    const spec = Testing.synth(chart).find(m => m.kind === 'Deployment').spec.template.spec;
    const envoy = spec.initContainers.find((c: any) => c.name === 'envoy');
    expect(envoy.image).toBe(`${Images.ENVOY}@${DIGEST}`);
    expect(envoy.imagePullPolicy).toBe('IfNotPresent');
    expect(SidecarWarnings.of(chart)).toEqual([]);
    const other = new Chart(Testing.app(), 'f');
    const loki = () => new WithLogAgent(other, 'logs', {
      workload: new kplus.Deployment(other, 'w', { containers: [{ image: 'app:1' }] }),
      agent: LogAgent.fluentd({ image: Images.pin(Images.FLUENTD, DIGEST) }),
      output: LogOutput.loki({ host: 'loki' }),
    });
    expect(loki).toThrow(/needs the fluent-plugin-grafana-loki gem/);
  });
});
