/**
 * The API server's YAML reader, for tests: test/go-yaml-reader/main.go (sigs.k8s.io/yaml 1.3 over
 * gopkg.in/yaml.v2, what kubectl converts a manifest with before sending it, and the documents
 * split as kubectl splits them) built once per machine with the installed Go against Debian's
 * sources (`apt-get install golang-k8s-sigs-yaml-dev`: /usr/share/gocode/src), offline, in GOPATH
 * mode. The binary is cached under node_modules/.cache/ (git-ignored), keyed by the program's
 * text and the Go version.
 *
 * Why not the JavaScript `yaml` package: it reads YAML 1.2 (or cdk8s' 1.1 schema) its own way;
 * the cluster reads `0o17` as 15, U+0085 as a line break and rejects U+2028 in a plain scalar
 * (SIDECARS.md §10, measured), none of which a JS reader shows.
 *
 * Where Go or the Debian package is missing, `oracle()` says how to get them; `describeOracle`
 * skips its tests then, except under `CI=true`, where they fail (`.ci/run` installs the package).
 */
import { spawnSync } from 'child_process';
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { noteSkipped } from './skips';

const SOURCE = path.join(__dirname, '..', 'go-yaml-reader', 'main.go');
const GOPATH = '/usr/share/gocode';
const SIGS_YAML = path.join(GOPATH, 'src', 'sigs.k8s.io', 'yaml', 'yaml.go');

/** How to get the oracle, for skip and failure messages. */
export const ORACLE_HOWTO =
  'the API-server YAML oracle needs Go (/usr/local/go/bin/go or `go` on PATH) and Debian\'s ' +
  'sigs.k8s.io/yaml sources: `apt-get install -y --no-install-recommends golang-go golang-k8s-sigs-yaml-dev` ' +
  '(CONTRIBUTING.md: "The API server\'s YAML reader")';

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
  source: string, cacheName: string, howto: string, options: { gopath?: string; keyParts?: Buffer[] } = {},
): { binary?: string; why?: string } {
  const go = goBinary();
  if (!go) return { why: `no Go toolchain found; ${howto}` };
  const version = spawnSync(go, ['version'], { encoding: 'utf8' }).stdout.trim();
  const hash = createHash('sha256').update(fs.readFileSync(source)).update(version);
  for (const part of options.keyParts ?? []) hash.update(part);
  const cache = path.join(__dirname, '..', '..', 'node_modules', '.cache', cacheName);
  const binary = path.join(cache, `${path.basename(path.dirname(source))}-${hash.digest('hex').slice(0, 16)}`);
  if (fs.existsSync(binary)) return { binary };
  fs.mkdirSync(cache, { recursive: true });
  const tmp = `${binary}.${process.pid}.tmp`;
  const env: NodeJS.ProcessEnv = { ...process.env, GO111MODULE: 'off', GOFLAGS: '', GOPROXY: 'off', GOTOOLCHAIN: 'local', CGO_ENABLED: '0' };
  if (options.gopath) env.GOPATH = options.gopath;
  // The build cache: Go's default (~/.cache/go-build) where there is a home, else beside the binary.
  if (!env.GOCACHE && !env.HOME) env.GOCACHE = path.join(cache, 'go-build');
  const res = spawnSync(go, ['build', '-o', tmp, source], { env, encoding: 'utf8', cwd: path.dirname(source) });
  if (res.status !== 0) {
    return { why: `building ${source} failed (${res.error?.message ?? res.stderr.trim()}); ${howto}` };
  }
  fs.renameSync(tmp, binary); // atomic: jest workers building at once each rename a whole file
  return { binary };
}

let built: { binary?: string; why?: string } | undefined;

/** Builds (once per machine and program text) the reader; its path, or why it cannot be had. */
export function oracle(): { binary?: string; why?: string } {
  if (built) return built;
  if (!fs.existsSync(SIGS_YAML)) return built = { why: `${SIGS_YAML} is missing; ${ORACLE_HOWTO}` };
  return built = buildGoProgram(SOURCE, 'cdk8s-sidecars-go-yaml-reader', ORACLE_HOWTO, { gopath: GOPATH, keyParts: [fs.readFileSync(SIGS_YAML)] });
}

/** One document as the API server gets it, or the reader's error. */
export type DocumentReading = { ok: unknown; error?: undefined } | { ok?: undefined; error: string };

/** Reads many YAML streams with one process: for each stream, its documents as the API server reads them. */
export function readStreamsAsApiServer(streams: string[]): DocumentReading[][] {
  const { binary, why } = oracle();
  if (!binary) throw new Error(why);
  if (streams.length === 0) return [];
  const input = Buffer.concat(streams.flatMap(s => {
    const bytes = Buffer.from(s, 'utf8');
    return [Buffer.from(`${bytes.length}\n`), bytes];
  }));
  const res = spawnSync(binary, ['-batch'], { input, maxBuffer: 1024 * 1024 * 1024 });
  if (res.status !== 0) throw new Error(`go-yaml-reader failed: ${res.error?.message ?? res.stderr.toString()}`);
  const lines = res.stdout.toString('utf8').split('\n').filter(l => l !== '');
  if (lines.length !== streams.length) throw new Error(`go-yaml-reader gave ${lines.length} results for ${streams.length} streams`);
  return lines.map(l => (JSON.parse(l) as Array<{ ok?: unknown; error?: string }>).map(r =>
    r.error !== undefined ? { error: r.error } : { ok: r.ok === undefined ? null : r.ok }));
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

let warned = false;

/**
 * A synthesized app's manifests as the cluster reads them: the oracle where it can be built (always
 * under CI=true), else the JS `yaml` reader in YAML 1.1 (cdk8s' schema) with one warning.
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
