/**
 * Stable orders that depend on nothing but the strings: by Unicode code point, never by a locale
 * (`localeCompare` and `Intl.Collator` follow the machine's LANG and ICU data, so a synth on a
 * Danish machine would order `aa-proxy` after `z-proxy`). `Array.prototype.sort()` without a
 * comparator orders by UTF-16 code unit, which differs from code point order for characters
 * above U+FFFF; this is the one comparator the library sorts strings with.
 * @internal
 */

/** Negative, 0 or positive as `a` comes before, with or after `b` in code point order. */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const ua = a.charCodeAt(i);
    const ub = b.charCodeAt(i);
    if (ua === ub) continue;
    // (the common case, without a code point read per character: no surrogate at the first code
    // unit that differs, so both units are the code points there, the units before being equal)
    if ((ua < 0xd800 || ua > 0xdfff) && (ub < 0xd800 || ub > 0xdfff)) return ua - ub;
    return compareBySurrogates(a, b);
  }
  return a.length - b.length;
}

/** `compareCodePoints` by code points from the start: for strings that differ at a surrogate. */
function compareBySurrogates(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const ca = a.codePointAt(i)!;
    const cb = b.codePointAt(i)!;
    if (ca !== cb) return ca - cb;
    if (ca > 0xffff) i++;
  }
  return a.length - b.length;
}

/** The object's own enumerable string keys, in code point order. */
export function sortedKeys(o: object): string[] {
  return inCodePointOrder(Object.keys(o));
}

/** `strings` sorted in place in code point order, and returned. */
export function inCodePointOrder(strings: string[]): string[] {
  // (most key lists come in order already, cdk8s' and the library's: one look at each pair, no sort)
  const n = strings.length;
  let i = 1;
  while (i < n && compareCodePoints(strings[i - 1], strings[i]) <= 0) i++;
  if (i === n) return strings;
  // a few keys out of place (those an object got after the ordered ones): moved back one by one,
  // without the sort's copy of the list; the order is the sort's (a stable sort, the same comparator)
  if (n > 64) return strings.sort(compareCodePoints);
  for (; i < n; i++) {
    const s = strings[i];
    let j = i - 1;
    while (j >= 0 && compareCodePoints(strings[j], s) > 0) {
      strings[j + 1] = strings[j];
      j--;
    }
    strings[j + 1] = s;
  }
  return strings;
}

/**
 * Sets `o[key] = value` as an own data property, also for the key `__proto__` (a plain
 * assignment of that key would set the object's prototype and lose the entry).
 */
export function setOwn(o: Record<string, unknown>, key: string, value: unknown): void {
  // (an assignment for every other key: a new own data property, as defineProperty makes, at a
  // fraction of its cost; the keys of Object.prototype but `__proto__` are writable data properties)
  if (key === '__proto__') Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
  else o[key] = value;
}

/** Whether `key` is an own property of `o` (not one of Object.prototype's, like 'constructor'). */
export function hasOwn(o: object | undefined, key: string): boolean {
  return o !== undefined && o !== null && Object.prototype.hasOwnProperty.call(o, key);
}
