/**
 * Vendor manifests as a user adopts them (issue 27): every workload of a multi-document YAML file
 * brought in with `Include`, given the sidecars with default props (a log agent on every workload,
 * Envoy on the first declared port and the tracer on Deployments), synthesized at every supported
 * target, one cell per workload and target. A cell either synthesizes (then its output is checked:
 * strict schema of the release, the API server's rules, PSS "restricted" for the sidecars, and the
 * user's objects changed only as documented) or is refused with the library's message.
 *
 * The runner takes file paths: the test gives it the repository's own fixtures
 * (test/fixtures/vendor/*.yaml); nothing here reads a path of its own.
 */
import * as fs from 'fs';
import { ApiObject, App, Chart, Include } from 'cdk8s';
import { parseAllDocuments } from 'yaml';
import { schemaErrors } from './k8s-schema';
import { restrictedViolations, volumeViolations } from './pss';
import { SidecarValidation, SidecarWarnings, WithEnvoy, WithLogAgent, WithTracer } from '../../src';
import { podTemplateOf } from '../../src/facts/kinds';

/** A target as a cell gives it: the version and the gate. */
export interface CellTarget {
  readonly version: string;
  readonly gate?: boolean;
}

/** Every supported target of issue 27: 1.27, 1.28 without and with the gate, 1.29, 1.30, 1.33, the newest. */
export const CELL_TARGETS: CellTarget[] = [
  { version: '1.27' }, { version: '1.28' }, { version: '1.28', gate: true }, { version: '1.29' }, { version: '1.30' }, { version: '1.33' }, { version: '1.35' },
];

export interface Cell {
  readonly file: string;
  /** `Kind/name` */
  readonly workload: string;
  readonly target: string;
  /** The error message when refused. */
  readonly refused?: string;
  /** What is wrong with the output when it synthesized (empty when valid). */
  readonly violations: string[];
  readonly warnings: string[];
  readonly sidecars: string[];
}

const KINDS = ['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job', 'CronJob', 'Pod', 'ReplicationController'];
const SIDECAR_NAMES = ['log-agent', 'tracer', 'envoy', 'sidecar-tools'];

/** The workloads of a file, as `Kind/name`, in document order. */
export function workloadsOf(file: string): string[] {
  return documents(file).filter(d => KINDS.includes(d?.kind)).map(d => `${d.kind}/${d.metadata?.name}`);
}

function documents(file: string): any[] {
  return parseAllDocuments(fs.readFileSync(file, 'utf-8')).map(d => d.toJS()).filter(d => d && typeof d === 'object');
}

/** The first declared port of the first app container that declares one (Envoy's appPort), if any. */
function firstPort(manifest: any): number | undefined {
  for (const c of podTemplateOf(structuredClone(manifest))?.spec.containers ?? []) {
    const p = (c.ports ?? []).find((x: any) => typeof x.containerPort === 'number' && (x.protocol ?? 'TCP') === 'TCP');
    if (p) return p.containerPort;
  }
  return undefined;
}

/** The default sidecars on one workload; returns their names. */
function attach(chart: Chart, id: string, obj: ApiObject, target: CellTarget): string[] {
  // (read before the first sidecar wraps the object's toJson())
  const appPort = firstPort(obj.toJson());
  const opts = { workload: obj, kubernetesVersion: target.version, sidecarContainersGate: target.gate };
  const sidecars: string[] = [];
  new WithLogAgent(chart, `${id}-logs`, opts);
  sidecars.push('log agent');
  if (obj.kind === 'Deployment') {
    new WithTracer(chart, `${id}-tracer`, { ...opts, exporterEndpoint: 'otel-collector.observability:4317' });
    sidecars.push('tracer');
    if (appPort !== undefined) {
      new WithEnvoy(chart, `${id}-envoy`, { ...opts, appPort });
      sidecars.push('Envoy');
    }
  }
  return sidecars;
}

const key = (o: { kind: string; name?: string; metadata?: any }) => `${o.kind}/${o.name ?? o.metadata?.name}`;
const labelOf = (target: CellTarget) => `${target.version}${target.gate ? ' (gate on)' : ''}`;

/**
 * One cell: `file`'s workload `workload` with default sidecars at `target`, alone in its app (the
 * file's other objects included as they are).
 */
