/**
 * Writes documents so that the API server reads each one equal to the value given:
 * cdk8s' own `Yaml.stringify` first (the bytes a cdk8s app gives), then the document is read back
 * with the command's reader (src/cli/reader.ts, the API server's reading) and, where the reading
 * differs (`0o17` left plain, which yaml.v2 reads as 15; `-0`; a string YAML 1.1 takes for
 * something else), written again by `safeYaml`, which quotes every string that is not plainly a
 * string for every reader and escapes every character libyaml would not take raw.
 */
import { Yaml } from 'cdk8s';
import { CommandError } from './errors';
import { YamlValue, canonical, readYaml, resolvePlain } from './reader';

/** The documents as a multi-document YAML stream, each read by the API server equal to its value. */
export function writeDocuments(docs: readonly YamlValue[]): string {
  return docs.map(writeDocument).join('---\n');
}

/** One document (cdk8s' bytes where they read back equal, else `safeYaml`'s). */
export function writeDocument(value: YamlValue): string {
  const want = canonical(value);
  const reads = (text: string) => {
    try {
      const docs = readYaml(text, 'output').map(d => d.value);
      return docs.length === 1 && canonical(docs[0]) === want;
    } catch {
      return false;
    }
  };
  const cdk8s = Yaml.stringify(value);
  if (reads(cdk8s)) return cdk8s;
  const safe = safeYaml(value);
  if (reads(safe)) return safe;
  throw new CommandError('cannot write an object so that the API server reads it as it was read (a bug: please report it with the input)');
}

/** A string that every YAML reader (1.1 and 1.2, yaml.v2 and JavaScript) reads as this same plain string. */
function plainSafe(s: string): boolean {
  return /^[A-Za-z_/][A-Za-z0-9_./@+-]*(?: [A-Za-z0-9_./@+-]+)*$/.test(s) && resolvePlain(s).tag === 'str' &&
    !/^(?:y|n|yes|no|on|off|true|false|null)$/i.test(s);
}

/** libyaml's printable set, less the line breaks it knows (NEL, LS, PS) and the BOM. */
function rawOk(c: number): boolean {
  return c === 0x09 || (c >= 0x20 && c <= 0x7e) || (c >= 0xa0 && c <= 0xd7ff && c !== 0x2028 && c !== 0x2029) ||
    (c >= 0xe000 && c <= 0xfffd && c !== 0xfeff) || c >= 0x10000;
}

/** A double-quoted YAML string: JSON's escapes, and \uXXXX for whatever libyaml does not take raw. */
function quoted(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (rawOk(c)) out += ch;
    else if (c <= 0xffff) out += `\\u${c.toString(16).padStart(4, '0')}`;
    else out += `\\U${c.toString(16).padStart(8, '0')}`;
  }
  return out + '"';
}

function scalar(v: YamlValue): string | undefined {
  if (v === null) return 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') {
    if (Object.is(v, -0)) return '-0.0';
    return String(v);
  }
  if (typeof v === 'string') return plainSafe(v) ? v : quoted(v);
  if (Array.isArray(v) && v.length === 0) return '[]';
  if (!Array.isArray(v) && typeof v === 'object' && Object.keys(v).length === 0) return '{}';
  return undefined;
}

/** Block-style YAML of a value with every scalar written so that yaml.v2 reads it back unchanged. */
export function safeYaml(value: YamlValue): string {
  const lines: string[] = [];
  const emit = (v: YamlValue, indent: string, lead: string) => {
    const s = scalar(v);
    if (s !== undefined) {
      lines.push(`${lead}${s}`);
      return;
    }
    if (Array.isArray(v)) {
      if (lead !== '') lines.push(lead.trimEnd());
      for (const item of v) emit(item, indent + '  ', `${indent}- `);
      return;
    }
    const obj = v as { [k: string]: YamlValue };
    let first = true;
    for (const k of Object.keys(obj)) {
      const key = plainSafe(k) ? k : quoted(k);
      const child = obj[k];
      const cs = scalar(child);
      // the first key goes on the line of a list item's dash
      const prefix = first && lead.endsWith('- ') ? lead : indent;
      if (first && lead !== '' && !lead.endsWith('- ')) lines.push(lead.trimEnd());
      first = false;
      if (cs !== undefined) {
        lines.push(`${prefix}${key}: ${cs}`);
      } else if (Array.isArray(child)) {
        lines.push(`${prefix}${key}:`);
        for (const item of child) emit(item, indent + '    ', `${indent}  - `);
      } else {
        lines.push(`${prefix}${key}:`);
        emit(child, indent + '  ', '');
      }
    }
  };
  emit(value, '', '');
  return lines.join('\n') + '\n';
}
