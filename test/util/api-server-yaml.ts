/**
 * The API server's YAML reader, for tests: test/go-yaml-reader/main.go (sigs.k8s.io/yaml over
 * yaml.v2, what kubectl converts a manifest with before sending it, and the documents split as
 * kubectl splits them), built once per machine with the installed Go, from one of two sources:
 *
 * 1. Debian's (`apt-get install golang-k8s-sigs-yaml-dev`: sigs.k8s.io/yaml 1.3.0 over
 *    gopkg.in/yaml.v2 2.4.0 under /usr/share/gocode/src), offline, in GOPATH mode, when they are
 *    installed (`CDK8S_SIDECARS_GOCODE` names another GOPATH; set to `none` it hides them);
 * 2. else the Go module proxy, in module mode: test/go-yaml-reader/go.mod pins what Kubernetes
 *    1.37 pins (k8s.io/kubernetes v1.37.2 go.mod: sigs.k8s.io/yaml v1.6.0, go.yaml.in/yaml/v2
 *    v2.4.4, the module gopkg.in/yaml.v2 became), go.sum their hashes; the modules and the binary
 *    are cached under ~/.cache/cdk8s-sidecars/ (`GOPROXY` is honoured).
 *
 * test/api-server-yaml.test.ts requires the two to read a corpus alike where both can be built.
 *
 * Why not the JavaScript `yaml` package: it reads YAML 1.2 (or cdk8s' 1.1 schema) its own way;
 * the cluster reads `0o17` as 15, U+0085 as a line break and rejects U+2028 in a plain scalar
 * (SIDECARS.md §10, measured), none of which a JS reader shows. A test never compares against it.
 *
 * Where neither can be built (no Go; no Debian sources and no reachable proxy), `oracle()` says
 * how to get them and the tests that need it skip with one line in the run's summary, except
 * under `CI=true`, where they fail.
 */
import { spawnSync } from 'child_process';
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { noteSkipped } from './skips';

const READER_DIR = path.join(__dirname, '..', 'go-yaml-reader');
const SOURCE = path.join(READER_DIR, 'main.go');

/** The environment variable naming the GOPATH of Debian's sources (`none`: ignore them). */
export const GOCODE_ENV = 'CDK8S_SIDECARS_GOCODE';

/** Debian's GOPATH, or undefined when it is hidden (`CDK8S_SIDECARS_GOCODE=none`). */
function debianGopath(): string | undefined {
  const given = process.env[GOCODE_ENV];
  if (given === 'none' || given === '') return undefined;
  return given ?? '/usr/share/gocode';
}

/** How to get the oracle, for skip and failure messages. */
export const ORACLE_HOWTO =
  'the API-server YAML oracle needs Go (/usr/local/go/bin/go or `go` on PATH) and either the Go module proxy ' +
  '(sigs.k8s.io/yaml v1.6.0 and go.yaml.in/yaml/v2 v2.4.4, downloaded once into ~/.cache/cdk8s-sidecars/go-mod) or ' +
  'Debian\'s sources: `apt-get install -y --no-install-recommends golang-go golang-k8s-sigs-yaml-dev` ' +
  '(CONTRIBUTING.md: "The API server\'s YAML reader")';

/** Where the tests cache what they build: ~/.cache/cdk8s-sidecars/ (XDG_CACHE_HOME honoured), else node_modules/.cache. */
export function testCacheRoot(): string {
  const base = process.env.XDG_CACHE_HOME || (process.env.HOME || os.homedir() ? path.join(process.env.HOME || os.homedir(), '.cache') : undefined);
  return base ? path.join(base, 'cdk8s-sidecars') : path.join(__dirname, '..', '..', 'node_modules', '.cache');
}

function goBinary(): string | undefined {
  for (const candidate of ['/usr/local/go/bin/go', '/usr/lib/go/bin/go', '/usr/bin/go']) {
    if (fs.existsSync(candidate)) return candidate;
  }
  const which = spawnSync('sh', ['-c', 'command -v go'], { encoding: 'utf8' });
  return which.status === 0 && which.stdout.trim() ? which.stdout.trim() : undefined;
}

/**
 * Builds a Go program of the tests (one file, offline, GOPATH mode, no cgo) once per machine: the
 * binary is cached under node_modules/.cache/<cacheName>/, keyed by the program's text, the Go
 * version and `keyParts` (the sources it compiles against). Its path, or why it cannot be had.
 */
