/**
 * The command's one reader: files and stdin read with bounds, and YAML read as the API
 * server reads it. kubectl splits a stream into documents line by line (apimachinery's YAMLReader:
 * a line that starts with `---` ends a document) and converts each with sigs.k8s.io/yaml over
 * gopkg.in/yaml.v2; this module does the same steps:
 *
 * - bytes: UTF-8 only (UTF-16/32, invalid UTF-8, NUL and the other characters libyaml refuses are
 *   errors), a size cap per input and per document;
 * - documents: split as kubectl splits them (`--- text` is an error, as there), with its line
 *   breaks (`breaksAsKubectl`); the first one of an input that starts with `{` read with JSON's
 *   rules, as kubectl's JSON decoder reads it, every other one with libyaml's (`sniffsJson`);
 * - syntax: the `yaml` package cdk8s bundles, with every scalar kept as text (failsafe schema);
 * - values: each scalar resolved as yaml.v2 resolves it (YAML 1.1 booleans y/yes/on..., Go's
 *   integer syntax 0x/0o/0b/017, no base 60, timestamps stay strings, int64/uint64 exact as BigInt
 *   beyond 2^53, `.nan`/`.inf` refused as JSON refuses them), explicit tags as yaml.v2 takes them,
 *   `<<` merges and duplicate keys as yaml.v2 applies them (the last wins), keys converted to JSON
 *   strings as sigs.k8s.io/yaml converts them;
 * - bounds: nesting depth, expanded nodes, aliases (yaml.v2's own ratio rule) and documents.
 *
 * test/reader.test.ts proves the reading against the Go reader (test/go-yaml-reader) over a corpus.
 */
import * as fs from 'fs';
import * as path from 'path';
import { CommandError } from './errors';

/* eslint-disable @typescript-eslint/no-require-imports */

/** A value as the API server reads it: JSON, with integers beyond 2^53 exact as BigInt. */
export type YamlValue = null | boolean | number | bigint | string | YamlValue[] | { [key: string]: YamlValue };

/** The reader's bounds; each one at or under what kubectl and the API server take. */
export interface ReadLimits {
  /** Bytes of one file or of stdin. */
  readonly maxInputBytes: number;
  /** Bytes of one document (the API server takes request bodies up to 3 MiB). */
  readonly maxDocumentBytes: number;
  /** Documents in one input. */
  readonly maxDocuments: number;
  /** Nesting depth of one document (yaml.v2 stops at 10000). */
  readonly maxDepth: number;
  /** Nodes of one document once its aliases are expanded. */
  readonly maxNodes: number;
}

export const DEFAULT_LIMITS: ReadLimits = {
  maxInputBytes: 16 * 1024 * 1024,
  maxDocumentBytes: 3 * 1024 * 1024,
  maxDocuments: 10_000,
  maxDepth: 500,
  maxNodes: 1_000_000,
};

/** An input the reader refuses: names the input, the document and what to do. */
export class ReadError extends CommandError {}

const MiB = (n: number) => `${(n / 1024 / 1024).toFixed(n % (1024 * 1024) === 0 ? 0 : 1)} MiB`;

// ---------------------------------------------------------------------------------------------
// Bytes

/**
 * Reads a file, bounded: regular files only (a FIFO, a device or a socket would block or never
 * end), at most `limits.maxInputBytes`. `name` is how messages name it.
 */
export function readFileBounded(file: string, limits: ReadLimits = DEFAULT_LIMITS): Buffer {
  let fd: number;
  try {
    // O_NONBLOCK: opening a FIFO without a writer does not block; it is refused below.
    // eslint-disable-next-line no-bitwise
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  } catch (e) {
    throw new ReadError(`${file}: cannot read it: ${errnoText(e)}`);
  }
  try {
    const stat = fs.fstatSync(fd);
    if (stat.isDirectory()) throw new ReadError(`${file}: is a directory; give the directory itself as an argument to walk it`);
    if (!stat.isFile()) throw new ReadError(`${file}: not a regular file (${fileType(stat)}); give a file, or - to read stdin`);
    if (stat.size > limits.maxInputBytes) {
      throw new ReadError(`${file}: ${stat.size} bytes, over the reader's limit of ${MiB(limits.maxInputBytes)} per input`);
    }
    return readAllBounded(fd, file, limits.maxInputBytes, stat.size);
  } finally {
    fs.closeSync(fd);
  }
}

/** Reads stdin, bounded: an endless stdin (`yes |`, /dev/zero) stops at the limit with an error. */
export function readStdinBounded(limits: ReadLimits = DEFAULT_LIMITS): Buffer {
  return readAllBounded(0, 'stdin', limits.maxInputBytes);
}

/**
 * Reads `fd` to its end, at most `max` bytes. A file (`size` known) is read into one buffer of its
 * size and one byte more (to see its end, or that it grew); stdin in chunks of 64 KiB.
 */
function readAllBounded(fd: number, name: string, max: number, size?: number): Buffer {
  const chunks: Buffer[] = [];
  let total = 0;
  let chunk = Buffer.allocUnsafe(size !== undefined ? Math.min(size, max) + 1 : 64 * 1024);
  let used = 0;
  for (;;) {
    if (used === chunk.length) {
      chunks.push(chunk);
      chunk = Buffer.allocUnsafe(64 * 1024);
      used = 0;
    }
    let n: number;
    try {
      n = fs.readSync(fd, chunk, used, chunk.length - used, null);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN') {
        // a non-blocking stdin (a terminal or a pipe set so by the parent): wait a little and retry
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
        continue;
      }
      if (code === 'EOF') break;
      throw new ReadError(`${name}: cannot read it: ${errnoText(e)}`);
    }
    if (n === 0) break;
    total += n;
    if (total > max) throw new ReadError(`${name}: more than ${MiB(max)}, the reader's limit per input; split the input`);
    used += n;
  }
  chunks.push(chunk.subarray(0, used));
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total);
}

function fileType(stat: fs.Stats): string {
  if (stat.isFIFO()) return 'a FIFO';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  if (stat.isSocket()) return 'a socket';
  return 'not a file';
}

function errnoText(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  const why: Record<string, string> = {
    EACCES: 'permission denied',
    EPERM: 'permission denied',
    ENOENT: 'no such file or directory',
    EISDIR: 'is a directory',
    ELOOP: 'too many symbolic links',
    ENAMETOOLONG: 'name too long',
    EIO: 'input/output error',
  };
  return (err.code && why[err.code]) ?? String(err.message ?? e).split('\n')[0];
}

/**
 * The files below `dir` (for `expandInputs`), refusing what would lead out of it or block: a
 * symbolic link whose target is outside `dir`, an unreadable directory (a clear error, not a crash).
 */
export function walkDirectory(dir: string, skip: ReadonlySet<string>, keep: (file: string) => boolean): string[] {
  const root = realpathOrThrow(dir);
  const out: string[] = [];
  const visit = (d: string, depth: number) => {
    if (depth > 100) throw new ReadError(`${d}: directories nested more than 100 deep; give a shallower directory`);
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch (e) {
      throw new ReadError(`${d}: cannot read the directory: ${errnoText(e)}`);
    }
    for (const e of entries) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) {
        if (!skip.has(e.name)) visit(p, depth + 1);
        continue;
      }
      if (e.isSymbolicLink()) {
        if (!keep(p)) continue;
        const real = realpathOrThrow(p);
        if (real !== root && !real.startsWith(root + path.sep)) {
          throw new ReadError(`${p}: a symbolic link to ${real}, outside ${dir}; the walk reads only files inside the directory given (name the file itself to read it)`);
        }
        if (fs.statSync(real).isFile()) out.push(p);
        continue;
      }
      if (e.isFile() && keep(p)) out.push(p);
    }
  };
  visit(dir, 0);
  return out;
}

function realpathOrThrow(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch (e) {
    throw new ReadError(`${p}: cannot resolve it: ${errnoText(e)}`);
  }
}

/**
 * The text of an input: UTF-8 only. A UTF-16/UTF-32 byte order mark and invalid UTF-8 are errors
 * naming the line (`readYaml` then refuses the characters libyaml refuses, NUL included). A UTF-8
 * byte order mark at the start is kept, for `readYaml`.
 */
export function decodeInput(bytes: Buffer, name: string): string {
  const starts = (...b: number[]) => bytes.length >= b.length && b.every((x, i) => bytes[i] === x);
  if (starts(0, 0, 0xfe, 0xff) || starts(0xff, 0xfe, 0, 0)) {
    throw new ReadError(`${name}: UTF-32 (byte order mark); the command reads UTF-8 only: convert it (iconv -f UTF-32 -t UTF-8)`);
  }
  if (bytes.length >= 2 && ((bytes[0] === 0xfe && bytes[1] === 0xff) || (bytes[0] === 0xff && bytes[1] === 0xfe))) {
    throw new ReadError(`${name}: UTF-16 (byte order mark); the command reads UTF-8 only: convert it (iconv -f UTF-16 -t UTF-8)`);
  }
  // (ignoreBOM: the byte order mark stays in the text, as U+FEFF)
  const text = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true }).decode(bytes);
  // invalid UTF-8 shows as U+FFFD where the bytes were not EF BF BD
  if (text.includes('\ufffd')) {
    let line = 1;
    let byte = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 0x0a) line++;
      if (c === 0xfffd && !(bytes[byte] === 0xef && bytes[byte + 1] === 0xbf && bytes[byte + 2] === 0xbd)) {
        throw new ReadError(`${name}: line ${line}: not valid UTF-8 (byte offset ${byte}); the command reads UTF-8 only: convert the file (iconv -f LATIN1 -t UTF-8, or whatever its encoding is)`);
      }
      const width = c < 0x80 ? 1 : c < 0x800 ? 2 : c >= 0xd800 && c <= 0xdbff ? 4 : 3;
      if (width === 4) i++;
      byte += width;
    }
  }
  return text; // (a UTF-8 byte order mark is kept: `readYaml` drops it, and it tells how kubectl reads the input)
}

/**
 * The characters libyaml refuses (C0 controls but tab/LF/CR, DEL, C1 controls but NEL,
 * U+FFFE/U+FFFF) and the line breaks only libyaml knows (raw NEL, LS, PS), as errors naming the line.
 */