export function runCell(file: string, workload: string, target: CellTarget): Cell {
  // (chart.toJson() validates the whole app and writes nothing)
  const chart = new Chart(new App(), 'vendor');
  const include = new Include(chart, 'manifest', { url: file });
  const obj = include.apiObjects.find(o => key(o) === workload)!;
  const before = obj.toJson();
  const base = { file, workload, target: labelOf(target), sidecars: [] as string[] };
  let manifests: any[];
  try {
    base.sidecars = attach(chart, 'w', obj, target);
    manifests = chart.toJson();
  } catch (e) {
    return { ...base, refused: (e as Error).message, violations: [], warnings: [] };
  }
  const inputs = new Set(include.apiObjects.map(key));
  const out = manifests.find(m => key(m) === workload);
  return { ...base, violations: outputViolations(before, out, manifests, inputs, target), warnings: SidecarWarnings.of(obj) };
}

/**
 * Every workload of `file` at `target` in one app (what a user does), or undefined when it does not
 * synthesize (then each cell is run alone, so that one refused workload does not hide the others).
 */
function runFile(file: string, target: CellTarget): Cell[] | undefined {
  const chart = new Chart(new App(), 'vendor');
  const include = new Include(chart, 'manifest', { url: file });
  const workloads = include.apiObjects.filter(o => KINDS.includes(o.kind));
  const before = new Map(workloads.map(o => [key(o), o.toJson()]));
  let manifests: any[];
  const sidecars = new Map<string, string[]>();
  try {
    workloads.forEach((o, i) => sidecars.set(key(o), attach(chart, `w${i}`, o, target)));
    manifests = chart.toJson();
  } catch {
    return undefined;
  }
  const inputs = new Set(include.apiObjects.map(key));
  return workloads.map(o => {
    const out = manifests.find(m => key(m) === key(o));
    const mine = manifests.filter(m => m === out || !inputs.has(key(m)));
    return {
      file,
      workload: key(o),
      target: labelOf(target),
      sidecars: sidecars.get(key(o))!,
      violations: outputViolations(before.get(key(o)), out, mine, new Set(), target),
      warnings: SidecarWarnings.of(o),
    };
  });
}

/** Every cell of `files` at every target. */
export function runCells(files: string[], targets: CellTarget[] = CELL_TARGETS): Cell[] {
  return files.flatMap(file => targets.flatMap(t => runFile(file, t) ?? workloadsOf(file).map(w => runCell(file, w, t))));
}

/**
 * The output checks: strict schema of the release (every object), the API server's rules through
 * the public checker, PSS "restricted" for every container and volume the library added, and
 * the user's objects changed only as documented (README, docs/target.md): the user's containers
 * unchanged but for the log mount and the `OTEL_*` env added to app containers, the user's init
 * containers and volumes unchanged and in order, the pod spec's other fields unchanged but for a
 * raised grace period, the pod's annotations the user's plus the library's, and nothing outside
 * the pod template changed.
 */
