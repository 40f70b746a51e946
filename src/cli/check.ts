/**
 * `cdk8s-sidecars check`: the objects of all the files (read by ./io) through
 * src/engine/check-objects.ts, and the text and JSON outputs (SARIF and JUnit: ./report-formats).
 */
import { STDIN, loadLocatedDocuments } from './io';
import { escapeLine } from './reader';
import { CliTarget } from './target-options';
import { CheckOptions, CheckResult, checkDocuments } from '../engine/check-objects';

export { CheckOptions, CheckResult, Finding } from '../engine/check-objects';

export function checkFiles(files: readonly string[], target: CliTarget, options: CheckOptions = {}): CheckResult {
  return checkDocuments(files.map(file => ({ file, docs: loadLocatedDocuments(file) })), target, options);
}

/**
 * For people: one block per object with findings (its file, document and object once, then each
 * finding's level, problem and fix, in the order found), the objects in the order of their first
 * finding, then a summary. Grouped by file and document, whatever check found what (`--output
 * json` keeps one flat entry per finding).
 */
export function formatHuman(result: CheckResult): string {
  const blocks = new Map<string, string[]>();
  for (const f of result.findings) {
    const file = f.file === STDIN ? 'stdin' : f.file;
    const key = JSON.stringify([f.file, f.document]);
    let block = blocks.get(key);
    if (!block) {
      block = [escapeLine(`${file} (document ${f.document}): ${f.kind} ${f.namespace ? `${f.namespace}/` : ''}${f.name}`)];
      blocks.set(key, block);
    }
    block.push(`  ${f.level}: ${escapeLine(f.message)} [${f.rule} ${f.ruleName}]`);
  }
  const lines = [...blocks.values()].flat();
  const errors = result.findings.filter(f => f.level === 'error').length;
  const warnings = result.findings.length - errors;
  lines.push(
    `Kubernetes ${result.target}${result.gate ? ' (SidecarContainers gate on)' : ''}: ${result.files} file(s), ` +
    `${result.objects} object(s), ${result.workloads} workload(s): ${errors} error(s), ${warnings} warning(s)` +
    (result.suppressed > 0 ? `, ${result.suppressed} silenced` : ''),
  );
  return lines.join('\n') + '\n';
}

export function formatJson(result: CheckResult): string {
  const errors = result.findings.filter(f => f.level === 'error').length;
  const { inventory: _inventory, ...rest } = result;
  return JSON.stringify({ ...rest, errors, warnings: result.findings.length - errors }, null, 2) + '\n';
}
