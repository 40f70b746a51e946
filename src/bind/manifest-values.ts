/**
 * What cdk8s' YAML writer does with a string, asked of the writer itself (`Yaml.stringify`): the
 * manifest-string grammar of src/private/values.ts (its header says where each rule was observed),
 * here because it touches cdk8s.
 * @internal
 */
import { Yaml } from 'cdk8s';
import { Where } from '../private/errors';
import { READER, badCharacter, codePoint, showValue } from '../private/values';

/**
 * Go's integer literal grammar as yaml.v2 applies it to a plain scalar (gopkg.in/yaml.v2 2.4
 * resolve.go `resolve`: `strconv.ParseInt(strings.Replace(s, "_", "", -1), 0, 64)`, then
 * ParseUint), the range checked below.
 */
const GO_INTEGER = /^[-+]?(?:0[xX][0-9a-fA-F]+|0[oO]?[0-7]+|0[bB][01]+|[1-9][0-9]*|0)$/;
/** yaml.v2 resolve.go `yamlStyleFloat`, tried (on the same text) when both integer parses fail. */
const YAML_STYLE_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
/** yaml.v2 resolve.go `resolveMap`: the words read as booleans, null, infinities, NaN or a merge key. */
const RESOLVE_MAP = new Set([
  'y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON',
  'n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF',
  '', '~', 'null', 'Null', 'NULL', '.nan', '.NaN', '.NAN', '.inf', '.Inf', '.INF',
  '+.inf', '+.Inf', '+.INF', '-.inf', '-.Inf', '-.INF', '<<',
]);

/** What yaml.v2 reads this plain scalar as, when not a string (a description), else undefined. */
function goPlainNonString(v: string): string | undefined {
  // (the words are 5 characters at most: a longer text, a config file, is not hashed for the look-up)
  if (v.length <= 5 && RESOLVE_MAP.has(v)) return 'a boolean, null or special number';
  if (!/^[-+0-9.]/.test(v)) return undefined; // the other first characters are read as strings
  if (v[0] === '.') return /^\.[0-9]+([eE][-+]?[0-9]+)?$/.test(v) ? `the number ${Number(v)}` : undefined;
  const plain = v.replace(/_/g, '');
  if (GO_INTEGER.test(plain)) {
    const negative = plain[0] === '-';
    const digits = plain.replace(/^[-+]/, '');
    const magnitude = BigInt(/^0[0-7]+$/.test(digits) ? `0o${digits.slice(1)}` : digits.replace(/^0([OXB])/, (_m, p: string) => `0${p.toLowerCase()}`));
    const n = negative ? -magnitude : magnitude;
    // ParseInt (int64), else ParseUint (uint64, no sign at all)
    if ((n >= -(2n ** 63n) && n < 2n ** 63n) || (/^[0-9]/.test(plain) && n < 2n ** 64n)) return `the number ${n}`;
  }
  if (YAML_STYLE_FLOAT.test(plain)) return `the number ${Number(plain)}`;
  return undefined;
}

const PLAIN_TEXT = /^(?:[A-Za-z/]|-[A-Za-z-])[\x20-\x7e]*$/;

const plainMemo = new Map<string, boolean>();
const YAML11_DECIMAL = /^[-+]?[0-9][0-9_]*$/;

/**
 * Whether cdk8s' writer writes this string as a plain scalar (the one way it can read as another
 * type). Decimal integers (`5432`, `1_000`: YAML 1.1 integers) are quoted, which is taken without
 * asking (test/values.test.ts checks it against the writer and the reader); other answers are kept
 * (a few thousand at most), since asking costs a YAML document each.
 */
function writtenPlain(v: string): boolean {
  if (YAML11_DECIMAL.test(v)) return false;
  let plain = plainMemo.get(v);
  if (plain === undefined) {
    plain = Yaml.stringify({ v }) === `v: ${v}\n`;
    if (plainMemo.size >= 4096) plainMemo.clear();
    plainMemo.set(v, plain);
  }
  return plain;
}

/**
 * Why the manifest cannot carry this string exactly, or undefined. Besides the characters above:
 * a string that yaml.v2 reads as another type when plain and that cdk8s' YAML 1.1 writer leaves
 * plain (for YAML 1.1 it is a string): `0o17`, `0O17`, `0B1`, `0X1F`, `-0o7`, `+_1`, `-_1e3`. The
 * writer quotes what YAML 1.1 reads as a number, boolean or null (`0x1F`, `0b1`, `1_000`, `0777`,
 * `1e3`, `on`, `~`), and those arrive as written: the writer is asked, for the few candidates.
 */
