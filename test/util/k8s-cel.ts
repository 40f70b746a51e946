/**
 * The parts of Kubernetes' CEL for MutatingAdmissionPolicy that @bufbuild/cel lacks, enough to run
 * the library's policy offline, and a JSON patch (RFC 6902) applied as the API server applies it.
 *
 * What Kubernetes adds to CEL, and how this file stands in for each (kubernetes v1.37.2):
 * - `JSONPatch{op, path, value}` and `Object.<field path>{...}` initializers
 *   (staging/src/k8s.io/apiserver/pkg/cel/mutation/jsonpatch.go, .../mutation/dynamic/objects.go):
 *   evaluated as maps of their fields; the object's type name must be the field path it is
 *   written under (`CheckTypeNamesMatchFieldPathNames`): checked here on the expression.
 * - `transformList(i, v, [filter,] e)`, cel-go's two-variable comprehension (ext.TwoVarComprehensions, in
 *   Kubernetes' base environment from 1.32: staging/src/k8s.io/apiserver/pkg/cel/environment/base.go):
 *   rewritten into a one-variable comprehension over the indexes with `v` read as `range[i]`.
 * - `variables.<name>`: evaluated in order, each with the earlier ones bound
 *   (staging/src/k8s.io/apiserver/pkg/admission/plugin/cel/composition.go).
 * - matchConditions: all must be true for the mutation to run (.../plugin/cel/condition.go).
 * - the strings extension (`substring`, ...): @bufbuild/cel's `strings`, as Kubernetes' ext.Strings.
 * - ints: JSON integers are CEL ints (bigint here), as Kubernetes' unstructured values are int64.
 */
import { CelScalar, celFunc, celEnv, celList, isCelList, isCelMap, listType, parse, plan } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';

type Json = any;

/** JSON as CEL sees a Kubernetes object: objects as maps, integers as ints. */
export function toCel(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(toCel);
  if (v !== null && typeof v === 'object') return new Map(Object.entries(v).map(([k, x]) => [k, toCel(x)]));
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  return v;
}

/** A CEL value back to JSON (ints as numbers). */
export function fromCel(v: unknown): Json {
  if (typeof v === 'bigint') return Number(v);
  if (isCelList(v)) return [...v].map(fromCel);
  if (isCelMap(v)) {
    const out: Json = {};
    for (const [k, x] of v.entries()) out[String(k)] = fromCel(x);
    return out;
  }
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [k, fromCel(x)]));
  if (Array.isArray(v)) return v.map(fromCel);
  if (v !== null && typeof v === 'object' && 'message' in (v as any)) throw new Error(`CEL error: ${(v as any).message}`);
  return v;
}

let nextId = 1_000_000;
const expr = (kind: string, value: any) => ({ $typeName: 'cel.expr.Expr', id: BigInt(nextId++), exprKind: { case: kind, value } });
const ident = (name: string) => expr('identExpr', { $typeName: 'cel.expr.Expr.Ident', name });
const call = (fn: string, args: any[], target?: any) => expr('callExpr', { $typeName: 'cel.expr.Expr.Call', function: fn, args, target });
const list = (elements: any[]) => expr('listExpr', { $typeName: 'cel.expr.Expr.CreateList', elements, optionalIndices: [] });
const constant = (kind: string, value: any) => expr('constExpr', { $typeName: 'cel.expr.Constant', constantKind: { case: kind, value } });

/** Every struct name the expression uses, with where (for the tests' own checks). */
export interface Rewritten { ast: any; objectTypes: string[] }

/**
 * Parses `source` and rewrites the Kubernetes parts (see the file's header) into plain CEL.
 * `patchTypes`: whether `JSONPatch` and `Object.*` exist there: only in a mutation's expression
 * (kubernetes v1.37.2 .../policy/mutating/compilation.go: variables and match conditions are
 * compiled without `HasPatchTypes`; the API server says "undeclared reference to 'Object...'").
 */
