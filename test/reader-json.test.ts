/**
 * The reader's JSON path (issue 36): a document that is JSON is read with `JSON.parse`, without
 * the YAML parser that took most of `cdk8s-sidecars check`'s time, and its reading is the YAML
 * parser's, always: the same values (BigInt, -0 and all), the same line, the same errors.
 *
 * - the count: a JSON document does not reach the YAML parser; a YAML document in flow style reaches
 *   it once (one in block style has its own path: test/reader-block.test.ts);
 * - the cases where JSON and yaml.v2 part (escapes, numbers, limits a duplicate key
 *   hides): each gives the YAML parser's reading (or error) through `readYaml`;
 * - a property: generated JSON texts (any nesting, duplicate keys, every escape form, number
 *   texts JSON.parse rounds or overflows, odd whitespace) read alike on both paths.
 * test/hostile.test.ts compares JSON files of its corpus with the API server's reader too.
 * FC_NUM_RUNS sets the runs, FC_SEED replays another seed.
 */
import * as fc from 'fast-check';
import { describeOracle, readStreamsAsApiServer } from './util/api-server-yaml';
import { DEFAULT_LIMITS, ReadLimits, canonical, decodeInput, readJsonDocument, readYaml, yamlPackage } from '../src/cli/reader';

const RUNS = process.env.FC_NUM_RUNS ? Number(process.env.FC_NUM_RUNS) : 400;
const SEED = process.env.FC_SEED ? Number(process.env.FC_SEED) : 36;

/** A reading, or the error, comparable across the two paths. */
function outcome(text: string, json: boolean, limits: ReadLimits = DEFAULT_LIMITS): string[] {
  try {
    return readYaml(text, 'f', limits, json).map(d => `${d.index} line ${d.line}: ${canonical(d.value)}`);
  } catch (e) {
    return [`error: ${(e as Error).message}`];
  }
}

/** The YAML parser's calls while `run` runs (the reader runs the `yaml` package's Parser, then its Composer). */
function yamlParses(run: () => void): number {
  const spy = jest.spyOn(yamlPackage().Parser.prototype, 'parse');
  try {
    run();
    return spy.mock.calls.length;
  } finally {
    spy.mockRestore();
  }
}

describe('the YAML parser runs once per YAML document, never for a JSON one', () => {
  const workload = (i: number) => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: `w${i}`, labels: { app: `w${i}` } },
    spec: { template: { metadata: { labels: { app: `w${i}` } }, spec: { containers: [{ name: 'app', image: `a:${i}`, ports: [{ containerPort: 8080 }] }] } } },
  });
  const stream = (n: number, write: (o: object) => string) => Array.from({ length: n }, (_, i) => write(workload(i))).join('\n---\n') + '\n';

  test.each([1, 20])('%d documents', n => {
    const json = stream(n, o => JSON.stringify(o, null, 2));
    // (flow style: the block YAML that generators write has its own path, test/reader-block.test.ts)
    const yaml = stream(n, o => yamlPackage().stringify(o, { collectionStyle: 'flow' }));
    expect(yamlParses(() => expect(readYaml(json, 'f')).toHaveLength(n))).toBe(0);
    expect(yamlParses(() => expect(readYaml(yaml, 'f')).toHaveLength(n))).toBe(n);
    // and the readings agree
    expect(readYaml(json, 'f').map(d => canonical(d.value))).toEqual(readYaml(yaml, 'f').map(d => canonical(d.value)));
    expect(outcome(json, true)).toEqual(outcome(json, false));
  });
});

