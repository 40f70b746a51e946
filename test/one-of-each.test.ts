/**
 * One of each cross-cutting piece (issue 35 point 4): each is written once, in the file named
 * here, and no other file of src/ writes it again. Each check is a pattern that the second copies
 * this project had matched (and that their owner's file matches), so a new copy fails here; the
 * kinds table and the pod-template path have their own check in test/kinds.test.ts; the reader of the
 * environment (src/target/resolver.ts) is a lint rule (test/src-lint-rules.test.ts).
 */
import * as fs from 'fs';
import * as path from 'path';

const SRC = path.join(__dirname, '..', 'src');

/** Every .ts file of src/, as `dir/file.ts`, with its text without comments. */
const FILES: ReadonlyArray<{ readonly file: string; readonly code: string }> = (fs.readdirSync(SRC, { recursive: true }) as string[])
  .filter(f => f.endsWith('.ts'))
  .map(f => ({ file: f.split(path.sep).join('/'), code: withoutComments(fs.readFileSync(path.join(SRC, f), 'utf8')) }));

/** The code without `//` line comments and `/* ... *\/` blocks (a pattern named in a comment is no copy). */
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
}

const PIECES: ReadonlyArray<{ readonly piece: string; readonly owner: string; readonly patterns: readonly RegExp[] }> = [
  {
    piece: 'the pod-template accessor (podTemplateIn / podTemplateOf / podTemplateCopy)',
    owner: 'facts/kinds.ts',
    // a copy fed to the accessor (the copying variant is podTemplateCopy), or an accessor of one's own
    patterns: [/podTemplateOf\(structuredClone\(/, /function \w*(?:[tT]emplate(?:Of|In|OfCopy|Copy)|podSpec(?:Of|In)|podMetadata(?:Of|In))\s*\(/],
  },
  {
    piece: 'whether a Service selects a pod (selectsPods / selectorSelects / serviceSelects)',
    owner: 'facts/services.ts',
    // an empty selector selects nothing; every key of it must match the pod's labels
    patterns: [/Object\.keys\([\w?.]*selector\)\.length/, /Object\.entries\([\w?.]*selector[\w?.]*\)\.every\(/],
  },
  {
    piece: 'the grammar of a release version (parseReleasePrefix), for Kubernetes, meshes, image tags and node versions',
    owner: 'target/capabilities.ts',
    // `(\d+)\.(\d+)`, `v?\d+\.\d+` and the node reader's `v?1\.(...)`
    patterns: [/\\d\+\)\\\.\(\\d\+\)/, /v\?\\d\+\\\.\\d\+/, /v\?1\\\.\(/],
  },
  {
    piece: "Kubernetes' default grace period of 30 s (KUBERNETES_DEFAULT_GRACE_SECONDS)",
    owner: 'facts/pod-defaults.ts',
    patterns: [/terminationGracePeriodSeconds\s*\?\?\s*\d/, /GRACE\w*\s*=\s*30\b/, /\?\?\s*30\b/],
  },
];

describe.each(PIECES)('$piece: in $owner only', ({ owner, patterns }) => {
  test('the owner has it (the patterns match what they are meant to)', () => {
    const code = FILES.find(f => f.file === owner)?.code ?? '';
    expect({ owner, found: patterns.some(p => p.test(code)) }).toEqual({ owner, found: true });
  });

  test('no other file of src/ has a copy', () => {
    const copies = FILES.filter(f => f.file !== owner).flatMap(f => patterns.filter(p => p.test(f.code)).map(p => `${f.file}: ${p}`));
    expect(copies).toEqual([]);
  });
});
