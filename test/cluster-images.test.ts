/**
 * The test cluster's images (issue 34, point 2; scripts/cluster/images.sh, CONTRIBUTING.md "The
 * test cluster's images"): the registry serves every image the library uses by default under its
 * exact name (the example app's own names: test/examples.test.ts), and each built image runs its
 * real program from its own layer.
 *
 * The run checks need the built images (~/.cache/cdk8s-sidecars/images, from
 * `scripts/cluster/images.sh build`), root (chroot and namespaces) and Go (the registry's tests);
 * without them they are skipped, each with its reason in the test's name.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { ApiObject, Testing } from 'cdk8s';
import { Images, LogAgent, LogOutput, WithLogAgent } from '../src';
import { imagesOf, requireServed, servedImages } from './cluster/harness';
import { CLUSTER_IMAGES_DIR, clusterImageList, runnableImage, validateInImage } from './util/cluster-images';
import { containerOf, kplusWorkload, manifestOf, newChart, podSpecOf } from './util/fixtures';

const ROOT = path.join(__dirname, '..');
const SCRIPT = path.join(ROOT, 'scripts', 'cluster', 'images.sh');
const CACHE = path.join(process.env.CDK8S_SIDECARS_CACHE ?? path.join(os.homedir(), '.cache', 'cdk8s-sidecars'), 'images', 'oci');
const LIST = clusterImageList();
/** The images scripts/cluster/images.sh can build (its ALL). */
const BUILDABLE = (/^ALL="([^"]+)"$/m.exec(fs.readFileSync(SCRIPT, 'utf8'))?.[1] ?? '').split(' ');

test('the test cluster serves every default image of the library under its exact name', () => {
  const missing = Images._all.map((i) => i.image).filter((i) => !LIST.has(i));
  expect(missing).toEqual([]);
});

test('every image of scripts/cluster/images.list is one images.sh builds', () => {
  expect(BUILDABLE.length).toBeGreaterThanOrEqual(6);
  expect([...new Set(LIST.values())].filter((id) => !BUILDABLE.includes(id))).toEqual([]);
  // and each buildable image is served under some name
  expect(BUILDABLE.filter((id) => ![...LIST.values()].includes(id))).toEqual([]);
});

const built = BUILDABLE.filter((id) => fs.existsSync(path.join(CACHE, id, 'index.json')));
const isRoot = process.getuid?.() === 0;
const hasGo = spawnSync('go', ['version']).status === 0;

if (built.length === 0 || !isRoot) {
  test.skip(`each built image runs its program (skipped: ${built.length === 0 ? `no image built in ${CACHE}: scripts/cluster/images.sh build` : 'needs root for chroot and namespaces'})`, () => {});
} else {
  test.each(built)('image %s runs its program from its own layer, chrooted as uid 65532, no network (images.sh check)', (id) => {
    const r = spawnSync('bash', [SCRIPT, 'check', id], { encoding: 'utf8', timeout: 120_000 });
    expect({ id, status: r.status, stderr: r.stderr }).toEqual({ id, status: 0, stderr: '' });
    expect(r.stdout).toMatch(new RegExp(`^${id} ok: `));
  });
}

(built.length > 0 && hasGo ? test : test.skip)(
  `the registry serves the layouts to a real client, by name, read-only (go test in scripts/cluster/registry)${built.length > 0 && hasGo ? '' : ': skipped, needs built images and Go'}`,
  () => {
    const r = spawnSync('go', ['test', '-count=1', './...'], { cwd: path.join(ROOT, 'scripts', 'cluster', 'registry'), encoding: 'utf8', timeout: 300_000 });
    expect({ status: r.status, out: r.status === 0 ? '' : r.stdout + r.stderr }).toEqual({ status: 0, out: '' });
  },
  300_000,
);

// The example app has no Fluentd: its config as LogAgent.fluentd() renders it (both layouts; an IP
// literal: out_forward resolves its host at start, dry run included, and the namespace has no DNS),
// read by the image's Fluentd with the manifest's command, args and mounts.
const fluentdId = runnableImage(Images.FLUENTD);
(fluentdId ? test.each(['1.27', '1.29']) : test.skip.each(['1.27', '1.29']))(
  `the Fluentd image reads the config LogAgent.fluentd() renders for %s (--dry-run, as the pod runs it)${fluentdId ? '' : `: skipped, needs root and the built image in ${CLUSTER_IMAGES_DIR}`}`,
  (kubernetesVersion) => {
    const { chart } = newChart();
    new WithLogAgent(chart, 'logs', { workload: kplusWorkload(chart, 'Deployment'), kubernetesVersion, agent: LogAgent.fluentd(), output: LogOutput.forward({ host: '10.96.0.20' }) });
    const objects = Testing.synth(chart);
    const m = manifestOf(objects, 'Deployment');
    const r = validateInImage(podSpecOf(m), containerOf(m, 'log-agent'), objects);
    expect(r?.id).toBe('fluentd');
    expect({ status: r?.status, output: r?.status === 0 ? '' : r?.output }).toEqual({ status: 0, output: '' });
  },
  120_000,
);

describe('the cluster suite refuses an image the test registry does not serve, before it applies anything', () => {
  const oci = fs.mkdtempSync(path.join(os.tmpdir(), 'served-'));
  afterAll(() => fs.rmSync(oci, { recursive: true, force: true }));
  fs.mkdirSync(path.join(oci, 'envoy'));
  fs.writeFileSync(path.join(oci, 'envoy', 'index.json'), '{}');
  // fluent-bit is named but not built (no index.json): not served
  fs.writeFileSync(path.join(oci, 'names'), 'envoyproxy/envoy:v1.40.0 envoy\nfluent/fluent-bit:5.1.1 fluent-bit\n');
  const busyboxJob = { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' }, spec: { template: { spec: { containers: [{ name: 'app', image: 'docker.io/library/busybox:1.36.1-musl' }] } } } };

  test('served: the base images and what is built', () => {
    expect([...servedImages(oci)].sort()).toEqual(['busybox:1.36.1-musl', 'cdk8s-sidecars-test/pause:1', 'envoyproxy/envoy:v1.40.0']);
    expect(() => requireServed([busyboxJob], 'job', oci)).not.toThrow();
  });

  test('a log agent whose image is not built: the message names the image and the build command', () => {
    const { chart } = newChart();
    const workload = new ApiObject(chart, 'j', busyboxJob);
    new WithLogAgent(chart, 'logs', { workload, kubernetesVersion: '1.29', agent: LogAgent.fluentBit(), output: LogOutput.stdout() });
    const manifests = Testing.synth(chart);
    expect(imagesOf(manifests)).toContain(Images.FLUENT_BIT);
    expect(() => requireServed(manifests, '1.37.2: lines', oci)).toThrow(
      `1.37.2: lines: the test registry does not serve ${Images.FLUENT_BIT} (not built in ${oci}), so its pods would wait in ImagePullBackOff; ` +
      'first bash scripts/cluster/images.sh build fluent-bit (CONTRIBUTING.md');
  });

  test('an image the test cluster does not know: the message says to list it', () => {
    const pod = { ...busyboxJob, spec: { template: { spec: { initContainers: [{ name: 'x', image: 'example.com/x:1' }], containers: [] } } } };
    expect(() => requireServed([pod], 'p', oci)).toThrow(/does not serve example\.com\/x:1 .*; first list example\.com\/x:1 in scripts\/cluster\/images\.list/);
  });
});
