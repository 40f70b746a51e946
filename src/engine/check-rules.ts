/**
 * The ids of `cdk8s-sidecars check`'s rules (also the validation plugin's) (docs/cli.md, "Rules"): each finding of the checks
 * (src/manifests-check.ts, the engine's `POD_SPEC_RULES`, the known-bug table and the CLI's own)
 * carries one, so that SARIF, JUnit and the cdk8s validation plugin can name it and a run or an
 * object can silence it. An id never changes meaning and is never reused; a new rule gets the
 * next number. test/cli-pipeline.test.ts checks that every check has exactly one id and that
 * docs/cli.md lists them all.
 */
import { SET_RULES } from './manifests-check';
import { POD_SPEC_RULES, POD_SPEC_SHAPE_RULE } from './rules';
import { SidecarError, Where, internalError } from '../private/errors';

export interface CheckRule {
  /** `CS001`: stable, never reused. */
  readonly id: string;
  /** `native-sidecar-below-1.29`: the id for people (either may be given to silence it). */
  readonly slug: string;
  /** One line: what it finds. */
  readonly summary: string;
  /** The names of the checks it covers (a `POD_SPEC_RULES` name, a `SET_RULES` value, or a CLI check below). */
  readonly checks: readonly string[];
}

/** Where the rules are documented (SARIF `helpUri`, the validation plugin's `fix`). */
export const RULES_DOC_URL = 'https://github.com/cdk8s-sidecars/cdk8s-sidecars/blob/main/docs/cli.md#rules';

/** The checks made in src/engine/check-objects.ts beyond the others, named as the others are. */
export const CLI_CHECKS = {
  knownBug: 'a known bug of the target patch release',
  sidecarRequests: 'a native sidecar without CPU or memory requests',
  notAnObject: 'a YAML document that is not an object',
  unknownIgnore: 'the check-ignore annotation names a rule that does not exist',
} as const;

const ruleName = (fragment: string) => {
  const found = POD_SPEC_RULES.filter(r => r.name.startsWith(fragment));
  if (found.length !== 1) throw internalError(`check-rules.ts: ${found.length} POD_SPEC_RULES start with '${fragment}'`);
  return found[0].name;
};

