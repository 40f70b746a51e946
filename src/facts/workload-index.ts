/**
 * Facts layer (cdk8s-free): the workloads of a set of manifests (an app's objects, or the files given
 * to `cdk8s-sidecars check`) indexed once, so that the app-wide checks look the pods a Service
 * selects, or the workload an autoscaler targets, up per object instead of scanning every workload
 * for each (that scan made synthesis and `check` quadratic in the number of workloads).
 *
 * The index only narrows the candidates; each check still applies its own exact rule to them (the
 * keys are JSON texts, so a candidate may match a key without matching the rule), and candidates
 * come back in the order of the set, so the findings are the same, in the same order, as a scan.
 */
import { podTemplateView } from './kinds';
import { Json } from '../private/json';

/** A workload of the set: how messages name it, its manifest, and its position in the set. */
export interface IndexedWorkload {
  readonly path: string;
  readonly manifest: Json;
  readonly position: number;
  /** The pod template of the manifest (read only: `podTemplateView`), or undefined when it has none. */
  readonly template: { metadata: Json; spec: Json } | undefined;
}

const undefinedAsNull = (_k: string, v: unknown) => (v === undefined ? null : v);
const key = (...parts: unknown[]) => JSON.stringify(parts, undefinedAsNull);
const namespaceOf = (manifest: Json) => manifest?.metadata?.namespace ?? '';

function push<T>(map: Map<string, T[]>, k: string, value: T): void {
  const list = map.get(k);
  if (list) list.push(value);
  else map.set(k, [value]);
}

/** The workloads of a set, by namespace and pod label, and by namespace, kind and name. */
export class WorkloadIndex {
  public readonly workloads: readonly IndexedWorkload[];
  private readonly byLabel = new Map<string, IndexedWorkload[]>();
  private readonly byName = new Map<string, IndexedWorkload[]>();

  constructor(workloads: ReadonlyArray<{ readonly path: string; readonly manifest: Json }>) {
    this.workloads = workloads.map((w, position) => {
      const m = w.manifest;
      const template = m && typeof m === 'object' && !Array.isArray(m) ? podTemplateView(m) : undefined;
      return { path: w.path, manifest: m, position, template };
    });
    for (const w of this.workloads) {
      push(this.byName, key(namespaceOf(w.manifest), w.manifest?.kind, w.manifest?.metadata?.name), w);
      const labels = w.template?.metadata?.labels;
      if (!labels || typeof labels !== 'object') continue;
      for (const [k, v] of Object.entries(labels)) push(this.byLabel, key(namespaceOf(w.manifest), k, v), w);
    }
  }

  /**
   * The workloads in `namespace` whose pod labels may match every entry of `selector` (a
   * non-empty object): the candidates of the entry with the fewest, in the order of the set.
   * The caller applies its exact rule.
   */
  public candidatesSelectedBy(namespace: unknown, selector: Record<string, unknown>): readonly IndexedWorkload[] {
    let best: readonly IndexedWorkload[] | undefined;
    for (const [k, v] of Object.entries(selector)) {
      // (an undefined value matches a pod without the label: it narrows nothing)
      if (v === undefined) continue;
      const list = this.byLabel.get(key(namespace ?? '', k, v)) ?? [];
      if (best === undefined || list.length < best.length) best = list;
      if (best.length === 0) break;
    }
    return best ?? this.workloads;
  }

  /** The workloads whose namespace, kind and name may be these, in the order of the set (the caller applies its exact rule). */
  public candidatesNamed(namespace: unknown, kind: unknown, name: unknown): readonly IndexedWorkload[] {
    return this.byName.get(key(namespace ?? '', kind, name)) ?? [];
  }
}

/**
 * Objects (Services) indexed by namespace and one entry of their selector (the first with a
 * value): the ones whose selector may match a pod's labels are found from the labels' entries, in
 * the order given. An object whose selector has no entry with a value is a candidate for every
 * pod; one without a selector object, for none.
 */
export class SelectorIndex<T> {
  private readonly byEntry = new Map<string, Array<{ position: number; item: T }>>();
  private readonly always: Array<{ position: number; item: T }> = [];

  constructor(items: readonly T[], selectorOf: (item: T) => unknown, namespaceOfItem: (item: T) => unknown) {
    items.forEach((item, position) => {
      const selector = selectorOf(item);
      if (!selector || typeof selector !== 'object') return;
      const entry = Object.entries(selector).find(([, v]) => v !== undefined);
      if (entry) push(this.byEntry, key(namespaceOfItem(item) ?? '', entry[0], entry[1]), { position, item });
      else this.always.push({ position, item });
    });
  }

  /** The items in `namespace` that may select pods with `labels`, in the order given (the caller applies its exact rule). */
  public candidatesFor(namespace: unknown, labels: unknown): T[] {
    const found = [...this.always];
    if (labels && typeof labels === 'object') {
      for (const [k, v] of Object.entries(labels)) found.push(...(this.byEntry.get(key(namespace ?? '', k, v)) ?? []));
    }
    return found.sort((a, b) => a.position - b.position).map(x => x.item);
  }
}
