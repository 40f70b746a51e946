/**
 * Releases (issue 40; CONTRIBUTING.md "Releases"). The workflows cannot run here: these tests read
 * what projen generated from .projenrc.ts (.github/workflows/*.yml, .projen/tasks.json,
 * package.json) and check that the release builds and publishes every artifact, that `npm test`
 * runs the API compatibility check, and that `npm pack` compiles first. The full `package-all`
 * (jsii-pacmak of four languages, minutes) is not run: the task graph is walked instead.
 *
 * The compatibility check itself is run here on the committed baseline: jsii-diff must pass on an
 * unchanged copy and fail on a copy with one prop removed (what `npm run compat` then reports).
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { parse } from 'yaml';

const ROOT = path.resolve(__dirname, '..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
interface Step { exec?: string; spawn?: string; builtin?: string; condition?: string; execArgs?: string[] }
const TASKS: Record<string, { steps?: Step[]; env?: Record<string, string>; condition?: string }> = JSON.parse(read('.projen/tasks.json')).tasks;
const PKG = JSON.parse(read('package.json'));
const workflow = (name: string) => parse(read(`.github/workflows/${name}.yml`));

/**
 * The commands a task runs, spawned tasks expanded in order, as `npx projen <task>` runs them
 * outside CI (`CI` unset: a step whose condition tests `process.env.CI` is taken or left as it
 * would be). Builtins appear as `builtin:<name>`.
 */
function commands(task: string, seen: string[] = []): string[] {
  const t = TASKS[task];
  if (!t) throw new Error(`no task ${task}`);
  const out: string[] = [];
  for (const step of t.steps ?? []) {
    if (step.condition !== undefined && /process\.env\.CI/.test(step.condition)) {
      // `node -e "if (!process.env.CI) process.exit(1)"`: taken only under CI; `if (process.env.CI) ...`: only outside it
      if (/!process\.env\.CI/.test(step.condition)) continue;
    }
    if (step.spawn) out.push(`spawn:${step.spawn}`, ...commands(step.spawn, [...seen, task]));
    if (step.exec) out.push(step.exec);
    if (step.execArgs) out.push(step.execArgs.join(' '));
    if (step.builtin) out.push(`builtin:${step.builtin}`);
  }
  return out;
}

describe('the release task builds every artifact locally', () => {
  const release = commands('release');

  test('bump, compile (jsii), the tests, then jsii-pacmak for npm, PyPI, Maven and Go, then unbump and the anti-tamper check', () => {
    const at = (c: string) => release.indexOf(c);
    const order = ['spawn:bump', 'jsii --silence-warnings=reserved-word', 'spawn:test', 'spawn:package-all', 'spawn:unbump', 'git diff --ignore-space-at-eol --exit-code'];
    for (const c of order) expect([c, at(c) >= 0]).toEqual([c, true]);
    expect(order.map(at)).toEqual([...order.map(at)].sort((a, b) => a - b));
    const pacmak = release.filter(c => c.startsWith('jsii-pacmak'));
    expect(pacmak.sort()).toEqual(['go', 'java', 'js', 'python'].map(l => `jsii-pacmak -v --target ${l}`));
    // the tests of the release include the API compatibility check
    expect(release).toContain('jsii-diff .compat . --keys --error-on prod');
  });

  test('version policy: 0.x (majorVersion 0), from conventional commits; only feat and fix make a release', () => {
    expect(PKG.version).toBe('0.0.0'); // set by the release's bump, never by hand
    expect(TASKS.release.env).toMatchObject({ RELEASE: 'true', MAJOR: '0' });
    expect(TASKS.bump.env).toMatchObject({ CHANGELOG: 'dist/changelog.md', BUMPFILE: 'dist/version.txt' });
    const releasable = JSON.stringify(TASKS['bump:releasable-commits']);
    expect(releasable).toContain('feat');
    expect(releasable).toContain('fix');
    // the changelog commit the release pushes makes no release of its own
    expect(TASKS.bump.condition).toContain('chore(release):');
  });

  test('the project changelog: projen\'s update-changelog step from the release notes', () => {
    expect(TASKS['release:changelog']).toMatchObject({
      env: { CHANGELOG: 'dist/changelog.md', VERSION_FILE: 'dist/version.txt', PROJECT_CHANGELOG_FILE: 'CHANGELOG.md' },
      steps: [{ builtin: 'release/update-changelog' }],
    });
    const github = workflow('release').jobs.release_github;
    const push = github.steps.find((s: any) => typeof s.run === 'string' && s.run.includes('release:changelog'));
    expect(push.if).toBe('${{ !inputs.dry_run }}');
    expect(push.run).toContain('npx projen release:changelog');
    expect(push.run).toContain('npx projen compat:baseline');
    expect(push.run).toContain('git push origin HEAD:main');
  });
});

