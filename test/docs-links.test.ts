/**
 * The documentation's links between its own pages (README.md, CONTRIBUTING.md, docs/*.md) and
 * into the repository point at files that exist and at headings those files have (GitHub's
 * anchors), so that moving a section cannot leave a dead link behind. Absolute links into the
 * project's repository (`https://github.com/<repository>/blob/main/...`, for what the package does
 * not ship) are checked against this clone too (test/util/doc-links.ts).
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { anchor, deadLinks } from './util/doc-links';
import { readDoc } from './util/docs';
import { ROOT, markdownFiles } from './util/snippets';

test('GitHub anchors as the README uses them', () => {
  expect(anchor('Meshes, the admission guard and whole-app checks')).toBe('meshes-the-admission-guard-and-whole-app-checks');
  expect(anchor('`NativeSidecarGuard`: reject what a webhook stripped')).toBe('nativesidecarguard-reject-what-a-webhook-stripped');
});

test.each(markdownFiles())('every relative link of %s resolves, and every link into the repository', (file) => {
  expect(deadLinks(ROOT, file, { repositoryRoot: ROOT })).toEqual([]);
});

test('the README links every page of docs/', () => {
  const readme = readDoc('README.md');
  for (const page of markdownFiles().filter(f => f.startsWith('docs/'))) expect(readme).toContain(`](${page})`);
});

test('deadLinks: a page of its own (a tmp dir) with a dead relative link, a missing heading and a link into the repository', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'doc-links-'));
  const repo = 'https://github.com/example/project';
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ repository: { type: 'git', url: `git+${repo}.git` } }));
  fs.mkdirSync(path.join(dir, 'docs'));
  fs.writeFileSync(path.join(dir, 'docs', 'a.md'), '# A page\n\n## Its `second` heading\n');
  fs.writeFileSync(path.join(dir, 'README.md'), [
    '[ok](docs/a.md) [ok](docs/a.md#its-second-heading) [gone](docs/b.md) [no heading](docs/a.md#nope)',
    `[repo ok](${repo}/blob/main/docs/a.md#a-page) [repo gone](${repo}/tree/main/examples/) [elsewhere](https://example.com/x.md)`,
    '[outside](../x.md)',
    '```md\n[in code](nothing.md)\n```',
  ].join('\n'));
  expect(deadLinks(dir, 'README.md')).toEqual([
    'docs/b.md (no file docs/b.md)',
    'docs/a.md#nope (no heading #nope in docs/a.md)',
    '../x.md (no file ../x.md)',
  ]);
  expect(deadLinks(dir, 'README.md', { repositoryRoot: dir })).toEqual([
    'docs/b.md (no file docs/b.md)',
    'docs/a.md#nope (no heading #nope in docs/a.md)',
    `${repo}/tree/main/examples/ (the repository has no examples)`,
    '../x.md (no file ../x.md)',
  ]);
  fs.rmSync(dir, { recursive: true });
});

test('every src/ file the test fixtures (YAML under test/) name in their comments exists', () => {
  const yamls: string[] = [];
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const rel = `${dir}/${e.name}`;
      if (e.isDirectory()) walk(rel);
      else if (/\.ya?ml$/.test(e.name)) yamls.push(rel);
    }
  };
  walk('test');
  const named = yamls.flatMap(f => [...fs.readFileSync(path.join(ROOT, f), 'utf8').matchAll(/src\/[\w./-]+\.ts/g)].map(m => [f, m[0]]));
  expect(named.length).toBeGreaterThan(0);
  expect(named.filter(([, src]) => !fs.existsSync(path.join(ROOT, src)))).toEqual([]);
});
