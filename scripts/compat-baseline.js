#!/usr/bin/env node
// `npm run compat:baseline` (after a compile): records the public API as it is now in .compat/,
// the assembly that `npm run compat` (jsii-diff, run by `npm test`) compares the current one with.
// .compat/.jsii is the assembly itself; .compat/package.json the fields jsii-diff needs to load it
// as a package (name, version, its jsii dependencies). Refreshed at each release (CONTRIBUTING.md,
// "Releases"): while nothing is published, it stands for the last release.
const fs = require('fs');
const path = require('path');

const root = path.resolve(__dirname, '..');
const assembly = JSON.parse(fs.readFileSync(path.join(root, '.jsii'), 'utf8'));
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const out = path.join(root, '.compat');
fs.mkdirSync(out, { recursive: true });
fs.writeFileSync(path.join(out, '.jsii'), JSON.stringify(assembly, null, 2) + '\n');
const keep = {
  name: pkg.name,
  version: pkg.version,
  description: 'The public API of the last release of cdk8s-sidecars, for jsii-diff (npm run compat); written by npm run compat:baseline',
  private: true,
  main: 'index.js',
  types: 'index.d.ts',
  peerDependencies: pkg.peerDependencies,
  jsii: pkg.jsii,
};
fs.writeFileSync(path.join(out, 'package.json'), JSON.stringify(keep, null, 2) + '\n');
process.stdout.write(`compat:baseline: .compat/.jsii is the API of ${assembly.name} as compiled now (${Object.keys(assembly.types).length} types)\n`);
