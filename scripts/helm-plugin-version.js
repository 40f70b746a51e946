#!/usr/bin/env node
// The Helm 4 plugin's version is the package's (helm plugin list shows it; Helm 4.3.2 requires a
// strict semver there, internal/plugin/metadata_v1.go): the release's `bump` and `unbump` tasks
// run this after they write package.json's version (.projenrc.ts), so the published
// helm-plugins/cdk8s-sidecars/plugin.yaml names the release and the committed one 0.0.0, as
// package.json does. test/helm-plugin.test.ts fails when the two differ.
const fs = require('fs');
const path = require('path');

const root = path.join(__dirname, '..');
const version = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).version;
const file = path.join(root, 'helm-plugins', 'cdk8s-sidecars', 'plugin.yaml');
const text = fs.readFileSync(file, 'utf8');
const line = /^version: .*$/m;
if (!line.test(text)) {
  process.stderr.write(`helm-plugin-version: ${file} has no top-level 'version:' line; put one back (version: ${version})\n`);
  process.exit(1);
}
fs.writeFileSync(file, text.replace(line, `version: ${version}`));
