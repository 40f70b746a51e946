/**
 * YAML text read as cdk8s' own reader reads it (`Yaml.load`'s parser and options: multi-document,
 * YAML 1.1, empty documents dropped), each document with the line where it starts: for the
 * command (src/cli/io.ts) and the validation plugin (src/validation-plugin.ts). The library has no
 * YAML dependency of its own; cdk8s (a peer) bundles one.
 */
import * as path from 'path';
import { LocatedDocument } from '../engine/check-objects';

export { LocatedDocument } from '../engine/check-objects';

/* eslint-disable @typescript-eslint/no-require-imports */

/** The `yaml` package that cdk8s bundles: the parser of cdk8s' own `Yaml.load`. */
function cdk8sYamlParser(): any {
  return require(require.resolve('yaml', { paths: [path.dirname(require.resolve('cdk8s'))] }));
}

/**
 * Parses a YAML text as cdk8s' `Yaml.load` does (cdk8s lib/yaml.js, 2.70: `parseAllDocuments`
 * of its bundled `yaml` with the YAML 1.1 schema, each document's `toJSON()`, empty documents
 * dropped), each document with the line where it starts (what SARIF, JUnit and the validation
 * plugin point at), and also returns the syntax errors, which `Yaml.load` ignores (it takes what
 * the parser recovered from a broken file). Not `Yaml.load` itself: it starts a node process per
 * file to read it (0.5 s a file on a loaded machine); test/cli.test.ts checks that both read the same.
 */
export function parseYamlLocated(text: string): { docs: LocatedDocument[]; errors: string[] } {
  const parsed = cdk8sYamlParser().parseAllDocuments(text, { version: '1.1' });
  const list: any[] = Array.isArray(parsed) ? parsed : [parsed];
  const errors = list.flatMap(d => (d.errors ?? []).map((e: Error) => firstLine(e.message)));
  const starts = lineStarts(text);
  const docs = list.map(d => ({ doc: d.toJSON(), line: lineOf(starts, d.contents?.range?.[0] ?? d.range?.[0] ?? 0) })).filter(({ doc: obj }) =>
    obj !== undefined && obj !== null &&
    !(Array.isArray(obj) && obj.length === 0) &&
    !(typeof obj === 'object' && Object.keys(obj).length === 0));
  return { docs, errors };
}

/** The offsets at which each line of `text` starts (a line ends at \n, \r\n or a lone \r, as YAML reads them). */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10 || (c === 13 && text.charCodeAt(i + 1) !== 10)) starts.push(i + 1);
  }
  return starts;
}

/** The 1-based line of an offset (binary search over the line starts). */
function lineOf(starts: readonly number[], offset: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = Math.floor((lo + hi + 1) / 2);
    if (starts[mid] <= offset) lo = mid; else hi = mid - 1;
  }
  return lo + 1;
}

/** The first line of a message. */
function firstLine(message: string): string {
  return message.split('\n').map(l => l.trim()).find(l => l !== '') ?? message;
}
