/**
 * The README's install blocks (issue 40): one per language, each naming the package that the
 * release publishes under that language's name (package.json `jsii.targets`, from .projenrc.ts),
 * and the Python, Java and Go ones saying that Node.js is needed at run time (jsii runs the library
 * in it). scripts/bindings-test.sh installs the Python package with the README's `pip install`
 * line and checks the Maven and Go blocks against test/bindings (scripts/readme-install.js).
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

const ROOT = path.resolve(__dirname, '..');
const PKG = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { readmeInstall } = require('../scripts/readme-install.js');

test('one install block per language, each with the name the release publishes', () => {
  const r = readmeInstall();
  const targets = PKG.jsii.targets;
  expect(r.npm.split(' ')).toEqual(expect.arrayContaining([PKG.name, ...Object.keys(PKG.peerDependencies)]));
  expect(r.pip.split(' ')[0]).toBe(targets.python.distName);
  expect(r.pip.split(' ')).toEqual(expect.arrayContaining(Object.keys(PKG.peerDependencies)));
  expect(r.maven).toMatchObject({ groupId: targets.java.maven.groupId, artifactId: targets.java.maven.artifactId });
  expect(r.maven.version).toMatch(/^0\.\d+\.\d+$/); // the 0.x policy (CONTRIBUTING.md, Releases)
  expect(r.go).toBe(`${targets.go.moduleName}/${PKG.name.replace(/-/g, '')}`);
});

test('the README says Node.js is needed at run time for Python, Java and Go', () => {
  const { section } = readmeInstall();
  expect(section).toMatch(/Python, Java and Go run the library in Node\.js[^.]*: \*\*Node\.js 20\.16 or\s+later must be on the `PATH` at run time\*\*/);
  // the version said is the package's engines.node (>= 20.16.0)
  expect(`>= ${/\*\*Node\.js (\d+\.\d+) or/.exec(section)![1]}.0`).toBe(PKG.engines.node);
  for (const lang of ['Python', 'Java', 'Go']) expect(section).toMatch(new RegExp(`^${lang} \\(.*needs Node\\.js at run time\\):$`, 'm'));
});

test('scripts/readme-install.js agrees with test/bindings (the Maven dependency, the Go require) and prints the pip line', () => {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'readme-install.js')], { encoding: 'utf8' });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  expect(r.stdout).toBe(readmeInstall().pip);
});

test('until the first release the section starts with the install from a clone, as a packed tarball (issue 48)', () => {
  const { section, tarball } = readmeInstall();
  // `npm pack` names the tarball <name>-<version>.tgz; the README's path is that file in the clone
  expect(tarball).toBe(`../cdk8s-sidecars/${PKG.name}-${PKG.version}.tgz`);
  const fromClone = section.indexOf('npm pack');
  const fromRegistry = section.indexOf(`npm install ${PKG.name} `);
  expect(fromClone).toBeGreaterThan(0);
  expect(fromClone).toBeLessThan(fromRegistry);
  expect(section).toMatch(/until the first release \(0\.1\.0\), `npm install cdk8s-sidecars` answers 404/);
  // package.json's prepack compiles, so the tarball of a fresh clone holds lib/ (scripts/prepack.js)
  expect(PKG.scripts.prepack).toBeDefined();
});