export function manifestStringProblem(v: string): string | undefined {
  // Most keys and values are one line of printable ASCII that starts with a letter, a `/` or a `-`
  // and a letter or `-` (a name, a path, a flag): no character below, no line break, and no
  // number (goPlainNonString reads a number only after a digit, a sign or a dot first); only the
  // words of RESOLVE_MAP (`yes`, `null`, ...) need the rest.
  if (PLAIN_TEXT.test(v) && (v.length > 5 || !RESOLVE_MAP.has(v))) return undefined;
  const bad = badCharacter(v);
  if (bad) return bad.why;
  // Observed with the oracle (test/values.test.ts): a text that spans lines and whose first line
  // with text starts with a tab (after spaces or empty lines) is written as a block scalar whose
  // indentation yaml.v2 then reads from that tab and refuses the whole document ("found a tab
  // character where an indentation space is expected"). Refused a little wider than needed (a
  // block scalar with an indentation indicator, e.g. ' \t\nx', is read), never narrower.
  if (leadingTabBlock(v)) {
    return `spans lines and its first line starts with a tab (after spaces or empty lines): cdk8s' YAML writer writes it as a block scalar that ${READER} refuses (the whole manifest becomes unreadable)`;
  }
  if (YAML11_DECIMAL.test(v)) return undefined; // a number for both, so quoted (see writtenPlain)
  const read = goPlainNonString(v);
  if (read !== undefined && writtenPlain(v)) {
    return `is written unquoted by cdk8s' YAML writer (a YAML 1.1 writer, for which it is a string) and ${READER}, ` +
      `which reads plain scalars with Go's strconv.ParseInt(s, 0, 64) and ParseFloat, gets ${read}: the API server rejects or changes it`;
  }
  return undefined;
}

/**
 * Whether a multi-line text joined from shared pieces and values put in between (Envoy's config,
 * the workload's name in it: `CutText`) certainly passes `manifestStringProblem`, judged without
 * scanning the whole text again for each workload: every piece (shared: checked once, then
 * remembered) and every value holds no refused character, no surrogate stands at a joint (a pair
 * split there reads as two lone halves), and the text does not start as a block scalar with a tab
 * (a multi-line text is no number, boolean or null). False means: check the joined text itself
 * (the message then names the index in it).
 */
export function cutTextCarried(texts: readonly string[], values: readonly string[], joined: string): boolean {
  if (!joined.includes('\n') || leadingTabBlock(joined)) return false;
  for (const piece of texts) {
    if (CLEAN_PIECES.has(piece)) continue;
    if (badCharacter(piece) || edgeSurrogate(piece)) return false;
    if (CLEAN_PIECES.size >= 1024) CLEAN_PIECES.clear();
    CLEAN_PIECES.add(piece);
  }
  return values.every(v => !badCharacter(v) && !edgeSurrogate(v));
}

/** Pieces of cut texts with no refused character and no surrogate at either end. */
const CLEAN_PIECES = new Set<string>();
function edgeSurrogate(v: string): boolean {
  const surrogate = (c: number) => c >= 0xd800 && c <= 0xdfff;
  return v.length > 0 && (surrogate(v.charCodeAt(0)) || surrogate(v.charCodeAt(v.length - 1)));
}

/** What to do, for the messages. */
const FIX_CHARACTER = 'remove the character (or give the text another way, e.g. from a Secret)';
const FIX_TAB = 'start the first line with another character than a tab (or give the text another way, e.g. from a ConfigMap you write)';
/** A multi-line text whose first line starts with a tab, after spaces or empty lines (see manifestStringProblem). */
function leadingTabBlock(v: string): boolean {
  // only where cdk8s' writer really writes a block scalar (a control character makes it quote)
  return v.includes('\n') && /^[ \n]*\t/.test(v) && Yaml.stringify({ v }).startsWith('v: |');
}
const FIX_NUMBER = "cdk8s gives no way to quote one value, so use a value that is no number in Go's syntax (e.g. with a letter in front: 'v0o17')";

