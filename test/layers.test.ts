/**
 * The layers of src/ are a lint rule (.projenrc.ts, `LAYERS`), not goodwill: each deliberate
 * violation below, linted with the repository's own .eslintrc.json as if it were a file of src/,
 * is an error of the rule that `npm test`'s eslint step runs; the allowed arrows are not.
 */
import * as fs from 'fs';
import * as path from 'path';
import { ESLint, loadESLint } from 'eslint';

const ROOT = path.join(__dirname, '..');

let eslint: ESLint;
beforeAll(async () => {
  const LegacyESLint = await loadESLint({ useFlatConfig: false });
  // The fixture files do not exist, so the type-aware parser setup is switched off for them (the
  // two rules need no types); everything else is the repository's configuration.
  eslint = new LegacyESLint({
    cwd: ROOT,
    overrideConfig: {
      parserOptions: { projectService: false, project: null },
      rules: { '@typescript-eslint/no-floating-promises': 'off', '@typescript-eslint/return-await': 'off' },
    } as any,
  }) as ESLint;
});

/** The rule ids (and messages) ESLint reports for `code` as the file `file` of the repository. */
async function lint(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, file) });
  return result.messages
    .filter(m => m.ruleId === 'import/no-restricted-paths' || m.ruleId === 'no-restricted-imports' || m.ruleId === 'no-restricted-syntax' || m.fatal)
    .map(m => `${m.ruleId}: ${m.message}`);
}

describe('a file below src/bind/ that imports cdk8s or constructs is an error', () => {
  test.each([
    ['src/private/fixture.ts', "import { Yaml } from 'cdk8s';\nexport const y = Yaml;\n"],
    ['src/target/fixture.ts', "import { IConstruct } from 'constructs';\nexport type C = IConstruct;\n"],
    ['src/facts/fixture.ts', "import { ApiObject } from 'cdk8s';\nexport const a = ApiObject;\n"],
    ['src/engine/fixture.ts', "import { Duration } from 'cdk8s';\nexport const d = Duration;\n"],
    ['src/agents/envoy/fixture.ts', "import { Yaml } from 'cdk8s';\nexport const y = Yaml;\n"],
  ])('%s', async (file, code) => {
    const errors = await lint(file, code);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^no-restricted-imports: .*only in src\/bind\//);
  });

  test.each([
    // a module of the package (not only its name), and the dynamic forms no-restricted-imports does not see
    ['src/engine/fixture.ts', "import { Yaml } from 'cdk8s/lib/yaml';\nexport const y = Yaml;\n", 'no-restricted-imports'],
    ['src/facts/fixture.ts', "import type { IConstruct } from 'constructs/lib/construct';\nexport type C = IConstruct;\n", 'no-restricted-imports'],
    ['src/engine/fixture.ts', "export const load = () => import('cdk8s');\n", 'no-restricted-syntax'],
    ['src/target/fixture.ts', "// eslint-disable-next-line @typescript-eslint/no-require-imports\nexport const c = require('constructs');\n", 'no-restricted-syntax'],
    ['src/agents/envoy/fixture.ts', "export const load = () => import('cdk8s/lib/yaml');\n", 'no-restricted-syntax'],
  ])('%s: %s', async (file, code, rule) => {
    const errors = await lint(file, code);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(new RegExp(`^${rule}: .*only in src/bind/`));
  });

  test('cdk8s-plus-like names and the bind layer are not caught by the dynamic rule', async () => {
    expect(await lint('src/engine/fixture.ts', "export const load = () => import('cdk8s-like');\n")).toEqual([]);
    expect(await lint('src/bind/fixture.ts', "export const load = () => import('cdk8s');\n")).toEqual([]);
  });
});

