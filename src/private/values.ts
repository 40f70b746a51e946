/**
 * Value grammars, one per destination a user's string can reach: what each
 * destination carries exactly, and a refusal with the construct path, the value (escaped, so that
 * an invisible character shows) and the fix for what it cannot.
 *
 * - `checkManifestString` (src/bind/manifest-values.ts, which asks cdk8s' writer): a string that
 *   cdk8s' YAML writer puts into the manifest (a name, label, image, env value, arg, ConfigMap key
 *   or file, ...), as the API server's reader gets it.
 * - an agent's own config format: in its folder (src/agents/<agent>/config.ts), over `badCharacter`
 *   (a config file is in a ConfigMap, so also the above).
 * - `checkWellFormed` (src/bind/manifest-values.ts): a string that is percent- or JSON-encoded on its way (only a lone surrogate
 *   cannot be).
 * - `agentYaml`: the YAML configs of the agents that read YAML, written here with every string double-quoted
 *   and escaped, so it carries any string the manifest can (no refusal needed beyond that).
 * - `asciiJson`: Envoy's JSON files, every non-ASCII character escaped.
 * - env var names: `checkEnvName` in checks.ts.
 *
 * Every rule below was observed, not read: cdk8s 2.70's `Yaml.stringify` (yaml 2.x, YAML 1.1
 * schema) output read back by sigs.k8s.io/yaml 1.3 over gopkg.in/yaml.v2 2.4 (test/go-yaml-reader,
 * the reader kubectl converts a manifest with); test/values.test.ts checks each one against it.
 * @internal
 */
import { SidecarError, internalError } from './errors';
/** A value as a message shows it: JSON-style, every character outside printable ASCII as \uXXXX. */
export function showValue(v: string): string {
  let out = '"';
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    const ch = v[i];
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (c >= 0x20 && c < 0x7f) out += ch;
    else out += `\\u${c.toString(16).padStart(4, '0')}`;
  }
  return out + '"';
}

/** `U+0085` for 0x85. */
export const codePoint = (c: number) => `U+${c.toString(16).toUpperCase().padStart(4, '0')}`;

export const READER = "the API server's YAML reader (sigs.k8s.io/yaml over yaml.v2)";

/** Every character `badCharacter` refuses (and the surrogates of pairs, which it carries). */
const SUSPECT = /[\u007f-\u009f\u2028\u2029\ud800-\udfff\ufffe\uffff]/;

/**
 * The first character that cdk8s' writer and the API server's reader cannot carry, with why; or
 * undefined. Observed for every BMP code point alone in a value, a key and a multi-line value:
 * - U+0085 (NEL): written raw, read as a line break (one NEL turns into a space or a newline:
 *   `a\u0085\u0085@INCLUDE x` becomes two lines);
 * - U+2028, U+2029: written raw, make the file unreadable ("could not find expected ':'") or
 *   change the value;
 * - U+007F to U+009F (DEL and the C1 controls), U+FFFE, U+FFFF: written raw inside double
 *   quotes, refused by the reader ("control characters are not allowed");
 * - a lone surrogate: written as `\ud800`, refused by the reader ("invalid Unicode character
 *   escape code"). A pair (an astral character, e.g. an emoji) is carried.
 * C0 controls, tab and newline are carried (the writer escapes them).
 */
export function badCharacter(v: string): { at: number; why: string } | undefined {
  if (!SUSPECT.test(v)) return undefined; // the common case, without the loop
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c < 0x7f) continue;
    if (c === 0x85) return { at: i, why: `holds ${codePoint(c)} (NEL) at index ${i}, which cdk8s' YAML writer writes raw and ${READER} reads as a line break, so the value would change` };
    if (c === 0x2028 || c === 0x2029) {
      return { at: i, why: `holds ${codePoint(c)} (a Unicode line or paragraph separator) at index ${i}, which cdk8s' YAML writer writes raw and ${READER} reads as a line break (the manifest becomes unreadable or the value changes)` };
    }
    if (c <= 0x9f || c === 0xfffe || c === 0xffff) {
      return { at: i, why: `holds ${codePoint(c)} (a control character or non-character) at index ${i}, which cdk8s' YAML writer writes raw and ${READER} refuses ("control characters are not allowed")` };
    }
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = v.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) { i++; continue; }
    }
    if (c >= 0xd800 && c <= 0xdfff) {
      return { at: i, why: `holds a lone UTF-16 surrogate (${codePoint(c)}) at index ${i}, which is no character: cdk8s' YAML writer writes it as an escape that ${READER} refuses ("invalid Unicode character escape code")` };
    }
  }
  return undefined;
}

/** Why the manifest cannot carry one of the characters of `v` (U+0085, U+2028, ...), or undefined. */
export function characterProblem(v: string): string | undefined {
  return badCharacter(v)?.why;
}

