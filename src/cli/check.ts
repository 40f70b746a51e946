/**
 * `cdk8s-sidecars check`: the objects of all the files through src/engine/manifests-check.ts, as
 * `SidecarValidation.addTo` checks an app (the API server's rules, the fields the target does not
 * know, the Job podFailurePolicy errors and warnings, the Services' named target ports and the
 * HPAs' requests against the workloads of the same namespace), the known-bug table
 * (src/facts/known-bugs.ts; only for a target with a patch version, as in the constructs), and a
 * warning for each native sidecar without CPU or memory requests.
 */
import { STDIN, loadDocuments } from './io';
import { CliTarget } from './target-options';
import { checkManifestSet } from '../engine/manifests-check';
import { SUPPORTED_KINDS, describeObject } from '../engine/pod-template';
import { podTemplateOf } from '../facts/kinds';
import { findKnownBugs } from '../facts/known-bugs';
import { capabilities, formatFullVersion } from '../target/capabilities';

export interface Finding {
  /** The file as given (`-` for stdin). */
  readonly file: string;
  /** 1-based number of the document in the file (empty documents are not counted). */
  readonly document: number;
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
  readonly level: 'error' | 'warning';
  /** The problem and what to do about it. */
  readonly message: string;
}

export interface CheckResult {
  readonly target: string;
  readonly gate: boolean;
  readonly files: number;
  readonly objects: number;
  readonly workloads: number;
  readonly findings: Finding[];
}

export function checkFiles(files: readonly string[], target: CliTarget): CheckResult {
  const findings: Finding[] = [];
  let objects = 0;
  let workloads = 0;
  const version = formatFullVersion(target.version);
  // Every object of every file, then one check of them all (src/engine/manifests-check.ts, as
  // SidecarValidation.addTo does for an app): the Services and HPAs are matched against the
  // workloads of all the files given, in the same namespace.
  const docs: Array<{ base: Omit<Finding, 'level' | 'message'>; doc: any }> = [];
  for (const file of files) {
    loadDocuments(file).forEach((doc, i) => {
      objects++;
      docs.push({
        doc,
        base: {
          file,
          document: i + 1,
          kind: typeof doc?.kind === 'string' ? doc.kind : '?',
          name: typeof doc?.metadata?.name === 'string' ? doc.metadata.name : '?',
          ...(typeof doc?.metadata?.namespace === 'string' ? { namespace: doc.metadata.namespace } : {}),
        },
      });
    });
  }
  const isObject = (doc: any) => doc !== null && typeof doc === 'object' && !Array.isArray(doc);
  const checked = docs.filter(d => isObject(d.doc));
  const found = checkManifestSet(
    checked.map(d => ({ path: `${d.base.kind} ${d.base.namespace ? `${d.base.namespace}/` : ''}${d.base.name}`, manifest: d.doc })),
    target.version.minor, target.gate);
  for (const d of docs) {
    const { base, doc } = d;
    if (!isObject(doc)) {
      findings.push({ ...base, level: 'warning', message: 'not a Kubernetes object (a YAML scalar or list); skipped' });
      continue;
    }
    const index = checked.indexOf(d);
    const mine = found.filter(f => f.index === index);
    for (const f of mine.filter(x => x.source === 'object')) findings.push({ ...base, level: f.level, message: f.message });
    for (const [where, item] of workloadsOf(doc)) {
      workloads++;
      const template = podTemplateOf(structuredClone(item));
      if (!template) continue;
      for (const bug of findKnownBugs(where, template.spec, target.version)) {
        findings.push({ ...base, level: bug.level, message: bug.message });
      }
      if (capabilities(target.version.minor, target.gate).nativeSidecars) {
        for (const message of sidecarsWithoutRequests(where, template.spec)) findings.push({ ...base, level: 'warning', message });
      }
    }
    for (const f of mine.filter(x => x.source !== 'object')) findings.push({ ...base, level: f.level, message: f.message });
  }
  return { target: version, gate: target.gate, files: files.length, objects, workloads, findings };
}

/**
 * Native sidecars without a CPU or memory request (the linters that skip init containers miss
 * them): a sidecar runs for the pod's whole life and the pod's effective request counts it
 * (SIDECARS.md §3), but the scheduler counts a container without requests as zero. A limit
 * without a request is copied into it (kubernetes.io, "Resource Management for Pods and
 * Containers"), so it counts; a LimitRange default does not show in the manifest, hence a warning.
 */
function sidecarsWithoutRequests(where: string, pod: any): string[] {
  const missing = (c: any, r: string) => c.resources?.requests?.[r] === undefined && c.resources?.limits?.[r] === undefined;
  const init: any[] = Array.isArray(pod.initContainers) ? pod.initContainers : [];
  return init.filter(c => c?.restartPolicy === 'Always').flatMap(c => {
    const gaps = ['cpu', 'memory'].filter(r => missing(c, r)).map(r => (r === 'cpu' ? 'CPU' : r));
    if (gaps.length === 0) return [];
    return [
      `${where}: native sidecar '${c.name}' has no ${gaps.join(' or ')} request (nor a limit the API server would copy into it): ` +
      'it runs for the whole life of the pod, but the scheduler counts it as zero (unless a LimitRange of the namespace sets a ' +
      'default). Give it small requests and limits, e.g. requests { cpu: 50m, memory: 64Mi }.',
    ];
  });
}

/** The workloads of a document (the items of a `kind: List`), each with how messages name it. */
function workloadsOf(doc: any): Array<[string, any]> {
  if (typeof doc.kind === 'string' && doc.kind.endsWith('List') && Array.isArray(doc.items)) {
    return doc.items.flatMap((item: any, i: number) =>
      workloadsOf(item ?? {}).map(([where, w]) => [`${doc.kind} items[${i}]: ${where}`, w] as [string, any]));
  }
  return SUPPORTED_KINDS.includes(doc.kind) ? [[describeObject(doc), doc]] : [];
}

/**
 * For people: one block per object with findings (its file, document and object once, then each
 * finding's level, problem and fix, in the order found), the objects in the order of their first
 * finding, then a summary. Grouped by file and document, whatever check found what (`--output
 * json` keeps one flat entry per finding).
 */
export function formatHuman(result: CheckResult): string {
  const blocks = new Map<string, string[]>();
  for (const f of result.findings) {
    const file = f.file === STDIN ? 'stdin' : f.file;
    const key = JSON.stringify([f.file, f.document]);
    let block = blocks.get(key);
    if (!block) {
      block = [`${file} (document ${f.document}): ${f.kind} ${f.namespace ? `${f.namespace}/` : ''}${f.name}`];
      blocks.set(key, block);
    }
    block.push(`  ${f.level}: ${f.message}`);
  }
  const lines = [...blocks.values()].flat();
  const errors = result.findings.filter(f => f.level === 'error').length;
  const warnings = result.findings.length - errors;
  lines.push(
    `Kubernetes ${result.target}${result.gate ? ' (SidecarContainers gate on)' : ''}: ${result.files} file(s), ` +
    `${result.objects} object(s), ${result.workloads} workload(s): ${errors} error(s), ${warnings} warning(s)`,
  );
  return lines.join('\n') + '\n';
}

export function formatJson(result: CheckResult): string {
  const errors = result.findings.filter(f => f.level === 'error').length;
  return JSON.stringify({ ...result, errors, warnings: result.findings.length - errors }, null, 2) + '\n';
}
