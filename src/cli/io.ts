/**
 * The command's input: YAML files, directories and stdin, read with cdk8s' own reader
 * (`Yaml.load`, multi-document, empty documents dropped). The library has no YAML dependency of
 * its own; cdk8s (a peer) ships one.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Yaml } from 'cdk8s';

/* eslint-disable @typescript-eslint/no-require-imports */

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
 * `.yml` file below it, hidden ones included, their paths sorted by code point).
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

function walk(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap(e => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return walk(p);
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
 * The syntax errors of a YAML text, as cdk8s' own parser reports them: `Yaml.load` reads a broken
 * file without a word (it takes what the parser recovered), so the command asks the same parser
 * (the `yaml` package that cdk8s bundles, with the YAML 1.1 schema `Yaml.load` uses) first.
 */
export function yamlErrors(text: string): string[] {
  const parser = require(require.resolve('yaml', { paths: [path.dirname(require.resolve('cdk8s'))] }));
  const docs: any[] = parser.parseAllDocuments(text, { version: '1.1' });
  const list: any[] = Array.isArray(docs) ? docs : [docs];
  return list.flatMap(d => (d.errors ?? []).map((e: Error) => firstLine(e.message)));
}

/** Reads `file` (or stdin for `-`) and fails on a YAML syntax error; then `fn` on a file holding the text. */
export function withYamlFile<T>(file: string, fn: (f: string) => T): T {
  const name = file === STDIN ? 'stdin' : file;
  let text: string;
  try {
    text = file === STDIN ? readStdin() : fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new CommandError(`${name}: cannot read it: ${firstLine((e as Error).message)}`);
  }
  const errors = yamlErrors(text);
  if (errors.length > 0) throw new CommandError(`${name}: not valid YAML: ${errors[0]}`);
  return file === STDIN ? withTempFile(text, fn) : fn(file);
}

/** The documents of one YAML file (or of stdin for `-`), with cdk8s' reader (empty documents dropped). */
export function loadDocuments(file: string): any[] {
  return withYamlFile(file, f => Yaml.load(f));
}

/** The first line of a message (child process errors carry the whole stderr). */
export function firstLine(message: string): string {
  return message.split('\n').map(l => l.trim()).find(l => l !== '') ?? message;
}
