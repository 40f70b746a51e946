/**
 * The library's jsii assembly (`.jsii` at the repository root, written by `npx jsii` / `npx projen
 * compile`): the public API as every jsii language sees it, read by the tests that must follow it
 * (test/render-config.test.ts, test/no-raw-errors.test.ts).
 */
import * as fs from 'fs';
import * as path from 'path';

const ROOT = path.join(__dirname, '..', '..');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { needsCompile } = require('../../scripts/prepack.js');

let cached: any;
/**
 * The parsed assembly; a clear error when it is missing or older than src/ (a test against a stale
 * assembly would pass on a prop it has not seen). `npx projen build` compiles before it tests.
 */
export function assembly(): any {
  if (cached) return cached;
  const file = path.join(ROOT, '.jsii');
  const stale: string | undefined = needsCompile(ROOT);
  if (stale) throw new Error(`the jsii assembly is not up to date (${stale}): run \`npx jsii --silence-warnings=reserved-word\` (or \`npx projen compile\`) first`);
  cached = JSON.parse(fs.readFileSync(file, 'utf-8'));
  return cached;
}

/** The jsii type of `fqn` (`cdk8s-sidecars.WithEnvoyProps`), or undefined for a dependency's type. */
export function jsiiType(fqn: string): any {
  return assembly().types[fqn];
}

export interface JsiiProp {
  readonly name: string;
  readonly type: any;
  readonly optional: boolean;
}

/** The props of a struct (interface), its inherited ones included, by name. */
export function structProps(fqn: string): JsiiProp[] {
  const t = jsiiType(fqn);
  if (!t) throw new Error(`${fqn} is not in the assembly`);
  const byName = new Map<string, JsiiProp>();
  for (const base of t.interfaces ?? []) for (const p of structProps(base)) byName.set(p.name, p);
  for (const p of t.properties ?? []) byName.set(p.name, { name: p.name, type: p.type, optional: !!p.optional });
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/** The fqn of the props struct of construct `name` (`WithEnvoy` -> `cdk8s-sidecars.WithEnvoyProps`). */
export function constructPropsFqn(name: string): string {
  const t = jsiiType(`${assembly().name}.${name}`);
  const props = t?.initializer?.parameters?.find((p: any) => p.name === 'props');
  if (!props) throw new Error(`${name} is not a construct with props in the assembly`);
  return props.type.fqn;
}

/** The prop names of construct `name`, inherited ones included. */
export function constructProps(name: string): string[] {
  return structProps(constructPropsFqn(name)).map(p => p.name);
}

/** The names of the assembly's constructs that take props (classes under constructs.Construct, not abstract). */
export function constructNames(): string[] {
  const isConstruct = (fqn: string | undefined): boolean => fqn === 'constructs.Construct' || (!!fqn && isConstruct(jsiiType(fqn)?.base));
  return Object.values(assembly().types)
    .filter((t: any) => t.kind === 'class' && !t.abstract && t.initializer?.parameters?.some((p: any) => p.name === 'props') && isConstruct(t.fqn))
    .map((t: any) => t.name as string)
    .sort();
}
