/**
 * Where the warnings are kept (on the workload object, beside the sidecar constructs' and
 * SidecarValidation's) and how they are printed; `SidecarWarnings.of` (src/warnings.ts) reads them.
 */
import { IConstruct } from 'constructs';
import { CHECK_IGNORE_ANNOTATION, CHECK_RULES, parseRuleList } from '../engine/check-rules';
import { Where } from '../private/errors';

const WARNINGS = Symbol.for('cdk8s-sidecars.warnings');
/** The warnings `SidecarValidation.addTo` found on a workload, kept apart from its sidecar constructs' (which re-record theirs on every render). */
const VALIDATION_WARNINGS = Symbol.for('cdk8s-sidecars.validation-warnings');

/** The warnings kept on one construct: its sidecar constructs', then SidecarValidation's. @internal */
export function warningsOf(c: IConstruct): string[] {
  const out: string[] = [];
  const w: string[] | undefined = (c as any)[WARNINGS];
  if (w) out.push(...w);
  const v: string[] | undefined = (c as any)[VALIDATION_WARNINGS];
  if (v) out.push(...v);
  return out;
}

/** Replaces the warnings of one workload object. @internal */
export function recordWarnings(obj: IConstruct, warnings: string[]): void {
  (obj as any)[WARNINGS] = [...warnings];
}

/** Whether a sidecar construct (the binding) has recorded warnings on `obj`: it then reports the workload's own checks itself. @internal */
export function hasRecordedWarnings(obj: IConstruct): boolean {
  return (obj as any)[WARNINGS] !== undefined;
}

/** Replaces the warnings SidecarValidation.addTo found on one workload object. @internal */
export function recordValidationWarnings(obj: IConstruct, warnings: string[]): void {
  (obj as any)[VALIDATION_WARNINGS] = [...warnings];
}

/**
 * The rule of `cdk8s-sidecars check` (src/engine/check-rules.ts) each warning text was found by,
 * where one was: the synthesis prints it beside the warning and the object's check-ignore
 * annotation silences it, as `check` does. Keyed by the text (warnings are plain strings from the
 * engine to `SidecarWarnings.of`); the texts are deterministic, so the map holds one entry per
 * distinct warning ever found.
 */
const RULE_OF_WARNING = new Map<string, string>();

/** Records that `warning` was found by the rule `ruleId` (`CS021`), and returns it. @internal */
export function tagWarning(warning: string, ruleId: string): string {
  RULE_OF_WARNING.set(warning, ruleId);
  return warning;
}

/** The rule id a warning was found by (tagWarning), or undefined. @internal */
export function ruleOfWarning(warning: string): string | undefined {
  return RULE_OF_WARNING.get(warning);
}

/** ` [CS021 known-kubernetes-bug]`: how a warning names its rule (as `check` prints a finding), or '' without one. */
export function ruleSuffix(ruleId: string | undefined): string {
  const rule = ruleId === undefined ? undefined : CHECK_RULES.find(r => r.id === ruleId);
  return rule === undefined ? '' : ` [${rule.id} ${rule.slug}]`;
}

/**
 * The rule ids the check-ignore annotation of a manifest (its own metadata, as `check` reads it)
 * silences; unknown entries silence nothing (`check` warns of them, CS024).
 * @internal
 */
export function ignoredRules(manifest: any): Set<string> {
  const value = manifest?.metadata?.annotations?.[CHECK_IGNORE_ANNOTATION];
  const out = new Set<string>();
  if (typeof value !== 'string') return out;
  for (const part of value.split(',')) {
    try {
      for (const id of parseRuleList([part], new Where(CHECK_IGNORE_ANNOTATION))) out.add(id);
    } catch {
      // an unknown rule: silences nothing
    }
  }
  return out;
}

/**
 * Prints to stderr each of `warnings` that is not in `printed` yet (and adds it there); without a
 * set, all of them. A workload's warnings are printed when its `toJson()` emits it (no set);
 * SidecarValidation's, found in every validation pass, with the App's set (src/bind/binding.ts
 * printSynthesisWarnings: once per synthesis, by their text). A warning found by a rule of `check`
 * ends with its id and name, and is not printed when `ignored` (the object's check-ignore
 * annotation, `ignoredRules`) holds that id.
 * @internal
 */
export function printWarnings(warnings: string[], printed?: Set<string>, ignored: ReadonlySet<string> = new Set()): void {
  for (const w of warnings) {
    const rule = RULE_OF_WARNING.get(w);
    if (rule !== undefined && ignored.has(rule)) continue;
    if (printed?.has(w)) continue;
    printed?.add(w);
    process.stderr.write(`[cdk8s-sidecars] WARNING: ${w}${ruleSuffix(rule)}\n`);
  }
}