function checkCharacters(text: string, name: string): void {
  // eslint-disable-next-line no-control-regex
  const bad = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u2028\u2029\ufffe\uffff]/.exec(text);
  if (!bad) return;
  let line = 1;
  for (let k = text.indexOf('\n'); k >= 0 && k < bad.index; k = text.indexOf('\n', k + 1)) line++;
  const c = bad[0].charCodeAt(0);
  const hex = c.toString(16).toUpperCase().padStart(4, '0');
  if (c === 0x85 || c === 0x2028 || c === 0x2029) {
    throw new ReadError(`${name}: line ${line}: a raw U+${hex}, which the API server's reader takes for a line break (JavaScript readers do not): write it as an escape in a double-quoted string ("\\u${hex.toLowerCase()}")`);
  }
  const what = c === 0 ? 'a NUL byte (a UTF-16/32 file without a byte order mark, or a binary file)' : `the control character U+${hex}`;
  throw new ReadError(`${name}: line ${line}: ${what}; the API server's reader refuses it ("control characters are not allowed"): write it as an escape in a double-quoted string`);
}

// ---------------------------------------------------------------------------------------------
// Documents

/** One document of a stream, as kubectl splits it: its text and first line (1-based). */
export interface DocumentText { readonly text: string; readonly line: number }

/**
 * Splits a stream as apimachinery's YAMLReader does: a line that starts with `---` ends the
 * document when the rest of it is blank or a comment; any other `---...` line is an error there
 * ("invalid Yaml document separator"), and here.
 */
export function splitDocuments(text: string, name: string, limits: ReadLimits = DEFAULT_LIMITS): DocumentText[] {
  const docs: DocumentText[] = [];
  let start = 0;
  let docStart = 0;
  let docLine = 1;
  let line = 1;
  const push = (end: number) => {
    if (end > docStart) {
      if (docs.length >= limits.maxDocuments) throw new ReadError(`${name}: more than ${limits.maxDocuments} documents, the reader's limit per input; split the input`);
      const t = text.slice(docStart, end);
      if (Buffer.byteLength(t, 'utf8') > limits.maxDocumentBytes) {
        throw new ReadError(`${name}: document ${docs.length + 1} (line ${docLine}): over ${MiB(limits.maxDocumentBytes)}, the reader's limit per document (the API server takes request bodies up to 3 MiB)`);
      }
      docs.push({ text: t, line: docLine });
    }
  };
  while (start < text.length) {
    const nl = text.indexOf('\n', start);
    const end = nl < 0 ? text.length : nl + 1;
    if (text.startsWith('---', start)) {
      const rest = text.slice(start + 3, end).trim();
      if (rest !== '' && rest[0] !== '#') {
        throw new ReadError(`${name}: line ${line}: '${escapeForMessage(text.slice(start, end).trimEnd(), 60)}': kubectl reads a line that starts with --- as a document separator and refuses anything after it but a comment ("invalid Yaml document separator"); put the content on the next line`);
      }
      push(start);
      docStart = end;
      docLine = line + 1;
    }
    start = end;
    line++;
  }
  push(text.length);
  return docs;
}

// ---------------------------------------------------------------------------------------------
// Values

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

/** Go's strconv.ParseInt/ParseUint(s, base, 64) for base 0 (prefixes 0x 0o 0b 0, sign) or a fixed base; undefined on error. */
function goParseInt(s: string, base: number, unsigned: boolean): bigint | undefined {
  let i = 0;
  let neg = false;
  if (!unsigned && (s[0] === '+' || s[0] === '-')) {
    neg = s[0] === '-';
    i = 1;
  }
  let digits = s.slice(i);
  if (digits === '') return undefined;
  if (base === 0) {
    base = 10;
    if (digits[0] === '0') {
      const p = digits[1]?.toLowerCase();
      if (p === 'x') {
        base = 16; digits = digits.slice(2);
      } else if (p === 'o') {
        base = 8; digits = digits.slice(2);
      } else if (p === 'b') {
        base = 2; digits = digits.slice(2);
      } else if (digits.length > 1) {
        base = 8; digits = digits.slice(1);
      }
    }
    if (digits === '') return undefined;
  }
  const valid = base === 16 ? /^[0-9a-fA-F]+$/ : base === 8 ? /^[0-7]+$/ : base === 2 ? /^[01]+$/ : /^[0-9]+$/;
  if (!valid.test(digits)) return undefined;
  if (digits.length > 70) return undefined; // beyond 64 bits in any base
  const prefix = base === 16 ? '0x' : base === 8 ? '0o' : base === 2 ? '0b' : '';
  let v = BigInt(prefix + digits);
  if (neg) v = -v;
  if (unsigned) return v <= UINT64_MAX ? v : undefined;
  return v >= INT64_MIN && v <= INT64_MAX ? v : undefined;
}

const YAML_STYLE_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;

type Resolved =
  | { tag: 'str'; value: string }
  | { tag: 'bool'; value: boolean }
  | { tag: 'null'; value: null }
  | { tag: 'int'; value: bigint }
  | { tag: 'float'; value: number }
  | { tag: 'merge' };

const RESOLVE_MAP = new Map<string, Resolved>();
for (const s of ['y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON']) RESOLVE_MAP.set(s, { tag: 'bool', value: true });
for (const s of ['n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF']) RESOLVE_MAP.set(s, { tag: 'bool', value: false });
for (const s of ['', '~', 'null', 'Null', 'NULL']) RESOLVE_MAP.set(s, { tag: 'null', value: null });
for (const s of ['.nan', '.NaN', '.NAN']) RESOLVE_MAP.set(s, { tag: 'float', value: NaN });
for (const s of ['.inf', '.Inf', '.INF', '+.inf', '+.Inf', '+.INF']) RESOLVE_MAP.set(s, { tag: 'float', value: Infinity });
for (const s of ['-.inf', '-.Inf', '-.INF']) RESOLVE_MAP.set(s, { tag: 'float', value: -Infinity });

/** The first character's hint, as yaml.v2's resolveTable. */
function hintOf(s: string): string | undefined {
  if (s === '') return 'N';
  const c = s[0];
  if (c === '+' || c === '-') return 'S';
  if (c >= '0' && c <= '9') return 'D';
  if ('yYnNtTfFoO~'.includes(c)) return 'M';
  if (c === '.') return '.';
  return undefined;
}

/** A plain scalar (or an explicitly tagged one's text) as yaml.v2's `resolve("", s)` reads it. */
export function resolvePlain(s: string): Resolved {
  const hint = hintOf(s);
  if (hint === undefined) return { tag: 'str', value: s };
  const mapped = RESOLVE_MAP.get(s);
  if (mapped) return mapped;
  if (hint === '.') {
    // Go's ParseFloat of the text as is (no underscores without a base prefix)
    // Go's ParseFloat takes underscores between digits
    const t = /(^|[^0-9])_|_($|[^0-9])/.test(s) ? s : s.split('_').join('');
    if (/^\.[0-9]+([eE][-+]?[0-9]+)?$/.test(t)) {
      const f = Number(t);
      if (Number.isFinite(f)) return { tag: 'float', value: f };
    }
    return { tag: 'str', value: s };
  }
  if (hint === 'D' || hint === 'S') {
    const plain = s.split('_').join('');
    const i = goParseInt(plain, 0, false) ?? goParseInt(plain, 0, true);
    if (i !== undefined) return { tag: 'int', value: i };
    if (YAML_STYLE_FLOAT.test(plain)) {
      const f = Number(plain);
      if (Number.isFinite(f)) return { tag: 'float', value: f };
    }
    if (plain.startsWith('0b')) {
      const b = goParseInt(plain.slice(2), 2, false) ?? goParseInt(plain.slice(2), 2, true);
      if (b !== undefined) return { tag: 'int', value: b };
    } else if (plain.startsWith('-0b')) {
      const b = goParseInt('-' + plain.slice(3), 2, false);
      if (b !== undefined) return { tag: 'int', value: b };
    }
  }
  return { tag: 'str', value: s };
}

const TAG_PREFIX = 'tag:yaml.org,2002:';
const RESOLVABLE = new Set(['str', 'bool', 'int', 'float', 'null', 'timestamp']);

/** A problem of one document, thrown inside the walk and named with the document by the caller. */
class DocProblem extends Error {
  constructor(message: string, readonly line?: number) { super(message); }
}

/** `value` for JSON: an int64 within 2^53 as a number, beyond as BigInt. */
function intValue(v: bigint): number | bigint {
  return v >= -(2n ** 53n) && v <= 2n ** 53n ? Number(v) : v;
}

// ---------------------------------------------------------------------------------------------
// The walk over the `yaml` package's document

let yamlModule: any;
/** The `yaml` package that cdk8s bundles (the library has no YAML dependency of its own). */
export function yamlPackage(): any {
  if (!yamlModule) yamlModule = require(require.resolve('yaml', { paths: [path.dirname(require.resolve('cdk8s'))] }));
  return yamlModule;
}

interface Walk {
  readonly limits: ReadLimits;
  readonly lineOf: (offset: number) => number;
  decodeCount: number;
  aliasCount: number;
  aliasDepth: number;
  readonly anchors: Map<any, any>;
  readonly active: Set<any>;
}

/** yaml.v2's allowedAliasRatio (decode.go). */
function allowedAliasRatio(decodeCount: number): number {
  if (decodeCount <= 400_000) return 0.99;
  if (decodeCount >= 4_000_000) return 0.10;
  return 0.99 - 0.89 * ((decodeCount - 400_000) / 3_600_000);
}

function count(w: Walk, node: any): void {
  w.decodeCount++;
  if (w.aliasDepth > 0) w.aliasCount++;
  if (w.aliasCount > 100 && w.decodeCount > 1000 && w.aliasCount / w.decodeCount > allowedAliasRatio(w.decodeCount)) {
    throw new DocProblem('excessive aliasing (an alias bomb?): the API server\'s reader refuses it too ("document contains excessive aliasing")', lineAt(w, node));
  }
  if (w.decodeCount > w.limits.maxNodes) {
    throw new DocProblem(`more than ${w.limits.maxNodes} nodes once its aliases are expanded, the reader's limit per document`, lineAt(w, node));
  }
}

function lineAt(w: Walk, node: any): number | undefined {
  const off = node?.range?.[0];
  return typeof off === 'number' ? w.lineOf(off) : undefined;
}

/** Records, in document order, which anchor each alias refers to (the latest one before it, as libyaml does). */
function bindAliases(Y: any, node: any, w: Walk, seen: Map<string, any>, depth: number): void {
  if (!node) return;
  if (depth > w.limits.maxDepth) throw new DocProblem(tooDeep(w.limits.maxDepth), lineAt(w, node));
  if (Y.isAlias(node)) {
    const target = seen.get(node.source);
    if (!target) throw new DocProblem(`unknown anchor '${escapeForMessage(node.source, 40)}' referenced`, lineAt(w, node));
    w.anchors.set(node, target);
    return;
  }
  if (node.anchor) seen.set(node.anchor, node);
  if (Y.isMap(node)) {
    for (const pair of node.items) {
      bindAliases(Y, pair.key, w, seen, depth + 1);
      bindAliases(Y, pair.value, w, seen, depth + 1);
    }
  } else if (Y.isSeq(node)) {
    for (const item of node.items) bindAliases(Y, item, w, seen, depth + 1);
  }
}