describe('the generated workflows', () => {
  test('release.yml: on every push to main, one job builds (npx projen release), one job per registry publishes', () => {
    const wf = workflow('release');
    expect(wf.on.push.branches).toEqual(['main']);
    expect(wf.jobs.release.steps.map((s: any) => s.run)).toContain('npx projen release');
    const publish: Record<string, [string, string]> = {
      release_npm: ['package:js', 'publib-npm'],
      release_pypi: ['package:python', 'publib-pypi'],
      release_maven: ['package:java', 'publib-maven'],
      release_golang: ['package:go', 'publib-golang'],
    };
    for (const [job, [pkgTask, publib]] of Object.entries(publish)) {
      const runs: string[] = wf.jobs[job].steps.map((s: any) => s.run ?? '');
      expect([job, runs.some(r => r === `cd .repo && npx projen ${pkgTask}`)]).toEqual([job, true]);
      expect([job, runs.some(r => r.includes(publib))]).toEqual([job, true]);
      expect(wf.jobs[job].needs).toBe('release');
    }
    const env = (job: string) => Object.assign({}, ...wf.jobs[job].steps.map((s: any) => s.env ?? {}));
    expect(env('release_npm')).toHaveProperty('NPM_TOKEN');
    expect(env('release_pypi')).toHaveProperty('TWINE_PASSWORD');
    expect(env('release_maven')).toMatchObject({ MAVEN_SERVER_ID: 'central-ossrh' });
    expect(env('release_golang')).toMatchObject({ GITHUB_TOKEN: '${{ secrets.GO_GITHUB_TOKEN }}' });
    expect(wf.jobs.release_github.needs).toEqual(['release', 'release_npm', 'release_maven', 'release_pypi', 'release_golang']);
  });

  test('build.yml: pull requests build (npx projen build, the tests included) and package every language', () => {
    const wf = workflow('build');
    expect(Object.keys(wf.on)).toContain('pull_request');
    expect(wf.jobs.build.steps.map((s: any) => s.run)).toContain('npx projen build');
    for (const lang of ['js', 'java', 'python', 'go']) {
      expect(wf.jobs[`package-${lang}`].steps.map((s: any) => s.run)).toContain(`cd .repo && npx projen package:${lang}`);
    }
    // the Debian packages the tests need under CI=true (as .ci/run installs them)
    expect(JSON.stringify(wf.jobs.build.steps)).toContain('golang-k8s-sigs-yaml-dev');
  });

  test('pull-request-lint.yml: pull request titles are conventional commits (they become the changelog)', () => {
    const wf = workflow('pull-request-lint');
    const step = wf.jobs.validate.steps.find((s: any) => String(s.uses).startsWith('amannn/action-semantic-pull-request'));
    expect(step.with.types.split('\n')).toEqual(expect.arrayContaining(['feat', 'fix']));
  });
});

