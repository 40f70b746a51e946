/**
 * The package ships src/ (issue 27, point 8): jsii compiles lib/*.js with source maps (lib/*.js.map) whose
 * `sources` are `../src/*.ts`, and source-map-support (installed by ts-node, which `cdk8s synth`
 * runs a TypeScript app with) rewrites every frame of an error's stack to those files. Without
 * src/ in the tarball the frames named files the package does not have. It also ships the Helm 4
 * post-renderer plugin, helm-plugins/cdk8s-sidecars/ (issue 46). Checked on what
 * `npm pack --dry-run` would put in the tarball.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

const ROOT = path.join(__dirname, '..');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap(e =>
    e.isDirectory() ? sourceFiles(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []);
}

test('every src/*.ts file the source maps point at is in the tarball, and the Helm 4 plugin; the tests are not', () => {
  const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
  expect(r.status).toBe(0);
  const files = new Set<string>(JSON.parse(r.stdout)[0].files.map((f: { path: string }) => f.path));
  const missing = sourceFiles('src').filter(f => !files.has(f.split(path.sep).join('/')));
  expect(missing).toEqual([]);
  expect([...files].filter(f => f.startsWith('test/'))).toEqual([]);
  // the Helm 4 post-renderer plugin (docs/cli.md): `helm plugin install` takes its directory from node_modules
  expect([...files].filter(f => f.startsWith('helm-plugins/')).sort())
    .toEqual(['helm-plugins/cdk8s-sidecars/plugin.yaml', 'helm-plugins/cdk8s-sidecars/render.js']);
}, 150_000);