function outputViolations(before: any, out: any, manifests: any[], inputs: Set<string>, target: CellTarget): string[] {
  const v: string[] = [];
  const release = target.version;
  // the workload and the objects the library added (the user's other objects are theirs, unchanged)
  const mine = manifests.filter(m => m === out || !inputs.has(`${m.kind}/${m.metadata?.name}`));
  for (const m of mine) v.push(...schemaErrors(m, release).map(e => `${m.kind}/${m.metadata?.name}: ${e}`));
  v.push(...SidecarValidation.checkManifest(out, release, target.gate));
  const b = podTemplateOf(structuredClone(before))!;
  const o = podTemplateOf(structuredClone(out))!;
  const ours = (c: any) => SIDECAR_NAMES.includes(c.name);
  const outInit: any[] = o.spec.initContainers ?? [];
  const outContainers: any[] = o.spec.containers ?? [];
  for (const c of [...outInit, ...outContainers].filter(ours)) v.push(...restrictedViolations(c, {}));
  const userVolumes = new Set((b.spec.volumes ?? []).map((x: any) => x.name));
  for (const vol of (o.spec.volumes ?? []).filter((x: any) => !userVolumes.has(x.name))) v.push(...volumeViolations(vol));
  // the user's init containers: unchanged, in order
  const userInit = outInit.filter(c => !ours(c));
  if (JSON.stringify(userInit) !== JSON.stringify(b.spec.initContainers ?? [])) v.push('the user\'s init containers changed');
  // the user's containers: only the documented additions (mounts of the library's volumes, OTEL_* env)
  const userContainers = outContainers.filter(c => !ours(c));
  const bc: any[] = b.spec.containers ?? [];
  if (userContainers.map(c => c.name).join() !== bc.map(c => c.name).join()) v.push('the user\'s containers are not all there, in order');
  for (const [i, c] of userContainers.entries()) {
    const orig = bc[i] ?? {};
    const stripped = { ...c };
    stripped.env = (c.env ?? []).filter((e: any) => !(e.name.startsWith('OTEL_') && !(orig.env ?? []).some((x: any) => x.name === e.name)));
    const own = (m: any) => userVolumes.has(m.name) || (orig.volumeMounts ?? []).some((x: any) => x.name === m.name);
    stripped.volumeMounts = (c.volumeMounts ?? []).filter(own);
    for (const k of ['env', 'volumeMounts']) if (stripped[k].length === 0 && orig[k] === undefined) delete stripped[k];
    if (JSON.stringify(sortDeep(stripped)) !== JSON.stringify(sortDeep(orig))) v.push(`container '${c.name}' changed beyond the documented additions`);
  }
  const userVolumesOut = (o.spec.volumes ?? []).slice(0, (b.spec.volumes ?? []).length);
  if (JSON.stringify(userVolumesOut) !== JSON.stringify(b.spec.volumes ?? [])) v.push('the user\'s volumes changed');
  for (const k of new Set([...Object.keys(b.spec), ...Object.keys(o.spec)])) {
    if (['containers', 'initContainers', 'volumes', 'terminationGracePeriodSeconds'].includes(k)) continue;
    // documented (docs/shutdown.md, "A legacy sidecar on a Job"): a pod whose legacy sidecars exit
    // with the app shares its process namespace, the wrapper being the sidecar's command
    const wrapped = outContainers.some(c => ours(c) && c.command?.[0] === '/sidecar-tools/busybox' && c.command?.[1] === 'sh');
    if (k === 'shareProcessNamespace' && wrapped && b.spec[k] === undefined && o.spec[k] === true) continue;
    if (JSON.stringify(sortDeep(b.spec[k])) !== JSON.stringify(sortDeep(o.spec[k]))) v.push(`pod spec field ${k} changed`);
  }
  const bg = b.spec.terminationGracePeriodSeconds;
  const og = o.spec.terminationGracePeriodSeconds;
  if (bg !== undefined && !(og >= bg)) v.push(`terminationGracePeriodSeconds lowered from ${bg} to ${og}`);
  const ba = b.metadata.annotations ?? {};
  for (const [k, val] of Object.entries(ba)) if (o.metadata.annotations?.[k] !== val) v.push(`pod annotation ${k} changed`);
  for (const k of Object.keys(o.metadata.annotations ?? {})) {
    if (!(k in ba) && !k.startsWith('checksum.sidecars.cdk8s.io/') && !['sidecars.cdk8s.io/native-sidecars', 'sidecars.cdk8s.io/stop-times', 'sidecars.cdk8s.io/app-shutdown-time', 'kubectl.kubernetes.io/default-container'].includes(k)) {
      v.push(`pod annotation ${k} added`);
    }
  }
  if (JSON.stringify(sortDeep(b.metadata.labels)) !== JSON.stringify(sortDeep(o.metadata.labels))) v.push('pod labels changed');
  // outside the pod template
  const strip = (m: any) => {
    const c = structuredClone(m);
    const t = podTemplateOf(c)!;
    for (const part of [t.metadata, t.spec]) for (const k of Object.keys(part)) delete part[k];
    return sortDeep(c);
  };
  if (JSON.stringify(strip(before)) !== JSON.stringify(strip(out))) v.push('the object changed outside its pod template');
  return v;
}

function sortDeep(x: any): any {
  if (Array.isArray(x)) return x.map(sortDeep);
  if (x && typeof x === 'object') return Object.fromEntries(Object.keys(x).sort().map(k => [k, sortDeep(x[k])]));
  return x;
}