describe('npm pack compiles first', () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { needsCompile } = require('../scripts/prepack.js');

  test('package.json prepack runs the prepack task, which compiles when scripts/prepack.js says so', () => {
    expect(PKG.scripts.prepack).toBe('projen prepack');
    expect(TASKS.prepack.steps).toEqual([{ spawn: 'compile', condition: 'node scripts/prepack.js' }]);
    // jsii, then the lazy public modules of lib/index.js (scripts/lazy-index.js: the import's share)
    expect(commands('compile')).toEqual(['jsii --silence-warnings=reserved-word', 'node scripts/lazy-index.js']);
  });

  test('scripts/prepack.js: compile on a fresh clone, after an edit of src/, not when lib/ is current or comes from a tarball', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cdk8s-sidecars-prepack-'));
    try {
      fs.mkdirSync(path.join(dir, 'src', 'cli'), { recursive: true });
      const src = path.join(dir, 'src', 'cli', 'main.ts');
      fs.writeFileSync(src, '');
      const old = new Date(Date.now() - 60_000);
      fs.utimesSync(src, old, old);
      expect(needsCompile(dir)).toBe('lib/index.js or .jsii is missing');
      fs.mkdirSync(path.join(dir, 'lib'));
      fs.writeFileSync(path.join(dir, 'lib', 'index.js'), '');
      expect(needsCompile(dir)).toBe('lib/index.js or .jsii is missing');
      fs.writeFileSync(path.join(dir, '.jsii'), '{}');
      expect(needsCompile(dir)).toBeUndefined();
      fs.utimesSync(src, new Date(), new Date(Date.now() + 60_000));
      expect(needsCompile(dir)).toBe(`${path.join('src', 'cli', 'main.ts')} is newer than .jsii`);
      // npm dates every file of a tarball 1985-10-26T08:15:00Z
      const npmEpoch = new Date('1985-10-26T08:15:00Z');
      fs.utimesSync(path.join(dir, '.jsii'), npmEpoch, npmEpoch);
      expect(needsCompile(dir)).toBeUndefined();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the API compatibility check (jsii-diff against .compat/.jsii)', () => {
  const baseline = JSON.parse(read('.compat/.jsii'));

  test('the baseline is an assembly of this package, and `npm test` runs the check after the consumer test compiled', () => {
    expect(baseline.name).toBe(PKG.name);
    expect(JSON.parse(read('.compat/package.json')).name).toBe(PKG.name);
    const test = TASKS.test.steps!.map(s => s.spawn ?? s.exec);
    expect(test.indexOf('compat')).toBeGreaterThan(test.indexOf('test:consumer'));
    expect(TASKS.compat.steps).toEqual([{ exec: 'jsii-diff .compat . --keys --error-on prod', name: 'compat' }]);
    expect(commands('compat:baseline')).toEqual(['spawn:compile', 'jsii --silence-warnings=reserved-word', 'node scripts/lazy-index.js', 'node scripts/compat-baseline.js']);
  });

  /** Runs jsii-diff (as the compat task does) with the baseline against `assembly`, a package directory of its own. */
  function jsiiDiff(assembly: any): { status: number | null; output: string } {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cdk8s-sidecars-compat-'));
    try {
      fs.writeFileSync(path.join(dir, '.jsii'), JSON.stringify(assembly));
      fs.copyFileSync(path.join(ROOT, '.compat', 'package.json'), path.join(dir, 'package.json'));
      // the assembly's dependencies (cdk8s, constructs) resolve from the repository's node_modules
      fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
      const r = spawnSync(process.execPath, [require.resolve('jsii-diff/bin/jsii-diff'), '.compat', dir, '--keys', '--error-on', 'prod'], {
        cwd: ROOT, encoding: 'utf8', env: { ...process.env, JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION: process.versions.node.split('.')[0] },
      });
      return { status: r.status, output: r.stdout + r.stderr };
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }

  test('passes on the same API, fails on a removed prop and names it', () => {
    expect(jsiiDiff(baseline).status).toBe(0);
    const changed = structuredClone(baseline);
    const props = changed.types['cdk8s-sidecars.WithEnvoyProps'].properties;
    const removed = props.findIndex((p: any) => p.name === 'appPort');
    expect(removed).toBeGreaterThanOrEqual(0);
    props.splice(removed, 1);
    const r = jsiiDiff(changed);
    expect(r.status).not.toBe(0);
    expect(r.output).toContain('err  - PROP cdk8s-sidecars.WithEnvoyProps.appPort: has been removed [removed:cdk8s-sidecars.WithEnvoyProps.appPort]');
  }, 120_000);
});
