/**
 * The `render` config follows the constructs (issue 35, point 5): every prop of every construct
 * that `cdk8s-sidecars render` makes is accepted under the same name, down through the structs
 * (EnvoyTlsOptions, EnvoyUpstream, SidecarResources, ...) and the factories (LogAgent.fluentBit(),
 * LogOutput.loki(), SidecarCheck.http(), ...), as the jsii assembly (.jsii) declares them, unless
 * LEFT_OUT says why not. A prop added to a construct and not to src/cli/render-config.ts fails
 * here with its path; so does a key render takes that no construct has.
 */
import * as fs from 'fs';
import { join } from 'path';
import { constructNames, constructPropsFqn, jsiiType, JsiiProp, structProps } from './util/jsii-assembly';
import { Conv, RENDERED_CONSTRUCTS } from '../src/cli/render-config';

/**
 * Props render does not take, on purpose (`Construct.prop`, `*.prop` for every construct, or a
 * path into a struct or factory). Each needs a reason a user can accept.
 */
export const LEFT_OUT: Readonly<Record<string, string>> = {
  '*.workload': 'render takes the workload from the manifest: `select` names it',
  '*.kubernetesVersion': 'one target for the whole render: the top-level key kubernetesVersion (or the environment), passed to every construct',
  '*.sidecarContainersGate': 'one target for the whole render: the top-level key sidecarContainersGate, passed to every construct',
  '*.overrideAppTarget': 'one target for the whole render: no sidecar of a render has a version of its own to override it with',
};

/**
 * Constructs render does not make at all: none of their props is accepted, so they are not
 * compared (the documentation says so: docs/cli.md, "The config").
 */
export const CONSTRUCTS_LEFT_OUT: Readonly<Record<string, string>> = {
  WithMeshProxy: 'the mesh\'s injector adds its proxy at admission, not to the manifest; render has no mesh key yet',
  NativeSidecarGuard: 'not a sidecar of a workload: a cluster-wide admission policy, written by a cdk8s app, not per manifest',
  SidecarInjectionPolicy: 'not a sidecar of a workload: `cdk8s-sidecars policy` makes it from the config\'s `admission` key (admissionProps in src/cli/render-config.ts)',
};

/**
 * Structs render reads as a scalar, written as Kubernetes writes them: a CpuQuantity `{ amount }`
 * is the quantity itself (`250m`, `0.5`, or a number of cores).
 */
const SCALAR_FORMS: Readonly<Record<string, string>> = {
  'cdk8s-sidecars.CpuQuantity': 'the amount as Kubernetes writes it: 250m, 0.5, 1',
};

const leftOut = (construct: string, path: string) => LEFT_OUT[`${construct}.${path}`] ?? LEFT_OUT[`*.${path}`];

/** A class whose static methods build it (LogAgent.fluentBit(), ...): render writes one of them as a key. */
function factories(fqn: string): Map<string, JsiiProp[]> | undefined {
  const t = jsiiType(fqn);
  if (t?.kind !== 'class') return undefined;
  const out = new Map<string, JsiiProp[]>();
  for (const m of t.methods ?? []) {
    if (!m.static || m.returns?.type?.fqn !== fqn) continue;
    // the method's arguments as keys: a struct argument's props, a plain argument by its name
    const keys: JsiiProp[] = [];
    for (const p of m.parameters ?? []) {
      if (p.name === 'options' && p.type.fqn && jsiiType(p.type.fqn)?.datatype) keys.push(...structProps(p.type.fqn));
      else keys.push({ name: p.name, type: p.type, optional: !!p.optional });
    }
    out.set(m.name, keys);
  }
  return out.size > 0 ? out : undefined;
}

/** The differences between the jsii props `props` and render's reader `conv`, as `path: problem` lines. */
export function compare(construct: string, props: JsiiProp[], conv: Conv, path = ''): string[] {
  const problems: string[] = [];
  const at = (k: string) => (path === '' ? k : `${path}.${k}`);
  if (conv.shape?.kind !== 'object') return [`${construct}.${path}: render reads this as a value, the assembly has a struct`];
  const fields = conv.shape.fields;
  for (const p of props) {
    if (leftOut(construct, at(p.name))) {
      if (fields[p.name]) problems.push(`${construct}.${at(p.name)}: in LEFT_OUT but render takes it`);
      continue;
    }
    const field = fields[p.name];
    if (!field) {
      problems.push(`${construct}.${at(p.name)}: a prop of the construct that render does not take (add it to src/cli/render-config.ts or to LEFT_OUT with why)`);
      continue;
    }
    problems.push(...compareType(construct, p.type, field, at(p.name)));
  }
  const names = new Set(props.map(p => p.name));
  for (const k of Object.keys(fields)) {
    if (!names.has(k)) problems.push(`${construct}.${at(k)}: render takes a key the construct does not have`);
  }
  return problems;
}