// ---------------------------------------------------------------------------------------------
// Agent YAML (the agents whose config is a YAML file)

/** A double-quoted YAML scalar: printable ASCII as is, everything else escaped (YAML 1.1 and 1.2). */
export function yamlQuoted(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const ch = s[i];
    if (ch === '"' || ch === '\\') {out += `\\${ch}`;} else if (ch === '\n') {out += '\\n';} else if (ch === '\t') {out += '\\t';} else if (c >= 0x20 && c < 0x7f) {out += ch;} else if (c <= 0xff) {out += `\\x${c.toString(16).padStart(2, '0')}`;} else if (c >= 0xd800 && c <= 0xdbff && s.charCodeAt(i + 1) >= 0xdc00 && s.charCodeAt(i + 1) <= 0xdfff) {
      out += `\\U${s.codePointAt(i)!.toString(16).padStart(8, '0')}`;
      i++;
    } else if (c >= 0xd800 && c <= 0xdfff) {
      // No YAML reader takes a lone surrogate; the props checks refuse it first.
      throw new SidecarError({ problem: `a lone UTF-16 surrogate (${codePoint(c)}) in ${showValue(s)} cannot be written to an agent's YAML config`, value: s, fix: 'give a value without it' });
    } else {out += `\\u${c.toString(16).padStart(4, '0')}`;}
  }
  return out + '"';
}

type YamlValue = string | number | boolean | null | undefined | YamlValue[] | { [key: string]: YamlValue };

/** Options of `agentYaml`. */
export interface AgentYamlOptions {
  /**
   * Strings written as a literal block scalar (`|-`) instead: for an agent that interpolates
   * `${NAME}` in the text before parsing it, so a secret's quotes or backslashes inside a double-quoted
   * string would end it; a block scalar takes them as they are.
   */
  readonly literal?: (s: string) => boolean;
}

function scalar(v: YamlValue): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw internalError(`agentYaml: ${v} is not a finite number`); // the renderers write only checked numbers
    return String(v);
  }
  return yamlQuoted(v as string);
}

const nonEmpty = (v: YamlValue): v is YamlValue[] | { [key: string]: YamlValue } =>
  v !== null && typeof v === 'object' && (Array.isArray(v) ? v.length > 0 : Object.keys(v).length > 0);

const empty = (v: YamlValue) => (Array.isArray(v) ? '[]' : v !== null && typeof v === 'object' ? '{}' : scalar(v));

/** The entries of a map at `indent`; the first one after `first` (a sequence's `- `) when given. */
function emitMap(map: { [key: string]: YamlValue }, indent: string, o: AgentYamlOptions, lines: string[], first?: string): void {
  Object.keys(map).forEach((k, i) => emitValue(map[k], indent, o, lines, `${i === 0 && first !== undefined ? first : indent}${yamlQuoted(k)}: `));
}

/** A value after `prefix` (`key: `) of an entry at `indent`. */
function emitValue(v: YamlValue, indent: string, o: AgentYamlOptions, lines: string[], prefix: string): void {
  const inner = `${indent}  `;
  if (typeof v === 'string' && o.literal?.(v) && !/[\n\r]/.test(v)) {
    lines.push(`${prefix}|-`, `${inner}${v}`);
  } else if (Array.isArray(v) && v.length > 0) {
    lines.push(prefix.trimEnd());
    for (const item of v) emitItem(item, inner, o, lines);
  } else if (nonEmpty(v)) {
    lines.push(prefix.trimEnd());
    emitMap(v as { [key: string]: YamlValue }, inner, o, lines);
  } else {
    lines.push(`${prefix}${empty(v)}`);
  }
}

/** A sequence entry at `indent`. */
function emitItem(v: YamlValue, indent: string, o: AgentYamlOptions, lines: string[]): void {
  if (nonEmpty(v) && !Array.isArray(v)) emitMap(v, `${indent}  `, o, lines, `${indent}- `);
  else emitValue(v, indent, o, lines, `${indent}- `);
}

/**
 * An agent's YAML config from plain JSON data: block style, every key and string double-quoted
 * with escapes (so that `0o17`, `on`, `~` or `2001-12-14` stay strings for a YAML 1.1 and a 1.2
 * reader, and the text is printable ASCII, which the manifest carries exactly). Map keys keep
 * their order.
 */
export function agentYaml(data: { [key: string]: any }, options: AgentYamlOptions = {}): string {
  if (Object.keys(data).length === 0) return '{}\n';
  const lines: string[] = [];
  emitMap(data, '', options, lines);
  return lines.join('\n') + '\n';
}

/** JSON text with every character outside printable ASCII escaped (`\uXXXX`), so the manifest carries it exactly. */
export function asciiJson(value: unknown, space?: number): string {
  return JSON.stringify(value, null, space).replace(/[\u007f-\uffff]/g, c => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