/** A scalar node's value, as yaml.v2's decoder gives it into interface{}. */
function scalarValue(node: any, w: Walk): Resolved {
  const raw = node.type === 'QUOTE_DOUBLE' ? String(node.srcToken?.source ?? '') : '';
  if (raw) checkEscapes(raw, w, node);
  // (an escaped line break: the `yaml` package folds the empty lines after it, libyaml keeps them)
  const text: string = /\\\n/.test(raw) ? doubleQuotedAsLibyaml(raw) : typeof node.value === 'string' ? node.value : String(node.value ?? '');
  const tag: string | undefined = node.tag;
  if (tag === undefined) {
    return node.type === 'PLAIN' ? resolvePlain(text) : { tag: 'str', value: text };
  }
  const short = tag.startsWith(TAG_PREFIX) ? tag.slice(TAG_PREFIX.length) : undefined;
  if (short === 'binary') {
    const clean = text.replace(/[\r\n]/g, '');
    if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(clean)) {
      throw new DocProblem('!!binary value contains invalid base64 data', lineAt(w, node));
    }
    return { tag: 'str', value: goString(Buffer.from(clean, 'base64')) };
  }
  if (short === 'merge' && text === '<<') return { tag: 'merge' };
  if (short === undefined || !RESOLVABLE.has(short)) return { tag: 'str', value: text };
  if (short === 'str') return { tag: 'str', value: text };
  if (short === 'timestamp') {
    throw new DocProblem(`an explicit !!timestamp tag ('${escapeForMessage(text, 40)}'): not supported; drop the tag (the API server reads the text as a string)`, lineAt(w, node));
  }
  const r = resolvePlain(text);
  if (r.tag === short) return r;
  if (short === 'float' && r.tag === 'int') return { tag: 'float', value: Number(r.value) };
  throw new DocProblem(`cannot decode !!${r.tag} \`${escapeForMessage(text, 40)}\` as a !!${short} (the API server's reader refuses it too)`, lineAt(w, node));
}

/** libyaml's one-character escapes: the character after the backslash, and what it stands for. */
const ESCAPES = new Map<string, string>([
  ['0', '\0'], ['a', '\x07'], ['b', '\b'], ['t', '\t'], ['\t', '\t'], ['n', '\n'], ['v', '\v'], ['f', '\f'], ['r', '\r'], ['e', '\x1b'],
  [' ', ' '], ['"', '"'], ['\'', '\''], ['\\', '\\'], ['N', '\u0085'], ['_', '\u00a0'], ['L', '\u2028'], ['P', '\u2029'],
]);

/**
 * A double-quoted scalar's value as libyaml reads it (yaml.v2 scannerc.go
 * yaml_parser_scan_flow_scalar, ported): `raw` is its source with the quotes, its escapes checked
 * (`checkEscapes`) and its line breaks LF (`breaksAsKubectl`). An escaped line break drops the
 * break and the next line's leading blanks and keeps each empty line after it as "\n" (`"x\` LF
 * LF `y"` is "x\ny"; the `yaml` package gives "x y"); other breaks fold as YAML's.
 */
function doubleQuotedAsLibyaml(raw: string): string {
  const end = raw.length - 1;
  let s = '';
  let i = 1;
  for (;;) {
    let leadingBlanks = false;
    while (i < end && raw[i] !== ' ' && raw[i] !== '\t' && raw[i] !== '\n') {
      if (raw[i] !== '\\') {
        s += raw[i++];
        continue;
      }
      const e = raw[i + 1];
      if (e === '\n') {
        i += 2;
        leadingBlanks = true;
        break;
      }
      if (e === 'x' || e === 'u' || e === 'U') {
        const n = e === 'x' ? 2 : e === 'u' ? 4 : 8;
        s += String.fromCodePoint(parseInt(raw.slice(i + 2, i + 2 + n), 16));
        i += 2 + n;
      } else {
        s += ESCAPES.get(e) ?? '';
        i += 2;
      }
    }
    if (i >= end) return s;
    let whitespaces = '';
    let leadingBreak = false;
    let trailingBreaks = '';
    for (; i < end && (raw[i] === ' ' || raw[i] === '\t' || raw[i] === '\n'); i++) {
      if (raw[i] !== '\n') {
        if (!leadingBlanks) whitespaces += raw[i];
      } else if (!leadingBlanks) {
        whitespaces = '';
        leadingBreak = true;
        leadingBlanks = true;
      } else {
        trailingBreaks += '\n';
      }
    }
    if (!leadingBlanks) s += whitespaces;
    else if (leadingBreak) s += trailingBreaks === '' ? ' ' : trailingBreaks;
    else s += trailingBreaks;
  }
}

/** libyaml's escapes in a double-quoted scalar (no `\\/`; no surrogates in `\\u`/`\\U`). */
function checkEscapes(raw: string, w: Walk, node: any): void {
  for (let i = raw.indexOf('\\'); i >= 0 && i < raw.length; i = raw.indexOf('\\', i)) {
    const c = raw[i + 1];
    if (c === undefined) return;
    if (c === 'x' || c === 'u' || c === 'U') {
      const n = c === 'x' ? 2 : c === 'u' ? 4 : 8;
      const hex = raw.slice(i + 2, i + 2 + n);
      if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== n) throw new DocProblem('did not find expected hexdecimal number in an escape', lineAt(w, node));
      const v = parseInt(hex, 16);
      if ((v >= 0xd800 && v <= 0xdfff) || v > 0x10ffff) throw new DocProblem(`found invalid Unicode character escape code (\\${c}${hex}: the API server's reader refuses surrogates and code points past U+10FFFF)`, lineAt(w, node));
      i += 2 + n;
      continue;
    }
    if (!'0abt\tnvfre "\'\\N_LP\r\n'.includes(c)) {
      throw new DocProblem(`found unknown escape character (\\${escapeForMessage(c, 4)}): the API server's reader refuses it`, lineAt(w, node));
    }
    i += 2;
  }
}

/* eslint-disable no-bitwise */
/** Bytes as Go's json.Marshal writes a string of them: each byte of an invalid UTF-8 sequence becomes U+FFFD. */
function goString(bytes: Buffer): string {
  let out = '';
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i];
    let n = 0;
    let min = 0;
    if (b < 0x80) {
      out += String.fromCharCode(b); i++; continue;
    } else if (b >= 0xc2 && b <= 0xdf) {
      n = 1; min = 0x80;
    } else if (b >= 0xe0 && b <= 0xef) {
      n = 2; min = 0x800;
    } else if (b >= 0xf0 && b <= 0xf4) {
      n = 3; min = 0x10000;
    } else {
      out += '\ufffd'; i++; continue;
    }
    let cp = b & (n === 1 ? 0x1f : n === 2 ? 0x0f : 0x07);
    let ok = i + n < bytes.length;
    for (let k = 1; ok && k <= n; k++) {
      const c = bytes[i + k];
      if (c === undefined || (c & 0xc0) !== 0x80) ok = false;
      else cp = (cp << 6) | (c & 0x3f);
    }
    if (!ok || cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
      out += '\ufffd'; i++; continue;
    }
    out += String.fromCodePoint(cp);
    i += n + 1;
  }
  return out;
}

/* eslint-enable no-bitwise */

/** Go's strconv.FormatFloat(f, 'g', -1, 32), as sigs.k8s.io/yaml names a float key. */
function goFloatKey(f: number): string {
  if (Number.isNaN(f)) return '.nan';
  const f32 = Math.fround(f);
  if (f32 === Infinity) return '.inf';
  if (f32 === -Infinity) return '-.inf';
  if (f32 === 0) return Object.is(f32, -0) ? '-0' : '0';
  let digits = '';
  let exp = 0;
  for (let p = 1; p <= 9; p++) {
    const s = Math.abs(f32).toExponential(p - 1);
    if (Math.fround(Number(s)) === Math.abs(f32)) {
      const [m, e] = s.split('e');
      digits = m.replace('.', '');
      exp = Number(e);
      break;
    }
  }
  digits = digits.replace(/0+$/, '') || '0';
  const sign = f32 < 0 ? '-' : '';
  if (exp < -4 || exp >= 6) {
    const e = Math.abs(exp) < 10 ? `0${Math.abs(exp)}` : `${Math.abs(exp)}`;
    return `${sign}${digits[0]}${digits.length > 1 ? '.' + digits.slice(1) : ''}e${exp < 0 ? '-' : '+'}${e}`;
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  if (digits.length <= exp + 1) return `${sign}${digits}${'0'.repeat(exp + 1 - digits.length)}`;
  return `${sign}${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
}

/** A map being built: its JSON keys, and the Go key each came from (two Go keys on one JSON key are refused). */
interface MapBuild { readonly obj: { [k: string]: YamlValue }; readonly from: Map<string, string> }

function setKey(m: MapBuild, key: string, goKey: string, value: YamlValue, w: Walk, node: any): void {
  const earlier = m.from.get(key);
  if (earlier !== undefined && earlier !== goKey) {
    throw new DocProblem(`the keys ${earlier} and ${goKey} are both '${escapeForMessage(key, 40)}' for the API server, which keeps either one at random; write one of them`, lineAt(w, node));
  }
  m.from.set(key, goKey);
  if (key === '__proto__') Object.defineProperty(m.obj, key, { value, enumerable: true, writable: true, configurable: true });
  else m.obj[key] = value;
}

function isMergeKey(Y: any, key: any): boolean {
  return Y.isScalar(key) && key.value === '<<' && (key.tag === undefined ? key.type === 'PLAIN' : key.tag === `${TAG_PREFIX}merge`);
}

function toValue(Y: any, node: any, w: Walk, depth: number, isKey = false): YamlValue {
  if (depth > w.limits.maxDepth) throw new DocProblem(tooDeep(w.limits.maxDepth), lineAt(w, node));
  if (node === null || node === undefined) {
    count(w, node);
    return null;
  }
  if (Y.isAlias(node)) {
    count(w, node); // yaml.v2 counts the alias node, then its target's nodes as aliased
    const target = w.anchors.get(node);
    if (w.active.has(node)) throw new DocProblem(`anchor '${escapeForMessage(node.source, 40)}' value contains itself`, lineAt(w, node));
    w.active.add(node);
    w.aliasDepth++;
    try {
      return toValue(Y, target, w, depth, isKey);
    } finally {
      w.aliasDepth--;
      w.active.delete(node);
    }
  }
  count(w, node);
  if (Y.isScalar(node)) {
    const r = scalarValue(node, w);
    if (r.tag === 'merge') return '<<';
    if (r.tag === 'int') return intValue(r.value);
    if (r.tag === 'float' && !Number.isFinite(r.value) && !isKey) {
      throw new DocProblem(`${escapeForMessage(String(node.value), 20)} is ${r.value} for the API server's reader, which JSON cannot carry ("json: unsupported value"); quote it if it is a string`, lineAt(w, node));
    }
    return r.value;
  }
  if (Y.isSeq(node)) return node.items.map((item: any) => toValue(Y, item, w, depth + 1));
  if (Y.isMap(node)) {
    const m: MapBuild = { obj: {}, from: new Map() };
    fillMap(Y, node, m, w, depth);
    return m.obj;
  }
  throw new DocProblem('a node of an unknown kind', lineAt(w, node));
}