export function buildGoProgram(
  source: string, cacheName: string, howto: string, options: { gopath?: string; keyParts?: Buffer[]; modules?: boolean } = {},
): { binary?: string; why?: string } {
  const go = goBinary();
  if (!go) return { why: `no Go toolchain found; ${howto}` };
  const version = spawnSync(go, ['version'], { encoding: 'utf8' }).stdout.trim();
  const hash = createHash('sha256').update(fs.readFileSync(source)).update(version);
  for (const part of options.keyParts ?? []) hash.update(part);
  const cache = path.join(testCacheRoot(), cacheName);
  const binary = path.join(cache, `${path.basename(path.dirname(source))}-${hash.digest('hex').slice(0, 16)}`);
  if (fs.existsSync(binary)) return { binary };
  fs.mkdirSync(cache, { recursive: true });
  const tmp = `${binary}.${process.pid}.tmp`;
  const env: NodeJS.ProcessEnv = options.modules
    // module mode: the pinned go.mod and go.sum beside the source, modules from the proxy into our cache
    ? {
      ...process.env,
      GO111MODULE: 'on',
      GOFLAGS: '-mod=readonly -modcacherw',
      GOTOOLCHAIN: 'local',
      CGO_ENABLED: '0',
      GOMODCACHE: path.join(testCacheRoot(), 'go-mod'),
      GOWORK: 'off',
      GOPROXY: process.env.GOPROXY && process.env.GOPROXY !== 'off' ? process.env.GOPROXY : 'https://proxy.golang.org',
    }
    : { ...process.env, GO111MODULE: 'off', GOFLAGS: '', GOPROXY: 'off', GOTOOLCHAIN: 'local', CGO_ENABLED: '0' };
  if (options.gopath) env.GOPATH = options.gopath;
  // The build cache: Go's default (~/.cache/go-build) where there is a home, else beside the binary.
  if (!env.GOCACHE && !env.HOME) env.GOCACHE = path.join(cache, 'go-build');
  // (bounded: a proxy that does not answer must not hold the test run)
  const res = spawnSync(go, ['build', '-o', tmp, options.modules ? '.' : source], { env, encoding: 'utf8', cwd: path.dirname(source), timeout: 300_000 });
  if (res.status !== 0) {
    fs.rmSync(tmp, { force: true });
    const why = res.error?.message ?? res.stderr.trim().split('\n').slice(-3).join(' ');
    return { why: `building ${source}${options.modules ? ' from the Go module proxy' : ''} failed (${why}); ${howto}` };
  }
  fs.renameSync(tmp, binary); // atomic: jest workers building at once each rename a whole file
  return { binary };
}

/** The reader built from one source: its path and what it was built from, or why it cannot be had. */
export interface OracleBuild { readonly binary?: string; readonly why?: string; readonly from?: string }

let built: OracleBuild | undefined;
const builtFrom: { debian?: OracleBuild; proxy?: OracleBuild } = {};

/** The reader built against Debian's sources (GOPATH mode, offline), or why not. */
export function debianOracle(): OracleBuild {
  if (builtFrom.debian) return builtFrom.debian;
  const gopath = debianGopath();
  if (!gopath) return builtFrom.debian = { why: `Debian's sources are hidden (${GOCODE_ENV}=none)` };
  const sigsYaml = path.join(gopath, 'src', 'sigs.k8s.io', 'yaml', 'yaml.go');
  const yamlV2 = path.join(gopath, 'src', 'gopkg.in', 'yaml.v2', 'decode.go');
  if (!fs.existsSync(sigsYaml)) return builtFrom.debian = { why: `${sigsYaml} is missing (Debian: golang-k8s-sigs-yaml-dev)` };
  const keyParts = [sigsYaml, yamlV2].filter(f => fs.existsSync(f)).map(f => fs.readFileSync(f));
  const b = buildGoProgram(SOURCE, 'go-yaml-reader-debian', ORACLE_HOWTO, { gopath, keyParts });
  return builtFrom.debian = { ...b, from: `Debian's sigs.k8s.io/yaml sources in ${gopath}` };
}

/** The reader built from the Go module proxy at the versions go.mod pins, or why not. */
export function proxyOracle(): OracleBuild {
  if (builtFrom.proxy) return builtFrom.proxy;
  const keyParts = ['go.mod', 'go.sum'].map(f => fs.readFileSync(path.join(READER_DIR, f)));
  const b = buildGoProgram(SOURCE, 'go-yaml-reader-proxy', ORACLE_HOWTO, { modules: true, keyParts });
  return builtFrom.proxy = { ...b, from: 'the Go module proxy (sigs.k8s.io/yaml v1.6.0, go.yaml.in/yaml/v2 v2.4.4)' };
}

