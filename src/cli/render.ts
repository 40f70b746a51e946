/**
 * `cdk8s-sidecars render --config sidecars.yaml`, a Helm post-renderer: the chart's manifests on
 * stdin, the same on stdout with the sidecars added. Not a second engine: the input becomes the
 * `ApiObject`s of a cdk8s `Include` in one Chart of one App, the config's entries become the
 * library's own constructs (WithLogAgent, WithEnvoy, WithTracer, AdoptSidecar, WithSidecar) on them, and the
 * output is that App's objects: the input objects in their order, then the new ones (the agents'
 * ConfigMaps). The input is read as the API server reads it (src/cli/reader.ts) and never written
 * to disk; an object the constructs do not change is written back as it was read (its nulls, empty
 * maps, exact integers, no name invented for a generateName), and in one they change every field
 * they leave alone keeps the user's value (`mergeChanges`); each document is written so that the
 * API server reads it equal to that value (src/cli/writer.ts). The construct tree, so that a cdk8s
 * app gives the same bytes for ordinary input:
 *
 *   App
 *   └── Chart 'sidecars'
 *       ├── Include 'input'            (the objects of stdin)
 *       └── <kind>-<name>[-<namespace>]-<sidecar>   (lower case; sidecar: log-agent, envoy,
 *                                        tracer, adopt-<containerName>, sidecar-<containerName>), one per workload and sidecar
 */
import { App, ApiObject, Chart } from 'cdk8s';
import { Construct } from 'constructs';
import { AdoptSidecar } from '../adopt-sidecar';
import { SUPPORTED_KINDS } from '../facts/kinds';
import { WithEnvoy } from '../with-envoy';
import { WithLogAgent } from '../with-log-agent';
import { WithSidecar } from '../with-sidecar';
import { WithTracer } from '../with-tracer';
import { CommandError, loadDocuments, readText } from './io';
import { YamlValue, escapeForMessage, toPlain } from './reader';
import { ConfigError, RenderConfig, readRenderConfig, selects } from './render-config';
import { writeDocuments } from './writer';

/** The id of the chart that holds everything (it shows in the ConfigMaps' generated names). */
export const RENDER_CHART_ID = 'sidecars';

/** Reads the config file: exactly one YAML document. */
export function loadRenderConfig(file: string): RenderConfig {
  let docs: any[];
  try {
    docs = loadDocuments(file);
  } catch (e) {
    throw new ConfigError(file, (e as Error).message.replace(`${file}: `, ''));
  }
  if (docs.length !== 1) throw new ConfigError(file, `expected one YAML document, found ${docs.length}`);
  try {
    return readRenderConfig(docs[0]);
  } catch (e) {
    if (e instanceof ConfigError) throw new ConfigError(`${file}: ${e.keyPath}`, e.message.slice(e.keyPath.length + 2));
    throw e;
  }
}

/** The construct id of a sidecar on an object: `<kind>-<name>[-<namespace>]-<sidecar>`, lower case. */
export function sidecarId(obj: any, sidecar: string): string {
  return [obj.kind, obj.metadata?.name, obj.metadata?.namespace, sidecar].filter(x => x).join('-').toLowerCase();
}

