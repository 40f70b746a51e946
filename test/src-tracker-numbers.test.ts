/**
 * A reader of the published package cannot open this project's tracker: a comment in src/ says the
 * reason for what it guards, never "issue N" alone. Upstream bugs are named with their repository
 * (`kubernetes#137710`, `vectordotdev/vector#23602`), which a reader can open.
 */
import * as fs from 'fs';
import * as path from 'path';

const SRC = path.join(__dirname, '..', 'src');

function files(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap(e =>
    e.isDirectory() ? files(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []);
}

/** "issue 50", "Issue #8", "issues 17 and 36": a number of this project's tracker. */
const TRACKER_NUMBER = /\b[Ii]ssues? #?\d+\b/;

test('no line of src/ names a tracker number instead of a reason', () => {
  const found = files(SRC).flatMap(f => fs.readFileSync(f, 'utf8').split('\n')
    .map((line, i) => ({ line, at: `${path.relative(SRC, f)}:${i + 1}` }))
    .filter(x => TRACKER_NUMBER.test(x.line))
    .map(x => `${x.at}: ${x.line.trim()}`));
  expect(found).toEqual([]);
});

test('the pattern catches the forms a comment uses, and leaves upstream references alone', () => {
  for (const bad of ['// (issue 50, the import\'s share)', '// see Issue #8', '// issues 17 and 36']) expect(TRACKER_NUMBER.test(bad)).toBe(true);
  for (const good of ['// kubernetes#137710', '// vectordotdev/vector#23602 (fixed by #26268)', '// the issue is that 2 containers']) {
    expect(TRACKER_NUMBER.test(good)).toBe(false);
  }
});
