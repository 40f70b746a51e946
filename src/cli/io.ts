/**
 * The command's input: YAML files, directories and stdin, read as cdk8s' own reader reads them
 * (`Yaml.load`'s parser and options, multi-document, empty documents dropped). The library has no
 * YAML dependency of its own; cdk8s (a peer) bundles one.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import { LocatedDocument, parseYamlLocated } from '../bind/yaml-files';

export { LocatedDocument } from '../bind/yaml-files';

/** A bad command line: the caller prints the usage line and exits 2. */
export class UsageError extends Error {}

/** An error of the user's input or environment (a file, the cluster): exit 1. */
export class CommandError extends Error {}

/** `-` in a file list: read stdin. */
export const STDIN = '-';

/** Compares by Unicode code point (UTF-8 byte order is code point order), not by UTF-16 unit. */
export function byCodePoint(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/**
 * The files to read, in order: each argument as given; a directory is walked (every `.yaml` and
 * `.yml` file below it, hidden ones included, but not inside `.git` or `node_modules`; their paths
 * sorted by code point).
 */
export function expandInputs(args: readonly string[]): string[] {
  const out: string[] = [];
  for (const arg of args) {
    if (arg === STDIN) {
      out.push(STDIN);
      continue;
    }
    let stat: fs.Stats;
    try {
      stat = fs.statSync(arg);
    } catch {
      throw new CommandError(`${arg}: no such file or directory`);
    }
    if (!stat.isDirectory()) {
      out.push(arg);
      continue;
    }
    const found = walk(arg).filter(f => /\.ya?ml$/.test(f)).sort(byCodePoint);
    out.push(...found);
  }
  return out;
}

/** Directories a walk does not enter: a repository's own and its packages' (a file given by name is read). */
const SKIPPED_DIRECTORIES = new Set(['.git', 'node_modules']);

function walk(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap(e => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return SKIPPED_DIRECTORIES.has(e.name) ? [] : walk(p);
    return e.isFile() ? [p] : [];
  });
}

/** Reads all of stdin. */
export function readStdin(): string {
  return fs.readFileSync(0, 'utf8');
}

/**
 * Runs `fn` on a temporary file that holds `text` (cdk8s' `Yaml.load` and `Include` read files),
 * then removes it.
 */
export function withTempFile<T>(text: string, fn: (file: string) => T): T {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cdk8s-sidecars-'));
  const file = path.join(dir, 'input.yaml');
  try {
    fs.writeFileSync(file, text);
    return fn(file);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Parses a YAML text as cdk8s' `Yaml.load` does, with the syntax errors `Yaml.load` ignores
 * (src/bind/yaml-files.ts). test/cli.test.ts checks that both read the same.
 */
export function parseYaml(text: string): { docs: any[]; errors: string[] } {
  const { docs, errors } = parseYamlLocated(text);
  return { docs: docs.map(d => d.doc), errors };
}

/** The documents of one YAML file (or of stdin for `-`); a syntax error is an error naming the file and line. */
export function loadDocuments(file: string): any[] {
  return loadLocatedDocuments(file).map(d => d.doc);
}

/** `loadDocuments`, each document with the line where it starts. */
export function loadLocatedDocuments(file: string): LocatedDocument[] {
  const name = file === STDIN ? 'stdin' : file;
  let text: string;
  try {
    text = file === STDIN ? readStdin() : fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new CommandError(`${name}: cannot read it: ${firstLine((e as Error).message)}`);
  }
  const { docs, errors } = parseYamlLocated(text);
  if (errors.length > 0) throw new CommandError(`${name}: not valid YAML: ${errors[0]}`);
  return docs;
}

/** The first line of a message (child process errors carry the whole stderr). */
export function firstLine(message: string): string {
  return message.split('\n').map(l => l.trim()).find(l => l !== '') ?? message;
}