/** Renders `input` (multi-document YAML) with the sidecars of `config`. */
export function render(input: string, config: RenderConfig, configFile: string): string {
  const exact = readText(input, 'stdin');
  exact.forEach((d: any, i) => {
    const bad = d === null || typeof d !== 'object' || Array.isArray(d) ? 'is not a Kubernetes object'
      : typeof d.apiVersion !== 'string' ? 'has no apiVersion' : typeof d.kind !== 'string' ? 'has no kind' : undefined;
    if (bad) {
      const kind = typeof d?.kind === 'string' ? escapeForMessage(d.kind, 60) : '?';
      const name = typeof d?.metadata?.name === 'string' ? escapeForMessage(d.metadata.name, 60) : '?';
      throw new CommandError(`stdin: document ${i + 1} (${kind} '${name}') ${bad}; a post-renderer gets Kubernetes objects only`);
    }
  });
  const docs = exact.map(toPlain);
  const app = new App();
  const chart = new Chart(app, RENDER_CHART_ID);
  // what cdk8s' Include makes of the documents (same ids), without a temporary file
  const include = new Construct(chart, 'input');
  let order = 0;
  const objects = docs.map(obj => {
    const objname = obj.metadata?.name ?? `object${order++}`;
    const id = [objname, obj.kind?.toLowerCase(), obj.metadata?.namespace].filter(x => x).join('-');
    try {
      return new ApiObject(include, id, structuredClone(obj));
    } catch (e) {
      // e.g. two objects of the same kind, name and namespace (cdk8s names the construct after them)
      throw new CommandError(`stdin: cdk8s' Include cannot take the input: ${escapeForMessage((e as Error).message.split('\n')[0])}`);
    }
  });
  const before = objects.map(o => {
    try {
      return o.toJson();
    } catch (e) {
      // e.g. a key named `constructor` holding a map: cdk8s' serializer refuses it
      throw new CommandError(`stdin: cdk8s cannot take the object ${escapeForMessage(o.node.id, 100)}: ${escapeForMessage((e as Error).message.split('\n')[0])}`);
    }
  });
  attach(chart, objects, docs, config, configFile);
  let out: any[];
  try {
    app.synthYaml(); // the constructs' validations
    out = chart.toJson();
  } catch (e) {
    throw new CommandError((e as Error).message);
  }
  const byKey = new Map(objects.map((o, i) => [keyOf(o.toJson()), i]));
  return writeDocuments(out.map(after => {
    const i = byKey.get(keyOf(after));
    return i === undefined ? after : orderLike(mergeChanges(exact[i], before[i], after) as YamlValue, after);
  }));
}

function keyOf(obj: any): string {
  return JSON.stringify([obj.apiVersion, obj.kind, obj.metadata?.namespace ?? null, obj.metadata?.name ?? null]);
}

const isMap = (v: unknown): v is Record<string, any> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Deep equality of plain JSON values (key order ignored). */
function same(a: any, b: any): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => same(x, b[i]));
  if (isMap(a) && isMap(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every(k => Object.prototype.hasOwnProperty.call(b, k) && same(a[k], b[k]));
  }
  return false;
}

/**
 * The user's object with the constructs' changes applied: `before` and `after` are cdk8s' JSON of
 * the object before and after the constructs (nulls dropped, numbers as doubles, a name invented
 * where the input had none); what did not change between them keeps `original`'s exact value
 * (its nulls, empty maps, integers beyond 2^53, no invented name). List items are matched by
 * `name` (containers, volumes, env), else by equal value.
 */
export function mergeChanges(original: any, before: any, after: any): YamlValue | undefined {
  if (same(before, after)) return original;
  if (isMap(after) && isMap(before) && isMap(original)) {
    const out: Record<string, YamlValue> = {};
    const set = (k: string, v: YamlValue | undefined) => {
      if (v === undefined) return;
      if (k === '__proto__') Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
      else out[k] = v;
    };
    for (const k of Object.keys(after)) {
      if (Object.prototype.hasOwnProperty.call(before, k)) {
        set(k, mergeChanges(Object.prototype.hasOwnProperty.call(original, k) ? original[k] : undefined, before[k], after[k]));
      } else {
        set(k, after[k]);
      }
    }
    // what cdk8s dropped from `before` (nulls) and the constructs did not set: the user's
    for (const k of Object.keys(original)) {
      if (!Object.prototype.hasOwnProperty.call(before, k) && !Object.prototype.hasOwnProperty.call(after, k)) set(k, original[k]);
    }
    return out;
  }
  if (Array.isArray(after) && Array.isArray(before) && Array.isArray(original) && original.length === before.length) {
    const used = new Set<number>();
    const named = (x: any) => (isMap(x) && typeof x.name === 'string' ? x.name : undefined);
    return after.map((a, j) => {
      const name = named(a);
      if (name !== undefined) {
        const hits = before.map((b, i) => (named(b) === name ? i : -1)).filter(i => i >= 0);
        if (hits.length === 1 && !used.has(hits[0])) {
          used.add(hits[0]);
          return mergeChanges(original[hits[0]], before[hits[0]], a) as YamlValue;
        }
      }
      const at = j < before.length && !used.has(j) && same(before[j], a) ? j : before.findIndex((b, i) => !used.has(i) && same(b, a));
      if (at >= 0) {
        used.add(at);
        return original[at];
      }
      return a;
    });
  }
  return after;
}

