/**
 * The kubelet's env expansion, written from its source (not from the library's code), as the
 * oracle of the env-order tests:
 * - kubernetes pkg/kubelet/kubelet_pods.go `makeEnvironmentVariables`: the container's `env` is
 *   walked in order; each value is expanded with a mapping of the vars defined so far (then the
 *   service env), and the result is defined under its name for the entries after it. A var from
 *   `valueFrom` (a Secret key) is defined with the Secret's value, which is not expanded.
 * - kubernetes third_party/forked/golang/expansion/expand.go `Expand`: `$$` is one `$`; `$(NAME)`
 *   is replaced by NAME's value when the mapping has it, and kept as written when not; a `$(`
 *   without `)` and a `$` before any other character are kept.
 */

/** One value expanded against `defined` (the vars before it). */
export function expand(input: string, defined: ReadonlyMap<string, string>): string {
  let out = '';
  let i = 0;
  while (i < input.length) {
    const c = input[i];
    if (c !== '$' || i + 1 >= input.length) {
      out += c;
      i++;
      continue;
    }
    const next = input[i + 1];
    if (next === '$') {
      out += '$';
      i += 2;
    } else if (next === '(') {
      const close = input.indexOf(')', i + 2);
      if (close < 0) {
        out += '$(';
        i += 2;
      } else {
        const name = input.slice(i + 2, close);
        out += defined.has(name) ? defined.get(name)! : `$(${name})`;
        i = close + 1;
      }
    } else {
      out += `$${next}`;
      i += 2;
    }
  }
  return out;
}

/**
 * A container's env as the process sees it: `secrets` gives the value of each
 * `valueFrom.secretKeyRef` (by `<secret>/<key>`).
 */
export function containerEnvironment(env: any[], secrets: Record<string, string> = {}): Map<string, string> {
  const defined = new Map<string, string>();
  for (const e of env ?? []) {
    if (e.valueFrom?.secretKeyRef) {
      const ref = e.valueFrom.secretKeyRef;
      defined.set(e.name, secrets[`${ref.name}/${ref.key}`] ?? '');
    } else {
      defined.set(e.name, expand(e.value ?? '', defined));
    }
  }
  return defined;
}
