/**
 * The real Helm 3 and Helm 4 (issue 46; `npm run test:helm`, docs/cli.md "render"): `helm template`
 * of examples/chart with cdk8s-sidecars as the post-renderer, Helm 3 given the command's path
 * (`--post-renderer PATH`, pkg/postrender/exec.go at v3.21.4) and Helm 4 the plugin of
 * helm-plugins/cdk8s-sidecars (`--post-renderer NAME`, pkg/cmd/flags.go and pkg/postrenderer at
 * v4.3.2), installed with `helm plugin install DIR` into temporary Helm homes. The output must be
 * `helm template | cdk8s-sidecars render` with the same config: byte for byte from Helm 3 (it prints the
 * post-renderer's stdout); from Helm 4 the same objects under the API server's reading, in Helm's install
 * order (Helm 4 parses and rewrites the post-renderer's output, below). Plain `helm template` must be
 * test/fixtures/cli/chart/helm-template.yaml, the input of test/cli.test.ts: Helm 3's bytes exactly,
 * Helm 4's with the one difference it has.
 *
 * The binaries: scripts/build-helm.sh builds them from the Go module proxy into
 * ~/.cache/cdk8s-sidecars/helm/<version>/helm (CDK8S_SIDECARS_CACHE moves it; HELM3 and HELM4 name
 * other binaries of the same releases). Without one, its block skips with one line (the run's
 * "Skipped" summary); with CDK8S_SIDECARS_HELM_REQUIRED=1 (what .ci/run sets after building them)
 * a missing binary fails instead.
 *
 * Nothing is written outside a temporary directory: HOME, HELM_DATA_HOME, HELM_CONFIG_HOME,
 * HELM_CACHE_HOME and HELM_PLUGINS point into it (checked at the end), and every helm process is
 * bounded in time (coreutils' timeout, then spawnSync's).
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { readManifests } from '../util/api-server-yaml';
import { noteSkipped } from '../util/skips';

const ROOT = path.resolve(__dirname, '..', '..');
const CHART = 'examples/chart';
const CONFIG = 'examples/chart/sidecars.yaml';
const FIXTURE = path.join(ROOT, 'test', 'fixtures', 'cli', 'chart', 'helm-template.yaml');
const PLUGIN_DIR = path.join(ROOT, 'helm-plugins', 'cdk8s-sidecars');
const MAIN = path.join(ROOT, 'lib', 'cli', 'main.js');
/** docs/cli.md's command: the release `shop` in namespace `shop`, the Service sent to Envoy's listener. */
const TEMPLATE = ['template', 'shop', CHART, '--namespace', 'shop', '--set', 'service.targetPort=10000'];
const REQUIRED = process.env.CDK8S_SIDECARS_HELM_REQUIRED === '1';

/** The pinned releases, read from scripts/build-helm.sh (the one place they are written). */
function pinned(major: 3 | 4): string {
  const script = fs.readFileSync(path.join(ROOT, 'scripts', 'build-helm.sh'), 'utf8');
  const m = new RegExp(`^HELM${major}_VERSION=(v${major}\\.\\d+\\.\\d+)$`, 'm').exec(script);
  if (!m) throw new Error(`scripts/build-helm.sh: no HELM${major}_VERSION=v${major}.X.Y line`);
  return m[1];
}

function helmBinary(major: 3 | 4): string {
  const cache = process.env.CDK8S_SIDECARS_CACHE ?? path.join(os.homedir(), '.cache', 'cdk8s-sidecars');
  return process.env[`HELM${major}`] ?? path.join(cache, 'helm', pinned(major), 'helm');
}

let tmp: string;
let homes: Record<string, string>;

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cdk8s-sidecars-helm-test-'));
  homes = {
    HOME: path.join(tmp, 'home'),
    HELM_DATA_HOME: path.join(tmp, 'helm', 'data'),
    HELM_CONFIG_HOME: path.join(tmp, 'helm', 'config'),
    HELM_CACHE_HOME: path.join(tmp, 'helm', 'cache'),
    // where Helm 4 looks for plugins (pkg/cli/environment.go: default $HELM_DATA_HOME/plugins) and
    // where `helm plugin install DIR` links them (internal/plugin/installer/local_installer.go Path():
    // helmpath.DataPath("plugins", ...), whatever HELM_PLUGINS says): the two must agree
    HELM_PLUGINS: path.join(tmp, 'helm', 'data', 'plugins'),
  };
  fs.mkdirSync(homes.HOME, { recursive: true });
});

