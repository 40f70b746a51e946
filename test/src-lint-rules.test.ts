/**
 * What used to be tests over the text of src/ (a count of `new Error(` per file, a regular
 * expression over `process.env`, a list of functions over 80 lines) are lint rules (.projenrc.ts,
 * `SRC_SYNTAX`, no-restricted-properties and max-lines-per-function), which `npm test`'s eslint step runs on every file of src/: a refactor
 * changes code, not a test. Each deliberate violation below, linted with the repository's own
 * .eslintrc.json as if it were a file of src/, is an error; the allowed forms are not.
 */
import * as path from 'path';
import { ESLint, loadESLint } from 'eslint';

const ROOT = path.join(__dirname, '..');
const RULES = ['no-restricted-syntax', 'no-restricted-properties', 'max-lines-per-function'];

let eslint: ESLint;
beforeAll(async () => {
  const LegacyESLint = await loadESLint({ useFlatConfig: false });
  // The fixture files do not exist, so the type-aware parser setup is switched off for them (the
  // rules need no types); everything else is the repository's configuration.
  eslint = new LegacyESLint({
    cwd: ROOT,
    overrideConfig: {
      parserOptions: { projectService: false, project: null },
      rules: { '@typescript-eslint/no-floating-promises': 'off', '@typescript-eslint/return-await': 'off' },
    } as any,
  }) as ESLint;
});

/** The rule ids and messages ESLint reports of RULES for `code` as the file `file` of the repository. */
async function lint(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, file) });
  return result.messages.filter(m => RULES.includes(m.ruleId ?? '') || m.fatal).map(m => `${m.ruleId}: ${m.message}`);
}

// every layer and the public constructs (the layer rules have an override of their own)
const FILES = ['src/fixture.ts', 'src/bind/fixture.ts', 'src/private/fixture.ts', 'src/engine/fixture.ts', 'src/agents/vector/config-fixture.ts', 'src/cli/fixture.ts'];

describe('a plain Error in src/ is an error: bad input throws a SidecarError, a bug internalError()', () => {
  test.each(FILES.flatMap(f => [
    [f, "export function f(): never {\n  throw new Error('bad');\n}\n"],
    [f, "export const e = Error('bad');\n"],
  ]))('%s: %s', async (file, code) => {
    expect(await lint(file, code)).toEqual([expect.stringMatching(/^no-restricted-syntax: src\/ throws a SidecarError for bad input/)]);
  });

  test('internalError() in src/private/errors.ts is the one plain Error; the other rules still hold there', async () => {
    expect(await lint('src/private/errors.ts', 'export function internalError(message: string): Error {\n  return new Error(message);\n}\n')).toEqual([]);
    expect(await lint('src/private/errors.ts', 'export function f(who: string): string {\n  return who;\n}\n'))
      .toEqual([expect.stringMatching(/^no-restricted-syntax: a check names its place with a Where/)]);
    expect(await lint('src/private/errors.ts', "export const load = () => import('cdk8s');\n"))
      .toEqual([expect.stringMatching(/^no-restricted-syntax: no dynamic import or require of cdk8s/)]);
  });

  test('other errors, and a SidecarError or internalError(), are not caught', async () => {
    for (const file of FILES) {
      expect(await lint(file, "export const e = [new TypeError('x'), new RangeError('y')];\n")).toEqual([]);
      expect(await lint(file, "import { internalError } from './x';\nexport const e = internalError('broken');\n")).toEqual([]);
    }
  });
});

describe('a check that names its place with a string is an error: `who` is a Where', () => {
  test.each(FILES.flatMap(f => [
    [f, 'export function check(who: string, value: number): number {\n  return who.length + value;\n}\n'],
    [f, 'export function check(value: number, who?: string): string {\n  return `${who}${value}`;\n}\n'],
    [f, 'export interface Check {\n  readonly who?: string;\n}\n'],
    [f, 'export class Check {\n  constructor(private readonly who: string) {}\n  public name(): string {\n    return this.who;\n  }\n}\n'],
  ]))('%s: %s', async (file, code) => {
    expect(await lint(file, code)).toEqual([expect.stringMatching(/^no-restricted-syntax: a check names its place with a Where/)]);
  });

  test('a Where, and another name of type string, are not caught', async () => {
    expect(await lint('src/bind/fixture.ts', "import { Where } from '../private/errors';\nexport const f = (who: Where, what: string) => `${who}${what}`;\n")).toEqual([]);
  });
});

describe('the environment is read in src/target/resolver.ts only', () => {
  test.each(FILES.flatMap(f => [
    [f, 'export const v = process.env.CDK8S_SIDECARS_KUBERNETES_VERSION;\n'],
    [f, "export const v = process.env['CDK8S_SIDECARS_KUBERNETES_VERSION'];\n"],
    [f, 'export const env = { ...process.env };\n'],
    [f, 'export function f(): void {\n  process.env = {};\n}\n'],
  ]))('%s: %s', async (file, code) => {
    expect(await lint(file, code)).toEqual([expect.stringMatching(/^no-restricted-properties: 'process.env' is restricted .*read in src\/target\/resolver.ts only/)]);
  });

  test('src/target/resolver.ts reads it; another property of process is not caught', async () => {
    expect(await lint('src/target/resolver.ts', "export const v = process.env['CDK8S_SIDECARS_KUBERNETES_VERSION'];\n")).toEqual([]);
    expect(await lint('src/cli/fixture.ts', 'export const p = process.platform;\n')).toEqual([]);
  });
});

describe('a function of src/ has at most 80 lines (split by the steps a reader would name)', () => {
  // a function of `lines` lines: its head, `let`, the statements, `return` and `}`
  const fn = (lines: number) => `export function f(): number {\n  let x = 0;\n${'  x += 1;\n'.repeat(lines - 4)}  return x;\n}\n`;
  test.each(FILES)('%s: 81 lines is an error, 80 is not', async file => {
    expect(await lint(file, fn(81))).toEqual([expect.stringMatching(/^max-lines-per-function: Function 'f' has too many lines \(81\)\. Maximum allowed is 80\./)]);
    expect(await lint(file, fn(80))).toEqual([]);
  });
});
