/**
 * `npm test` step (task `test:snippets`): type-checks every TypeScript snippet of README.md,
 * CONTRIBUTING.md, docs/*.md and the TSDoc `@example`s (what API.md shows) against the library,
 * and fails on the first error. Blocks marked ```ts nocompile are skipped (and listed).
 * How snippets become modules: test/util/snippets.ts.
 */
import { allSnippets, compileSnippets, isCompiled } from '../test/util/snippets';

const snippets = allSnippets();
const skipped = snippets.filter(s => !isCompiled(s));
const started = Date.now();
const errors = compileSnippets(snippets);
const compiled = snippets.length - skipped.length;
for (const s of skipped) console.log(`check-snippets: not compiled (nocompile): ${s.file}:${s.line}`);
if (errors.length > 0) {
  for (const e of errors) console.error(`check-snippets: ${e.message}`);
  console.error(`check-snippets: ${errors.length} error(s) in ${compiled} snippets; fix the snippet (or mark a fragment \`\`\`ts nocompile).`);
  process.exit(1);
}
console.log(`check-snippets: ${compiled} snippets compile (${skipped.length} marked nocompile), ${((Date.now() - started) / 1000).toFixed(1)} s`);
