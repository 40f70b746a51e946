/**
 * The documentation stays one a user reads to the end: README.md and docs/*.md (without
 * docs/proof.md, which the cluster suite generates) within 30,000 words, CONTRIBUTING.md within
 * 3,000. Words are counted as `wc -w` does: runs of non-white-space characters, code included.
 */
import { readDoc } from './util/docs';
import { markdownFiles } from './util/snippets';

const GENERATED = ['docs/proof.md'];
const words = (file: string) => readDoc(file).split(/\s+/).filter(w => w !== '').length;

test('README.md and docs/*.md (without the generated proof.md) hold at most 30,000 words', () => {
  const pages = markdownFiles().filter(f => f === 'README.md' || (f.startsWith('docs/') && !GENERATED.includes(f)));
  expect(pages).toContain('README.md');
  expect(pages.length).toBeGreaterThan(5);
  const total = pages.reduce((n, f) => n + words(f), 0);
  // (on failure, the pages by size say where to cut)
  const bySize = pages.map(f => `${words(f)} ${f}`).sort((a, b) => parseInt(b) - parseInt(a));
  expect({ total, bySize }).toEqual({ total: Math.min(total, 30_000), bySize });
});

test('CONTRIBUTING.md holds at most 3,000 words, the map of the house first', () => {
  expect(words('CONTRIBUTING.md')).toBeLessThanOrEqual(3_000);
  const headings = readDoc('CONTRIBUTING.md').split('\n').filter(l => l.startsWith('## '));
  expect(headings[0]).toBe('## The map of the house');
});

test('the count is wc -w\'s', () => {
  expect('a  b\n\tc `d` | e |\n'.split(/\s+/).filter(w => w !== '').length).toBe(7);
});