function fillMap(Y: any, node: any, m: MapBuild, w: Walk, depth: number): void {
  for (const pair of node.items) {
    if (isMergeKey(Y, pair.key)) {
      merge(Y, pair.value, m, w, depth);
      continue;
    }
    const key = keyOf(Y, pair.key, w, depth + 1);
    const value = toValue(Y, pair.value, w, depth + 1);
    setKey(m, key.json, key.go, value, w, pair.key);
  }
}

/** yaml.v2's merge: a map, an alias of one, or a sequence of them (the earlier ones win). */
function merge(Y: any, node: any, m: MapBuild, w: Walk, depth: number): void {
  const wantMap = () => new DocProblem('map merge requires map or sequence of maps as the value', lineAt(w, node));
  const mapOf = (n: any) => (Y.isAlias(n) ? w.anchors.get(n) : n);
  const mergeOne = (n: any) => {
    if (!Y.isMap(mapOf(n))) throw wantMap();
    if (Y.isAlias(n)) {
      if (w.active.has(n)) throw new DocProblem(`anchor '${escapeForMessage(n.source, 40)}' value contains itself`, lineAt(w, n));
      count(w, n);
      w.active.add(n);
      w.aliasDepth++;
      try {
        count(w, mapOf(n));
        fillMap(Y, mapOf(n), m, w, depth + 1);
      } finally {
        w.aliasDepth--;
        w.active.delete(n);
      }
    } else {
      count(w, n);
      fillMap(Y, n, m, w, depth + 1);
    }
  };
  if (Y.isSeq(node)) {
    for (let i = node.items.length - 1; i >= 0; i--) mergeOne(node.items[i]);
  } else {
    mergeOne(node);
  }
}

/** A key as sigs.k8s.io/yaml turns it into a JSON key, and how its Go value prints (for collisions). */
function keyOf(Y: any, node: any, w: Walk, depth: number): { json: string; go: string } {
  const target = Y.isAlias(node) ? w.anchors.get(node) : node;
  if (!Y.isScalar(target)) {
    // walk it for the counts and bounds, then refuse as yaml.v2 does
    toValue(Y, node, w, depth);
    throw new DocProblem('a map or list as a map key: the API server\'s reader refuses it ("invalid map key")', lineAt(w, node));
  }
  const v = toValue(Y, node, w, depth, true);
  if (typeof v === 'string') return { json: v, go: `'${escapeForMessage(v, 40)}'` };
  if (typeof v === 'boolean') return { json: String(v), go: `${v} (a boolean)` };
  if (typeof v === 'bigint' || (typeof v === 'number' && isIntNode(target))) {
    const b = BigInt(v as any);
    if (b > INT64_MAX) throw new DocProblem(`the key ${b} is beyond int64: the API server's reader refuses it ("Unsupported map key of type: uint64")`, lineAt(w, node));
    return { json: b.toString(), go: `${b} (an integer)` };
  }
  if (typeof v === 'number') return { json: goFloatKey(v), go: `${goFloatKey(v)} (a float)` };
  throw new DocProblem('a null key (~, null or empty): the API server\'s reader refuses it ("Unsupported map key")', lineAt(w, node));
}

function isIntNode(node: any): boolean {
  const text = String(node.value);
  if (node.tag === `${TAG_PREFIX}float`) return false;
  if (node.tag === `${TAG_PREFIX}int`) return true;
  return node.tag === undefined && node.type === 'PLAIN' && resolvePlain(text).tag === 'int';
}

// ---------------------------------------------------------------------------------------------
// The reader

/** One document read: its value (null for an empty one, which kubectl skips), its number and first line. */
export interface ReadDocument {
  /** 1-based number among the documents of the input as kubectl splits it. */
  readonly index: number;
  /** The 1-based line where its content starts (where its text starts, for an empty one). */
  readonly line: number;
  readonly value: YamlValue;
}

/**
 * Reads a YAML stream as the API server reads it. Throws a ReadError naming `name`, the document,
 * its line and the rule or limit on the first document it cannot read. A document that is JSON
 * (what `kubectl get -o json` and many generators write) is read with `JSON.parse`, and one in the
 * block YAML that cdk8s and Helm write without the YAML parser (`readBlockDocument`), where the
 * reading is certain to be the same; `fast: false` sends every document through the YAML parser
 * (the tests compare the two).
 */
export function readYaml(text: string, name: string, limits: ReadLimits = DEFAULT_LIMITS, fast = true): ReadDocument[] {
  if (text.length > limits.maxInputBytes) throw new ReadError(`${name}: more than ${MiB(limits.maxInputBytes)}, the reader's limit per input`);
  // A UTF-8 byte order mark at the start is dropped, and the input read as YAML: kubectl's sniff for
  // JSON meets it before any `{` (it is no space for Go's unicode.IsSpace), and libyaml skips it.
  const bom = text.charCodeAt(0) === 0xfeff;
  if (bom) text = text.slice(1);
  checkCharacters(text, name);
  const jsonStream = !bom && sniffsJson(text, name);
  const plain: { env?: NodeJS.ProcessEnv } = {};
  return splitDocuments(text, name, limits).map((doc, i) => {
    const where = (line: number | undefined) => `${name}: document ${i + 1} (line ${line ?? doc.line})`;
    // The text the YAML parser reads: line breaks as kubectl's reading makes them (`breaksAsKubectl`);
    // in the first document of an input that starts with `{`, which kubectl reads with Go's JSON
    // decoder (`sniffsJson`), JSON's escapes that yaml.v2 has not as that decoder reads them
    // (`jsonEscapesUnfolded`), so that the JSON and the YAML path read the same.
    const broken = breaksAsKubectl(doc.text);
    const src = i === 0 && jsonStream && JSON_ONLY_ESCAPE.test(broken) && isJson(broken) ? jsonEscapesUnfolded(broken) : broken;
    // line of an offset within the document (asked once per document, and for an error)
    const lineOf = (off: number) => {
      let line = doc.line;
      for (let k = src.indexOf('\n'); k >= 0 && k < off; k = src.indexOf('\n', k + 1)) line++;
      return line;
    };
    if (/^%/m.test(src)) {
      const at = src.search(/^%/m);
      throw new ReadError(`${where(lineOf(at))}: a %YAML or %TAG directive; kubectl splits it from its document at the --- line and the API server's reader refuses what is left ("did not find expected <document start>"): drop it`);
    }
    // Whether kubectl reads this document with Go's JSON decoder (`sniffsJson`): the first of a stream
    // that starts with `{`, when it is JSON. Every other document is read by libyaml, which refuses
    // some JSON texts (`yamlOnlyProblem`).
    const jsonRules = () => i === 0 && jsonStream && isJson(src);
    const asJson = fast ? readJsonDocument(src, limits, i === 0 && jsonStream) ?? readBlockDocument(src, limits) : undefined;
    if (asJson) return { index: i + 1, line: lineOf(asJson.start), value: asJson.value };
    return parsedDocument(src, i + 1, doc.line, { limits, lineOf, jsonRules, where, env: plain });
  });
}

/**
 * One document through the YAML parser (where the JSON and block readers are not certain), read as
 * the API server reads it: one document, no directive, aliases bound and bounded, the limits kept.
 */
function parsedDocument(src: string, index: number, line: number, r: {
  limits: ReadLimits;
  lineOf: (off: number) => number;
  jsonRules: () => boolean;
  where: (line: number | undefined) => string;
  /** A plain copy of the environment, made once per input (the parser reads it per token). */
  env: { env?: NodeJS.ProcessEnv };
}): ReadDocument {
  const { limits, lineOf, jsonRules, where } = r;
  let parsed: any;
  // The `yaml` package's parser reads the environment's LOG_TOKENS for every token, a call into the
  // process's environment each time (5 million of them, about 0.9 s, over the
  // benchmark's 4000 files written as YAML): it parses with a plain copy of the environment.
  /* eslint-disable no-restricted-properties -- the environment swapped, not read */
  const env = process.env;
  process.env = r.env.env ??= { ...env };
  /* eslint-enable no-restricted-properties */
  try {
    parsed = parseDocuments(src, limits.maxDepth, lineOf, jsonRules);
  } catch (e) {
    if (e instanceof DocProblem) throw new ReadError(`${where(e.line)}: ${e.message}`);
    if (e instanceof RangeError) throw new ReadError(`${where(undefined)}: ${tooDeep(limits.maxDepth)}`);
    throw new ReadError(`${where(undefined)}: not valid YAML: ${firstLineOf((e as Error).message)}`);
  } finally {
    // eslint-disable-next-line no-restricted-properties -- the environment put back
    process.env = env;
  }
  const list: any[] = Array.isArray(parsed) ? parsed : [parsed];
  if (list.length > 1) {
    throw new ReadError(`${where(lineOf(list[1].range?.[0] ?? 0))}: a second document without a --- line (after a ... or a directive); kubectl reads one document between --- lines`);
  }
  const d = list[0];
  if (d && d.errors.length > 0) {
    const err = d.errors[0];
    const at = err.pos?.[0];
    const message = firstLineOf(err.message).replace(/ at line \d+, column \d+:?$/, '');
    // (a stack overflow inside the parser, which it keeps as an error: the depth message, as above)
    if (/Maximum call stack size exceeded/.test(message)) throw new ReadError(`${where(undefined)}: ${tooDeep(limits.maxDepth)}`);
    throw new ReadError(`${where(typeof at === 'number' ? lineOf(at) : undefined)}: not valid YAML: ${escapeForMessage(message)}`);
  }
  if (d && d.directives && (d.directives.yaml?.explicit || Object.keys(d.directives.tags ?? {}).some(h => h !== '!!' && h !== '!'))) {
    throw new ReadError(`${where(undefined)}: a %YAML or %TAG directive; kubectl splits it from its document at the --- line and the API server's reader refuses what is left: drop it`);
  }
  const w: Walk = { limits, lineOf, decodeCount: 0, aliasCount: 0, aliasDepth: 0, anchors: new Map(), active: new Set() };
  const Y = yamlPackage();
  try {
    const contents = d?.contents ?? null;
    bindAliases(Y, contents, w, new Map(), 0);
    const value = toValue(Y, contents, w, 0);
    return { index, line: contents?.range ? lineOf(contents.range[0]) : line, value };
  } catch (e) {
    if (e instanceof DocProblem) throw new ReadError(`${where(e.line)}: ${e.message}`);
    if (e instanceof RangeError) throw new ReadError(`${where(undefined)}: ${tooDeep(limits.maxDepth)}`);
    throw e;
  }
}

