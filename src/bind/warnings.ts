/**
 * Where the warnings are kept (on the workload object, beside the sidecar constructs' and
 * SidecarValidation's) and how they are printed; `SidecarWarnings.of` (src/warnings.ts) reads them.
 */
import { IConstruct } from 'constructs';

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
 * Prints to stderr each of `warnings` that is not in `printed` yet (and adds it there); without a
 * set, all of them. A workload's warnings are printed when its `toJson()` emits it, once per call
 * (no set); SidecarValidation's, found in every validation pass (cdk8s validates the app, then every
 * `Chart.toJson()` validates it again: `src/app.ts` `synth` and `_synthChart`, 2.70.x), with the
 * call's set (src/bind/binding.ts printSynthesisWarnings).
 * @internal
 */
export function printWarnings(warnings: string[], printed?: Set<string>): void {
  for (const w of warnings) {
    if (printed?.has(w)) continue;
    printed?.add(w);
    process.stderr.write(`[cdk8s-sidecars] WARNING: ${w}\n`);
  }
}
