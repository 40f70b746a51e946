/** Kubernetes resource quantities (k8s.io/apimachinery pkg/api/resource `Quantity`): `500m`, `64Mi`, `1e3`. */

const MEMORY_SUFFIX: Record<string, number> = {
  '': 1,
  'k': 1e3,
  'M': 1e6,
  'G': 1e9,
  'T': 1e12,
  'P': 1e15,
  'E': 1e18,
  'Ki': 2 ** 10,
  'Mi': 2 ** 20,
  'Gi': 2 ** 30,
  'Ti': 2 ** 40,
  'Pi': 2 ** 50,
  'Ei': 2 ** 60,
};

/** A Kubernetes quantity in base units (cores, bytes); undefined when it is not one. */
export function parseQuantity(q: unknown): number | undefined {
  if (typeof q === 'number') return q;
  if (typeof q !== 'string') return undefined;
  const m = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(?:(m|n|u)|([kMGTPE]i?|Ki)|[eE]([+-]?\d+))?$/.exec(q.trim());
  if (!m) return undefined;
  const n = Number(m[1]);
  if (m[2]) return n * { m: 1e-3, u: 1e-6, n: 1e-9 }[m[2] as 'm' | 'u' | 'n'];
  if (m[3]) return MEMORY_SUFFIX[m[3]] === undefined ? undefined : n * MEMORY_SUFFIX[m[3]];
  if (m[4]) return n * 10 ** Number(m[4]);
  return n;
}
