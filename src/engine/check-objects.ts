/**
 * The checks of `cdk8s-sidecars check` and of the cdk8s validation plugin over the objects of some
 * files, already read: every object through src/engine/manifests-check.ts, as
 * `SidecarValidation.addTo` checks an app (the API server's rules, the fields the target does not
 * know, the Job podFailurePolicy errors and warnings, the Services' named target ports and the
 * HPAs' requests against the workloads of the same namespace), the known-bug table
 * (src/facts/known-bugs.ts; only for a target with a patch version, as in the constructs), and a
 * warning for each native sidecar without CPU or memory requests. Each finding carries its rule id
 * (src/engine/check-rules.ts) and the line of its object; the rules silenced by the options or by
 * an object's check-ignore annotation are counted, not listed. Plain JSON in, no file reading here.
 */
import { CHECK_IGNORE_ANNOTATION, CLI_CHECKS, CheckRule, UnknownRuleError, parseRuleList, ruleOfCheck } from './check-rules';
import { checkManifestSet } from './manifests-check';
import { describeObject } from './pod-template';
import { SUPPORTED_KINDS, podTemplateView } from '../facts/kinds';
import { findKnownBugs } from '../facts/known-bugs';
import { Where } from '../private/errors';
import { KubeVersion, capabilities, formatFullVersion } from '../target/capabilities';

/** Where an unknown rule of an object's check-ignore annotation is named (the warning words it its own way). */
const IGNORE_ANNOTATION = new Where(CHECK_IGNORE_ANNOTATION);

export interface Finding {
  /** The file as given (`-` for stdin). */
  readonly file: string;
  /** 1-based number of the document in the file (empty documents are not counted). */
  readonly document: number;
  /** 1-based line of the file where the object starts. */
  readonly line: number;
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
  readonly level: 'error' | 'warning';
  /** The rule's id (`CS001`, src/engine/check-rules.ts). */
  readonly rule: string;
  /** The rule's name (`native-sidecar-below-1.29`). */
  readonly ruleName: string;
  /** The problem and what to do about it. */
  readonly message: string;
}

export interface CheckOptions {
  /** Rule ids silenced for the whole run (`--ignore`). */
  readonly ignore?: ReadonlySet<string>;
}

export interface CheckResult {
  readonly target: string;
  readonly gate: boolean;
  readonly files: number;
  readonly objects: number;
  /** The documents that are objects (YAML mappings): 0 is an empty input (`check` fails on it unless --allow-empty). */
  readonly kubernetesObjects: number;
  readonly workloads: number;
  /** Every document read, in order (what `--output junit` lists as test cases). */
  readonly inventory: ReadonlyArray<Omit<Finding, 'level' | 'message' | 'rule' | 'ruleName'>>;
  /** Findings silenced by `--ignore` or an object's check-ignore annotation (not in `findings`). */
  readonly suppressed: number;
  readonly findings: Finding[];
}

/** A document of a file and the 1-based line where its content starts. */
export interface LocatedDocument {
  readonly doc: any;
  readonly line: number;
}

/** The documents of one input (a file, or `-` for stdin), in order. */
export interface InputDocuments {
  readonly file: string;
  readonly docs: readonly LocatedDocument[];
}

/** The target: the release and the SidecarContainers gate. */
export interface CheckTarget {
  readonly version: KubeVersion;
  readonly gate: boolean;
}

export function checkDocuments(inputs: readonly InputDocuments[], target: CheckTarget, options: CheckOptions = {}): CheckResult {
  const all: Finding[] = [];
  const silencedBy = new Map<Finding, boolean>();
  const findings = {
    push(base: Omit<Finding, 'level' | 'message' | 'rule' | 'ruleName'>, doc: any, level: 'error' | 'warning', check: string, message: string) {
      const rule: CheckRule = ruleOfCheck(check);
      const f: Finding = { ...base, level, rule: rule.id, ruleName: rule.slug, message };
      all.push(f);
      silencedBy.set(f, (options.ignore?.has(rule.id) ?? false) || ignoredByObject(doc).has(rule.id));
    },
  };
  let workloads = 0;
  const version = formatFullVersion(target.version);
  // Every object of every file, then one check of them all (src/engine/manifests-check.ts, as
  // SidecarValidation.addTo does for an app): the Services and HPAs are matched against the
  // workloads of all the files given, in the same namespace.
  const docs = locatedDocuments(inputs);
  const objects = docs.length;
  const isObject = (doc: any) => doc !== null && typeof doc === 'object' && !Array.isArray(doc);
  const checked = docs.filter(d => isObject(d.doc));
  const found = checkManifestSet(
    checked.map(d => ({ path: `${d.base.kind} ${d.base.namespace ? `${d.base.namespace}/` : ''}${d.base.name}`, manifest: d.doc })),
    target.version.minor, target.gate);
  // Each document's position among the checked ones and its findings, indexed once (not a scan per
  // document: linear in the number of files and objects).
  const positions = new Map(checked.map((d, i) => [d, i]));
  const byIndex = new Map<number, typeof found>();
  for (const f of found) (byIndex.get(f.index) ?? byIndex.set(f.index, []).get(f.index)!).push(f);
  for (const d of docs) {
    const { base, doc } = d;
    if (!isObject(doc)) {
      findings.push(base, doc, 'warning', CLI_CHECKS.notAnObject, 'not a Kubernetes object (a YAML scalar or list); skipped');
      continue;
    }
    const unknown = unknownIgnores(doc);
    if (unknown) findings.push(base, doc, 'warning', CLI_CHECKS.unknownIgnore, unknown);
    const mine = byIndex.get(positions.get(d)!) ?? [];
    for (const f of mine.filter(x => x.source === 'object')) findings.push(base, doc, f.level, f.rule, f.message);
    for (const [where, item] of workloadsOf(doc)) {
      workloads++;
      for (const f of podFindings(where, item, target)) findings.push(base, doc, f.level, f.check, f.message);
    }
    for (const f of mine.filter(x => x.source !== 'object')) findings.push(base, doc, f.level, f.rule, f.message);
  }
  const kept = all.filter(f => !silencedBy.get(f));
  return {
    target: version,
    gate: target.gate,
    files: inputs.length,
    objects,
    kubernetesObjects: checked.length,
    workloads,
    inventory: docs.map(d => d.base),
    suppressed: all.length - kept.length,
    findings: kept,
  };
}