/** The one message of a document nested deeper than the reader's limit, wherever that is found. */
function tooDeep(maxDepth: number): string {
  return `nested more than ${maxDepth} levels deep, the reader's limit (kubectl's is 10000, yaml.v2's max_flow_level and max_indents); ` +
    'no Kubernetes object nests that deep: check that the file is the manifest meant, or flatten the value (a deep tree of data can be a JSON string)';
}

/**
 * The `yaml` package's parseAllDocuments (public-api.js, yaml 2.9), in its steps, with the
 * reader's options and a depth check between them: the parser (lexer and CST, iterative) runs
 * first, and a CST nested deeper than `maxDepth` is refused before the composer, which recurses
 * for each level and would overflow the stack at a depth that depends on what called the reader
 * (a RangeError at ~900 levels, or "not valid YAML: Maximum call stack size exceeded",
 * or at 50000 levels an abort of the process). The walk that follows (`toValue`) checks the same
 * depth with aliases expanded and says the same.
 */
function parseDocuments(src: string, maxDepth: number, lineOf: (offset: number) => number, jsonRules: () => boolean): any[] {
  const Y = yamlPackage();
  const tokens: any[] = Array.from(new Y.Parser().parse(src));
  const stack: Array<[any, number]> = [];
  let yamlOnly: DocProblem | undefined;
  for (const t of tokens) {
    if (t.type === 'document' && t.value) stack.push([t.value, 0]);
  }
  // (a document of white space and comments only has no document token)
  yamlOnly = leadingTab(src, tokens.find(t => t.type === 'document'), lineOf);
  while (stack.length > 0) {
    const [token, depth] = stack.pop()!;
    if (depth > maxDepth) throw new DocProblem(tooDeep(maxDepth), typeof token.offset === 'number' ? lineOf(token.offset) : undefined);
    if (token.type !== 'block-map' && token.type !== 'block-seq' && token.type !== 'flow-collection') continue;
    for (const item of token.items) {
      if (item.key) stack.push([item.key, depth + 1]);
      if (item.value) stack.push([item.value, depth + 1]);
      if (!yamlOnly && token.type !== 'block-seq') yamlOnly = implicitKeyProblem(src, item, token.type === 'flow-collection', lineOf);
      if (!yamlOnly && token.type !== 'flow-collection') yamlOnly = tabAfterIndicator(src, item, lineOf);
      if (!yamlOnly && token.type === 'flow-collection') yamlOnly = flowPlainProblem(src, item, lineOf);
    }
  }
  yamlOnly ??= tabInIndentation(src, tokens, lineOf);
  if (yamlOnly && !jsonRules()) throw yamlOnly;
  const composer = new Y.Composer({
    schema: 'failsafe', version: '1.1', uniqueKeys: false, merge: false, strict: false, maxAliasCount: -1, keepSourceTokens: true,
  });
  return Array.from(composer.compose(tokens));
}

/** Go's unicode.IsSpace. */
function isGoSpace(c: number): boolean {
  return c === 0x20 || (c >= 0x09 && c <= 0x0d) || c === 0x85 || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000;
}

/**
 * Whether kubectl reads the stream with Go's JSON decoder: its first non-space character (Go's
 * unicode.IsSpace) within its first 4096 bytes is `{` (k8s.io/apimachinery v0.37.2
 * pkg/util/yaml/decoder.go:279-290 NewYAMLOrJSONDecoder, :466-485 GuessJSONStream and hasPrefix;
 * kubectl's resource.StreamVisitor calls it with 4096; the same in v0.27.16 and v0.29.6,
 * :372-397). Then the first document is read as JSON: JSON's white space and its rules (a key
 * and its `:` on two lines, a tab before the `{`, keys of any length); every later one, and every
 * document of another stream, by libyaml (through sigs.k8s.io/yaml).
 *
 * A Unicode space other than tab, LF, CR and space before the `{` (U+00A0...) is refused: kubectl
 * 1.27 to 1.32 refuse the stream (the JSON decoder meets the space), 1.33 and later drop it and
 * read the stream as YAML (decoder.go:332-335, consumeWhitespace), both unlike the `yaml` package.
 */
function sniffsJson(text: string, name: string): boolean {
  let bytes = 0;
  let odd: number | undefined;
  let k = 0;
  for (; k < text.length && bytes < 4096; k++) {
    const c = text.charCodeAt(k);
    if (!isGoSpace(c)) break;
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) odd ??= c;
    bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
  }
  if (bytes >= 4096 || text[k] !== '{') return false;
  if (odd !== undefined) {
    const hex = odd.toString(16).toUpperCase().padStart(4, '0');
    throw new ReadError(`${name}: line 1: a U+${hex} (a Unicode space) before the first '{': kubectl 1.27 to 1.32 refuse the input, later releases read it as YAML without it; delete it`);
  }
  return true;
}

/** A JSON escape yaml.v2 has not: `\/`, or a `\u` of a surrogate (perhaps after an escaped backslash: `jsonEscapesUnfolded` tells). */
const JSON_ONLY_ESCAPE = /\\(\/|u[dD][89a-fA-F])/;

/**
 * A JSON text (valid JSON) with the escapes of its strings that yaml.v2 refuses written as Go's
 * encoding/json reads them, which kubectl runs on the first document of an input that starts with
 * `{`: `\/` is `/`, a surrogate pair's two `\u` escapes the one character, a lone surrogate
 * U+FFFD (encoding/json decode.go unquoteBytes: `utf16.DecodeRune`, `unicode.ReplacementChar`;
 * apimachinery v0.37.2 and v0.29.6 run by hand read `{"a":"\ud83d"}` as `{"a":"\uFFFD"}`). The
 * characters are written raw (the text stays JSON, and its lines stay where they were); every
 * other escape is left as it is.
 */
