#!/usr/bin/env node
// `npm pack` / `npm publish` run this first (package.json `prepack`: the projen task `prepack`):
// a package without its compiled lib/ and .jsii would install and fail with "Cannot find module
// .../lib/index.js". Exit 0 means "compile first" (the task then spawns `compile`), 1 means "lib/
// and .jsii are up to date" (the task skips it). See CONTRIBUTING.md, "Releases".
//
// Compile when lib/index.js or .jsii is missing (a fresh clone), or when a file of src/ is newer
// than .jsii (sources edited since the last compile). A .jsii dated before 1990 was extracted from
// an npm tarball (npm dates every file 1985-10-26): the release workflow's publish jobs unpack the
// built tarball over a checkout and package from it, so that one is taken as built.
const fs = require('fs');
const path = require('path');

function needsCompile(root) {
  const jsii = path.join(root, '.jsii');
  if (!fs.existsSync(path.join(root, 'lib', 'index.js')) || !fs.existsSync(jsii)) return 'lib/index.js or .jsii is missing';
  const built = fs.statSync(jsii).mtimeMs;
  if (built < Date.UTC(1990, 0, 1)) return undefined;
  const newer = walk(path.join(root, 'src')).find(f => fs.statSync(f).mtimeMs > built);
  return newer ? `${path.relative(root, newer)} is newer than .jsii` : undefined;
}

function walk(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap(e => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? walk(p) : e.isFile() && p.endsWith('.ts') ? [p] : [];
  });
}

module.exports = { needsCompile };

if (require.main === module) {
  const why = needsCompile(path.resolve(__dirname, '..'));
  if (why) {
    process.stderr.write(`prepack: ${why}: compiling first (jsii)\n`);
    process.exit(0);
  }
  process.exit(1);
}
