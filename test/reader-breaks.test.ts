/**
 * The reader's line breaks (issue 38): a CR, alone or before an LF, is what kubectl makes of it.
 * kubectl's YAMLReader drops one CR before each LF (bufio.Reader.ReadLine in LineReader,
 * k8s.io/apimachinery pkg/util/yaml/decoder.go) and libyaml takes a lone CR, CR LF and LF each for
 * one line break; a JSON stream's CR is JSON white space. The `yaml` package took a lone CR for a
 * character of the line: `{"a":\r1}` was read as the string "\r1", `a: 1\rb: 2` refused.
 *
 * Every expected value below is kubectl's reading, run by hand on 2026-12-02 with apimachinery's
 * YAMLOrJSONDecoder (v0.37.2 and v0.29.6, as resource.StreamVisitor calls it: buffer 4096, into a
 * RawExtension); the Go reader of the tests (test/go-yaml-reader) agrees on each where it runs.
 */
import { describeOracle, readStreamsAsApiServer } from './util/api-server-yaml';
import { canonical, readYaml } from '../src/cli/reader';

/** [the stream, its documents as kubectl reads them] */
const CASES: Array<[string, unknown[]]> = [
  // JSON (the stream starts with `{`: kubectl's JSON decoder, where CR is white space)
  ['{"a":\r1}', [{ a: 1 }]],
  ['{\r"a": 1}', [{ a: 1 }]],
  ['{"a": 1,\r"b": 2}', [{ a: 1, b: 2 }]],
  ['{"a": [1,\r2],\r"b": {"c":\r\r"d"}}\r', [{ a: [1, 2], b: { c: 'd' } }]],
  // flow collections in YAML
  ['[1,\r2]', [[1, 2]]],
  ['a: [1,\r  2]', [{ a: [1, 2] }]],
  ['a: {b: 1,\r  c: 2}', [{ a: { b: 1, c: 2 } }]],
  ['x: [a\r  , b]', [{ x: ['a', 'b'] }]],
  // block collections: a lone CR ends a line
  ['a: 1\rb: 2\r', [{ a: 1, b: 2 }]],
  ['a:\r  b: 1\r', [{ a: { b: 1 } }]],
  ['a:\r- 1\r- 2', [{ a: [1, 2] }]],
  ['? a\r: 1', [{ a: 1 }]],
  ['a: &x 1\rb: *x\r', [{ a: 1, b: 1 }]],
  ['a: !!str\r  1', [{ a: '1' }]],
  ['a: 1\r#c\rb: 2', [{ a: 1, b: 2 }]],
  ['a: 1 # c\rb: 2', [{ a: 1, b: 2 }]],
  // scalars: a lone CR is a line break, folded or kept as "\n"
  ['a: x\r  y', [{ a: 'x y' }]],
  ['a:\r\r\r  b', [{ a: 'b' }]],
  ['a: "x\r  y"', [{ a: 'x y' }]],
  ['a: \'x\r\r  y\'', [{ a: 'x\ny' }]],
  ['a: |\r  x\r  y\r', [{ a: 'x\ny\n' }]],
  ['a: |-\r  x\r\r  y\r', [{ a: 'x\n\ny' }]],
  ['a: >\r  x\r  y\r', [{ a: 'x y\n' }]],
  // CR LF and CRs before it: kubectl drops one CR before each LF, libyaml reads the rest
  ['a: 1\r\n---\r\nb: 2\r\n', [{ a: 1 }, { b: 2 }]],
  ['a: |\r\n  x\r\n  y\r\n', [{ a: 'x\ny\n' }]],
  ['a: "x\r\n  y"', [{ a: 'x y' }]],
  ['a: b\r\r\n', [{ a: 'b' }]],
  ['a: |+\n  x\r\r\n', [{ a: 'x\n' }]],
  ['a: |+\n  x\r\r\r\n', [{ a: 'x\n\n' }]],
  ['a: |+\n  x\r\n\r\n', [{ a: 'x\n\n' }]],
  // an escaped line break in a double-quoted scalar: the break and the next line's blanks go, each
  // empty line after it is kept as "\n" (the `yaml` package folded them into a space, with LF too)
  ['a: "x\\\r\r  y"', [{ a: 'x\ny' }]],
  ['a: "x\\\n\n  y"', [{ a: 'x\ny' }]],
  ['a: "x\\\r\n\r\n\r\n  y \\t\\u00e9 \\x41\\U0001F600 \\N\\_"', [{ a: 'x\n\ny \té A\u{1F600} \u0085\u00a0' }]],
  ['a: "x \\\r  \r  y"', [{ a: 'x \ny' }]],
  ['a: "x\\\r  y"', [{ a: 'xy' }]],
  ['a: "x\\\\\r  y"', [{ a: 'x\\ y' }]],
  ['a: "p\\\n\n q\n\n\n r s"', [{ a: 'p\nq\n\nr s' }]],
  // a lone CR is no document separator for kubectl (its YAMLReader splits at LF only)
  ['a: 1\n---\nb: "x\r  y"\r\n---\r\nc: 3', [{ a: 1 }, { b: 'x y' }, { c: 3 }]],
];

const read = (text: string, json: boolean) => readYaml(text, 'f', undefined, json).map(d => canonical(d.value as any));

describe('a CR is read as kubectl reads it', () => {
  test.each(CASES)('%j', (text, expected) => {
    const want = expected.map(v => canonical(v as any));
    expect(read(text, true)).toEqual(want);
    expect(read(text, false)).toEqual(want); // the YAML parser alone, too
  });

  test('a message counts a lone CR as a line, as libyaml does (its line numbers are the LF file\'s)', () => {
    expect(() => readYaml('a: 1\rb: 2\r- 3\r', 'f')).toThrow(/^f: document 1 \(line 3\): not valid YAML/);
    expect(() => readYaml('a: 1\nb: 2\n- 3\n', 'f')).toThrow(/^f: document 1 \(line 3\): not valid YAML/);
  });
});

describeOracle('the cases against the Go reader of the tests', () => {
  test('the same readings', () => {
    // (its YAML path only: the JSON ones read the same there, CR being a line break in libyaml)
    const go = readStreamsAsApiServer(CASES.map(([text]) => text));
    CASES.forEach(([, expected], i) => {
      expect(go[i].map(d => d.error ?? canonical(d.ok as any))).toEqual(expected.map(v => canonical(v as any)));
    });
  });
});