export function rewrite(source: string, patchTypes = true): Rewritten {
  const parsed = parse(source);
  const objectTypes: string[] = [];
  const walk = (e: any, expectedType?: string): any => {
    if (!e || !e.exprKind) return e;
    const k = e.exprKind;
    switch (k.case) {
      case 'structExpr': {
        const name: string = k.value.messageName;
        if (name !== '') {
          if (!patchTypes) throw new Error(`undeclared reference to '${name}': JSONPatch and Object types exist only in a mutation's expression`);
          if (name !== 'JSONPatch') {
            if (!name.startsWith('Object.')) throw new Error(`unknown type ${name}`);
            if (expectedType !== undefined && expectedType !== name) throw new Error(`type mismatch: ${name} where ${expectedType} is expected`);
            objectTypes.push(name);
          }
          k.value.messageName = '';
          for (const entry of k.value.entries) {
            const field = entry.keyKind.value as string;
            entry.value = walk(entry.value, name === 'JSONPatch' ? undefined : `${name}.${field}`);
            entry.keyKind = { case: 'mapKey', value: constant('stringValue', field) };
          }
          if (name === 'JSONPatch') {
            const fields = k.value.entries.map((x: any) => x.keyKind.value.exprKind.value.constantKind.value);
            for (const f of fields) if (!['op', 'path', 'from', 'value'].includes(f)) throw new Error(`JSONPatch has no field ${f}`);
          }
        } else {
          for (const entry of k.value.entries) {
            entry.keyKind.value = walk(entry.keyKind.value);
            entry.value = walk(entry.value);
          }
        }
        return e;
      }
      case 'listExpr':
        k.value.elements = k.value.elements.map((x: any) => walk(x, expectedType));
        return e;
      case 'callExpr': {
        const c = k.value;
        if (c.function === 'transformList' && c.target && (c.args.length === 3 || c.args.length === 4)) {
          // transformList(i, v, [filter,] value): the values (of the elements the filter keeps), in order
          const range = walk(c.target);
          const i = c.args[0].exprKind.value.name;
          const v = c.args[1].exprKind.value.name;
          const element = () => call('_[_]', [structuredClone(range), ident(i)]);
          const body = substitute(walk(c.args[c.args.length - 1]), v, element);
          const appended = call('_+_', [ident('@result'), list([body])]);
          const step = c.args.length === 4 ? call('_?_:_', [substitute(walk(c.args[2]), v, element), appended, ident('@result')]) : appended;
          return expr('comprehensionExpr', {
            $typeName: 'cel.expr.Expr.Comprehension',
            iterVar: i,
            iterVar2: '',
            iterRange: call('indexes', [range]),
            accuVar: '@result',
            accuInit: list([]),
            loopCondition: constant('boolValue', true),
            loopStep: step,
            result: ident('@result'),
          });
        }
        // a ternary's branches and a concatenation's lists keep the type expected of the whole
        const passType = c.function === '_?_:_' || c.function === '_+_';
        c.args = c.args.map((x: any, n: number) => walk(x, passType && !(c.function === '_?_:_' && n === 0) ? expectedType : undefined));
        if (c.target) c.target = walk(c.target);
        return e;
      }
      case 'selectExpr':
        k.value.operand = walk(k.value.operand);
        return e;
      case 'comprehensionExpr': {
        const x = k.value;
        for (const f of ['iterRange', 'accuInit', 'loopCondition', 'loopStep', 'result']) x[f] = walk(x[f], f === 'loopStep' || f === 'result' ? expectedType : undefined);
        return e;
      }
      default:
        return e;
    }
  };
  parsed.expr = walk(parsed.expr);
  return { ast: parsed, objectTypes };
}

/** `e` with every free reference to `name` replaced by `make()`. */
function substitute(e: any, name: string, make: () => any): any {
  if (!e || !e.exprKind) return e;
  const k = e.exprKind;
  switch (k.case) {
    case 'identExpr':
      return k.value.name === name ? make() : e;
    case 'selectExpr':
      k.value.operand = substitute(k.value.operand, name, make);
      return e;
    case 'callExpr':
      k.value.args = k.value.args.map((x: any) => substitute(x, name, make));
      if (k.value.target) k.value.target = substitute(k.value.target, name, make);
      return e;
    case 'listExpr':
      k.value.elements = k.value.elements.map((x: any) => substitute(x, name, make));
      return e;
    case 'structExpr':
      for (const entry of k.value.entries) {
        if (entry.keyKind.case === 'mapKey') entry.keyKind.value = substitute(entry.keyKind.value, name, make);
        entry.value = substitute(entry.value, name, make);
      }
      return e;
    case 'comprehensionExpr': {
      const x = k.value;
      x.iterRange = substitute(x.iterRange, name, make);
      x.accuInit = substitute(x.accuInit, name, make);
      if (x.iterVar !== name && x.accuVar !== name) {
        for (const f of ['loopCondition', 'loopStep', 'result']) x[f] = substitute(x[f], name, make);
      }
      return e;
    }
    default:
      return e;
  }
}

const ENV = celEnv({
  funcs: [
    // cel-go's ext.Strings (substring, ...), in Kubernetes' base environment (base.go: ext.Strings(ext.StringsVersion(2)) from 1.29)
    ...strings,
    celFunc('indexes', [listType(CelScalar.DYN)], listType(CelScalar.INT), (l: any) => celList([...Array(l.size).keys()].map(n => BigInt(n)))),
  ],
});

