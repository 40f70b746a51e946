#!/usr/bin/env node
// The README's install blocks (## Install), read once for the bindings test and
// test/readme-install.test.ts. As a program: checks that the Maven coordinates are a dependency of
// test/bindings/java/pom.xml and the Go module a require of test/bindings/go/go.mod, and prints
// the arguments of the `pip install` line (what scripts/bindings-test.sh installs); exit 1 with
// the reason otherwise.
const fs = require('fs');
const path = require('path');

const ROOT = path.resolve(__dirname, '..');

/** The install blocks: { npm, tarball, pip, maven: { groupId, artifactId, version }, go } (the arguments as written). */
function readmeInstall(readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8')) {
  const start = readme.indexOf('## Install\n');
  if (start < 0) throw new Error('README.md has no ## Install section');
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end < 0 ? undefined : end);
  const blocks = [...section.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map(m => ({ lang: m[1], text: m[2] }));
  const line = (re) => blocks.map(b => re.exec(b.text)).find(Boolean)?.[1];
  const xml = blocks.find(b => b.lang === 'xml');
  const tag = (t) => xml && (new RegExp(`<${t}>([^<]+)</${t}>`).exec(xml.text) ?? [])[1];
  return {
    section,
    // (the registry's line: the first `npm install` of a package name, not of a tarball path)
    npm: line(/^npm install ([^./\s].+)$/m),
    tarball: line(/npm install (\S+\.tgz)\b/),
    pip: line(/^pip install (.+)$/m),
    maven: xml ? { groupId: tag('groupId'), artifactId: tag('artifactId'), version: tag('version') } : undefined,
    go: line(/^go get (\S+)$/m),
  };
}

module.exports = { readmeInstall };

if (require.main === module) {
  const fail = (m) => { process.stderr.write(`README.md ## Install: ${m}\n`); process.exit(1); };
  const r = readmeInstall();
  if (!r.pip) fail('no `pip install` line');
  if (!r.maven) fail('no Maven <dependency> block');
  const pom = fs.readFileSync(path.join(ROOT, 'test/bindings/java/pom.xml'), 'utf8');
  const deps = [...pom.matchAll(/<dependency>\s*<groupId>([^<]+)<\/groupId>\s*<artifactId>([^<]+)<\/artifactId>/g)].map(m => `${m[1]}:${m[2]}`);
  if (!deps.includes(`${r.maven.groupId}:${r.maven.artifactId}`)) fail(`Maven ${r.maven.groupId}:${r.maven.artifactId} is not a dependency of test/bindings/java/pom.xml`);
  const gomod = fs.readFileSync(path.join(ROOT, 'test/bindings/go/go.mod'), 'utf8');
  if (!r.go || !gomod.split('\n').some(l => l.trim().split(/\s+/)[0] === r.go)) fail(`go get ${r.go}: not required by test/bindings/go/go.mod`);
  process.stdout.write(r.pip);
}
