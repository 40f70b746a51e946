/**
 * The tests' oracle, the API server's YAML reader (test/util/api-server-yaml.ts): where Debian's
 * sources of sigs.k8s.io/yaml are absent (a fresh machine with only what the README says), it is
 * built from the Go module proxy at the versions Kubernetes 1.37 pins (test/go-yaml-reader/go.mod),
 * and where both can be built they read a corpus alike (GIVEN the two builds, WHEN each reads the
 * hostile corpus, the fixtures and the odd scalars, THEN every reading is the same).
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { GOCODE_ENV, debianOracle, oracle, oracleTest, proxyOracle, rawReadings, readAsApiServer } from './util/api-server-yaml';
import { ODD_SCALARS, hostileCorpus } from './util/hostile-corpus';
import { noteSkipped } from './util/skips';

const ROOT = path.join(__dirname, '..');

describe('the oracle\'s sources', () => {
  test('go.mod pins what Kubernetes 1.37 pins (k8s.io/kubernetes v1.37.2 go.mod): sigs.k8s.io/yaml v1.6.0 over go.yaml.in/yaml/v2 v2.4.4', () => {
    const mod = fs.readFileSync(path.join(ROOT, 'test', 'go-yaml-reader', 'go.mod'), 'utf8');
    expect(mod).toMatch(/^(require)?\s*sigs\.k8s\.io\/yaml v1\.6\.0$/m);
    expect(mod).toMatch(/^(require)?\s*go\.yaml\.in\/yaml\/v2 v2\.4\.4\b/m);
    const sum = fs.readFileSync(path.join(ROOT, 'test', 'go-yaml-reader', 'go.sum'), 'utf8');
    // the hashes are committed: the proxy's bytes are checked, no checksum database is asked
    expect(sum).toMatch(/^sigs\.k8s\.io\/yaml v1\.6\.0 h1:/m);
    expect(sum).toMatch(/^go\.yaml\.in\/yaml\/v2 v2\.4\.4 h1:/m);
  });

  test(`without Debian's sources (${GOCODE_ENV}=none, as on a fresh machine) the oracle is the module proxy's build, or none: never the JS reader`, () => {
    const script = [
      "const o = require('./test/util/api-server-yaml');",
      'const b = o.oracle();',
      'process.stdout.write(JSON.stringify({ from: b.from ?? null, binary: !!b.binary, why: b.why ?? null }));',
    ].join('\n');
    const res = spawnSync(process.execPath, ['-r', 'ts-node/register/transpile-only', '-e', script], {
      cwd: ROOT, encoding: 'utf8', env: { ...process.env, [GOCODE_ENV]: 'none' }, timeout: 600_000,
    });
    expect(res.stderr).toBe('');
    const got = JSON.parse(res.stdout);
    if (got.binary) {
      expect(got.from).toMatch(/^the Go module proxy/);
    } else {
      // no Go, or no proxy: the reason names both sources and how to get them
      expect(got.why).toMatch(/hidden.*module proxy/s);
      noteSkipped(`the module proxy's build of the API-server YAML oracle: ${got.why}`);
    }
  }, 600_000);
});

oracleTest('the oracle reads yaml.v2\'s YAML 1.1 (where the JS YAML 1.1 reader differs: base 60, 0o17, timestamps)', () => {
  expect(readAsApiServer('g: 12:30\nh: 0o17\ni: 2024-01-02\nj: 0755\nk: yes\n')).toEqual([{ g: '12:30', h: 15, i: '2024-01-02', j: 493, k: true }]);
});

function corpus(): Array<{ name: string; bytes: Buffer }> {
  const files: Array<{ name: string; bytes: Buffer }> = hostileCorpus().map(f => ({ name: f.name, bytes: f.bytes }));
  for (const s of ODD_SCALARS) files.push({ name: `scalar ${s}`, bytes: Buffer.from(`a: ${s}\nb: [${s}]\n${s}: c\n`) });
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.ya?ml$/.test(e.name)) files.push({ name: path.relative(ROOT, p), bytes: fs.readFileSync(p) });
    }
  };
  walk(path.join(ROOT, 'test', 'fixtures'));
  walk(path.join(ROOT, 'test', '__snapshots__'));
  return files;
}

describe('the module proxy\'s build against Debian\'s', () => {
  const debian = debianOracle();
  const proxy = debian.binary ? proxyOracle() : { why: 'not built' };
  const both = !!debian.binary && !!proxy.binary;
  if (!both) noteSkipped(`the two builds of the API-server YAML oracle compared: ${debian.binary ? proxy.why : debian.why}`);

  (both ? test : test.skip)('read every file of the corpus alike (documents, values, and which documents fail)', () => {
    const files = corpus();
    expect(files.length).toBeGreaterThan(400);
    // (the readers' output lines compared as printed: some documents nest too deep for a JS parse)
    // The one difference of wording, not of reading: sigs.k8s.io/yaml 1.4 lowercased its error
    // "Unsupported map key" (a null or uint64 key: refused by both, with the same key and value).
    const wording = (l: string) => l.replace(/"error":"(document \d+: )Unsupported map key/g, '"error":"$1unsupported map key');
    const a = rawReadings(files.map(f => f.bytes), debian).map(wording);
    const b = rawReadings(files.map(f => f.bytes), proxy).map(wording);
    const differ = files.flatMap((f, i) => a[i] === b[i] ? [] : [`${f.name}: Debian ${a[i].slice(0, 200)} / proxy ${b[i].slice(0, 200)}`]);
    expect(differ).toEqual([]);
    // the corpus is not trivially alike: both readers refuse some of it
    expect(a.filter(l => l.includes('"error":')).length).toBeGreaterThan(10);
  });

  test('the oracle in use is Debian\'s where its sources are, else the proxy\'s', () => {
    const o = oracle();
    if (debian.binary) expect(o.from).toBe(debian.from);
    else if (o.binary) expect(o.from).toMatch(/^the Go module proxy/);
  });
});
