/**
 * Writes the README's default-image table (between `<!-- default-images:start -->` and
 * `<!-- default-images:end -->`) from `Images._all`: the log agents' pins, read from the registry
 * (src/agents/registry.ts), then the other sidecars' (src/facts/images.ts). test/images.test.ts
 * fails when the README's table is not this one.
 *
 *   npx projen docs:images
 */
import * as fs from 'fs';
import * as path from 'path';
import { Images } from '../src/agents/registry';

/** The table's lines, header included. */
export function imageTable(): string {
  const cell = (usedBy: string) => (usedBy.includes(' ') ? usedBy : `\`${usedBy}\``);
  return ['| image | used by |', '|---|---|', ...Images._all.map(i => `| \`${i.image}\` | ${cell(i.usedBy)} |`)].join('\n') + '\n';
}

if (require.main === module) {
  const file = path.join(__dirname, '..', 'README.md');
  const text = fs.readFileSync(file, 'utf8');
  const out = text.replace(/(<!-- default-images:start -->\n)[\s\S]*?(<!-- default-images:end -->)/, (_, a: string, b: string) => a + imageTable() + b);
  if (out === text) {
    process.stdout.write('README.md: the image table is up to date\n');
  } else {
    fs.writeFileSync(file, out);
    process.stdout.write('README.md: the image table rewritten from Images._all\n');
  }
}