export const CHECK_RULES: readonly CheckRule[] = [
  { id: 'CS001', slug: 'native-sidecar-below-1.29', summary: 'an init container with restartPolicy Always (a native sidecar) on 1.27, or on 1.28 without the SidecarContainers gate', checks: [ruleName('native sidecars')] },
  { id: 'CS002', slug: 'probe-on-init-container', summary: 'a probe or lifecycle hook on an init container that is not a native sidecar', checks: [ruleName('probes and lifecycle hooks')] },
  { id: 'CS003', slug: 'init-container-restart-policy', summary: 'an init container restartPolicy the target does not allow', checks: [ruleName('init container restartPolicy')] },
  { id: 'CS004', slug: 'container-restart-policy', summary: 'restartPolicy on a regular container where the target does not allow it', checks: [ruleName('restartPolicy on regular')] },
  { id: 'CS005', slug: 'init-container-resize-policy', summary: 'resizePolicy on an init container below 1.33', checks: [ruleName('resizePolicy on init containers')] },
  { id: 'CS006', slug: 'sleep-action-unsupported', summary: 'the sleep lifecycle action below 1.30', checks: [ruleName('the sleep lifecycle action exists')] },
  { id: 'CS007', slug: 'sleep-action-zero', summary: 'a sleep action of 0 seconds below 1.33', checks: [ruleName('a sleep action is at least')] },
  { id: 'CS008', slug: 'sleep-action-over-grace', summary: 'a sleep action longer than terminationGracePeriodSeconds', checks: [ruleName('a sleep action is no longer')] },
  { id: 'CS009', slug: 'container-name-invalid', summary: 'a container name that is not a DNS-1123 label', checks: [ruleName('container names are DNS-1123')] },
  { id: 'CS010', slug: 'container-name-duplicate', summary: 'a container name used twice across initContainers and containers', checks: [ruleName('container names are unique')] },
  { id: 'CS011', slug: 'volume-name', summary: 'a volume name that is not a DNS-1123 label or is used twice', checks: [ruleName('volume names')] },
  { id: 'CS012', slug: 'volume-mount-without-volume', summary: 'a volume mount that names no volume of the pod', checks: [ruleName('every volume mount')] },
  { id: 'CS013', slug: 'host-port-conflict', summary: 'a host port used twice where the API server refuses it', checks: [ruleName('host ports')] },
  { id: 'CS014', slug: 'pod-spec-malformed', summary: 'a pod spec whose lists are not lists of named objects, or whose restartPolicyRules are not of the API\'s shape', checks: [POD_SPEC_SHAPE_RULE] },
  { id: 'CS015', slug: 'job-failure-policy-matches-sidecars', summary: "a Job podFailurePolicy rule without containerName that matches the native sidecars' exit codes", checks: [SET_RULES.jobPodFailurePolicy] },
  { id: 'CS016', slug: 'sidecar-prestop-stops-itself', summary: "a native sidecar's preStop that stops its own process", checks: [SET_RULES.selfStoppingPreStop] },
  { id: 'CS017', slug: 'service-target-port', summary: "a Service's targetPort that the selected pods do not serve (a name only a native sidecar declares below 1.32, ...)", checks: [SET_RULES.serviceTargetPort] },
  { id: 'CS018', slug: 'hpa-without-requests', summary: 'an HPA on utilization of a pod whose containers lack the request', checks: [SET_RULES.autoscalerRequests] },
  { id: 'CS019', slug: 'vpa-with-native-sidecars', summary: 'a VPA of a pod with native sidecars', checks: [SET_RULES.verticalAutoscaler] },
  { id: 'CS020', slug: 'sidecar-readiness-without-service', summary: 'a readiness probe on a native sidecar that no Service sends traffic to', checks: [SET_RULES.sidecarReadiness] },
  { id: 'CS021', slug: 'known-kubernetes-bug', summary: 'a known bug of the target patch release that the workload runs into', checks: [CLI_CHECKS.knownBug] },
  { id: 'CS022', slug: 'native-sidecar-without-requests', summary: 'a native sidecar without a CPU or memory request (nor a limit)', checks: [CLI_CHECKS.sidecarRequests] },
  { id: 'CS023', slug: 'not-an-object', summary: 'a YAML document that is not a Kubernetes object (a scalar or a list)', checks: [CLI_CHECKS.notAnObject] },
  { id: 'CS024', slug: 'unknown-rule-in-annotation', summary: `the ${'sidecars.cdk8s.io/check-ignore'} annotation names a rule that does not exist (a typo silences nothing)`, checks: [CLI_CHECKS.unknownIgnore] },
  { id: 'CS025', slug: 'restart-policy-rules', summary: 'restartPolicyRules on a container where the target does not allow it (before 1.35) or with an action it does not know', checks: [ruleName('restartPolicyRules')] },
  { id: 'CS026', slug: 'stop-signal', summary: 'lifecycle.stopSignal, which no release has on with its default feature gates', checks: [ruleName('lifecycle.stopSignal')] },
  { id: 'CS027', slug: 'pod-level-resources', summary: 'pod-level resources before 1.34, or ones that do not cover the containers', checks: [ruleName('pod-level resources')] },
  { id: 'CS028', slug: 'init-resize-restart-container', summary: 'resizePolicy RestartContainer on an init container that is not a native sidecar (1.36+)', checks: [ruleName('resizePolicy RestartContainer')] },
  { id: 'CS029', slug: 'projected-certificate-sources', summary: 'podCertificate or clusterTrustBundle projected volume sources the target drops', checks: [ruleName('podCertificate')] },
];

/** The annotation (on an object's metadata) that silences rules for that object: ids or slugs, comma-separated. */
export const CHECK_IGNORE_ANNOTATION = 'sidecars.cdk8s.io/check-ignore';

/** The rule of a check's name. */
export function ruleOfCheck(check: string): CheckRule {
  const rule = CHECK_RULES.find(r => r.checks.includes(check));
  if (!rule) throw internalError(`no rule id for the check '${check}' (add it to CHECK_RULES in src/engine/check-rules.ts)`);
  return rule;
}

/** ` [CS004 container-restart-policy]`: the rule of a check's name as messages end with it (as `check` prints a finding), or '' for a check without one. */
export function ruleSuffixOfCheck(check: string): string {
  const rule = CHECK_RULES.find(r => r.checks.includes(check));
  return rule === undefined ? '' : ` [${rule.id} ${rule.slug}]`;
}

/** The rule of an id (`CS001`, any case) or slug, or undefined. */
export function findRule(idOrSlug: string): CheckRule | undefined {
  const key = idOrSlug.trim();
  return CHECK_RULES.find(r => r.id === key.toUpperCase() || r.slug === key.toLowerCase());
}

/**
 * The rule ids of a list of ids or slugs (each entry may hold several, comma-separated); an
 * unknown one is an error naming it and `who` (the flag, the annotation), with the known ids.
 */
export function parseRuleList(entries: readonly string[], who: Where): Set<string> {
  const out = new Set<string>();
  for (const part of entries.flatMap(e => e.split(','))) {
    if (part.trim() === '') continue;
    const rule = findRule(part);
    if (!rule) {
      throw new UnknownRuleError({
        where: who.text,
        problem: `unknown rule '${part.trim()}'`,
        value: part.trim(),
        fix: `use an id from CS001 to ${CHECK_RULES[CHECK_RULES.length - 1].id} or its name (docs/cli.md, "Rules")`,
      });
    }
    out.add(rule.id);
  }
  return out;
}

/** An unknown rule id or slug in a flag, an annotation or the plugin's properties. */
export class UnknownRuleError extends SidecarError {}
