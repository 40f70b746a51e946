/**
 * The Helm 4 post-renderer plugin (helm-plugins/cdk8s-sidecars, docs/cli.md "Helm 4") without Helm:
 * its plugin.yaml against the rules Helm 4.3.2 loads it with, its version against the package's,
 * and its render.js against a stand-in for the compiled command (the arguments it passes, the exit
 * code, where its stderr goes). `npm run test:helm` (test/helm/) runs it in the real Helm 4; the
 * consumer test runs render.js from the packed tarball.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { parse } from 'yaml';

const ROOT = path.resolve(__dirname, '..');
const PLUGIN = path.join(ROOT, 'helm-plugins', 'cdk8s-sidecars');

describe('plugin.yaml', () => {
  const text = fs.readFileSync(path.join(PLUGIN, 'plugin.yaml'), 'utf8');
  const meta = parse(text);

  test('has only the fields of Helm 4\'s MetadataV1 (read with KnownFields: any other fails the load)', () => {
    // internal/plugin/metadata_v1.go at v4.3.2 (MetadataV1's yaml tags); loader.go loadMetadataV1: d.KnownFields(true)
    const known = ['apiVersion', 'name', 'type', 'runtime', 'version', 'sourceURL', 'config', 'runtimeConfig'];
    expect(Object.keys(meta).filter(k => !known.includes(k))).toEqual([]);
    // runtime_subprocess.go RuntimeConfigSubprocess and subprocess_commands.go PlatformCommand
    expect(Object.keys(meta.runtimeConfig).filter(k => !['platformCommand', 'platformHooks', 'protocolCommands'].includes(k))).toEqual([]);
    for (const c of meta.runtimeConfig.platformCommand) {
      expect(Object.keys(c).filter(k => !['os', 'arch', 'command', 'args'].includes(k))).toEqual([]);
    }
  });

  test('is a v1 postrenderer/v1 plugin named cdk8s-sidecars with a subprocess runtime', () => {
    // MetadataV1.Validate: name ^[A-Za-z0-9_-]+$ (plugin.go validPluginName), apiVersion "v1", type and runtime set;
    // pkg/postrenderer/postrenderer.go finds the plugin by name and type "postrenderer/v1"
    expect(meta).toMatchObject({ apiVersion: 'v1', type: 'postrenderer/v1', name: 'cdk8s-sidecars', runtime: 'subprocess' });
    expect(meta.runtimeConfig.platformCommand).toEqual([{ command: 'node', args: ['${HELM_PLUGIN_DIR}/render.js'] }]);
    expect(fs.existsSync(path.join(PLUGIN, 'render.js'))).toBe(true);
  });

  test('its version is the package\'s (scripts/helm-plugin-version.js writes it at each bump), a strict semver as Helm requires', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    expect(meta.version).toBe(pkg.version);
    // metadata.go isValidSemver: semver.StrictNewVersion (no leading v, three numbers)
    expect(meta.version).toMatch(/^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/);
  });

  test('the release writes the version: bump and unbump run scripts/helm-plugin-version.js', () => {
    const tasks = JSON.parse(fs.readFileSync(path.join(ROOT, '.projen', 'tasks.json'), 'utf8')).tasks;
    for (const name of ['bump', 'unbump']) {
      expect(tasks[name].steps.map((s: any) => s.exec).filter(Boolean)).toContain('node scripts/helm-plugin-version.js');
    }
    const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'cdk8s-sidecars-plugin-version-'));
    try {
      fs.mkdirSync(path.join(copy, 'scripts'));
      fs.mkdirSync(path.join(copy, 'helm-plugins', 'cdk8s-sidecars'), { recursive: true });
      fs.copyFileSync(path.join(ROOT, 'scripts', 'helm-plugin-version.js'), path.join(copy, 'scripts', 'helm-plugin-version.js'));
      fs.writeFileSync(path.join(copy, 'helm-plugins', 'cdk8s-sidecars', 'plugin.yaml'), text);
      fs.writeFileSync(path.join(copy, 'package.json'), JSON.stringify({ name: 'cdk8s-sidecars', version: '0.7.3' }));
      const r = spawnSync(process.execPath, [path.join(copy, 'scripts', 'helm-plugin-version.js')], { encoding: 'utf8' });
      expect(r.status).toBe(0);
      const written = fs.readFileSync(path.join(copy, 'helm-plugins', 'cdk8s-sidecars', 'plugin.yaml'), 'utf8');
      expect(parse(written).version).toBe('0.7.3');
      expect(written.replace('version: 0.7.3', `version: ${meta.version}`)).toBe(text);
    } finally {
      fs.rmSync(copy, { recursive: true, force: true });
    }
  });
});

describe('render.js', () => {
  let pkg: string;

  /** A package of render.js and a stand-in lib/cli/main.js that prints its argv and stdin, writes to stderr and exits 3. */
  beforeAll(() => {
    pkg = fs.mkdtempSync(path.join(os.tmpdir(), 'cdk8s-sidecars-plugin-'));
    fs.mkdirSync(path.join(pkg, 'helm-plugins', 'cdk8s-sidecars'), { recursive: true });
    fs.copyFileSync(path.join(PLUGIN, 'render.js'), path.join(pkg, 'helm-plugins', 'cdk8s-sidecars', 'render.js'));
    fs.mkdirSync(path.join(pkg, 'lib', 'cli'), { recursive: true });
    fs.writeFileSync(path.join(pkg, 'lib', 'cli', 'main.js'), [
      'exports.main = (argv) => {',
      "  const input = require('fs').readFileSync(0, 'utf8');",
      '  process.stdout.write(JSON.stringify({ argv, input }));',
      "  process.stderr.write('cdk8s-sidecars: the message\\n');",
      '  return 3;',
      '};',
    ].join('\n'));
  });

  afterAll(() => {
    if (pkg) fs.rmSync(pkg, { recursive: true, force: true });
  });

  const clean = () => Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('HELM_') && !k.startsWith('CDK8S_SIDECARS_')));

  test('runs `render` with Helm\'s extra arguments, stdin to stdin, and exits with the command\'s code', () => {
    const r = spawnSync(process.execPath, [path.join(pkg, 'helm-plugins', 'cdk8s-sidecars', 'render.js'), '--config=sidecars.yaml'],
      { input: 'kind: List\n', encoding: 'utf8', env: clean() });
    expect(r.status).toBe(3);
    expect(JSON.parse(r.stdout)).toEqual({ argv: ['render', '--config=sidecars.yaml'], input: 'kind: List\n' });
    expect(r.stderr).toBe('cdk8s-sidecars: the message\n');
  });

  test('started through a link (as helm plugin install makes it), it finds lib/ beside its real directory', () => {
    const link = path.join(pkg, 'linked-plugin');
    fs.symlinkSync(path.join(pkg, 'helm-plugins', 'cdk8s-sidecars'), link);
    const r = spawnSync(process.execPath, [path.join(link, 'render.js'), '--config=x.yaml'], { input: '', encoding: 'utf8', env: clean() });
    expect(r.status).toBe(3);
    expect(JSON.parse(r.stdout).argv).toEqual(['render', '--config=x.yaml']);
  });

  test('run by Helm (HELM_PLUGIN_NAME set) on Linux, its stderr goes to its parent\'s stderr where that is a pipe (Helm 4 drops the plugin\'s own)', () => {
    if (process.platform !== 'linux') return;
    // The parent (a node process standing in for Helm) has a real pipe as its stderr (as from a terminal
    // or a CI runner: sh's pipe to cat), or a regular file; the plugin's own stderr is a pipe the parent
    // never reads, as Helm 4's buffer (runtime_subprocess.go runPostrenderer). (node's own child stdio
    // pipes are sockets, which cannot be reopened through /proc: hence sh.)
    const parent = [
      "const r = require('child_process').spawnSync(process.execPath, [process.argv[1]], { stdio: ['ignore', 'pipe', 'pipe'] });",
      "process.stdout.write('exit ' + r.status + '\\n');",
    ].join('\n');
    const render = path.join(pkg, 'helm-plugins', 'cdk8s-sidecars', 'render.js');
    const out = path.join(pkg, 'parent-stdout.txt');
    const errFile = path.join(pkg, 'parent-stderr.txt');
    const asParent = (env: NodeJS.ProcessEnv, stderr: 'pipe' | 'file' = 'pipe') => {
      const script = stderr === 'pipe' ? '"$0" -e "$1" "$2" 2>&1 >"$3" | cat' : '"$0" -e "$1" "$2" >"$3" 2>"$4"; cat "$4"';
      const r = spawnSync('sh', ['-c', script, process.execPath, parent, render, out, errFile], { encoding: 'utf8', env });
      return { stdout: fs.readFileSync(out, 'utf8'), stderr: r.stdout };
    };
    const asHelm = asParent({ ...clean(), HELM_PLUGIN_NAME: 'cdk8s-sidecars' });
    expect(asHelm.stderr).toBe('cdk8s-sidecars: the message\n');
    expect(asHelm.stdout).toBe('exit 3\n');
    const notHelm = asParent(clean());
    expect(notHelm.stderr).toBe('');
    expect(notHelm.stdout).toBe('exit 3\n');
    const keptOwn = asParent({ ...clean(), HELM_PLUGIN_NAME: 'cdk8s-sidecars', CDK8S_SIDECARS_HELM_STDERR: 'plugin' });
    expect(keptOwn.stderr).toBe('');
    // a regular file is left alone: reopened it has an offset of its own, and Helm's next line would overwrite the message
    const toFile = asParent({ ...clean(), HELM_PLUGIN_NAME: 'cdk8s-sidecars' }, 'file');
    expect(toFile.stderr).toBe('');
    expect(toFile.stdout).toBe('exit 3\n');
  });

  test('without lib/ (a clone not compiled yet) it says what to do', () => {
    const bare = fs.mkdtempSync(path.join(os.tmpdir(), 'cdk8s-sidecars-plugin-bare-'));
    try {
      fs.mkdirSync(path.join(bare, 'helm-plugins', 'cdk8s-sidecars'), { recursive: true });
      fs.copyFileSync(path.join(PLUGIN, 'render.js'), path.join(bare, 'helm-plugins', 'cdk8s-sidecars', 'render.js'));
      const r = spawnSync(process.execPath, [path.join(bare, 'helm-plugins', 'cdk8s-sidecars', 'render.js')], { input: '', encoding: 'utf8', env: clean() });
      expect(r.status).toBe(1);
      expect(r.stderr).toContain(`${path.join(fs.realpathSync(bare), 'lib', 'cli', 'main.js')} does not exist; in a clone, compile it first (npx projen compile)`);
    } finally {
      fs.rmSync(bare, { recursive: true, force: true });
    }
  });
});
