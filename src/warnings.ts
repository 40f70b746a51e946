/**
 * How a warning reaches the user. cdk8s has no Annotations (unlike the AWS CDK), so a warning
 * (a problem the pod survives, e.g. a known bug of the target's patch release) is
 *   1. printed to stderr once per synthesis (an `app.synth()` or `synthYaml()` call, or a
 *      `Chart.toJson()` outside one: the first validation that finds it, since cdk8s validates the
 *      app more than once per synthesis; before any file is written), as
 *      `[cdk8s-sidecars] WARNING: <message>`;
 *   2. kept on the workload and readable with `SidecarWarnings.of(scope)` (tests, pipelines that
 *      want to fail on warnings).
 * Messages are deterministic: the same app and target give the same messages in the same order.
 */
import { IConstruct } from 'constructs';

const WARNINGS = Symbol.for('cdk8s-sidecars.warnings');
/** The warnings `SidecarValidation.addTo` found on a workload, kept apart from its sidecar constructs' (which re-record theirs on every render). */
const VALIDATION_WARNINGS = Symbol.for('cdk8s-sidecars.validation-warnings');

/**
 * The warnings the library found while synthesizing, e.g. a known bug of the target's
 * Kubernetes patch release that hits the emitted pods.
 */
export class SidecarWarnings {
  /**
   * The warnings of the latest synthesis (or validation) of every workload inside `scope` that
   * has a sidecar, and of every workload, Service, HorizontalPodAutoscaler and
   * VerticalPodAutoscaler that SidecarValidation checked, in construct-tree order. Empty before the
   * first synthesis.
   *
   * @example
   * app.synth();
   * const warnings = SidecarWarnings.of(app); // [] when there are none
   */
  public static of(scope: IConstruct): string[] {
    const out: string[] = [];
    for (const c of scope.node.findAll()) {
      const w: string[] | undefined = (c as any)[WARNINGS];
      if (w) out.push(...w);
      const v: string[] | undefined = (c as any)[VALIDATION_WARNINGS];
      if (v) out.push(...v);
    }
    return out;
  }

  private constructor() {}
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
 * set, all of them. The set is the synthesis call's (src/bind/binding.ts printSynthesisWarnings): a
 * workload's validation runs more than once per `app.synth()`: cdk8s validates the app, then every
 * `Chart.toJson()` validates it again (cdk8s `src/app.ts` `synth` and `_synthChart`,
 * `src/chart.ts` `toJson`, 2.70.x), so without it a warning is printed once per chart plus once.
 * @internal
 */
export function printWarnings(warnings: string[], printed?: Set<string>): void {
  for (const w of warnings) {
    if (printed?.has(w)) continue;
    printed?.add(w);
    process.stderr.write(`[cdk8s-sidecars] WARNING: ${w}\n`);
  }
}