afterAll(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

/** The caller's environment without its Helm, XDG and cdk8s-sidecars settings, with the temporary homes. */
function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) =>
    !k.startsWith('HELM_') && !k.startsWith('XDG_') && !k.startsWith('CDK8S_SIDECARS_') && k !== 'KUBECONFIG'));
  return { ...clean, ...homes, KUBECONFIG: path.join(tmp, 'no-kubeconfig'), ...extra };
}

interface Ran { readonly status: number | null; readonly signal: string | null; readonly stdout: string; readonly stderr: string }

/**
 * Runs a program in the repository root with the temporary homes, its stdout to a file and its stderr
 * through a real pipe, as from a terminal or a CI runner (node's own child pipes are sockets, through
 * which the Helm 4 plugin cannot reach Helm's stderr: helm-plugins/cdk8s-sidecars/render.js). bash
 * gives the pipe and the program's exit status (pipefail); coreutils' timeout stops it after 110 s,
 * spawnSync's the whole after 120 s.
 */
let runs = 0;
function run(command: string, args: string[], input?: string, extra?: Record<string, string>): Ran {
  const out = path.join(tmp, `run-${++runs}.out`);
  const err = path.join(tmp, `run-${runs}.err`);
  const script = 'out=$1 err=$2; shift 2; set -o pipefail; timeout -k 5 110 "$@" 2>&1 >"$out" | cat >"$err"';
  const r = spawnSync('bash', ['-c', script, 'bash', out, err, command, ...args], {
    cwd: ROOT,
    env: env(extra),
    input,
    stdio: [input === undefined ? 'ignore' : 'pipe', 'ignore', 'inherit'],
    timeout: 120_000,
    killSignal: 'SIGKILL',
  });
  if (r.error) throw r.error;
  return { status: r.status, signal: r.signal, stdout: fs.readFileSync(out, 'utf8'), stderr: fs.readFileSync(err, 'utf8') };
}

function ok(r: Ran, what: string): string {
  if (r.status !== 0) throw new Error(`${what}: exit ${r.status} ${r.signal ?? ''}\n${r.stderr}`);
  return r.stdout;
}

/** `cdk8s-sidecars render --config CONFIG` on `input`: what `helm template | cdk8s-sidecars render` writes. */
function renderPiped(input: string, config = CONFIG): string {
  return ok(run(process.execPath, [MAIN, 'render', '--config', config], input), 'cdk8s-sidecars render');
}

/**
 * What Helm 3 writes for post-rendered manifests: the post-renderer's stdout is the release's manifest
 * (pkg/action/action.go at v3.21.4, renderResources), which `helm template` prints with surrounding
 * white space trimmed and one newline (cmd/helm/template.go: `fmt.Fprintln(&manifests,
 * strings.TrimSpace(rel.Manifest))`; the chart has no hooks).
 */
function asHelm3Prints(rendered: string): string {
  return `${rendered.trim()}\n`;
}

/**
 * Helm 4.3.2 (pkg/action/action.go, renderResources with the CLI's strategy, "combined") does not print
 * what the post-renderer wrote: it gives each object an annotation naming its template
 * (`postrenderer.helm.sh/postrender-filename`, annotateAndMerge), writes them with kyaml, runs the
 * post-renderer, parses its output, takes the annotation off again (an object without one is filed as
 * `generated-by-postrender-<i>.yaml`, splitAndDeannotate), then sorts everything in its install order
 * (releaseutil.SortManifests, InstallOrder in pkg/release/v1/util/kind_sorter.go: ConfigMap before
 * Service before Deployment before CronJob) and prints each with a `# Source:` line. So: the same
 * objects as the piped render, read as the API server reads them, in that order.
 */