describe('an import that runs back up a layer is an error', () => {
  test.each([
    // [file, import, the layers the message allows]
    ['src/private/fixture.ts', '../target/capabilities', 'src/private/'],
    ['src/target/fixture.ts', '../facts/kinds', 'src/private/, src/target/'],
    ['src/facts/fixture.ts', '../engine/pod-template', 'src/private/, src/target/, src/facts/'],
    ['src/engine/fixture.ts', '../agents/liveness', 'src/private/, src/target/, src/facts/, src/engine/'],
    ['src/engine/fixture.ts', '../bind/binding', 'src/private/, src/target/, src/facts/, src/engine/'],
    ['src/agents/vector/fixture.ts', '../../log-output', 'src/private/, src/target/, src/facts/, src/engine/, src/bind/, src/agents/'],
    ['src/agents/vector/agent.ts', '../../with-log-agent', 'src/private/, src/target/, src/facts/, src/engine/, src/bind/, src/agents/'],
    ['src/bind/fixture.ts', '../settings', 'src/private/, src/target/, src/facts/, src/engine/, src/bind/'],
    ['src/bind/fixture.ts', '../cli/io', 'src/private/, src/target/, src/facts/, src/engine/, src/bind/'],
    ['src/bind/fixture.ts', '../agents/liveness', 'src/private/, src/target/, src/facts/, src/engine/, src/bind/'],
  ])('%s importing %s', async (file, from, allowed) => {
    const errors = await lint(file, `import * as m from '${from}';\nexport const x = m;\n`);
    expect(errors).toEqual([expect.stringContaining(`import/no-restricted-paths: Unexpected path "${from}" imported in restricted zone. ${file.split('/').slice(0, 2).join('/')}/ imports only from ${allowed} (the layers at or below it)`)]);
  });

  test('a public construct importing the CLI', async () => {
    const errors = await lint('src/with-fixture.ts', "import * as io from './cli/io';\nexport const x = io;\n");
    expect(errors).toEqual([expect.stringMatching(/^import\/no-restricted-paths: .*never import the CLI/)]);
  });
});

describe('the arrows down are allowed', () => {
  test.each([
    ['src/target/fixture.ts', ['../private/order']],
    ['src/facts/fixture.ts', ['../private/json', '../target/capabilities']],
    ['src/engine/fixture.ts', ['../private/json', '../target/capabilities', '../facts/kinds', './spec']],
    ['src/agents/vector/fixture.ts', ['../../private/values', '../../engine/spec', '../shutdown-model']],
    ['src/bind/fixture.ts', ['../engine/pod-template', './checks']],
    ['src/agents/vector/agent.ts', ['../../bind/checks', '../../engine/spec', './config', '../registry']],
    ['src/fixture.ts', ['./bind/binding', './engine/spec', './settings']],
    ['src/cli/fixture.ts', ['../with-envoy', '../bind/binding', './io']],
  ])('%s', async (file, froms) => {
    const code = froms.map((f, i) => `import * as m${i} from '${f}';\nexport const x${i} = m${i};\n`).join('');
    expect(await lint(file, code)).toEqual([]);
  });

  test('cdk8s in src/bind/, the constructs and an agent\'s public face (its options take Durations)', async () => {
    for (const file of ['src/bind/fixture.ts', 'src/fixture.ts', 'src/agents/vector/agent.ts', 'src/agents/registry.ts']) {
      expect(await lint(file, "import { ApiObject } from 'cdk8s';\nexport const a = ApiObject;\n")).toEqual([]);
    }
  });
});

test('no file of src/ switches the layer rules off (no eslint-disable of them: the rule has no exception)', () => {
  const files = (fs.readdirSync(path.join(ROOT, 'src'), { recursive: true }) as string[]).filter(f => f.endsWith('.ts'));
  expect(files.length).toBeGreaterThan(50);
  const disabled = files.filter(f => /eslint-disable[^\n]*(no-restricted-paths|no-restricted-imports|no-restricted-syntax)/
    .test(fs.readFileSync(path.join(ROOT, 'src', f), 'utf8')));
  expect(disabled).toEqual([]);
});

test('a public file (src/*.ts, what API.md shows) exports no constant: jsii drops module-level constants for Python, Java, Go and C#, so a constant is a static member of a class (Images.FLUENT_BIT) or lives in its layer', () => {
  const files = fs.readdirSync(path.join(ROOT, 'src')).filter(f => f.endsWith('.ts'));
  expect(files).toContain('images.ts');
  const found = files.flatMap(f => [...fs.readFileSync(path.join(ROOT, 'src', f), 'utf8').matchAll(/^export\s+(?:declare\s+)?(?:const|let|var)\s+(\w+)/gm)]
    .map(m => `src/${f}: ${m[1]}`));
  expect(found).toEqual([]);
});