function jsonEscapesUnfolded(text: string): string {
  const surrogateAt = (k: number): number | undefined => {
    if (text[k] !== '\\' || text[k + 1] !== 'u') return undefined;
    const code = parseInt(text.slice(k + 2, k + 6), 16);
    return code >= 0xd800 && code <= 0xdfff ? code : undefined;
  };
  let out = '';
  let from = 0;
  let inString = false;
  for (let k = 0; k < text.length; k++) {
    const c = text[k];
    if (c === '"') {
      inString = !inString;
      continue;
    }
    if (!inString || c !== '\\') continue;
    if (text[k + 1] === '/') {
      out += `${text.slice(from, k)}/`;
      from = k + 2;
    } else {
      const high = surrogateAt(k);
      if (high !== undefined) {
        const low = high <= 0xdbff ? surrogateAt(k + 6) : undefined;
        const paired = low !== undefined && low >= 0xdc00;
        out += text.slice(from, k) + (paired ? String.fromCharCode(high, low) : '\ufffd');
        from = k + (paired ? 12 : 6);
        k = from - 1;
        continue;
      }
    }
    k++; // (the escaped character: an escaped quote or backslash ends nothing)
  }
  return out + text.slice(from);
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Code points of `s` (libyaml's marks count characters). */
function codePoints(s: string): number {
  let n = s.length;
  for (let k = 0; k < s.length; k++) {
    const c = s.charCodeAt(k);
    if (c >= 0xd800 && c <= 0xdbff) n--;
  }
  return n;
}

/**
 * A tab before a document's first token, on a line of its own or before it: libyaml refuses it
 * ("found character that cannot start any token": in the block context it skips no tab at the
 * start of a line, yaml.v2 scannerc.go yaml_parser_scan_to_next_token); the `yaml` package and
 * JSON take it for white space.
 */
function leadingTab(src: string, doc: any, lineOf: (offset: number) => number): DocProblem | undefined {
  const first = doc?.value ? doc.value.offset : src.length;
  for (let k = 0, lineStart = true; k < first; k++) {
    const c = src[k];
    if (c === '\n') {
      lineStart = true;
    } else if (c === '#') {
      const nl = src.indexOf('\n', k);
      if (nl < 0) break;
      k = nl - 1;
    } else if (c === '\t' && lineStart) {
      return new DocProblem('a tab before the document\'s first token: the API server\'s reader refuses it ("found character that cannot start any token"; kubectl takes it only in the first document of an input that starts with \'{\', read as JSON): use spaces', lineOf(k));
    } else if (c !== ' ') {
      lineStart = false;
    }
  }
  return undefined;
}

/**
 * A tab in a line's indentation in the block context: libyaml refuses it where a token would start
 * ("found character that cannot start any token": yaml.v2 scannerc.go
 * yaml_parser_scan_to_next_token skips tabs only in a flow collection or where no simple key may
 * start, and a simple key may start at the start of a line), below a plain scalar's indentation
 * ("found a tab character that violates indentation", yaml_parser_scan_plain_scalar; the
 * indentation is the column of the block collection around it plus 1) and in a block scalar's
 * indentation ("... where an indentation space is expected"). It takes one inside a flow
 * collection (a JSON document indented with tabs) or a quoted scalar, and in the blanks that
 * follow a plain scalar at or past its indentation (0 for a document that is one). The `yaml`
 * package took such a tab on a blank or comment line for white space (`a: 1` LF TAB LF `b: 2`).
 */
function tabInIndentation(src: string, tokens: any[], lineOf: (offset: number) => number): DocProblem | undefined {
  const lines = /\n *\t/g;
  let m = lines.exec(src);
  if (!m) return undefined;
  const taken: Array<[number, number]> = []; // flow collections and quoted scalars
  const block: Array<[number, number]> = []; // block scalars (their content's tabs: the `yaml` package checks them)
  const plain: Array<[number, number, number]> = []; // plain scalars of the block context: start, end, indentation
  const stack: any[] = [];
  // (a document that is one plain scalar has the indentation 0: any tab after it is taken)
  for (const t of tokens) if (t.type === 'document' && t.value) stack.push([t.value, -1]);
  while (stack.length > 0) {
    const [t, column] = stack.pop();
    const end = t.offset + String(t.source ?? '').length;
    if (t.type === 'flow-collection') {
      taken.push([t.offset, t.end?.length ? t.end[t.end.length - 1].offset : src.length]);
    } else if (t.type === 'single-quoted-scalar' || t.type === 'double-quoted-scalar') {
      taken.push([t.offset, end]);
    } else if (t.type === 'block-scalar') {
      block.push([t.offset, end]);
    } else if (t.type === 'scalar') {
      plain.push([t.offset, end, column + 1]);
    } else if (t.type === 'block-map' || t.type === 'block-seq') {
      for (const item of t.items) {
        if (item.key) stack.push([item.key, t.indent]);
        if (item.value) stack.push([item.value, t.indent]);
      }
    }
  }
  for (; m; m = lines.exec(src)) {
    const lineStart = m.index + 1;
    const column = m[0].length - 2; // of the tab
    const inside = ([a, b]: [number, number]) => lineStart > a && lineStart < b;
    if (taken.some(inside) || (column > 0 && block.some(inside))) continue;
    let p = lineStart - 1;
    while (p >= 0 && (src[p] === ' ' || src[p] === '\t' || src[p] === '\n')) p--;
    if (p < 0) continue; // before the first token: `leadingTab`
    const scalar = plain.find(([a, b]) => p >= a && p < b);
    if (scalar && column >= scalar[2]) continue;
    return new DocProblem('a tab in the indentation of a line: the API server\'s reader refuses it outside a flow collection or a quoted string ("found character that cannot start any token", "found a tab character that violates indentation"): indent with spaces', lineOf(lineStart + column));
  }
  return undefined;
}

/**
 * A plain scalar in a flow collection that libyaml reads otherwise than the `yaml` package (YAML
 * 1.1 as yaml.v2 scannerc.go scans it: a plain scalar there ends at `?` and at `: `, not at a `:`
 * before `,]}`, and cannot start with `?` or `:`, which are indicators there, :734-742 and the
 * plain scalar loop of yaml_parser_scan_plain_scalar):
 * - `[a?b]`, `[http://x/?a=b]`, `[:x]`: refused by kubectl ("did not find expected ',' or ']'",
 *   "did not find expected node content"), read by the `yaml` package; `[?x]`: kubectl reads
 *   [{"x": null}], the `yaml` package ["?x"];
 * - `[a:, b]`, `{x:}`: kubectl reads the string "a:" (the key "x:"), the `yaml` package a pair.
 * The reader refuses both, naming the scalar: quoting it reads the same everywhere.
 */
function flowPlainProblem(src: string, item: any, lineOf: (offset: number) => number): DocProblem | undefined {
  for (const t of [item.key, item.value]) {
    if (t?.type !== 'scalar') continue;
    const text = String(t.source ?? '');
    if (text.includes('?') || text.startsWith(':')) {
      return new DocProblem(`'${escapeForMessage(text, 40)}' unquoted in a flow collection ([...] or {...}): the API server's reader takes its '${text.startsWith(':') ? ':' : '?'}' for an indicator there and refuses it, or reads another value: quote it`, lineOf(t.offset));
    }
  }
  const colon = item.sep?.find((t: any) => t.type === 'map-value-ind');
  if (item.key?.type === 'scalar' && colon && colon.offset === item.key.offset + String(item.key.source ?? '').length && ',[]{}'.includes(src[colon.offset + 1] ?? ' ')) {
    return new DocProblem(`'${escapeForMessage(item.key.source, 40)}:' before '${src[colon.offset + 1]}' in a flow collection: for the API server's reader a ':' ends a plain scalar there only before a space (it reads '[a:, b]' as the string 'a:' and refuses 'a:{'), for the \`yaml\` package it makes a key; quote the scalar, or put a space after the ':'`, lineOf(colon.offset));
  }
  return undefined;
}

/**
 * A tab in the blanks after a block sequence's `-`, an explicit key's `?` or its `:`: libyaml
 * refuses it ("found character that cannot start any token": after those a simple key may start,
 * and yaml.v2 scannerc.go yaml_parser_scan_to_next_token skips no tab there; "Tabs are allowed ...
 * in the block context, but not at the beginning of the line or after '-', '?', or ':' (complex
 * value)"). After an implicit key's `:` a tab is white space (`a:<TAB>b` is read).
 */
function tabAfterIndicator(src: string, item: any, lineOf: (offset: number) => number): DocProblem | undefined {
  const explicit = item.start.some((t: any) => t.type === 'explicit-key-ind');
  const indicators = [...item.start, ...(explicit ? item.sep ?? [] : [])]
    .filter((t: any) => t.type === 'seq-item-ind' || t.type === 'explicit-key-ind' || t.type === 'map-value-ind');
  for (const t of indicators) {
    for (let k = t.offset + 1; src[k] === ' ' || src[k] === '\t'; k++) {
      if (src[k] === '\t') {
        return new DocProblem(`a tab after '${t.source}': the API server's reader refuses it ("found character that cannot start any token"): use a space`, lineOf(k));
      }
    }
  }
  return undefined;
}

/**
 * libyaml's rule for an implicit key (no `?`): it starts a "simple key", which goes stale, and a
 * `:` after it is an error, when the line changes or more than 1024 characters pass before the
 * `:` (yaml.v2 scannerc.go yaml_parser_stale_simple_keys: `simple_key.mark.line <
 * parser.mark.line || simple_key.mark.index+1024 < parser.mark.index`; the key's mark is its
 * anchor or tag when it has one). The `yaml` package takes both in a flow collection, and long
 * keys everywhere without its strict mode: `{"a"\n:1}`, a key of 1025 characters.
 */
function implicitKeyProblem(src: string, item: any, flow: boolean, lineOf: (offset: number) => number): DocProblem | undefined {
  const colon = item.sep?.find((t: any) => t.type === 'map-value-ind');
  if (!colon || !item.key || item.start.some((t: any) => t.type === 'explicit-key-ind')) return undefined;
  let start = item.key.offset;
  for (const t of item.start) {
    if (t.type === 'newline' && !flow) start = item.key.offset; // (in the block context a new line starts a new simple key)
    if ((t.type === 'anchor' || t.type === 'tag') && t.offset < start) start = t.offset;
  }
  const nl = src.indexOf('\n', start);
  if (nl >= 0 && nl < colon.offset) {
    return new DocProblem(`a key and its ':' on different lines: the API server's reader refuses it (${flow ? '"did not find expected \',\' or \'}\'"' : '"could not find expected \':\'"'}; kubectl takes it only in the first document of an input that starts with '{', read as JSON): put the ':' on the key's line`, lineOf(colon.offset));
  }
  if (colon.offset - start > 1024 && codePoints(src.slice(start, colon.offset)) > 1024) {
    return new DocProblem(`a key of ${codePoints(src.slice(start, colon.offset))} characters up to its ':': the API server's reader refuses an implicit key longer than 1024 (kubectl takes it only in the first document of an input that starts with '{', read as JSON): shorten it, or write it as an explicit key ('? key')`, lineOf(start));
  }
  return undefined;
}

/**
 * A document's text with its line breaks as kubectl's reading has them, for the `yaml` package,
 * which takes a CR not followed by LF for a character of the line (`{"a":\r1}` read as the string
 * "\r1", `a: 1\rb: 2` refused):
 *
 * 1. kubectl's YAMLReader reads the stream a line at a time with bufio.Reader.ReadLine, which drops
 *    the line's end, "\r\n" or "\n", and writes the line back with "\n" (k8s.io/apimachinery
 *    v0.37.2 pkg/util/yaml/decoder.go:447-461, LineReader.Read; the same function in v0.27.16 and
 *    v0.29.6, :353): one CR before each LF goes;
 * 2. libyaml, as gopkg.in/yaml.v2 v2.4.0 (and go.yaml.in/yaml/v2 v2.4.4, kubectl 1.37's) ports it,
 *    takes CR LF, a lone CR and LF each for one line break in every context (plain, quoted and
 *    block scalars, flow collections, comments, escaped line breaks: yamlprivateh.go:102-108
 *    is_break) and writes each as "\n" into a scalar (scannerc.go:538-563 read_line).
 *
 * So `x\r\r\n` is one line break for kubectl (step 1 leaves `x\r\n`), not two. A JSON document
 * reads the same: CR is JSON white space, and libyaml's line break there too. Lone CRs count as
 * lines in the reader's messages, as in libyaml's.
 */
export function breaksAsKubectl(text: string): string {
  if (!text.includes('\r')) return text;
  return text.replace(/\r\n/g, '\n').replace(/\r\n?/g, '\n');
}

/**
 * A document that is JSON, read with `JSON.parse` (the YAML parser took most of
 * `check`'s time over JSON files): JSON is YAML's flow style, and the reading is the walk's reading
 * of the same text, except in the cases below, where this gives undefined and the document goes
 * through the YAML parser (which reads it, or refuses it with its message):
 *
 * - text that is not JSON (`JSON.parse` refuses it: comments, plain scalars, YAML's own syntax),
 *   or that does not start with `{` or `[` (a top-level scalar);
 * - the escapes yaml.v2 refuses: `\/` and a `\u` of a surrogate (JSON takes both);
 * - unless it is read `asJson` (the first document of an input that starts with `{`, read by
 *   kubectl's JSON decoder: `sniffsJson`): a tab before it or at the start of a line after it, a
 *   key and its `:` on two lines or more than 1024 characters apart, which libyaml refuses
 *   (`parseDocuments` then says so);
 * - more than `maxNodes` characters: each node of the reading takes one at least, so below it the
 *   node limit holds, also for a duplicate key's value, which `JSON.parse` drops without a trace;
 * - brackets nested deeper than `maxDepth` (counted in the text, duplicate keys' values included);
 * - numbers `JSON.parse` reads otherwise: -0 (yaml.v2: the integer 0), an integral value from
 *   2^53 up (yaml.v2: int64 and uint64 exact, here BigInt), beyond the float range (yaml.v2 keeps
 *   `1e400` a string).
 *
 * Everything else is the same in both: JSON's escapes are YAML's, its strings hold no raw control
 * character or line break (`checkCharacters` has refused the others), duplicate keys keep the first
 * position and the last value, `true` / `false` / `null` and the numbers resolve alike, and every
 * key is a string. test/hostile.test.ts reads such files with both and with the API server's reader.
 * Returns the reading and the offset where it starts.
 */
export function readJsonDocument(text: string, limits: ReadLimits = DEFAULT_LIMITS, asJson = true): { value: YamlValue; start: number } | undefined {
  if (text.length > limits.maxNodes) return undefined;
  let start = 0;
  for (let c = text.charCodeAt(0); c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09; c = text.charCodeAt(++start));
  const first = text.charCodeAt(start);
  if (first !== 0x7b && first !== 0x5b) return undefined; // { or [
  let value: YamlValue;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!jsonTextAgrees(text, start, limits.maxDepth, asJson) || !jsonNumbersAgree(value)) return undefined;
  return { value, start };
}

/**
 * The text of a JSON document (valid JSON) from `start`: no `\/` or surrogate escape, brackets at
 * most `maxDepth` deep; unless it is read `asJson`, no tab before it or at the start of a line after
 * it, and no key apart from its `:`.
 */
function jsonTextAgrees(text: string, start: number, maxDepth: number, asJson: boolean): boolean {
  // read by libyaml: a tab before the first token, a key and its `:` on two lines or more than 1024
  // characters apart go to the YAML parser, which refuses them as libyaml does (`parseDocuments`)
  if (!asJson && text.lastIndexOf('\t', start) >= 0) return false;
  // (and a tab at the start of a line after the value: `tabInIndentation`)
  if (!asJson && text.indexOf('\n\t', Math.max(text.lastIndexOf('}'), text.lastIndexOf(']'))) >= 0) return false;
  let depth = 0;
  for (let k = start; k < text.length; k++) {
    const c = text.charCodeAt(k);
    if (c === 0x22) {
      // a string, to its closing quote (JSON.parse has checked it)
      const opening = k;
      for (k++; k < text.length; k++) {
        const d = text.charCodeAt(k);
        if (d === 0x22) break;
        if (d !== 0x5c) continue;
        const e = text.charCodeAt(++k);
        if (e === 0x2f) return false; // \/
        if (e === 0x75 && (text[k + 1] === 'd' || text[k + 1] === 'D') && '89abcdefABCDEF'.includes(text[k + 2])) return false; // \uD800-\uDFFF
      }
      if (!asJson) {
        let n = k + 1;
        let newline = false;
        for (let w = text.charCodeAt(n); w === 0x20 || w === 0x0a || w === 0x0d || w === 0x09; w = text.charCodeAt(++n)) {
          newline ||= w === 0x0a || w === 0x0d;
        }
        if (text.charCodeAt(n) === 0x3a && (newline || n - opening > 1024)) return false; // (UTF-16 units: at least the code points)
      }
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > maxDepth) return false;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return true;
}

/** Whether every number of a JSON reading is the number yaml.v2 reads from its text (see readJsonDocument). */
function jsonNumbersAgree(v: YamlValue): boolean {
  // (every double from 2^53 up is integral; NaN and the infinities fail the comparison)
  if (typeof v === 'number') return Math.abs(v) < 2 ** 53 && !Object.is(v, -0);
  if (v === null || typeof v !== 'object') return true;
  if (Array.isArray(v)) {
    for (const x of v) if (!jsonNumbersAgree(x)) return false;
    return true;
  }
  for (const k in v) if (!jsonNumbersAgree(v[k])) return false;
  return true;
}

// ---------------------------------------------------------------------------------------------
// The block YAML that generators write

/** Thrown inside `readBlockDocument` where its reading is not certain: the YAML parser reads the document. */
const NOT_CERTAIN: unique symbol = Symbol('not certain');

/** The first character of a plain scalar the block path takes: letters, digits and `/._~$+(` (and `-` when no blank follows). */
const PLAIN_START = new Uint8Array(128);
/** The characters of a plain key the block path takes: letters, digits and `_./-`. */
const KEY_CHAR = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const alnum = (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
  PLAIN_START[c] = alnum || '/._~$+('.includes(String.fromCharCode(c)) ? 1 : 0;
  KEY_CHAR[c] = alnum || '_./-'.includes(String.fromCharCode(c)) ? 1 : 0;
}

/** The escapes of a double-quoted scalar the block path takes, and what each stands for (libyaml's, but `\/`, `\'`, blanks and breaks). */
const BLOCK_ESCAPES = new Map<string, string>([
  ['\\', '\\'], ['"', '"'], ['n', '\n'], ['t', '\t'], ['r', '\r'], ['0', '\0'], ['a', '\x07'], ['b', '\b'], ['e', '\x1b'], ['f', '\f'], ['v', '\v'],
  ['N', '\u0085'], ['_', '\u00a0'], ['L', '\u2028'], ['P', '\u2029'],
]);

/**
 * A document of the block YAML that cdk8s (the `yaml` package with `lineWidth: 0`) and Helm write,
 * read without the YAML parser (the parser took most of `check`'s time over the YAML
 * `cdk8s synth` writes). It takes a strict subset, where its reading is the walk's (and yaml.v2's)
 * for certain, and gives undefined for anything else, which the YAML parser then reads or refuses
 * with its message:
 *
 * - structure: block mappings and sequences indented with spaces (a sequence may sit at its key's
 *   indentation), `- key: value` items, whole-line comments and blank lines; a map or a sequence
 *   at the top, at column 0;
 * - keys: plain (`[A-Za-z0-9_./-]`, starting with none of `-./`... that would read otherwise: each
 *   resolved, and taken only when it resolves to a string), or quoted on one line; at most 1000
 *   characters; no duplicate, no `__proto__`, no `<<`;
 * - values: plain scalars of printable ASCII on one line (no ` #`, no `: `, no `:` at the end, no
 *   indicator first, no trailing blank), resolved as yaml.v2 resolves them (`resolvePlain`); single-
 *   and double-quoted scalars on one line (double-quoted with the escapes above, `\x`/`\u`/`\U` but
 *   surrogates); literal block scalars (`|`, `|-`, `|+`, no indentation indicator) whose content is
 *   indented at least two columns more than their parent and starts on its first line; `[]`, `{}`;
 * - not: tabs outside a block scalar's content, U+FEFF anywhere, anchors, aliases, tags, flow
 *   collections with content, folded scalars, multi-line plain or quoted scalars, trailing
 *   comments, documents past `maxDepth` or `maxNodes` (the YAML parser says so).
 *
 * test/reader-block.test.ts reads the hostile corpus, the fixtures and generated manifests both
 * ways and with the API server's reader. Returns the reading and the offset where it starts.
 */
export function readBlockDocument(text: string, limits: ReadLimits = DEFAULT_LIMITS): { value: YamlValue; start: number } | undefined {
  if (text.indexOf('\ufeff') >= 0) return undefined;
  const r = new BlockReader(text, limits);
  try {
    return r.document();
  } catch (e) {
    if (e === NOT_CERTAIN) return undefined;
    throw e;
  }
}

class BlockReader {
  /** Offset of the current line's start; its end (the LF, or the text's end) and its indentation. */
  private pos = 0;
  private end = 0;
  private indent = 0;
  private nodes = 0;

  constructor(private readonly text: string, private readonly limits: ReadLimits) {}

  document(): { value: YamlValue; start: number } {
    this.seek(0);
    if (this.pos >= this.text.length || this.indent !== 0) throw NOT_CERTAIN;
    const start = this.pos;
    const value = this.block(0, 0);
    if (this.pos < this.text.length) throw NOT_CERTAIN;
    return { value, start };
  }

  /** Moves to the first line from `from` that is neither blank nor a comment; refuses a tab in any line's indentation. */
  private seek(from: number): void {
    const t = this.text;
    const n = t.length;
    let p = from;
    while (p < n) {
      let k = p;
      while (t.charCodeAt(k) === 0x20) k++;
      const c = t.charCodeAt(k);
      if (c === 0x09) throw NOT_CERTAIN;
      let e = t.indexOf('\n', k);
      if (e < 0) e = n;
      if (c === 0x0a || k === n || c === 0x23) { // blank, or a comment
        p = e + 1;
        continue;
      }
      this.pos = p;
      this.end = e;
      this.indent = k - p;
      return;
    }
    this.pos = n;
    this.end = n;
    this.indent = -1;
  }

  private next(): void {
    this.seek(this.end + 1);
  }

  private count(depth: number): void {
    if (++this.nodes > this.limits.maxNodes || depth > this.limits.maxDepth) throw NOT_CERTAIN;
  }

  /** The map or sequence whose first line is the current one, its first entry at column `col`. */
  private block(col: number, depth: number): YamlValue {
    return this.isItem(this.pos + col) ? this.seq(col, depth) : this.map(col, depth);
  }

  /** Whether a sequence entry (`- `) starts at `at`; a lone `-` is not certain. */
  private isItem(at: number): boolean {
    if (this.text.charCodeAt(at) !== 0x2d) return false;
    const c = this.text.charCodeAt(at + 1);
    if (c === 0x20) return true;
    if (c === 0x0a || at + 1 >= this.text.length) throw NOT_CERTAIN;
    return false;
  }

  private seq(col: number, depth: number): YamlValue[] {
    this.count(depth);
    const t = this.text;
    const out: YamlValue[] = [];
    for (;;) {
      let k = this.pos + col + 1;
      while (t.charCodeAt(k) === 0x20) k++;
      const c = t.charCodeAt(k);
      if (k >= this.end || c === 0x23 || (c === 0x2d && this.isItem(k))) throw NOT_CERTAIN;
      out.push(this.keyEnd(k) >= 0 ? this.map(k - this.pos, depth + 1) : this.inline(k, col, depth + 1));
      if (this.indent !== col || !this.isItem(this.pos + col)) return out;
    }
  }

  /** Where the `:` of a key starting at `at` is (a `:` before a blank or the line's end), or -1 when no key starts there. */
  private keyEnd(at: number): number {
    const t = this.text;
    const c = t.charCodeAt(at);
    let k = at;
    if (c === 0x22 || c === 0x27) {
      k = t.indexOf(String.fromCharCode(c), at + 1);
      if (c === 0x22) while (k > 0 && this.escaped(k, at)) k = t.indexOf('"', k + 1);
      if (k < 0 || k > this.end) return -1;
      k++;
    } else {
      while (k < this.end) {
        const d = t.charCodeAt(k);
        if (d >= 128 || KEY_CHAR[d] === 0) break;
        k++;
      }
      // (a plain key starts with a letter, a digit or `_`)
      const first = t.charCodeAt(at);
      if (k === at || first === 0x2d || first === 0x2e || first === 0x2f) return -1;
    }
    if (t.charCodeAt(k) !== 0x3a) return -1;
    const after = t.charCodeAt(k + 1);
    return after === 0x20 || after === 0x0a || k + 1 >= t.length ? k : -1;
  }

  /** Whether the `"` at `k` is escaped (an odd run of backslashes before it, after `open`). */
  private escaped(k: number, open: number): boolean {
    let b = 0;
    while (k - 1 - b > open && this.text.charCodeAt(k - 1 - b) === 0x5c) b++;
    return b % 2 === 1;
  }

  private map(col: number, depth: number): { [key: string]: YamlValue } {
    this.count(depth);
    const t = this.text;
    const out: { [key: string]: YamlValue } = {};
    for (;;) {
      const at = this.pos + col;
      const colon = this.keyEnd(at);
      if (colon < 0 || colon - at > 1000) throw NOT_CERTAIN;
      const c = t.charCodeAt(at);
      let key: string;
      if (c === 0x22 || c === 0x27) {
        key = this.quoted(at, colon - 1);
      } else {
        key = t.slice(at, colon);
        const first = key.charCodeAt(0);
        // (a key starting with a digit, a sign, a dot or a letter yaml.v2 may resolve: resolved, taken when a string)
        if ((first < 0x41 || 'yYnNtTfFoO'.includes(key[0])) && resolvePlain(key).tag !== 'str') throw NOT_CERTAIN;
      }
      this.count(depth + 1);
      if (key === '__proto__' || key === '<<' || Object.prototype.hasOwnProperty.call(out, key)) throw NOT_CERTAIN;
      let value: YamlValue;
      if (colon + 1 >= this.end) {
        // the value on the next lines: a deeper block, a sequence at the key's column, or null
        this.next();
        if (this.indent > col) {
          value = this.block(this.indent, depth + 1);
        } else if (this.indent === col && this.isItem(this.pos + col)) {
          value = this.seq(col, depth + 1);
        } else {
          this.count(depth + 1);
          value = null;
        }
      } else {
        let v = colon + 2;
        while (t.charCodeAt(v) === 0x20) v++;
        if (v >= this.end) throw NOT_CERTAIN;
        value = this.inline(v, col, depth + 1);
      }
      out[key] = value;
      if (this.indent !== col) {
        if (this.indent > col) throw NOT_CERTAIN;
        return out;
      }
      if (this.isItem(this.pos + col)) throw NOT_CERTAIN;
    }
  }

  /**
   * The scalar (or `[]`, `{}`) that starts at `at` on the current line, the value of a node whose
   * parent sits at column `parent`; moves to the next line that is not blank or a comment.
   */
  private inline(at: number, parent: number, depth: number): YamlValue {
    this.count(depth);
    const t = this.text;
    const end = this.end;
    const c = t.charCodeAt(at);
    let value: YamlValue;
    if (c === 0x22 || c === 0x27) {
      let close = t.indexOf(String.fromCharCode(c), at + 1);
      if (c === 0x22) while (close > 0 && this.escaped(close, at)) close = t.indexOf('"', close + 1);
      if (close < 0 || close + 1 !== end) throw NOT_CERTAIN;
      value = this.quoted(at, close);
    } else if (c === 0x7c) {
      return this.literal(at, parent);
    } else if (c === 0x5b || c === 0x7b) {
      if (end !== at + 2 || t.charCodeAt(at + 1) !== c + 2) throw NOT_CERTAIN;
      value = c === 0x5b ? [] : {};
    } else {
      if (c >= 128 || (PLAIN_START[c] === 0 && c !== 0x2d)) throw NOT_CERTAIN;
      // (`- x` after a key is a sequence entry where none may start: the YAML parser refuses it)
      if (c === 0x2d && (at + 1 === end || t.charCodeAt(at + 1) === 0x20)) throw NOT_CERTAIN;
      for (let k = at + 1; k < end; k++) {
        const d = t.charCodeAt(k);
        if (d < 0x20 || d >= 0x7f) throw NOT_CERTAIN;
        if (d === 0x3a && (k + 1 === end || t.charCodeAt(k + 1) === 0x20)) throw NOT_CERTAIN;
        if (d === 0x23 && t.charCodeAt(k - 1) === 0x20) throw NOT_CERTAIN;
      }
      if (t.charCodeAt(end - 1) === 0x20) throw NOT_CERTAIN;
      value = plainValue(t.slice(at, end));
    }
    this.next();
    return value;
  }

  /** A quoted scalar on one line, from its opening quote at `open` to its closing one at `close`. */
  private quoted(open: number, close: number): string {
    const t = this.text;
    for (let k = open + 1; k < close; k++) {
      const d = t.charCodeAt(k);
      if (d < 0x20 || d === 0x7f) throw NOT_CERTAIN;
    }
    const body = t.slice(open + 1, close);
    if (t.charCodeAt(open) === 0x27) {
      // '' is a quote; a lone ' inside cannot be (the scan stopped at the first)
      return body;
    }
    if (body.indexOf('\\') < 0) return body;
    let s = '';
    let last = 0;
    for (let k = body.indexOf('\\'); k >= 0; k = body.indexOf('\\', last)) {
      s += body.slice(last, k);
      const e = body[k + 1];
      const simple = BLOCK_ESCAPES.get(e);
      if (simple !== undefined) {
        s += simple;
        last = k + 2;
        continue;
      }
      const n = e === 'x' ? 2 : e === 'u' ? 4 : e === 'U' ? 8 : 0;
      const hex = body.slice(k + 2, k + 2 + n);
      if (n === 0 || hex.length !== n || !/^[0-9a-fA-F]+$/.test(hex)) throw NOT_CERTAIN;
      const v = parseInt(hex, 16);
      if ((v >= 0xd800 && v <= 0xdfff) || v > 0x10ffff) throw NOT_CERTAIN;
      s += String.fromCodePoint(v);
      last = k + 2 + n;
    }
    return s + body.slice(last);
  }

  /** A literal block scalar whose header (`|`, `|-`, `|+`) is at `at`, its parent at column `parent`. */
  private literal(at: number, parent: number): string {
    const t = this.text;
    const n = t.length;
    const chomp = t.charCodeAt(at + 1);
    const headerEnd = chomp === 0x2d || chomp === 0x2b ? at + 2 : at + 1;
    if (headerEnd !== this.end) throw NOT_CERTAIN;
    const lines: string[] = [];
    let indent = -1;
    let lastContent = -1;
    let p = this.end + 1;
    for (; p < n;) {
      let k = p;
      while (t.charCodeAt(k) === 0x20) k++;
      const e = t.indexOf('\n', k);
      // (a last line without its line break: libyaml keeps no break for it, whatever the chomping)
      if (e < 0) throw NOT_CERTAIN;
      const blank = k === e;
      if (indent < 0) {
        if (blank) {
          // (empty lines before the first content line: only truly empty ones are certain)
          if (k !== p) throw NOT_CERTAIN;
          lines.push('');
          p = e + 1;
          continue;
        }
        indent = k - p;
        if (indent < parent + 2 || t.charCodeAt(k) === 0x09) throw NOT_CERTAIN;
      }
      if (blank && k - p <= indent) {
        lines.push('');
      } else if (k - p < indent) {
        break; // the block ends: the line belongs to the structure (seek checks its tabs)
      } else {
        lines.push(t.slice(p + indent, e));
        lastContent = lines.length - 1;
      }
      p = e + 1;
    }
    if (lastContent < 0) throw NOT_CERTAIN;
    let s = lines.slice(0, lastContent + 1).join('\n');
    if (chomp === 0x2b) s += '\n'.repeat(lines.length - lastContent);
    else if (chomp !== 0x2d) s += '\n';
    this.seek(Math.min(p, n));
    return s;
  }
}

/** A plain scalar's value (`resolvePlain`), with decimal integers below 2^53 read at once. */
function plainValue(s: string): YamlValue {
  const len = s.length;
  const c = s.charCodeAt(0);
  if (len <= 15 && ((c >= 0x31 && c <= 0x39) || (c === 0x30 && len === 1))) {
    let v = 0;
    let k = 0;
    for (; k < len; k++) {
      const d = s.charCodeAt(k) - 0x30;
      if (d < 0 || d > 9) break;
      v = v * 10 + d;
    }
    if (k === len) return v;
  }
  const r = resolvePlain(s);
  if (r.tag === 'int') return intValue(r.value);
  if (r.tag === 'merge' || (r.tag === 'float' && !Number.isFinite(r.value))) throw NOT_CERTAIN;
  return r.value;
}

function firstLineOf(message: string): string {
  return message.split('\n').map(l => l.trim()).find(l => l !== '') ?? message;
}

/**
 * Text for a message or a line of human output: control characters, line breaks and quotes
 * escaped (a name cannot forge a line of the output), cut to `max` characters.
 */
export function escapeForMessage(s: string, max = 200): string {
  const cut = s.length > max ? s.slice(0, max) + '...' : s;
  return cut.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\\]/g, c => {
    if (c === '\\') return '\\\\';
    if (c === '\n') return '\\n';
    if (c === '\r') return '\\r';
    if (c === '\t') return '\\t';
    return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
}

/**
 * One line of human output: control characters, line breaks (LF, CR, NEL, LS, PS) and bidi
 * controls escaped as \\uXXXX, so that no name or message forges a line (the summary stays the
 * last line of the output).
 */
export function escapeLine(s: string): string {
  return s.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, c => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A reading as plain JSON for code that does arithmetic on it (BigInt as the nearest number). */
export function toPlain(v: YamlValue): any {
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map(toPlain);
  if (v !== null && typeof v === 'object') {
    const out: any = {};
    for (const k of Object.keys(v)) {
      const x = toPlain(v[k]);
      if (k === '__proto__') Object.defineProperty(out, k, { value: x, enumerable: true, writable: true, configurable: true });
      else out[k] = x;
    }
    return out;
  }
  return v;
}

/**
 * `toPlain` without a copy where there is nothing to convert: the reading itself when it holds no
 * BigInt (a reading is a tree of its own: aliases are expanded into copies), else `toPlain(v)`.
 */
export function plainReading(v: YamlValue): any {
  return holdsBigInt(v) ? toPlain(v) : v;
}

function holdsBigInt(v: YamlValue): boolean {
  if (typeof v === 'bigint') return true;
  if (v === null || typeof v !== 'object') return false;
  if (Array.isArray(v)) {
    for (const x of v) if (holdsBigInt(x)) return true;
    return false;
  }
  for (const k in v) if (holdsBigInt(v[k])) return true;
  return false;
}

/** Canonical text of a reading (keys sorted, integers exact): equal readings have equal texts. */
export function canonical(v: YamlValue): string {
  if (v === null) return 'null';
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return Object.is(v, -0) ? '-0' : String(v); // as Go's json.Marshal writes a float64
  if (typeof v === 'string' || typeof v === 'boolean') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  const keys = Object.keys(v).sort();
  return `{${keys.map(k => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`;
}