describe('where JSON and yaml.v2 part, the reading is the YAML parser\'s', () => {
  test.each([
    // [text, JSON path taken]
    ['{"a": 1, "b": [true, false, null, "x"]}', true],
    ['\n\n  {"a": 1}\n', true],
    ['{\r\n\t"a": [\r\n\t\t1\r\n\t]\r\n}\r\n', true],
    ['[1, {"a": []}]', true],
    ['{"a": "\\" \\\\ \\b \\f \\n \\r \\t \\u00e9 \\u2028 \\u0085 \\u0000"}', true],
    ['{"a": 1, "a": {"b": 2}, "c": 3}', true],
    ['{"__proto__": {"x": 1}}', true],
    ['{"a": 9007199254740991, "b": -9007199254740991, "c": 0.1, "d": 1e-400, "e": 1.5E+3}', true],
    ['{"a": 1.5e300}', false], // any number from 2^53 up goes to the YAML parser (most are integers there)
    ['{"a": "x\\/y"}', false],
    ['{"a": "\\ud83d\\ude00"}', false],
    ['{"a": "\\uDC00"}', false],
    ['{"a": "\\uDfFf"}', false],
    ['{"a": "\\u0d80"}', true],
    ['{"a": -0}', false],
    ['{"a": -0.0}', false],
    ['{"a": -1e-400}', false],
    ['{"a": 9007199254740992}', false],
    ['{"a": 9007199254740993}', false],
    ['{"a": 18446744073709551616}', false],
    ['{"a": 1e400}', false],
    ['{"a":\r1}', true], // CR is white space in JSON and a line break in libyaml: 1 both ways (test/reader-breaks.test.ts)
    ['{"a": ' + '['.repeat(501) + ']'.repeat(501) + '}', false],
    ['{"a": ' + '['.repeat(600) + ']'.repeat(600) + ', "a": 1}', false],
    ['{"a": "x\\/y", "a": 1}', false],
    ['{"a": 1} # a comment', false],
    ['{a: 1}', false],
    ['"a"', false],
    ['5', false],
  ])('%j', (text, fast) => {
    expect(readJsonDocument(text) !== undefined).toBe(fast);
    expect(outcome(text, true)).toEqual(outcome(text, false));
  });

  test('the node limit holds for what a duplicate key hides (each node takes a character)', () => {
    const limits: ReadLimits = { ...DEFAULT_LIMITS, maxNodes: 50 };
    const text = `{"a": [${Array(60).fill('1').join(',')}], "a": 1}`;
    expect(readJsonDocument(text, limits)).toBeUndefined();
    expect(outcome(text, true, limits)).toEqual(outcome(text, false, limits));
    expect(outcome(text, true, limits)[0]).toMatch(/more than 50 nodes/);
  });
});

// ---------------------------------------------------------------------------------------------
// JSON rules or libyaml's: what kubectl reads each document with

/**
 * kubectl reads an input that starts with `{` (after white space) with Go's JSON decoder, every
 * other one split at `---` lines and read by libyaml (apimachinery pkg/util/yaml/decoder.go,
 * NewYAMLOrJSONDecoder and GuessJSONStream; 1.33 and later fall back to libyaml after the first
 * JSON object). libyaml refuses JSON texts JSON takes: a key and its `:` on two lines, a tab before
 * the first token, an implicit key over 1024 characters. Expected: kubectl's reading (each run by
 * hand on 2026-12-02 with apimachinery v0.37.2 and v0.29.6, which agree on every case here), or
 * the error of the reader where kubectl refuses.
 */
