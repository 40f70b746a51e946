/**
 * Deep nesting (issue 38): one clear error, whatever the depth, the form and the stack left to the
 * reader, raised before the command writes anything. The `yaml` package's composer recurses per
 * level: before, a document 501 levels deep got the reader's limit, one 900 deep "not valid YAML:
 * Maximum call stack size exceeded" (or a RangeError, by where the stack ran out), and one 50000
 * deep aborted the process. kubectl reads up to 10000 levels (yaml.v2 scannerc.go max_flow_level,
 * max_indents); the reader's limit, 500, is documented in docs/cli.md.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { main } from '../src/cli/main';
import { DEFAULT_LIMITS, ReadError, readYaml } from '../src/cli/reader';
// the module object itself (an import-star copy cannot be spied on): the command reads stdin through it
const fsModule = jest.requireActual<typeof import('fs')>('fs');

const FORMS: Record<string, (n: number) => string> = {
  'a flow sequence': n => 'a: ' + '['.repeat(n) + ']'.repeat(n) + '\n',
  'an unclosed flow sequence': n => 'a: ' + '['.repeat(n) + '\n',
  'JSON maps': n => '{"a":'.repeat(n) + '1' + '}'.repeat(n),
  'flow maps': n => 'x: ' + '{a: '.repeat(n) + '1' + '}'.repeat(n) + '\n',
  'compact block sequences': n => '- '.repeat(n) + '1\n',
  'block maps': n => Array.from({ length: Math.min(n, 1500) }, (_, i) => ' '.repeat(i) + 'a:').join('\n') + ' 1\n',
  'an alias under a deep sequence': n => 'a: &x ' + '['.repeat(400) + ']'.repeat(400) + '\nb: ' + '['.repeat(n - 400) + '*x' + ']'.repeat(n - 400) + '\n',
};

const MESSAGE = /^f\.yaml: document 2 \(line \d+\): nested more than 500 levels deep, the reader's limit \(kubectl's is 10000, yaml\.v2's max_flow_level and max_indents\); no Kubernetes object nests that deep: check that the file is the manifest meant, or flatten the value \(a deep tree of data can be a JSON string\)$/;

/** The reader's error for `text` as the second document of a file, with `frames` stack frames used above it. */
function errorOf(text: string, frames = 0): string {
  const below = (k: number): string => {
    if (k > 0) return below(k - 1);
    try {
      readYaml('kind: First\n---\n' + text, 'f.yaml');
      return 'read';
    } catch (e) {
      return `${(e as Error).constructor.name}: ${(e as Error).message}`;
    }
  };
  return below(frames);
}

describe('one error for any depth over the limit', () => {
  test.each(Object.keys(FORMS))('%s', form => {
    // at the limit, read (the unclosed sequence: refused as YAML, not for its depth)
    expect(errorOf(FORMS[form](DEFAULT_LIMITS.maxDepth - 1))).toMatch(form === 'an unclosed flow sequence' ? /must be sufficiently indented and end with a \]/ : /^read$/);
    for (const n of [501, 900, 2000, 10_000, 100_000]) {
      if (form === 'block maps' && n > 1500) continue; // (1500 lines of indentation: over the 3 MiB per document past that)
      const message = errorOf(FORMS[form](n));
      expect(message.startsWith('ReadError: ')).toBe(true);
      expect(message.slice('ReadError: '.length)).toMatch(MESSAGE);
    }
  });

  test('the same message with most of the stack used by the caller', () => {
    // frames of a plain recursion above the reader: the stack the reader has left varies by ~10x
    const text = FORMS['a flow sequence'](900);
    const expected = errorOf(text);
    for (const frames of [0, 1000, 3000, 6000]) expect(errorOf(text, frames)).toBe(expected);
  });
});

describe('the command: the error, exit 1, nothing written', () => {
  let tmp: string;
  beforeAll(() => { tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'reader-depth-')); });
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  function run(args: string[], stdin = ''): { status: number; stdout: string; stderr: string } {
    let stdout = '';
    let stderr = '';
    const input = Buffer.from(stdin);
    let at = 0;
    const realReadSync = fsModule.readSync;
    const spies = [
      jest.spyOn(process.stdout, 'write').mockImplementation((c: any) => { stdout += String(c); return true; }),
      jest.spyOn(process.stderr, 'write').mockImplementation((c: any) => { stderr += String(c); return true; }),
      jest.spyOn(fsModule, 'readSync').mockImplementation(((fd: any, buffer: any, offset: any, length: any, position: any) => {
        if (fd !== 0) return (realReadSync as any)(fd, buffer, offset, length, position);
        const n = Math.min(length, input.length - at);
        input.copy(buffer, offset, at, at + n);
        at += n;
        return n;
      }) as any),
    ];
    try {
      return { status: main(args), stdout, stderr };
    } finally {
      for (const s of spies) s.mockRestore();
    }
  }

  const deep = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {x: "1"}\n---\n' + FORMS['JSON maps'](20_000) + '\n';

  test('check', () => {
    const file = path.join(tmp, 'deep.yaml');
    fs.writeFileSync(file, deep);
    const r = run(['check', file, '--kubernetes-version', '1.29']);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`${file}: document 2 (line 6): nested more than 500 levels deep, the reader's limit`);
    expect(r.stderr).not.toMatch(/internal error|Maximum call stack/);
  });

  test('render', () => {
    const r = run(['render', '--config', 'examples/chart/sidecars.yaml'], deep);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('stdin: document 2 (line 6): nested more than 500 levels deep, the reader\'s limit');
    expect(fs.readdirSync(tmp)).toEqual(['deep.yaml']);
  });
});

test('ReadError is the class of it (a clear error of the command, not an internal one)', () => {
  expect(() => readYaml(FORMS['a flow sequence'](900), 'f.yaml')).toThrow(ReadError);
});
