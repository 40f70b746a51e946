/** The user-facing documentation, for the tests that check what it says against the source. */
import * as fs from 'fs';
import * as path from 'path';
import { ROOT, markdownFiles } from './snippets';

/** One documentation file (`README.md`, `docs/envoy.md`, ...), with white space runs as one space when `flat`. */
export function readDoc(file: string, flat = false): string {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  return flat ? text.replace(/\s+/g, ' ') : text;
}

/** README.md, CONTRIBUTING.md and every docs/*.md, one after another. */
export function allDocs(flat = false): string {
  return markdownFiles().map(f => readDoc(f, flat)).join('\n');
}
