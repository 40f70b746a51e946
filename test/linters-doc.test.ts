/**
 * The pipeline linters' design choices (test/linters/util/design-choices.ts, which
 * `npm run test:linters` holds kube-score's findings to) are the ones docs/security.md explains:
 * each has its row in "What the linters say" and a section of its own, and no row is left without
 * a choice behind it.
 */
import * as fs from 'fs';
import * as path from 'path';
import { DESIGN_CHOICES, HIDDEN_FINDINGS } from './linters/util/design-choices';

const DOC = fs.readFileSync(path.join(__dirname, '..', 'docs', 'security.md'), 'utf8');
const SECTION = DOC.slice(DOC.indexOf('\n## What the linters say\n'), DOC.indexOf('\n## Pinning the images by digest\n'));

test('docs/security.md has the section, then the digest pinning', () => {
  expect(DOC.indexOf('\n## What the linters say\n')).toBeGreaterThan(0);
  expect(SECTION.length).toBeGreaterThan(1000);
});

test.each(DESIGN_CHOICES.map(d => [`${d.check}: ${d.summary}`, d] as const))('the design choice %s has its row and its section', (_name, d) => {
  const rows = SECTION.split('\n').filter(l => l.startsWith(`| \`${d.check}\` |`));
  expect(rows.some(r => r.includes(d.summary) && r.includes(`[${d.doc}]`))).toBe(true);
  expect(SECTION).toContain(`\n### ${d.doc}\n`);
});

test('every row of the table is a design choice of the test', () => {
  const rows = SECTION.split('\n').filter(l => /^\| `[a-z-]+` \|/.test(l));
  for (const r of rows) {
    const check = /^\| `([a-z-]+)` \|/.exec(r)![1];
    expect(DESIGN_CHOICES.map(d => d.check)).toContain(check);
  }
  expect(rows.length).toBeGreaterThanOrEqual(new Set(DESIGN_CHOICES.map(d => `${d.check} ${d.doc}`)).size);
});

test.each(HIDDEN_FINDINGS.map(h => [h.summary, h] as const))('the hidden finding "%s" is explained', (_name, h) => {
  expect(SECTION).toContain(`\n### ${h.doc}\n`);
  expect(SECTION).toContain(`**${h.summary}**`);
});