/**
 * Builds (once per machine and program text) the reader: from Debian's sources where they are
 * installed, else from the Go module proxy; its path, or why neither can be had.
 */
export function oracle(): OracleBuild {
  if (built) return built;
  const debian = debianOracle();
  if (debian.binary) return built = debian;
  const proxy = proxyOracle();
  if (proxy.binary) return built = proxy;
  return built = { why: `${debian.why}; and ${proxy.why}` };
}

/** One document as the API server gets it, or the reader's error. */
export type DocumentReading = { ok: unknown; error?: undefined } | { ok?: undefined; error: string };

/** Reads many YAML streams with one process: for each stream, its documents as the API server reads them. */
export function readStreamsAsApiServer(streams: Array<string | Buffer>, reader: OracleBuild = oracle()): DocumentReading[][] {
  return rawReadings(streams, reader).map(l => (JSON.parse(l) as Array<{ ok?: unknown; error?: string }>).map(r =>
    r.error !== undefined ? { error: r.error } : { ok: r.ok === undefined ? null : r.ok }));
}

/** The reader's output for each stream, as it printed it (one JSON line per stream: a comparison that needs no parse). */
export function rawReadings(streams: Array<string | Buffer>, reader: OracleBuild = oracle()): string[] {
  const { binary, why } = reader;
  if (!binary) throw new Error(why);
  if (streams.length === 0) return [];
  const input = Buffer.concat(streams.flatMap(s => {
    const bytes = typeof s === 'string' ? Buffer.from(s, 'utf8') : s;
    return [Buffer.from(`${bytes.length}\n`), bytes];
  }));
  const res = spawnSync(binary, ['-batch'], { input, maxBuffer: 1024 * 1024 * 1024 });
  if (res.status !== 0) throw new Error(`go-yaml-reader failed: ${res.error?.message ?? res.stderr.toString()}`);
  const lines = res.stdout.toString('utf8').split('\n').filter(l => l !== '');
  if (lines.length !== streams.length) throw new Error(`go-yaml-reader gave ${lines.length} results for ${streams.length} streams`);
  return lines;
}

/** The documents of one YAML stream as the API server reads them; throws on the first unreadable one. */
export function readAsApiServer(yaml: string): unknown[] {
  return readStreamsAsApiServer([yaml])[0].map((d, i) => {
    if (d.error !== undefined) throw new Error(`the API server's reader rejects document ${i}: ${d.error}`);
    return d.ok;
  });
}

/** Whether the oracle can run here; under CI=true its absence is an error. */
export function oracleAvailable(): boolean {
  const { binary, why } = oracle();
  if (binary) return true;
  if (process.env.CI === 'true' || process.env.CI === '1') throw new Error(`CI=true: ${why}`);
  noteSkipped(`the API-server YAML tests: ${why}`);
  return false;
}

/**
 * `describe`, or `describe.skip` with the reason printed where the oracle cannot be built (never
 * under CI=true, where the build failure fails the file).
 */
export function describeOracle(name: string, fn: () => void): void {
  (oracleAvailable() ? describe : describe.skip)(name, fn);
}

/** `test`, or `test.skip` with the reason noted where the oracle cannot be built (never under CI=true). */
export function oracleTest(name: string, fn: () => void, timeout?: number): void {
  (oracleAvailable() ? test : test.skip)(name, fn, timeout);
}

let warned = false;

/**
 * A synthesized app's manifests as the cluster reads them: the oracle where it can be built (always
 * under CI=true), else the JS `yaml` reader in YAML 1.1 (cdk8s' schema) with one note. Only for
 * reading the library's own output where a test needs its objects; never the reference another
 * reader is compared with (the JS reader differs from yaml.v2: `12:30`, `0o17`, dates): such a test
 * uses `readAsApiServer` and skips where the oracle cannot be built (`oracleTest`).
 */
export function readManifests(yaml: string): any[] {
  const { binary, why } = oracle();
  if (binary) return readAsApiServer(yaml) as any[];
  if (process.env.CI === 'true' || process.env.CI === '1') throw new Error(`CI=true: ${why}`);
  if (!warned) {
    warned = true;
    noteSkipped(`manifests read with the JS yaml reader, not the API server's: ${why}`);
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { parseAllDocuments } = require('yaml') as typeof import('yaml');
  return parseAllDocuments(yaml, { version: '1.1' }).map(d => d.toJSON()).filter(d => d !== null);
}
