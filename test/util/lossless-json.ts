/**
 * JSON.parse that keeps integers beyond 2^53 exact (as BigInt) and -0: how the tests read the Go
 * reader's JSON (test/go-yaml-reader) to compare it with the command's reader, whose readings keep
 * int64 exact.
 */
export function parseJsonLossless(text: string): unknown {
  let i = 0;
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i])) i++;
  };
  const value = (): unknown => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const out: Record<string, unknown> = {};
      ws();
      if (text[i] === '}') {
        i++;
        return out;
      }
      for (;;) {
        ws();
        const k = value() as string;
        ws();
        if (text[i++] !== ':') throw new Error(`bad JSON at ${i}`);
        const v = value();
        Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i++] !== '}') throw new Error(`bad JSON at ${i}`);
        return out;
      }
    }
    if (c === '[') {
      i++;
      const out: unknown[] = [];
      ws();
      if (text[i] === ']') {
        i++;
        return out;
      }
      for (;;) {
        out.push(value());
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i++] !== ']') throw new Error(`bad JSON at ${i}`);
        return out;
      }
    }
    if (c === '"') {
      const start = i;
      i++;
      while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
      i++;
      return JSON.parse(text.slice(start, i));
    }
    const m = /^-?\d+(\.\d+)?([eE][-+]?\d+)?|^true|^false|^null/.exec(text.slice(i, i + 400));
    if (!m) throw new Error(`bad JSON at ${i}`);
    i += m[0].length;
    const t = m[0];
    if (t === 'true') return true;
    if (t === 'false') return false;
    if (t === 'null') return null;
    if (t === '-0') return -0;
    if (/^-?\d+$/.test(t)) {
      const b = BigInt(t);
      return b >= -(2n ** 53n) && b <= 2n ** 53n ? Number(b) : b;
    }
    return Number(t);
  };
  const v = value();
  ws();
  if (i !== text.length) throw new Error(`trailing JSON at ${i}`);
  return v;
}
