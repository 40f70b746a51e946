/**
 * Consumer test step (scripts/consumer-test.sh): what a user of the installed package sees.
 *
 *   ts-node scripts/installed-package-check.ts <app dir> <npm pack --json file>
 *
 * 1. An error the library throws (a bad prop) has stack frames in node_modules/cdk8s-sidecars that
 *    name files of the tarball, at lines those files have: without source maps (lib/*.js) and
 *    with `node --enable-source-maps` (what ts-node, and so `cdk8s synth`, also does), where the
 *    source maps (lib/*.js.map) name src/*.ts (issue 27, point 8).
 * 2. Every link of the shipped README.md and docs/*.md resolves inside the installed package (a
 *    file it ships, a heading that file has); links into the repository are checked on the clone
 *    by test/docs-links.test.ts.
 */
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { deadLinks } from '../test/util/doc-links';

const [appDir, packJson] = process.argv.slice(2);
const pkgDir = path.join(appDir, 'node_modules', 'cdk8s-sidecars');
const shipped = new Set<string>(JSON.parse(fs.readFileSync(packJson, 'utf8'))[0].files.map((f: { path: string }) => f.path));
const failures: string[] = [];

// A WithEnvoy with appPort -1: refused by src/bind/checks.ts, called from src/with-envoy.ts.
const program = `
const { App, Chart, ApiObject } = require('cdk8s');
const { WithEnvoy } = require('cdk8s-sidecars');
const chart = new Chart(new App(), 'c');
const workload = new ApiObject(chart, 'd', { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' },
  spec: { template: { spec: { containers: [{ name: 'app', image: 'app:1' }] } } } });
try { new WithEnvoy(chart, 'envoy', { workload, appPort: -1 }); } catch (e) { process.stdout.write(e.stack); process.exit(0); }
process.stdout.write('no error'); process.exit(1);
`;
for (const flags of [[], ['--enable-source-maps']]) {
  const how = flags.length ? 'node --enable-source-maps' : 'node';
  const stack = execFileSync(process.execPath, [...flags, '-e', program], { cwd: appDir, encoding: 'utf8' });
  const frames = [...stack.matchAll(/^\s+at (?:.*? \()?(.+?):(\d+):\d+\)?$/gm)]
    .map(m => ({ file: m[1], line: Number(m[2]) }))
    .filter(f => f.file.includes(`${path.sep}node_modules${path.sep}cdk8s-sidecars${path.sep}`));
  if (frames.length === 0) failures.push(`${how}: no frame of the package in\n${stack}`);
  for (const f of frames) {
    const rel = path.relative(pkgDir, f.file).split(path.sep).join('/');
    if (!shipped.has(rel)) {
      failures.push(`${how}: frame ${rel}:${f.line} names a file the tarball does not have`);
    } else if (fs.readFileSync(f.file, 'utf8').split('\n').length < f.line) {
      failures.push(`${how}: frame ${rel}:${f.line} is past the end of the file`);
    }
  }
  console.log(`  ${how}: ${frames.length} frames in the package: ${[...new Set(frames.map(f => path.relative(pkgDir, f.file)))].join(', ')}`);
}

const pages = ['README.md', ...[...shipped].filter(f => /^docs\/[^/]+\.md$/.test(f)).sort()];
let links = 0;
for (const page of pages) {
  if (!fs.existsSync(path.join(pkgDir, page))) { failures.push(`${page} is not installed`); continue; }
  const dead = deadLinks(pkgDir, page);
  links += (fs.readFileSync(path.join(pkgDir, page), 'utf8').match(/\]\(/g) ?? []).length;
  failures.push(...dead.map(d => `${page}: dead link ${d}`));
}
console.log(`  links: ${pages.length} pages (${links} links) checked in the installed package`);

if (failures.length) {
  console.error(`installed package:\n${failures.join('\n')}`);
  process.exit(1);
}