function expectAsHelm4Prints(printed: string, piped: string): void {
  const key = (o: any) => `${o.kind} ${o.metadata?.namespace ?? ''}/${o.metadata?.name}`;
  const byKey = (objects: any[]) => [...objects].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  const actual = readManifests(printed);
  const expected = readManifests(piped);
  expect(actual.map(key).sort()).toEqual(expected.map(key).sort());
  expect(byKey(actual)).toEqual(byKey(expected));
  expect(actual.map(o => o.kind)).toEqual(['ConfigMap', 'ConfigMap', 'ConfigMap', 'Service', 'Deployment', 'CronJob']);
  // the ConfigMaps render adds had no template: Helm files them under names of its own
  expect(printed.match(/^# Source: generated-by-postrender-\d+\.yaml$/gm)).toHaveLength(3);
  expect(printed).not.toContain('postrenderer.helm.sh/postrender-filename');
}

/**
 * Helm 4's plain `helm template` keeps the blank line that ends each template (its SplitManifests trims
 * only the left, pkg/release/v1/util/manifest.go at v4.3.2; Helm 3's trims both sides,
 * pkg/releaseutil/manifest.go at v3.21.4): Helm 3's output with a blank line before each `---` but the first.
 */
function asHelm4Template(helm3: string): string {
  return helm3.replace(/\n---\n/g, '\n\n---\n');
}

function badConfig(): string {
  const file = path.join(tmp, 'bad-sidecars.yaml');
  fs.writeFileSync(file, fs.readFileSync(path.join(ROOT, CONFIG), 'utf8').replace('appPort: 8080', 'appPort: "8080"'));
  return file;
}
const BAD_CONFIG_MESSAGE = 'workloads[0].envoy.appPort: expected a number, got string "8080"';

for (const major of [3, 4] as const) {
  const version = pinned(major);
  const helm = helmBinary(major);
  const have = fs.existsSync(helm);
  const how = `build it with \`bash scripts/build-helm.sh ${major}\` (npm run helm:build; CONTRIBUTING.md gives the time) or set HELM${major}`;

  if (!have) {
    describe(`Helm ${version}`, () => {
      test(`skipped: ${helm} does not exist; ${how}`, () => {
        if (REQUIRED) throw new Error(`CDK8S_SIDECARS_HELM_REQUIRED=1 but ${helm} does not exist; ${how}`);
        noteSkipped(`helm ${version} is not built (${how}; CI=true fails only with CDK8S_SIDECARS_HELM_REQUIRED=1)`);
      });
    });
    continue;
  }

  describe(`Helm ${version}`, () => {
    const helmRun = (args: string[], extra?: Record<string, string>) => run(helm, args, undefined, extra);
    let plain: string;

    beforeAll(() => {
      plain = ok(helmRun(TEMPLATE), `helm ${version} template`);
    });

    test('is the pinned release', () => {
      expect(ok(helmRun(['version', '--short']), 'helm version').trim()).toMatch(new RegExp(`^${version.replace(/\./g, '\\.')}(\\+g[0-9a-f]*)?$`));
    });

    if (major === 3) {
      test('helm template of examples/chart is test/fixtures/cli/chart/helm-template.yaml, byte for byte (the input of test/cli.test.ts)', () => {
        expect(plain).toBe(fs.readFileSync(FIXTURE, 'utf8'));
      });
    } else {
      test('helm template of examples/chart is test/fixtures/cli/chart/helm-template.yaml with a blank line ending each template but the last, and renders to the same bytes', () => {
        const fixture = fs.readFileSync(FIXTURE, 'utf8');
        expect(plain).not.toBe(fixture);
        expect(plain).toBe(asHelm4Template(fixture));
        expect(renderPiped(plain)).toBe(renderPiped(fixture));
      });
    }

    if (major === 3) {
      /** The command as npm installs it: node_modules/.bin/cdk8s-sidecars, a link to lib/cli/main.js made executable (npm's bin-links does both). */
      function installedBin(): string {
        const bin = path.join(tmp, 'node_modules', '.bin', 'cdk8s-sidecars');
        if (!fs.existsSync(bin)) {
          fs.mkdirSync(path.dirname(bin), { recursive: true });
          fs.chmodSync(MAIN, 0o755);
          fs.symlinkSync(MAIN, bin);
        }
        return bin;
      }

      test('--post-renderer PATH --post-renderer-args render --post-renderer-args --config=...: what helm template | cdk8s-sidecars render writes', () => {
        const post = ok(helmRun([...TEMPLATE, '--post-renderer', installedBin(),
          '--post-renderer-args', 'render', '--post-renderer-args', `--config=${CONFIG}`]), 'helm template --post-renderer');
        const piped = renderPiped(plain);
        expect(post).toBe(asHelm3Prints(piped));
        // the sidecars are there: 1.30 is native
        expect(post).toContain('restartPolicy: Always');
        expect(post).not.toBe(plain);
      });

      test('a refused config fails the helm command and Helm 3 shows the command\'s message', () => {
        const r = helmRun([...TEMPLATE, '--post-renderer', installedBin(),
          '--post-renderer-args', 'render', '--post-renderer-args', `--config=${badConfig()}`]);
        expect(r.status).not.toBe(0);
        expect(r.stdout).toBe('');
        expect(r.stderr).toContain(BAD_CONFIG_MESSAGE);
      });
    } else {
      let installOutput: string;

      beforeAll(() => {
        installOutput = ok(helmRun(['plugin', 'install', PLUGIN_DIR]), 'helm plugin install');
      });

      test('helm plugin install DIR: a local directory installs unsigned ("development mode"), as a link in $HELM_DATA_HOME/plugins', () => {
        expect(installOutput).toContain('Installed plugin: cdk8s-sidecars');
        const link = path.join(homes.HELM_DATA_HOME, 'plugins', 'cdk8s-sidecars');
        expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
        expect(fs.realpathSync(link)).toBe(fs.realpathSync(PLUGIN_DIR));
      });

      test('helm plugin list: the plugin, its version (the package\'s) and type postrenderer/v1', () => {
        const pkgVersion = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version;
        const line = ok(helmRun(['plugin', 'list']), 'helm plugin list').split('\n').find(l => l.startsWith('cdk8s-sidecars'));
        expect(line?.split(/\s+/).slice(0, 3)).toEqual(['cdk8s-sidecars', pkgVersion, 'postrenderer/v1']);
      });

      test('--post-renderer cdk8s-sidecars --post-renderer-args --config=...: the objects of helm template | cdk8s-sidecars render, in Helm\'s order', () => {
        const post = ok(helmRun([...TEMPLATE, '--post-renderer', 'cdk8s-sidecars', '--post-renderer-args', `--config=${CONFIG}`]),
          'helm template --post-renderer cdk8s-sidecars');
        expectAsHelm4Prints(post, renderPiped(plain));
        expect(post).toContain('restartPolicy: Always');
      });

      test('the arguments may come before --post-renderer too (Helm 4 applies them either way)', () => {
        const post = ok(helmRun([...TEMPLATE, '--post-renderer-args', `--config=${CONFIG}`, '--post-renderer', 'cdk8s-sidecars']),
          'helm template --post-renderer-args ... --post-renderer cdk8s-sidecars');
        expectAsHelm4Prints(post, renderPiped(plain));
      });

      test('a refused config fails the helm command, and the command\'s message reaches Helm\'s stderr (Helm 4.3.2 drops the plugin\'s own)', () => {
        const r = helmRun([...TEMPLATE, '--post-renderer', 'cdk8s-sidecars', '--post-renderer-args', `--config=${badConfig()}`]);
        expect(r.status).not.toBe(0);
        expect(r.stdout).toBe('');
        expect(r.stderr).toContain(BAD_CONFIG_MESSAGE);
        expect(r.stderr).toContain('plugin "cdk8s-sidecars" exited with error');
        // what Helm alone would show: its own line, not the command's message
        const own = helmRun([...TEMPLATE, '--post-renderer', 'cdk8s-sidecars', '--post-renderer-args', `--config=${badConfig()}`],
          { CDK8S_SIDECARS_HELM_STDERR: 'plugin' });
        expect(own.status).not.toBe(0);
        expect(own.stderr).toContain('plugin "cdk8s-sidecars" exited with error');
        expect(own.stderr).not.toContain(BAD_CONFIG_MESSAGE);
      });

      test('Helm 4 takes no path for --post-renderer: the Helm 3 form fails (why the plugin exists)', () => {
        const r = helmRun([...TEMPLATE, '--post-renderer', MAIN, '--post-renderer-args', 'render', '--post-renderer-args', `--config=${CONFIG}`]);
        expect(r.status).not.toBe(0);
        expect(r.stdout).toBe('');
        expect(r.stderr).toContain(`invalid argument "${MAIN}" for "--post-renderer" flag: plugin: {Name:${MAIN} Type:postrenderer/v1} not found`);
      });

      test('HELM_PLUGINS is a list: the package\'s helm-plugins directory in it finds the plugin with no install', () => {
        const noInstall = { HELM_PLUGINS: [path.join(tmp, 'empty-plugins'), path.join(ROOT, 'helm-plugins')].join(path.delimiter) };
        const post = ok(helmRun([...TEMPLATE, '--post-renderer', 'cdk8s-sidecars', '--post-renderer-args', `--config=${CONFIG}`], noInstall),
          'helm template with HELM_PLUGINS');
        expectAsHelm4Prints(post, renderPiped(plain));
      });

      test('helm plugin uninstall removes the link only', () => {
        ok(helmRun(['plugin', 'uninstall', 'cdk8s-sidecars']), 'helm plugin uninstall');
        expect(fs.existsSync(path.join(homes.HELM_DATA_HOME, 'plugins', 'cdk8s-sidecars'))).toBe(false);
        expect(fs.existsSync(path.join(PLUGIN_DIR, 'plugin.yaml'))).toBe(true);
        ok(helmRun(['plugin', 'install', PLUGIN_DIR]), 'helm plugin install (again)');
      });
    }
  });
}

test('nothing was written to HOME: every file Helm wrote is under the temporary Helm homes', () => {
  if (!homes) return;
  expect(fs.readdirSync(homes.HOME)).toEqual([]);
});
