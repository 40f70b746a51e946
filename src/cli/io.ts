/**
 * The command's input: YAML files, directories and stdin, read through the one reader of
 * src/cli/reader.ts (bounded, and as the API server reads YAML).
 */
import * as fs from 'fs';
import { CommandError, UsageError } from './errors';
import { ReadDocument, YamlValue, decodeInput, plainReading, readFileBounded, readStdinBounded, readYaml, walkDirectory } from './reader';
import { LocatedDocument } from '../engine/check-objects';

export { LocatedDocument } from '../engine/check-objects';

export { CommandError, UsageError };
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
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      throw new CommandError(`${escapeName(arg)}: ${code === 'EACCES' ? 'permission denied' : code === 'ELOOP' ? 'too many symbolic links' : 'no such file or directory'}`);
    }
    if (!stat.isDirectory()) {
      out.push(arg);
      continue;
    }
    const found = walkDirectory(arg, SKIPPED_DIRECTORIES, f => /\.ya?ml$/.test(f)).sort(byCodePoint);
    out.push(...found);
  }
  return out;
}

/** Directories a walk does not enter: a repository's own and its packages' (a file given by name is read). */
const SKIPPED_DIRECTORIES = new Set(['.git', 'node_modules']);

/**
 * The documents of one YAML file (or of stdin for `-`), as the API server reads them: empty
 * documents (null) dropped as kubectl drops them. Read errors, encodings, syntax and the reader's
 * limits are errors naming the file and the document.
 */
export function loadDocuments(file: string): any[] {
  return loadLocatedDocuments(file).map(d => d.doc);
}

/** `loadDocuments`, each document with the line where it starts. */
export function loadLocatedDocuments(file: string): LocatedDocument[] {
  return readDocuments(file).filter(d => !isEmptyCollection(d.value)).map(d => ({ doc: plainReading(d.value), line: d.line }));
}

/** `{}` or `[]` as a whole document: no object (kubectl refuses it; the commands skip it). */
function isEmptyCollection(v: YamlValue): boolean {
  return v !== null && typeof v === 'object' && Object.keys(v).length === 0;
}

/** The documents of one input with their readings kept exact (BigInt beyond 2^53), empty ones dropped. */
export function readDocuments(file: string): ReadDocument[] {
  const name = file === STDIN ? 'stdin' : escapeName(file);
  const bytes = file === STDIN ? readStdinBounded() : readFileBounded(file);
  return readYaml(decodeInput(bytes, name), name).filter(d => d.value !== null);
}

/** Reads YAML text (as the API server reads it): the non-empty documents' exact readings. */
export function readText(text: string, name: string): YamlValue[] {
  return readYaml(text, name).map(d => d.value).filter(v => v !== null);
}

/** A file name for a message or a line of output: control characters and line breaks escaped. */
export function escapeName(file: string): string {
  return /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(file) ? JSON.stringify(file) : file;
}

/** The first line of a message (child process errors carry the whole stderr). */
export function firstLine(message: string): string {
  return message.split('\n').map(l => l.trim()).find(l => l !== '') ?? message;
}