function compareType(construct: string, type: any, conv: Conv, path: string): string[] {
  if (type.collection) {
    const element = type.collection.elementtype;
    const nested = element.fqn && (jsiiType(element.fqn)?.datatype || factories(element.fqn));
    if (!nested) return [];
    const kind = type.collection.kind === 'array' ? 'list' : 'map';
    if (conv.shape?.kind !== kind) return [`${construct}.${path}: the assembly has a ${kind}, render does not read one`];
    return compareType(construct, element, conv.shape.element, `${path}[]`);
  }
  if (!type.fqn) return [];
  const t = jsiiType(type.fqn);
  if (SCALAR_FORMS[type.fqn]) return [];
  if (t?.datatype) return compare(construct, structProps(type.fqn), conv, path);
  const made = factories(type.fqn);
  if (!made) return []; // Duration, Size, an enum, ...: render reads a scalar form (`10s`, `64Mi`, a member's value)
  if (conv.shape?.kind !== 'variant') return [`${construct}.${path}: the assembly builds this with ${[...made.keys()].join(', ')}; render does not read one of them`];
  const choices = conv.shape.choices;
  const problems: string[] = [];
  for (const [name, keys] of made) {
    if (leftOut(construct, `${path}.${name}`)) continue;
    if (!choices[name]) {
      problems.push(`${construct}.${path}.${name}: a factory (${t.name}.${name}()) that render does not take`);
      continue;
    }
    problems.push(...compare(construct, keys, choices[name], `${path}.${name}`));
  }
  for (const k of Object.keys(choices)) if (!made.has(k)) problems.push(`${construct}.${path}.${k}: render takes a factory ${t.name} does not have`);
  return problems;
}

describe('the render config against the jsii assembly', () => {
  test('render makes the constructs it says, and every other construct of the assembly is left out with why', () => {
    const constructs = constructNames();
    const unaccounted = constructs.filter(c => !RENDERED_CONSTRUCTS[c] && !CONSTRUCTS_LEFT_OUT[c]);
    expect(unaccounted).toEqual([]);
    // no stale entry: each one left out is a construct of the assembly that render does not make
    expect(Object.keys(CONSTRUCTS_LEFT_OUT).filter(c => !constructs.includes(c) || RENDERED_CONSTRUCTS[c])).toEqual([]);
  });

  test.each(Object.keys(RENDERED_CONSTRUCTS))('%s: every prop is taken under the same name, or left out with why', name => {
    expect(compare(name, structProps(constructPropsFqn(name)), RENDERED_CONSTRUCTS[name].props)).toEqual([]);
  });

  test('the comparison fails on a prop render does not take, and on a key no construct has (it can fail)', () => {
    const props = structProps(constructPropsFqn('WithEnvoy'));
    const fields = (RENDERED_CONSTRUCTS.WithEnvoy.props.shape as any).fields;
    const withoutDrainTime = Object.assign(() => undefined, { shape: { kind: 'object' as const, fields: { ...fields, drainTime: undefined, madeUp: fields.image } } });
    delete withoutDrainTime.shape.fields.drainTime;
    expect(compare('WithEnvoy', props, withoutDrainTime)).toEqual(expect.arrayContaining([
      'WithEnvoy.drainTime: a prop of the construct that render does not take (add it to src/cli/render-config.ts or to LEFT_OUT with why)',
      'WithEnvoy.madeUp: render takes a key the construct does not have',
    ]));
  });

  test('docs/cli.md (The config) names every sidecar key, and every prop and construct left out', () => {
    const doc = fs.readFileSync(join(__dirname, '..', 'docs', 'cli.md'), 'utf8');
    const section = doc.slice(doc.indexOf('### The config'), doc.indexOf('### How it works'));
    const keys = Object.values(RENDERED_CONSTRUCTS).map(c => c.key);
    const leftOutNames = [...Object.keys(LEFT_OUT).map(k => k.replace(/^[^.]*\./, '')), ...Object.keys(CONSTRUCTS_LEFT_OUT)];
    expect(keys.filter(k => !section.includes(`    ${k}: `))).toEqual([]);
    expect(leftOutNames.filter(k => !new RegExp(`^\\|[^\\n]*\`${k}\``, 'm').test(section))).toEqual([]);
  });
});
