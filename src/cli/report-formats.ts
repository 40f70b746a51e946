/**
 * `check --output sarif` and `--output junit`: the findings where pipelines look.
 *
 * - SARIF 2.1.0 (OASIS; what GitHub code scanning and most CI systems read): one run of the tool
 *   `cdk8s-sidecars` with every rule of src/engine/check-rules.ts in `tool.driver.rules`, one result per
 *   finding, each located at the file and the line where its object starts (and named logically as
 *   `Kind namespace/name`). test/cli-pipeline.test.ts validates it against the OASIS JSON schema.
 * - JUnit XML (the Ant/Surefire format that Jenkins, GitLab and Azure DevOps read): one
 *   `<testsuite>` per file, one `<testcase>` per object, a `<failure>` per error (type: the rule id),
 *   warnings in the test case's `<system-out>` (they do not fail the run, as in the text output).
 *   Validated against the Jenkins xUnit plugin's junit-10.xsd in the tests.
 */
import * as path from 'path';
import { pathToFileURL } from 'url';
import { STDIN } from './io';
import { CheckResult, Finding } from '../engine/check-objects';
import { CHECK_RULES, RULES_DOC_URL } from '../engine/check-rules';


/** A file as a SARIF artifact URI: relative paths stay relative (to the run's directory), with `/` and percent-encoding. */
export function artifactUri(file: string): string {
  if (file === STDIN) return 'stdin';
  if (path.isAbsolute(file)) return pathToFileURL(file).href;
  return file.split(path.sep).map(part => encodeURIComponent(part)).join('/');
}

export function formatSarif(result: CheckResult, toolVersion: string): string {
  const ruleIndex = new Map(CHECK_RULES.map((r, i) => [r.id, i]));
  const sarif = {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [{
      tool: {
        driver: {
          name: 'cdk8s-sidecars',
          version: toolVersion,
          semanticVersion: toolVersion,
          informationUri: 'https://github.com/cdk8s-sidecars/cdk8s-sidecars/blob/main/docs/cli.md',
          rules: CHECK_RULES.map(r => ({
            id: r.id,
            name: r.slug,
            shortDescription: { text: r.summary },
            helpUri: RULES_DOC_URL,
          })),
        },
      },
      results: result.findings.map(f => ({
        ruleId: f.rule,
        ruleIndex: ruleIndex.get(f.rule),
        level: f.level,
        message: { text: f.message },
        locations: [{
          physicalLocation: {
            artifactLocation: { uri: artifactUri(f.file) },
            region: { startLine: f.line },
          },
          logicalLocations: [{ fullyQualifiedName: objectName(f), kind: 'resource' }],
        }],
      })),
      properties: {
        target: result.target,
        sidecarContainersGate: result.gate,
        files: result.files,
        objects: result.objects,
        workloads: result.workloads,
        errors: result.findings.filter(f => f.level === 'error').length,
        warnings: result.findings.filter(f => f.level === 'warning').length,
        silenced: result.suppressed,
      },
    }],
  };
  return JSON.stringify(sarif, null, 2) + '\n';
}

/** `Kind namespace/name` (the namespace when set). */
function objectName(f: Pick<Finding, 'kind' | 'name' | 'namespace'>): string {
  return `${f.kind} ${f.namespace ? `${f.namespace}/` : ''}${f.name}`;
}

/**
 * JUnit XML. Every object checked is a test case (`Kind namespace/name (document N, line L)`,
 * classname: the file), so a CI system shows the objects that passed too; an object's errors are
 * its `<failure>`s.
 */
export function formatJunit(result: CheckResult): string {
  const objects: readonly JunitObject[] = result.inventory;
  const files = new Map<string, JunitObject[]>();
  for (const o of objects) {
    const list = files.get(o.file) ?? [];
    list.push(o);
    files.set(o.file, list);
  }
  const key = (f: { file: string; document: number }) => `${f.document}\u0000${f.file}`;
  const byObject = new Map<string, Finding[]>();
  for (const f of result.findings) {
    const list = byObject.get(key(f)) ?? [];
    list.push(f);
    byObject.set(key(f), list);
  }
  const failed = (o: JunitObject) => (byObject.get(key(o)) ?? []).some(f => f.level === 'error');
  const out: string[] = ['<?xml version="1.0" encoding="UTF-8"?>'];
  out.push(`<testsuites name="${attr(`cdk8s-sidecars check (Kubernetes ${result.target}${result.gate ? ', SidecarContainers gate on' : ''})`)}" ` +
    `tests="${objects.length}" failures="${objects.filter(failed).length}" errors="0">`);
  for (const [file, list] of files) {
    const name = file === STDIN ? 'stdin' : file;
    out.push(`  <testsuite name="${attr(name)}" tests="${list.length}" failures="${list.filter(failed).length}" errors="0" skipped="0" file="${attr(name)}">`);
    for (const o of list) {
      const found = byObject.get(key(o)) ?? [];
      const errors = found.filter(f => f.level === 'error');
      const warnings = found.filter(f => f.level === 'warning');
      out.push(`    <testcase name="${attr(`${objectName(o)} (document ${o.document}, line ${o.line})`)}" classname="${attr(name)}">`);
      for (const f of errors) {
        out.push(`      <failure type="${attr(f.rule)}" message="${attr(`${f.rule} ${f.ruleName}: ${f.message}`)}">${text(`${name}:${f.line}: ${f.rule} ${f.ruleName}\n${f.message}`)}</failure>`);
      }
      if (warnings.length > 0) {
        out.push(`      <system-out>${text(warnings.map(f => `warning: ${name}:${f.line}: ${f.rule} ${f.ruleName}: ${f.message}`).join('\n'))}</system-out>`);
      }
      out.push('    </testcase>');
    }
    out.push('  </testsuite>');
  }
  out.push('</testsuites>');
  return out.join('\n') + '\n';
}

/** An object of the input, as JUnit lists it (every object, with or without findings). */
export interface JunitObject {
  readonly file: string;
  readonly document: number;
  readonly line: number;
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
}

/**
 * XML 1.0 text: the five specials escaped, and the characters XML 1.0 cannot hold at all (C0
 * controls but tab, newline and carriage return; lone surrogates; U+FFFE/U+FFFF) written as
 * `\uXXXX`, so that a hostile name cannot break the document.
 */
function text(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && s.charCodeAt(i + 1) >= 0xdc00 && s.charCodeAt(i + 1) <= 0xdfff) {
      out += s[i] + s[i + 1];
      i++;
    } else if ((c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) || (c >= 0xd800 && c <= 0xdfff) || c === 0xfffe || c === 0xffff) {
      out += `\\u${c.toString(16).padStart(4, '0')}`;
    } else if (c === 0x26) {out += '&amp;';} else if (c === 0x3c) {out += '&lt;';} else if (c === 0x3e) {out += '&gt;';} else if (c === 0x22) {out += '&quot;';} else if (c === 0x27) {out += '&apos;';} else {out += s[i];}
  }
  return out;
}

/** An attribute value: `text`, and tab/newline/carriage return as character references (an attribute's whitespace is normalized otherwise). */
function attr(s: string): string {
  return text(s).replace(/\t/g, '&#9;').replace(/\n/g, '&#10;').replace(/\r/g, '&#13;');
}
