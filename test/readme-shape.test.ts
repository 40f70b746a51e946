/**
 * Issue 27 point 9: a newcomer finds the Quick start on the README's first screens (before the
 * install notes and the cdk8s-plus migration), learns which TypeScript `cdk8s synth` works with,
 * and docs/comparison.md says what consul-k8s 1.9.0 ships (hashicorp/consul-k8s v1.9.0 CHANGELOG.md).
 */
import * as fs from 'fs';
import * as path from 'path';

const ROOT = path.join(__dirname, '..');
const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf-8').split('\n');
const line = (heading: string) => readme.findIndex(l => l === heading) + 1;

test('the Quick start is within the first 120 lines, before Install and the cdk8s-plus migration', () => {
  expect(line('## Quick start')).toBeGreaterThan(0);
  expect(line('## Quick start')).toBeLessThanOrEqual(120);
  expect(line('## Quick start')).toBeLessThan(line('## Install'));
  expect(line('## Quick start')).toBeLessThan(line('## cdk8s-plus majors'));
});

/**
 * The README is the package's landing page (npm, PyPI and API readers see it first): a few screens
 * that say what the library does, how to start and where each topic lives. It grew to 802 lines
 * once, unnoticed; details belong in docs/*.md (linked from here, shipped in the package).
 */
const README_MAX_LINES = 470;
test(`the README stays within ${README_MAX_LINES} lines (details go to docs/)`, () => {
  expect(readme.length).toBeLessThanOrEqual(README_MAX_LINES);
});

test('the moved README sections live in their docs pages, linked from the README', () => {
  for (const [page, heading] of [
    ['docs/cdk8s-plus.md', '## Migrating from the cdk8s-plus-27-only API'],
    ['docs/any-sidecar.md', '# Any sidecar: WithSidecar and adopt'],
    ['docs/errors.md', '# Errors'],
  ]) {
    expect(fs.readFileSync(path.join(ROOT, page), 'utf-8').split('\n')).toContain(heading);
    expect(readme.join('\n')).toContain(`](${page})`);
  }
});

test('the README says which TypeScript works with cdk8s synth (ts-node), as the consumer test uses', () => {
  expect(readme.join('\n')).toMatch(/typescript@~5\.9/);
  expect(fs.readFileSync(path.join(ROOT, 'scripts', 'consumer-test.sh'), 'utf-8')).toMatch(/"typescript": "5\.9\.x"/);
});

test('docs/comparison.md: Consul has opt-in native sidecars since consul-k8s 1.9.0', () => {
  const text = fs.readFileSync(path.join(ROOT, 'docs', 'comparison.md'), 'utf-8');
  expect(text).not.toMatch(/Consul have no native-sidecar support/);
  expect(text).toMatch(/consul-k8s 1\.9\.0/);
  expect(text).toContain('consul.hashicorp.com/enable-consul-dataplane-as-sidecar');
});
