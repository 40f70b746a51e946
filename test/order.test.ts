/**
 * Order (issue 24, points 4 and 5): the user's order where Kubernetes gives order a meaning (env:
 * a `$(NAME)` is expanded only when NAME comes earlier, test/util/env-expansion.ts), and no
 * locale anywhere: a synth under a Danish collation (where "aa" sorts after "z") gives the same
 * bytes as one under LANG=C.
 */
import { spawnSync } from 'child_process';
import * as path from 'path';
import { ApiObject, Chart, Testing } from 'cdk8s';
import { containerEnvironment, expand } from './util/env-expansion';
import { rawDeployment } from './util/fixtures';
import { compareCodePoints, sortedKeys } from '../src/private/order';
import { WithSidecar } from '../src/with-sidecar';

function deploymentWithEnv(chart: Chart, env?: any[]): ApiObject {
  return rawDeployment(chart, 'raw', { containers: [{ name: 'app', image: 'ghcr.io/example/app:1.0.0', ...(env ? { env } : {}) }] });
}

const podOf = (chart: Chart) => Testing.synth(chart).find((o: any) => o.kind === 'Deployment').spec.template.spec;

describe('the kubelet expansion oracle', () => {
  test('reads expand.go as written: earlier vars only, $$ escapes, an unknown or unclosed reference kept', () => {
    const defined = new Map([['A', 'x']]);
    expect(expand('$(A)-$(B)', defined)).toBe('x-$(B)');
    expect(expand('$$(A) $$ $x $(A', defined)).toBe('$(A) $ $x $(A');
    expect(containerEnvironment([{ name: 'B', value: '$(A)' }, { name: 'A', value: '1' }]).get('B')).toBe('$(A)');
  });
});

describe('env keeps the order given', () => {
  test('WithSidecar env: a var that refers to an earlier one is expanded by the kubelet', () => {
    const chart = new Chart(Testing.app(), 'test');
    new WithSidecar(chart, 'proxy', {
      workload: deploymentWithEnv(chart),
      containerName: 'proxy',
      image: 'ghcr.io/example/proxy:1.0.0',
      kubernetesVersion: '1.29',
      env: { DB_HOST: 'db', CONN: 'postgres://$(DB_USER):$(DB_PASS)@$(DB_HOST)/app', DB_USER: 'app' },
      secretEnv: { DB_PASS: { secret: { name: 'db' }, key: 'password' } },
    });
    const proxy = podOf(chart).initContainers.find((c: any) => c.name === 'proxy');
    const env = containerEnvironment(proxy.env, { 'db/password': 's3cret' });
    // DB_USER is given after CONN, so the kubelet leaves it as written: the user's order, kept
    expect(env.get('CONN')).toBe('postgres://$(DB_USER):s3cret@db/app');
    expect(proxy.env.map((e: any) => e.name)).toEqual(['DB_PASS', 'DB_HOST', 'CONN', 'DB_USER']);
  });

  test('WithSidecar appEnv: after the app\'s own env, in the order given, so it can refer to the app\'s vars and its own', () => {
    const chart = new Chart(Testing.app(), 'test');
    new WithSidecar(chart, 'proxy', {
      workload: deploymentWithEnv(chart, [{ name: 'PORT', value: '8080' }]),
      containerName: 'proxy',
      image: 'ghcr.io/example/proxy:1.0.0',
      kubernetesVersion: '1.29',
      appEnv: { SIDECAR_HOST: '127.0.0.1', PROXY_URL: 'http://$(SIDECAR_HOST):5432', APP_SELF: 'http://127.0.0.1:$(PORT)' },
    });
    const app = podOf(chart).containers.find((c: any) => c.name === 'app');
    const env = containerEnvironment(app.env);
    expect(env.get('PROXY_URL')).toBe('http://127.0.0.1:5432');
    expect(env.get('APP_SELF')).toBe('http://127.0.0.1:8080');
  });
});