/** Every object of every file, with where it is (file, document, line) and what it is. */
function locatedDocuments(inputs: readonly InputDocuments[]): Array<{ base: Omit<Finding, 'level' | 'message' | 'rule' | 'ruleName'>; doc: any }> {
  const docs: Array<{ base: Omit<Finding, 'level' | 'message' | 'rule' | 'ruleName'>; doc: any }> = [];
  for (const { file, docs: located } of inputs) {
    located.forEach(({ doc, line }, i) => {
      docs.push({
        doc,
        base: {
          file,
          document: i + 1,
          line,
          kind: typeof doc?.kind === 'string' ? doc.kind : '?',
          name: typeof doc?.metadata?.name === 'string' ? doc.metadata.name : '?',
          ...(typeof doc?.metadata?.namespace === 'string' ? { namespace: doc.metadata.namespace } : {}),
        },
      });
    });
  }
  return docs;
}

/** The findings of one pod template the set check does not make: the release's known bugs, native sidecars without requests. */
function podFindings(where: string, item: any, target: CheckTarget): Array<{ level: 'error' | 'warning'; check: string; message: string }> {
  const out: Array<{ level: 'error' | 'warning'; check: string; message: string }> = [];
  const template = podTemplateView(item);
  if (!template) return [];
  // container lists that are not lists of objects: CS014 (pod-spec-malformed) reports them; the
  // known-bug table reads well-typed pods only (it would crash on `containers: 5`)
  const malformed = ['containers', 'initContainers'].some(k => template.spec[k] !== undefined && template.spec[k] !== null &&
    !(Array.isArray(template.spec[k]) && template.spec[k].every((c: unknown) => c !== null && typeof c === 'object' && !Array.isArray(c))));
  if (malformed) return [];
  for (const bug of findKnownBugs(where, template.spec, target.version)) {
    out.push({ level: bug.level, check: CLI_CHECKS.knownBug, message: bug.message });
  }
  if (capabilities(target.version.minor, target.gate).nativeSidecars) {
    for (const message of sidecarsWithoutRequests(where, template.spec)) out.push({ level: 'warning', check: CLI_CHECKS.sidecarRequests, message });
  }
  return out;
}

/** The rule ids an object's check-ignore annotation silences (unknown entries are left out: `unknownIgnores` reports them). */
function ignoredByObject(doc: any): Set<string> {
  const value = doc?.metadata?.annotations?.[CHECK_IGNORE_ANNOTATION];
  if (typeof value !== 'string') return new Set();
  const out = new Set<string>();
  for (const part of value.split(',')) {
    try {
      for (const id of parseRuleList([part], IGNORE_ANNOTATION)) out.add(id);
    } catch (e) {
      if (!(e instanceof UnknownRuleError)) throw e;
    }
  }
  return out;
}

/** The warning for an object's check-ignore annotation that names unknown rules (or is not a string), if any. */
function unknownIgnores(doc: any): string | undefined {
  const value = doc?.metadata?.annotations?.[CHECK_IGNORE_ANNOTATION];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') {
    return `annotation ${CHECK_IGNORE_ANNOTATION} is ${JSON.stringify(value)}, not a string; write the rule ids as one string, e.g. "CS001,CS022".`;
  }
  const bad: string[] = [];
  for (const part of value.split(',')) {
    try {
      parseRuleList([part], IGNORE_ANNOTATION);
    } catch (e) {
      if (!(e instanceof UnknownRuleError)) throw e;
      bad.push(part.trim());
    }
  }
  return bad.length === 0 ? undefined
    : `annotation ${CHECK_IGNORE_ANNOTATION} names ${bad.map(b => `'${b}'`).join(', ')}, which ${bad.length > 1 ? 'are not rules' : 'is not a rule'}: it silences nothing. Use the ids or names of docs/cli.md ("Rules"), e.g. "CS001" or "native-sidecar-below-1.29".`;
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
