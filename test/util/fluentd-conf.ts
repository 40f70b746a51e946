/**
 * A small, strict reader of the Fluentd v1 config syntax the library emits, for tests:
 * directives (`<source>`, `<match pattern>`, nested `<buffer tag>`), `key value` parameters with
 * bare, single-quoted, double-quoted (escapes and embedded `#{...}`) and JSON values, comments.
 * Anything it does not understand is an error, so a test cannot pass on a config Fluentd would
 * read differently.
 * @see https://docs.fluentd.org/configuration/config-file
 */

export type FluentValueKind = 'bare' | 'single' | 'double' | 'json';

export interface FluentValue {
  readonly kind: FluentValueKind;
  /** The value as written (without the quotes for quoted strings, escapes not yet applied). */
  readonly raw: string;
}

export interface FluentDirective {
  readonly name: string;
  /** The argument of the opening tag (`<match app.**>` -> `app.**`), '' when none. */
  readonly arg: string;
  readonly params: Record<string, FluentValue>;
  readonly children: FluentDirective[];
  readonly line: number;
}

function fail(line: number, msg: string): never {
  throw new Error(`fluent.conf line ${line}: ${msg}`);
}

function parseValue(text: string, line: number): FluentValue {
  if (text.startsWith('"')) {
    let i = 1;
    let out = '';
    while (i < text.length && text[i] !== '"') {
      if (text[i] === '\\') { out += text[i] + text[i + 1]; i += 2; continue; }
      if (text[i] === '#' && text[i + 1] === '{') {
        // embedded Ruby: up to the matching brace
        let depth = 0;
        let j = i + 1;
        for (; j < text.length; j++) {
          if (text[j] === '{') depth++;
          if (text[j] === '}' && --depth === 0) break;
        }
        if (j >= text.length) fail(line, `unterminated embedded code in ${text}`);
        out += text.slice(i, j + 1);
        i = j + 1;
        continue;
      }
      out += text[i++];
    }
    if (text[i] !== '"') fail(line, `unterminated double-quoted string ${text}`);
    const rest = text.slice(i + 1).trim();
    if (rest !== '' && !rest.startsWith('#')) fail(line, `text after a double-quoted string: ${rest}`);
    return { kind: 'double', raw: out };
  }
  if (text.startsWith("'")) {
    let i = 1;
    let out = '';
    while (i < text.length && text[i] !== "'") {
      if (text[i] === '\\' && (text[i + 1] === "'" || text[i + 1] === '\\')) { out += text[i + 1]; i += 2; continue; }
      out += text[i++];
    }
    if (text[i] !== "'") fail(line, `unterminated single-quoted string ${text}`);
    const rest = text.slice(i + 1).trim();
    if (rest !== '' && !rest.startsWith('#')) fail(line, `text after a single-quoted string: ${rest}`);
    return { kind: 'single', raw: out };
  }
  if (text.startsWith('[') || text.startsWith('{')) {
    // Fluentd reads JSON values character by character (fluent/fluentd
    // lib/fluent/config/literal_parser.rb `scan_json`, v1.19.3): at a `#`, when the text so far
    // closes to valid JSON the rest of the line is a comment; otherwise `#{...}` is embedded Ruby,
    // evaluated even inside a JSON string. Neither may happen in what the library writes.
    for (let i = text.indexOf('#'); i >= 0; i = text.indexOf('#', i + 1)) {
      const prefix = text.slice(0, i).trimEnd().replace(/,$/, '') + (text.startsWith('[') ? ']' : '}');
      let closes = false;
      try { JSON.parse(prefix); closes = true; } catch { /* the '#' is inside a JSON string */ }
      if (closes) fail(line, `'#' starts a comment inside the JSON value ${text}`);
      if (/^#\{[^}]+\}/.test(text.slice(i))) fail(line, `Fluentd would evaluate embedded Ruby inside the JSON value ${text}`);
    }
    try {
      JSON.parse(text);
    } catch (e) {
      fail(line, `invalid JSON value ${text} (multi-line JSON is not used by the library)`);
    }
    return { kind: 'json', raw: text };
  }
  // a bare value ends at a comment
  const hash = text.search(/\s#/);
  return { kind: 'bare', raw: (hash >= 0 ? text.slice(0, hash) : text).trim() };
}

/** Parses a fluent.conf into its top-level directives. */
export function parseFluentConf(text: string): FluentDirective[] {
  const root: FluentDirective = { name: '(root)', arg: '', params: {}, children: [], line: 0 };
  const stack: FluentDirective[] = [root];
  text.split('\n').forEach((rawLine, idx) => {
    const line = idx + 1;
    const s = rawLine.trim();
    if (s === '' || s.startsWith('#')) return;
    const close = /^<\/([A-Za-z_]+)>$/.exec(s);
    if (close) {
      const top = stack.pop()!;
      if (stack.length === 0 || top.name !== close[1]) fail(line, `</${close[1]}> closes <${top.name}>`);
      return;
    }
    const open = /^<([A-Za-z_]+)(?:\s+([^>]*))?>$/.exec(s);
    if (open) {
      const d: FluentDirective = { name: open[1], arg: (open[2] ?? '').trim(), params: {}, children: [], line };
      stack[stack.length - 1].children.push(d);
      stack.push(d);
      return;
    }
    if (s.startsWith('<')) fail(line, `malformed directive ${s}`);
    const param = /^(@?[A-Za-z_][A-Za-z0-9_]*)(?:\s+(.*))?$/.exec(s);
    if (!param) fail(line, `malformed parameter ${s}`);
    const current = stack[stack.length - 1];
    if (current === root) fail(line, `parameter ${param[1]} outside a directive`);
    if (param[1] in current.params) fail(line, `duplicate parameter ${param[1]} in <${current.name}>`);
    (current.params as Record<string, FluentValue>)[param[1]] = parseValue((param[2] ?? '').trim(), line);
  });
  if (stack.length !== 1) fail(stack[stack.length - 1].line, `<${stack[stack.length - 1].name}> is never closed`);
  return root.children;
}

const ESCAPES: Record<string, string> = { '"': '"', "'": "'", 'r': '\r', 'n': '\n', 't': '\t', '\\': '\\' };

const envOf = (name: string, env: Record<string, string>) => {
  if (!(name in env)) throw new Error(`environment variable ${name} is not set`);
  return env[name];
};

/**
 * The embedded Ruby the library writes, evaluated as Ruby would: `ENV['N']`, `ENV['N'].to_json`,
 * `ENV['N'].strip.to_json` (String#strip: leading and trailing white space and NUL), and the
 * search outputs' guard `ENV['N'].match?(/%[{].*[}]/) ? raise(Fluent::ConfigError, '...') : ENV['N']`
 * (`.` matches anything but a newline; the error is thrown here as Fluentd raises it).
 */
function evalRuby(code: string, env: Record<string, string>): string {
  const plain = /^ENV\['([A-Za-z0-9_]+)'\](\.strip)?(\.to_json)?$/.exec(code);
  if (plain) {
    let value = envOf(plain[1], env);
    // eslint-disable-next-line no-control-regex
    if (plain[2]) value = value.replace(/^[\t\n\v\f\r ]+/, '').replace(/[\u0000\t\n\v\f\r ]+$/, '');
    return plain[3] ? JSON.stringify(value) : value;
  }
  const guard = /^ENV\['([A-Za-z0-9_]+)'\]\.match\?\(\/%\[\{\]\.\*\[\}\]\/\) \? raise\(Fluent::ConfigError, '([^']*)'\) : ENV\['([A-Za-z0-9_]+)'\]$/.exec(code);
  if (guard && guard[1] === guard[3]) {
    const value = envOf(guard[1], env);
    if (/%\{.*\}/.test(value)) throw new Error(`Fluent::ConfigError: ${guard[2]}`);
    return value;
  }
  throw new Error(`unexpected embedded Ruby #{${code}}`);
}

/**
 * The value Fluentd hands to the plugin. Double-quoted strings get their escapes and their
 * embedded Ruby evaluated (only the forms `evalRuby` knows).
 */
export function fluentValue(v: FluentValue, env: Record<string, string> = {}): string {
  if (v.kind !== 'double') return v.raw;
  let out = '';
  for (let i = 0; i < v.raw.length;) {
    const c = v.raw[i];
    if (c === '\\') {
      const e = ESCAPES[v.raw[i + 1]];
      if (e === undefined) throw new Error(`unexpected escape \\${v.raw[i + 1]} in "${v.raw}"`);
      out += e;
      i += 2;
    } else if (c === '#' && v.raw[i + 1] === '{') {
      // up to the matching brace (the parser kept the code whole)
      let depth = 0;
      let end = i + 1;
      for (; end < v.raw.length; end++) {
        if (v.raw[end] === '{') depth++;
        if (v.raw[end] === '}' && --depth === 0) break;
      }
      out += evalRuby(v.raw.slice(i + 2, end), env);
      i = end + 1;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

function patternRegex(p: string): string {
  let re = '';
  for (let i = 0; i < p.length;) {
    if (p.startsWith('.**', i) && i + 3 === p.length) { re += '(?:\\..*)?'; i += 3; continue; }
    if (p.startsWith('**', i)) { re += '.*'; i += 2; continue; }
    if (p[i] === '*') { re += '[^.]+'; i++; continue; }
    if (p[i] === '{') {
      const end = p.indexOf('}', i);
      re += `(?:${p.slice(i + 1, end).split(',').map(patternRegex).join('|')})`;
      i = end + 1;
      continue;
    }
    re += p[i].replace(/[.+?^$()|[\]\\]/g, '\\$&');
    i++;
  }
  return re;
}

/** Whether a `<match>`/`<filter>` pattern (one or more, space separated) matches a tag. */
export function fluentTagMatches(patterns: string, tag: string): boolean {
  return patterns.split(/\s+/).some(p => new RegExp(`^${patternRegex(p)}$`).test(tag));
}

/** The tag in_tail emits for a file: `*` in its tag is the path with `/` as `.`. */
export function inTailTag(tag: string, filePath: string): string {
  return tag.replace('*', filePath.replace(/^\//, '').replace(/\//g, '.'));
}