describe('no locale', () => {
  test('the comparator is code point order (not UTF-16 units, not a collation)', () => {
    // U+1F600 (a surrogate pair, 0xD83D...) comes after U+FF5E in code points, before it in UTF-16 units
    expect(compareCodePoints('\u{1F600}', '\uFF5E')).toBeGreaterThan(0);
    expect(['\u{1F600}', '\uFF5E'].sort()).toEqual(['\u{1F600}', '\uFF5E']);
    expect(compareCodePoints('aa-proxy', 'z-proxy')).toBeLessThan(0);
    expect(compareCodePoints('a', 'ab')).toBeLessThan(0);
  });

  test('the comparator\'s fast path (code units) agrees with code points everywhere, lone surrogates too; sortedKeys with a full sort', () => {
    // issue 36: compareCodePoints reads code units and turns to code points only where a surrogate
    // differs; sortedKeys moves keys out of place into order without a sort. Both against the plain
    // definitions, on strings built around the units where code units and code points disagree.
    const byCodePoints = (a: string, b: string): number => {
      const x = Array.from(a, c => c.codePointAt(0)!);
      const y = Array.from(b, c => c.codePointAt(0)!);
      for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
      return x.length - y.length;
    };
    const units = ['a', 'z', '-', '0', '\u00e9', '\ud7ff', '\ud800', '\udbff', '\udc00', '\udfff', '\ue000', '\uff5e', '\uffff', '\u{10000}', '\u{1F600}', '\u{10FFFF}'];
    let seed = 36;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    const word = () => Array.from({ length: next() % 4 }, () => units[next() % units.length]).join('');
    const words: string[] = [];
    for (let i = 0; i < 3000; i++) {
      const prefix = word();
      words.push(prefix + word(), prefix + word());
    }
    for (let i = 0; i < words.length; i += 2) {
      expect([words[i], words[i + 1], Math.sign(compareCodePoints(words[i], words[i + 1]))])
        .toEqual([words[i], words[i + 1], Math.sign(byCodePoints(words[i], words[i + 1]))]);
    }
    // key lists in order, with a few keys out of place, reversed, and longer than the insertion path takes
    const lists = [
      ['args', 'image', 'name', 'volumeMounts'],
      ['args', 'image', 'name', 'volumeMounts', 'lifecycle', 'restartPolicy'],
      ['zeta', 'beta', 'alpha', '\u{1F600}', '\uff5e', '10', '9'],
      Array.from({ length: 80 }, (_, i) => `k${(i * 37) % 80}`),
    ];
    for (const keys of lists) {
      const o: Record<string, number> = {};
      for (const k of keys) o[k] = 1;
      expect(sortedKeys(o)).toEqual([...Object.keys(o)].sort((a, b) => byCodePoints(a, b)));
    }
  });

  /** Synthesizes an app in a child node under `lang`: two sidecars whose order a Danish collation swaps. */
  function synthUnder(lang: string): { yaml: string; collation: number } {
    const src = path.join(__dirname, '..', 'src');
    const script = `
      require('ts-node').register({ transpileOnly: true, project: ${JSON.stringify(path.join(__dirname, 'tsconfig.json'))} });
      const { ApiObject, App, Chart } = require('cdk8s');
      const { WithSidecar } = require(${JSON.stringify(path.join(src, 'with-sidecar'))});
      const app = new App();
      const chart = new Chart(app, 'test');
      const workload = new ApiObject(chart, 'raw', { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'raw' }, spec: {
        selector: { matchLabels: { app: 'raw' } },
        template: { metadata: { labels: { app: 'raw' } }, spec: { containers: [{ name: 'app', image: 'ghcr.io/example/app:1.0.0' }] } } } });
      for (const name of ['z-proxy', 'aa-proxy']) {
        new WithSidecar(chart, name, { workload, containerName: name, image: 'ghcr.io/example/proxy:1.0.0', kubernetesVersion: '1.29',
          env: { Z_MODE: 'z', AA_MODE: 'aa' } });
      }
      process.stdout.write(JSON.stringify({ yaml: app.synthYaml(), collation: 'aa'.localeCompare('z') }));
    `;
    const env = { ...process.env, LANG: lang, LC_ALL: lang };
    const r = spawnSync(process.execPath, ['-e', script], { env, encoding: 'utf8', timeout: 120_000, maxBuffer: 64 * 1024 * 1024 });
    if (r.status !== 0) throw new Error(`the child synth failed (${r.status}): ${r.stderr}`);
    return JSON.parse(r.stdout);
  }

  test('a synth under LANG=da_DK.UTF-8 gives the same bytes as under LANG=C', () => {
    const danish = synthUnder('da_DK.UTF-8');
    const c = synthUnder('C');
    // the child really collates as Danish (else this test could not fail): 'aa' after 'z'
    expect(danish.collation).toBeGreaterThan(0);
    expect(c.collation).toBeLessThan(0);
    expect(danish.yaml).toBe(c.yaml);
    // and the order is code point order: aa-proxy before z-proxy
    expect(c.yaml.indexOf('name: aa-proxy')).toBeLessThan(c.yaml.indexOf('name: z-proxy'));
  }, 240_000);
});
