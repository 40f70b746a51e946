/**
 * Bounded memos of pure functions, for construction: a platform app builds hundreds of sidecars
 * whose configs are the same text, or the same text but for the workload's name. Each memo maps
 * a key that holds every input of the function to its result; results are strings or frozen
 * objects, so a caller can never change what another one gets. Cleared when full (no eviction
 * order to get wrong: a miss only costs the computation again).
 * @internal
 */
export class Memo<V> {
  private readonly entries = new Map<string, V>();

  constructor(private readonly maxEntries = 256) {}

  /** The value for `key`, computed by `compute` the first time. */
  public get(key: string, compute: () => V): V {
    let value = this.entries.get(key);
    if (value === undefined) {
      value = compute();
      if (this.entries.size >= this.maxEntries) this.entries.clear();
      this.entries.set(key, value);
    }
    return value;
  }
}

/**
 * A `Memo` keyed by a few primitive values (numbers, strings, booleans, undefined) instead of one
 * key text: nested Maps, so that a look-up builds no string and hashes only its parts (a number
 * or a literal's string hashes at no cost). Values compare as in a Map (SameValueZero: `1` and
 * `'1'` are different keys).
 */
export class KeyMemo<V> {
  private root = new Map<unknown, any>();
  private size = 0;

  constructor(private readonly maxEntries = 1024) {}

  /** The value for `keys`, computed by `compute` the first time. Give the same number of keys at every call. */
  public get(keys: readonly unknown[], compute: () => V): V {
    let map = this.root;
    const last = keys.length - 1;
    for (let i = 0; i < last; i++) {
      let next = map.get(keys[i]);
      if (next === undefined) {
        next = new Map();
        map.set(keys[i], next);
      }
      map = next;
    }
    let value = map.get(keys[last]) as V | undefined;
    if (value === undefined) {
      value = compute();
      if (this.size >= this.maxEntries) {
        this.root = new Map();
        this.size = 0;
        return value;
      }
      map.set(keys[last], value);
      this.size++;
    }
    return value;
  }
}

/** Freezes plain JSON in depth, so that an object's identity stands for its content. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    // (no array of the values per object: a spec has a hundred of them)
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) deepFreeze(value[i]);
    } else {
      for (const k in value) if (Object.prototype.hasOwnProperty.call(value, k)) deepFreeze((value as any)[k]);
    }
    Object.freeze(value);
  }
  return value;
}

const sharedParts = new Memo<unknown>(1024);

/**
 * `value` (plain JSON data: strings, numbers, booleans, arrays and objects, no `undefined`),
 * frozen and shared with every other caller that gives the same content (the key is its JSON):
 * for the parts of an agent that are the same in most workloads (ports, args, volume sources,
 * env entries), which `deepFreeze` and `checkManifestData` then skip (less work per workload).
 */
export function shared<T>(value: T): T {
  return sharedParts.get(JSON.stringify(value), () => deepFreeze(value)) as T;
}

/**
 * A text cut where per-call values stand: `texts[0] + values[0] + texts[1] + ... + texts[n]`,
 * the texts shared (frozen) by every call with the same options (e.g. a config text but for the
 * workload's name), so that what is made of the texts alone can be kept with them.
 */
export interface CutText { readonly texts: readonly string[]; readonly values: readonly string[] }

/** A cut text joined (a string concatenation: no copy of the texts until the result is read). */
export function joinCut(cut: CutText): string {
  const { texts, values } = cut;
  let text = texts[0];
  for (let i = 0; i < values.length; i++) text += values[i] + texts[i + 1];
  return text;
}