/**
 * A string that cdk8s' YAML writer puts into the manifest, as the API server gets it. Refuses
 * what would not arrive exactly, with `who`, `prop` and the value escaped.
 */
export function checkManifestString(who: Where, prop: string, value: string): void {
  if (typeof value !== 'string') return; // the type checks are the props checks' (one message per bad type)
  const why = manifestStringProblem(value);
  if (why !== undefined) {
    const fix = badCharacter(value) ? FIX_CHARACTER : leadingTabBlock(value) ? FIX_TAB : FIX_NUMBER;
    throw who.error(`${prop} ${showValue(value)} ${why}`, value, fix);
  }
}

/**
 * A string that is encoded (percent- or JSON-escaped) before it reaches a destination: only a
 * lone surrogate cannot be encoded (encodeURIComponent throws URIError on it).
 */
export function checkWellFormed(who: Where, prop: string, value: string): void {
  if (typeof value !== 'string') return;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0xd800 || c > 0xdfff) continue;
    const next = value.charCodeAt(i + 1);
    if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) { i++; continue; }
    throw who.error(`${prop} ${showValue(value)} holds a lone UTF-16 surrogate (${codePoint(c)}) at index ${i}, which is no character and cannot be encoded`, value, FIX_CHARACTER);
  }
}

/**
 * The last line of defence: every string (and key) of a sidecar's description as it will be
 * written into the manifest, checked with `checkManifestString`, the JSON path in the message. The
 * props are checked where they are given, with their own names; this catches a prop that reaches
 * the manifest by a way those checks miss, before anything is attached.
 */
export function checkManifestData(who: Where, what: string, data: unknown, path = ''): void {
  walkManifestData({ who, what, path, at: [] }, data);
}

/** Where `walkManifestData` is: the path of a value is written only for the one that fails (most pass). */
interface DataWalk {
  readonly who: Where;
  readonly what: string;
  readonly path: string;
  readonly at: Array<string | number>;
}

function pathOf(w: DataWalk): string {
  return w.path + w.at.map(k => typeof k === 'number' ? `[${k}]` : IDENTIFIER.test(k) ? `.${k}` : `[${showValue(k)}]`).join('');
}

/**
 * `checkManifestData` of one value; returns whether everything under it is frozen (such an object
 * is remembered as checked). A function of the module, not a closure per call: its optimized code
 * is then kept from one synthesis to the next.
 */
function walkManifestData(w: DataWalk, value: unknown): boolean {
  if (typeof value === 'string') {
    if (!carried(value)) checkManifestString(w.who, `${w.what}${pathOf(w)}`, value);
    return true;
  }
  if (value === null || typeof value !== 'object') return true;
  // a frozen object checked before cannot have changed (an agent may share its constant parts)
  if (CHECKED.has(value)) return true;
  let frozen = Object.isFrozen(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      w.at.push(i);
      frozen = walkManifestData(w, value[i]) && frozen;
      w.at.pop();
    }
  } else {
    for (const key of Object.keys(value)) {
      w.at.push(key);
      if (!carried(key)) checkManifestString(w.who, `${w.what}${pathOf(w)} (a key)`, key);
      frozen = walkManifestData(w, (value as Record<string, unknown>)[key]) && frozen;
      w.at.pop();
    }
  }
  if (frozen) CHECKED.add(value);
  return frozen;
}

/** Frozen objects (everything under them frozen too) whose every string and key `checkManifestData` passed. */
const CHECKED = new WeakSet<object>();

/**
 * Strings (of up to 256 characters) that `manifestStringProblem` passed: the same names, keys,
 * paths and flags come back in every sidecar of an app, and a look-up costs less than the check.
 */
const CARRIED = new Set<string>();
function carried(v: string): boolean {
  // (a longer text, a config file, is checked each time: hashing it for the look-up costs as much)
  const short = v.length <= 256;
  if (short && CARRIED.has(v)) return true;
  if (manifestStringProblem(v) !== undefined) return false;
  if (short) {
    if (CARRIED.size >= 4096) CARRIED.clear();
    CARRIED.add(v);
  }
  return true;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `checkManifestString` for a list (command, args, namespaces, ...). */
export function checkManifestList(who: Where, prop: string, list: readonly string[] | undefined): void {
  if (!Array.isArray(list)) return;
  list.forEach((v, i) => checkManifestString(who, `${prop}[${i}]`, v));
}