/** Evaluates a Kubernetes CEL expression with `bindings` (JSON: converted with toCel); `patchTypes` as for `rewrite`. */
export function evaluate(source: string, bindings: Record<string, unknown>, patchTypes = false): unknown {
  const { ast } = rewrite(source, patchTypes);
  const program = plan(ENV, ast) as (ctx: any) => unknown;
  const ctx: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(bindings)) ctx[k] = v instanceof Map ? v : toCel(v);
  const result = program(ctx);
  if (result !== null && typeof result === 'object' && 'message' in (result as any) && !isCelList(result) && !isCelMap(result)) {
    throw new Error(`CEL error in ${source.slice(0, 80)}...: ${(result as any).message}`);
  }
  return result;
}

/** What the API server does with `pod` under a MutatingAdmissionPolicy's spec (one JSON patch mutation). */
export interface PolicyOutcome {
  /** The first match condition that was false, if any (then nothing is changed). */
  readonly skippedBy?: string;
  /** The JSON patch the mutation returned. */
  readonly patch: Json[];
  /** The pod after the patch (a copy). */
  readonly pod: Json;
}

export function admitWithPolicy(spec: Json, pod: Json, extra: Record<string, unknown> = {}): PolicyOutcome {
  const bindings: Record<string, unknown> = { object: toCel(pod), ...extra };
  for (const c of spec.matchConditions ?? []) {
    const ok = evaluate(c.expression, bindings);
    if (ok !== true) {
      if (ok !== false) throw new Error(`match condition ${c.name} returned ${String(ok)}`);
      return { skippedBy: c.name, patch: [], pod: structuredClone(pod) };
    }
  }
  const variables = new Map<string, unknown>();
  for (const v of spec.variables ?? []) variables.set(v.name, evaluate(v.expression, { ...bindings, variables }));
  let out = structuredClone(pod);
  const patch: Json[] = [];
  for (const m of spec.mutations) {
    if (m.patchType !== 'JSONPatch') throw new Error(`patchType ${m.patchType} is not run here`);
    const ops = fromCel(evaluate(m.jsonPatch.expression, { ...bindings, object: toCel(out), variables }, true));
    patch.push(...ops);
    out = applyJsonPatch(out, ops);
  }
  return { patch, pod: out };
}

/** RFC 6901 path segments. */
function segments(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw new Error(`JSON pointer ${path} does not start with /`);
  return path.slice(1).split('/').map(s => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/**
 * RFC 6902 as gopkg.in/evanphx/json-patch.v4 applies it (the library the API server uses,
 * staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch/json_patch.go): add (an
 * existing member is replaced; `-` appends; an index inserts), remove, replace, test. Throws
 * where the API server's patch fails (a missing parent, an index out of range).
 */
export function applyJsonPatch(doc: Json, ops: Json[]): Json {
  const out = structuredClone(doc);
  for (const op of ops) {
    const segs = segments(op.path);
    if (segs.length === 0) throw new Error('a patch of the whole document is not used here');
    const last = segs[segs.length - 1];
    let parent = out;
    for (const s of segs.slice(0, -1)) {
      parent = Array.isArray(parent) ? parent[Number(s)] : parent?.[s];
      if (parent === undefined || parent === null) throw new Error(`JSON Patch: missing parent of ${op.path}`);
    }
    switch (op.op) {
      case 'add':
        if (Array.isArray(parent)) {
          const at = last === '-' ? parent.length : Number(last);
          if (!Number.isInteger(at) || at < 0 || at > parent.length) throw new Error(`JSON Patch: index ${last} out of range at ${op.path}`);
          parent.splice(at, 0, structuredClone(op.value));
        } else {
          parent[last] = structuredClone(op.value);
        }
        break;
      case 'replace':
      case 'remove':
        if (Array.isArray(parent)) {
          const at = Number(last);
          if (!(at >= 0 && at < parent.length)) throw new Error(`JSON Patch: no ${op.path}`);
          if (op.op === 'remove') parent.splice(at, 1); else parent[at] = structuredClone(op.value);
        } else {
          if (!(last in parent)) throw new Error(`JSON Patch: no ${op.path}`);
          if (op.op === 'remove') delete parent[last]; else parent[last] = structuredClone(op.value);
        }
        break;
      case 'test':
        if (JSON.stringify(Array.isArray(parent) ? parent[Number(last)] : parent[last]) !== JSON.stringify(op.value)) throw new Error('JSON Patch: test failed');
        break;
      default:
        throw new Error(`JSON Patch: op ${op.op} not used here`);
    }
  }
  return out;
}