/**
 * `value`'s keys in the order of cdk8s' JSON of the object (`like`: sorted keys, apiVersion, kind
 * and metadata first, then what the constructs' patches appended), so that ordinary input gives
 * the bytes of a cdk8s app; keys cdk8s dropped (nulls) come after, sorted.
 */
function orderLike(value: YamlValue, like: any): YamlValue {
  if (Array.isArray(value)) return value.map((v, j) => orderLike(v, Array.isArray(like) ? like[j] : undefined));
  if (value === null || typeof value !== 'object') return value;
  const src: any = value;
  const ref = isMap(like) ? like : {};
  const has = (o: any, k: string) => Object.prototype.hasOwnProperty.call(o, k);
  const keys = [...Object.keys(ref).filter(k => has(src, k)), ...Object.keys(src).filter(k => !has(ref, k)).sort()];
  const out: Record<string, YamlValue> = {};
  for (const k of keys) {
    const v = orderLike(src[k], ref[k]);
    if (k === '__proto__') Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
    else out[k] = v;
  }
  return out;
}

function attach(chart: Construct, objects: ApiObject[], docs: any[], config: RenderConfig, configFile: string): void {
  const target = {
    kubernetesVersion: config.kubernetesVersion,
    ...(config.sidecarContainersGate !== undefined ? { sidecarContainersGate: config.sidecarContainersGate } : {}),
  };
  /** `<object index>|<sidecar>` -> the config key that gave it (a second entry giving the same sidecar is an error). */
  const made = new Map<string, string>();
  for (const entry of config.workloads) {
    const at = (key: string) => `${configFile}: ${entry.path}${key === '' ? '' : `.${key}`}`;
    if (entry.select.kind !== undefined && !SUPPORTED_KINDS.includes(entry.select.kind)) {
      throw new ConfigError(at('select.kind'), `'${entry.select.kind}' has no pod template; use one of ${SUPPORTED_KINDS.join(', ')}`);
    }
    const hits = docs.map((_, i) => i).filter(i => SUPPORTED_KINDS.includes(docs[i]?.kind) && selects(entry.select, docs[i]));
    if (hits.length === 0) {
      const present = docs.filter(d => SUPPORTED_KINDS.includes(d?.kind)).map(d => `${d.kind} ${d.metadata?.name}`);
      throw new ConfigError(at('select'), `selects no workload of the input (its workloads: ${present.length > 0 ? present.join(', ') : 'none'})`);
    }
    for (const i of hits) {
      const workload = objects[i];
      const add = (key: string, sidecar: string, make: (id: string) => void) => {
        const id = sidecarId(docs[i], sidecar);
        const earlier = made.get(`${i}|${sidecar}`);
        if (earlier !== undefined) {
          throw new ConfigError(at(key), `${docs[i].kind} '${docs[i].metadata?.name}' already gets this sidecar from ${earlier}; a workload gets each sidecar once`);
        }
        made.set(`${i}|${sidecar}`, `${entry.path}.${key}`);
        try {
          make(id);
        } catch (e) {
          throw new ConfigError(at(key), (e as Error).message);
        }
      };
      if (entry.logAgent) add('logAgent', 'log-agent', id => new WithLogAgent(chart, id, { ...target, ...(entry.logAgent as any), workload }));
      if (entry.envoy) add('envoy', 'envoy', id => new WithEnvoy(chart, id, { ...target, ...(entry.envoy as any), workload }));
      if (entry.tracer) add('tracer', 'tracer', id => new WithTracer(chart, id, { ...target, ...(entry.tracer as any), workload }));
      entry.adopt.forEach((props, k) =>
        add(`adopt[${k}]`, `adopt-${props.containerName}`, id => new AdoptSidecar(chart, id, { ...target, ...(props as any), workload })));
      entry.sidecars.forEach((props, k) =>
        add(`sidecars[${k}]`, `sidecar-${props.containerName ?? 'sidecar'}`, id => new WithSidecar(chart, id, { ...target, ...(props as any), workload })));
    }
  }
}
