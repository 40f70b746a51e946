/**
 * How a warning reaches the user. cdk8s has no Annotations (unlike the AWS CDK), so a warning
 * (a problem the pod survives, e.g. a known bug of the target's patch release) is
 *   1. printed to stderr as `[cdk8s-sidecars] WARNING: <message>`: a workload's when cdk8s emits
 *      it (its `toJson()`, once per `app.synth()`, `synthYaml()` or `Chart.toJson()` call);
 *      SidecarValidation's app-wide ones once per synthesis, by their text (its validation runs in
 *      every validation pass; in an app without sidecar constructs, where nothing marks the end of
 *      a synthesis, once per App: src/bind/binding.ts `AppState`);
 *   2. kept on the workload and readable with `SidecarWarnings.of(scope)` (tests, pipelines that
 *      want to fail on warnings).
 * Messages are deterministic: the same app and target give the same messages in the same order.
 */
import { IConstruct } from 'constructs';
import { warningsOf } from './bind/warnings';

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
    for (const c of scope.node.findAll()) out.push(...warningsOf(c));
    return out;
  }

  private constructor() {}
}
