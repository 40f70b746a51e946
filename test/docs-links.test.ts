/**
 * The documentation's links between its own pages (README.md, CONTRIBUTING.md, docs/*.md) and
 * into the repository point at files that exist and at headings those files have (GitHub's
 * anchors), so that moving a section cannot leave a dead link behind.
 */
import * as fs from 'fs';
import * as path from 'path';
import { readDoc } from './util/docs';
import { ROOT, markdownFiles } from './util/snippets';

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as '-'. */
function anchor(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

function anchorsOf(file: string): Set<string> {
  const text = readDoc(file).replace(/^```[\s\S]*?^```/gm, '');
  return new Set([...text.matchAll(/^#{1,6}\s+(.+)$/gm)].map(m => anchor(m[1])));
}

/** Relative links of one page: [text](target) outside code blocks, without http(s) and mailto. */
function linksOf(file: string): string[] {
  const text = readDoc(file).replace(/^```[\s\S]*?^```/gm, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map(m => m[1]).filter(t => !/^(https?:|mailto:)/.test(t));
}

test('GitHub anchors as the README uses them', () => {
  expect(anchor('Meshes, the admission guard and whole-app checks')).toBe('meshes-the-admission-guard-and-whole-app-checks');
  expect(anchor('`NativeSidecarGuard`: reject what a webhook stripped')).toBe('nativesidecarguard-reject-what-a-webhook-stripped');
});

test.each(markdownFiles())('every relative link of %s resolves', (file) => {
  const links = linksOf(file);
  const dead: string[] = [];
  for (const link of links) {
    const [target, hash] = link.split('#');
    const resolved = target === '' ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), target));
    if (!fs.existsSync(path.join(ROOT, resolved))) {
      dead.push(`${link} (no file ${resolved})`);
    } else if (hash !== undefined && resolved.endsWith('.md') && !anchorsOf(resolved).has(hash)) {
      dead.push(`${link} (no heading #${hash} in ${resolved})`);
    }
  }
  expect(dead).toEqual([]);
});

test('the README links every page of docs/', () => {
  const readme = readDoc('README.md');
  for (const page of markdownFiles().filter(f => f.startsWith('docs/'))) expect(readme).toContain(`](${page})`);
});