const K = 'k'.repeat(1022); // a quoted key of 1024 characters: libyaml's longest
const SNIFFED: Array<[string, unknown[] | RegExp]> = [
  // the first document of a JSON input: JSON's rules
  ['{"a"\n:1}', [{ a: 1 }]],
  ['{"a"\r\n:1}', [{ a: 1 }]],
  ['{"a": {"b"\n: 1}}', [{ a: { b: 1 } }]],
  ['{"a": [{"b"\n: 1}]}', [{ a: [{ b: 1 }] }]],
  ['\t{"a": 1}', [{ a: 1 }]],
  ['\n\t\n{"a": 1}', [{ a: 1 }]],
  [`{"${K}x": 1}`, [{ [`${K}x`]: 1 }]],
  // JSON's escapes that yaml.v2 refuses, as Go's encoding/json reads them: \/ is /, a surrogate
  // pair one character, a lone surrogate U+FFFD (in a key too); on the JSON and the YAML path
  ['{"a":"x\\/y"}', [{ a: 'x/y' }]],
  ['{"a":"\\ud83d\\ude00"}', [{ a: '\u{1F600}' }]],
  ['{"a":"\\ud83d"}', [{ a: '\uFFFD' }]],
  ['{"a":["\\ude00x"]}', [{ a: ['\uFFFDx'] }]],
  ['{"\\ud83d":1}', [{ '\uFFFD': 1 }]],
  ['{"\\ud83d\\ude00":"\\/"}', [{ '\u{1F600}': '/' }]],
  ['{"a":"\\uD83D\\uDE00\\uD83D\\u0041"}', [{ a: '\u{1F600}\uFFFDA' }]],
  ['{"a":"\\\\/\\\\ud83d\\"\\/"}', [{ a: '\\/\\ud83d"/' }]], // (an escaped backslash, then / and ud83d; an escaped quote)
  ['{"a":"\\/", "b": 9007199254740993}', [{ a: '/', b: 9007199254740993n }]], // (a number the YAML path reads)
  ['a: 1\n---\n{"a":"x\\/y"}', /^f: document 2 \(line 3\): found unknown escape character \(\\\/\): the API server's reader refuses it/],
  ['---\n{"a":"\\ud83d\\ude00"}', /^f: document 1 \(line 2\): found invalid Unicode character escape code \(\\ud83d/],
  // any other document: libyaml's
  ['a: 1\n---\n{"a"\n:1}', /^f: document 2 \(line 4\): a key and its ':' on different lines: the API server's reader refuses it \("did not find expected ',' or '}'"/],
  ['---\n{"a"\n:1}', /^f: document 1 \(line 3\): a key and its ':' on different lines/],
  ['# c\n{"a"\n:1}', /^f: document 1 \(line 3\): a key and its ':' on different lines/],
  ['[1, {"a"\n: 1}]', /^f: document 1 \(line 2\): a key and its ':' on different lines/],
  ['x: {&a\n b: 1}', /^f: document 1 \(line 2\): a key and its ':' on different lines/],
  ['a: 1\n---\n{"a": {"b"\r: 1}}', /^f: document 2 \(line 4\): a key and its ':' on different lines/],
  ['a: 1\n---\n\t{"a": 1}', /^f: document 2 \(line 3\): a tab before the document's first token: the API server's reader refuses it \("found character that cannot start any token"/],
  ['a: 1\n---\n\n\t\n{"a": 1}', /^f: document 2 \(line 4\): a tab before the document's first token/],
  ['a: 1\n---\n  \t{"a": 1}', /^f: document 2 \(line 3\): a tab before the document's first token/],
  ['\t[1]', /^f: document 1 \(line 1\): a tab before the document's first token/],
  [`a: 1\n---\n{"${K}x": 1}`, /^f: document 2 \(line 3\): a key of 1025 characters up to its ':': the API server's reader refuses an implicit key longer than 1024/],
  [`a: 1\n---\n{"${K}" : 1}`, /^f: document 2 \(line 3\): a key of 1025 characters/],
  [`${K}kkk: 1`, /^f: document 1 \(line 1\): a key of 1025 characters/],
  [`x: {${K}kkk: 1}`, /^f: document 1 \(line 1\): a key of 1025 characters/],
  // a tab at the start of a line: refused in the block context, taken in a flow collection
  ['a: 1\n\t\nb: 2', /^f: document 1 \(line 2\): a tab in the indentation of a line: the API server's reader refuses it outside a flow collection or a quoted string/],
  ['a: 1\n\t# c\nb: 2', /^f: document 1 \(line 2\): a tab in the indentation of a line/],
  ['a: "x"\n\t\nb: 2', /^f: document 1 \(line 2\): a tab in the indentation of a line/],
  ['a: |\n  x\n\t\nb: 1', /^f: document 1 \(line 3\): a tab in the indentation of a line/],
  ['a:\n- 1\n\t\n- 2', /^f: document 1 \(line 3\): a tab in the indentation of a line/],
  ['- a\n\t\n- b', /^f: document 1 \(line 2\): a tab in the indentation of a line/],
  ['[]\n\t\n---\n{"k": {}}', /^f: document 1 \(line 2\): a tab in the indentation of a line/],
  ['a: 1\n---\n{"k": 1}\n\t\n', /^f: document 2 \(line 4\): a tab in the indentation of a line/],
  ['{"k": 1}\n\t\n', [{ k: 1 }]],
  ['a: 1\n---\n{\n\t"a": 1,\n\t"b": [\n\t\t1\n\t]\n}\n', [{ a: 1 }, { a: 1, b: [1] }]],
  ['a: 1\n---\n[\n\t1\n]', [{ a: 1 }, [1]]],
  ['a: 1\n \t\nb: 2', [{ a: 1, b: 2 }]],
  ['\t', /^f: document 1 \(line 1\): a tab before the document's first token/],
  ['a: 1\n---\n# c\n\t\n', /^f: document 2 \(line 4\): a tab before the document's first token/],
  ['a: 1\n---\n\t\n---\nb: 2', /^f: document 2 \(line 3\): a tab before the document's first token/],
  ['x\n#c\n\t', /^f: document 1 \(line 3\): a tab in the indentation of a line/],
  ['x\n \ty', ['x y']],
  ['a: "1"\n \t\nb: 2', /^f: document 1 \(line 2\): a tab in the indentation of a line/],
  ['a: [1]\n \t\nb: 2', /^f: document 1 \(line 2\): a tab in the indentation of a line/],
  ['a:\n  b: 1\n \t\n  c: 2', /^f: document 1 \(line 3\): a tab in the indentation of a line/],
  ['a:\n  b: "1"\n   \t\n  c: 2', /^f: document 1 \(line 3\): a tab in the indentation of a line/],
  ['a: 1 # c\n \t\nb: 2', /^f: document 1 \(line 2\): a tab in the indentation of a line/],
  ['a:\n  b: 1\n   \t\n  c: 2', [{ a: { b: 1, c: 2 } }]],
  ['a: x\n \ty', [{ a: 'x y' }]],
  ['a: 1\n\n \t\nb: 2', [{ a: 1, b: 2 }]],
  ['a: |\n  x\n  \ty\n', [{ a: 'x\n\ty\n' }]],
  // a tab after `-`, `?` or an explicit key's `:`: refused; after an implicit key's `:`, white space
  ['-\tb', /^f: document 1 \(line 1\): a tab after '-': the API server's reader refuses it \("found character that cannot start any token"\)/],
  ['- \tb', /^f: document 1 \(line 1\): a tab after '-'/],
  ['a:\n- 1\n-\t2', /^f: document 1 \(line 3\): a tab after '-'/],
  ['- - \tb', /^f: document 1 \(line 1\): a tab after '-'/],
  ['- \t# c\n  b', /^f: document 1 \(line 1\): a tab after '-'/],
  ['?\ta\n: b', /^f: document 1 \(line 1\): a tab after '\?'/],
  ['? a\n:\tb', /^f: document 1 \(line 2\): a tab after ':'/],
  ['a:\tb', [{ a: 'b' }]],
  ['- a: 1\n  b:\t2', [[{ a: 1, b: 2 }]]],
  ['- a\n- b\t', [['a', 'b']]],
  ['a: \'x\n  \ty\'', [{ a: 'x y' }]],
  // plain scalars in a flow collection: `?` and a leading `:` are indicators there, `a:` before `,]}` one string
  ['a: [http://x/?a=b]', /^f: document 1 \(line 1\): 'http:\/\/x\/\?a=b' unquoted in a flow collection \(\[...\] or \{...\}\): the API server's reader takes its '\?' for an indicator/],
  ['a: {k: a?b}', /^f: document 1 \(line 1\): 'a\?b' unquoted in a flow collection/],
  ['a: [?x]', /^f: document 1 \(line 1\): '\?x' unquoted in a flow collection/],
  ['a: [:x]', /^f: document 1 \(line 1\): ':x' unquoted in a flow collection \(\[...\] or \{...\}\): the API server's reader takes its ':' for an indicator/],
  ['a: [a:, b]', /^f: document 1 \(line 1\): 'a:' before ',' in a flow collection: for the API server's reader a ':' ends a plain scalar there only before a space/],
  ['a: {x:}', /^f: document 1 \(line 1\): 'x:' before '\}' in a flow collection/],
  ['a: [x:{}]', /^f: document 1 \(line 1\): 'x:' before '\{' in a flow collection/],
  ['a: [? x]', [{ a: [{ x: null }] }]],
  ['a: [x:y, "a?", "b:", a: b]', [{ a: ['x:y', 'a?', 'b:', { a: 'b' }] }]],
  ['a: ?x', [{ a: '?x' }]],
  // what libyaml reads
  [`a: 1\n---\n{"${K}": 1}`, [{ a: 1 }, { [K]: 1 }]],
  [`${K}kk: 1`, [{ [`${K}kk`]: 1 }]],
  [`a: 1\n---\n{"\\u00e9${K.slice(6)}": 1}`, [{ a: 1 }, { [`\u00e9${K.slice(6)}`]: 1 }]], // (an escape counts as its characters)
  ['a: 1\n---\n{"a": 1}\t', [{ a: 1 }, { a: 1 }]],
  ['a: 1\n---\n{"a":\t1, "b": [1,\n 2]}', [{ a: 1 }, { a: 1, b: [1, 2] }]],
  ['x: {? a\n : 1}', [{ x: { a: 1 } }]],
  // a byte order mark: no space for kubectl's sniff, so the input is YAML (libyaml skips the mark)
  ['\ufeff{"a": 1}', [{ a: 1 }]],
  ['\ufeff{"a"\n:1}', /^f: document 1 \(line 2\): a key and its ':' on different lines/],
  ['\ufeff\t{"a": 1}', /^f: document 1 \(line 1\): a tab before the document's first token/],
  // a Unicode space before the `{`: kubectl 1.29 refuses the input, 1.37 drops the space
  ['\u00a0{"a": 1}', /^f: line 1: a U\+00A0 \(a Unicode space\) before the first '\{': kubectl 1\.27 to 1\.32 refuse the input/],
];

/** Where the reader is stricter than kubectl (a documented rule, docs/cli.md): kubectl's reading. */
const STRICTER = new Map<string, unknown[]>([
  ['a: [a:, b]', [{ a: ['a:', 'b'] }]],
  ['a: {x:}', [{ a: { 'x:': null } }]],
  ['a: [?x]', [{ a: [{ x: null }] }]],
]);

describe('the first document of an input that starts with { is read with JSON\'s rules, every other one with libyaml\'s', () => {
  const named = SNIFFED.map(([text, expected]) => [text.length > 80 ? `${text.slice(0, 40)}... (${text.length} characters)` : text, text, expected] as const);
  test.each(named)('%j', (_name, text, expected) => {
    for (const json of [true, false]) {
      const got = outcome(text, json);
      if (expected instanceof RegExp) expect(got[0]).toMatch(new RegExp(`^error: ${expected.source.slice(1)}`));
      else expect(got.map(l => l.replace(/^\d+ line \d+: /, ''))).toEqual(expected.map(v => canonical(v as any)));
    }
  });
});

test('a byte order mark read from a file stays for the reader: the input is YAML', () => {
  expect(() => readYaml(decodeInput(Buffer.from('\ufeff{"a"\n:1}'), 'f'), 'f')).toThrow(/^f: document 1 \(line 2\): a key and its ':' on different lines/);
  expect(readYaml(decodeInput(Buffer.from('\ufeff{"a":\n1}'), 'f'), 'f').map(d => canonical(d.value))).toEqual(['{"a":1}']);
});

describeOracle('libyaml\'s cases against the Go reader of the tests (libyaml, no JSON decoder)', () => {
  test('it reads what the reader reads, and refuses what it refuses', () => {
    const cases = SNIFFED.filter(([text]) => !/^\s*\{/.test(text) && !text.startsWith('\u00a0'));
    const go = readStreamsAsApiServer(cases.map(([text]) => text));
    cases.forEach(([text, stricterExpected], i) => {
      const expected = STRICTER.get(text) ?? stricterExpected;
      const refused = go[i].some(d => d.error !== undefined);
      expect([text, refused]).toEqual([text, expected instanceof RegExp]);
      if (!(expected instanceof RegExp)) expect(go[i].map(d => canonical(d.ok as any))).toEqual(expected.map(v => canonical(v as any)));
    });
  });
});

// ---------------------------------------------------------------------------------------------
// Generated JSON texts

const CHARS = ['a', 'Z', '0', '/', '\\', '"', "'", ' ', '#', ':', ',', '{', '}', '[', ']', '-', '.', 'e', '\n', '\r', '\t', '\b', '\f',
  '\u0000', '\u001f', '\u007f', '\u0085', '\u00a0', '\u2028', '\ud800', '\udbff', '\udc00', '\udfff', '\ufeff', '\ufffd', 'é', '日', '\u{1F600}'];
const SHORT: Record<string, string> = { '"': '\\"', '\\': '\\\\', '/': '\\/', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t' };
const hex4 = (c: number, upper: boolean) => (upper ? c.toString(16).toUpperCase() : c.toString(16)).padStart(4, '0');

/** One UTF-16 unit of a string, written raw, with its short escape or as \uXXXX (valid JSON each time). */
const unit = fc.tuple(
  fc.oneof(fc.constantFrom(...CHARS.flatMap(c => c.split(''))), fc.integer({ min: 0, max: 0xffff }).map(c => String.fromCharCode(c))),
  fc.nat(3),
).map(([c, how]) => {
  const code = c.charCodeAt(0);
  const mustEscape = c === '"' || c === '\\' || code < 0x20;
  if (how === 1 && SHORT[c]) return SHORT[c];
  if (how >= 2 || (mustEscape && !SHORT[c])) return `\\u${hex4(code, how === 3)}`;
  return mustEscape ? SHORT[c] : c;
});
const stringText = fc.array(unit, { maxLength: 8 }).map(u => `"${u.join('')}"`);
const keyText = fc.oneof(stringText, fc.constantFrom('"a"', '"b"', '"__proto__"', '"<<"', '""', '"1"', '"true"'));
const numberText = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }).map(d => JSON.stringify(d)),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
  fc.integer({ min: -1000, max: 1000 }).map(String),
  fc.constantFrom('-0', '-0.0', '0.0', '0.10', '1E+2', '1e-400', '-1e-400', '1e400', '-1e400', '9007199254740992', '9007199254740993', '4.9e-324'),
);
const ws = fc.constantFrom('', '', '', ' ', '  ', '\n', '\t', '\r\n', '\n    ', '\n\t', '\r');

const { value: jsonText } = fc.letrec<{ value: string; scalar: string; list: string; map: string }>(tie => ({
  value: fc.oneof({ depthSize: 'small' }, tie('scalar'), tie('list'), tie('map')),
  scalar: fc.oneof(stringText, numberText, fc.constantFrom('true', 'false', 'null')),
  list: fc.tuple(ws, fc.array(fc.tuple(ws, tie('value'), ws), { maxLength: 4 }))
    .map(([w, items]) => `[${w}${items.map(([a, v, b]) => a + v + b).join(',')}]`),
  map: fc.tuple(ws, fc.array(fc.tuple(ws, keyText, ws, ws, tie('value'), ws), { maxLength: 4 }))
    .map(([w, pairs]) => `{${w}${pairs.map(([a, k, b, c, v, d]) => `${a}${k}${b}:${c}${v}${d}`).join(',')}}`),
}));
const document = fc.tuple(fc.constantFrom('', '\n', '\n\n  ', ' ', '\t'), fc.oneof(jsonText, jsonText.map(t => `{"k": ${t}}`)), ws);

describe('generated JSON texts: the same reading on both paths', () => {
  test('documents and streams', () => {
    let fastPath = 0;
    let documents = 0;
    fc.assert(
      fc.property(fc.array(document, { minLength: 1, maxLength: 3 }), docs => {
        const text = docs.map(([before, body, after]) => before + body + after).join('\n---\n');
        for (const [before, body, after] of docs) {
          documents++;
          if (readJsonDocument(before + body + after)) fastPath++;
        }
        expect(outcome(text, true)).toEqual(outcome(text, false));
      }),
      { numRuns: RUNS, seed: SEED },
    );
    // the property went through the JSON path, and past it
    expect(fastPath).toBeGreaterThan(documents / 5);
    expect(fastPath).toBeLessThan(documents);
  });
});
