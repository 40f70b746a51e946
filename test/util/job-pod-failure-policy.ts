/**
 * The Job controller's podFailurePolicy matching, transcribed from kubernetes/kubernetes
 * `pkg/controller/job/pod_failure_policy.go` (read at commit 2b02db1be88b): `matchPodFailurePolicy`,
 * `matchOnExitCodes`, `getMatchingContainerFromList`, `isOnExitCodesOperatorMatching`. The tests
 * use it as the oracle for which container a rule matches in a failed pod; it is written from
 * the Go code, not from src/engine/rules.ts.
 */

export interface SimContainerStatus {
  readonly name: string;
  /** The exit code when terminated; undefined while running. */
  readonly exitCode?: number;
}

export interface SimPodStatus {
  readonly containerStatuses: SimContainerStatus[];
  readonly initContainerStatuses: SimContainerStatus[];
  readonly conditions?: Array<{ type: string; status: string }>;
}

/** The rule that decides a failed pod (its index and action) and the container it matched. */
export interface SimMatch {
  readonly index: number;
  readonly action: string;
  readonly container?: string;
}

function operatorMatches(exitCode: number, req: any): boolean {
  switch (req.operator) {
    case 'In': return (req.values ?? []).some((v: number) => v === exitCode);
    case 'NotIn': return !(req.values ?? []).some((v: number) => v === exitCode);
    default: return false;
  }
}

function fromList(statuses: SimContainerStatus[], req: any): SimContainerStatus | undefined {
  for (const s of statuses) {
    if (s.exitCode === undefined) continue; // still terminating: no exit code to match
    if (req.containerName == null || req.containerName === s.name) {
      if (s.exitCode !== 0 && operatorMatches(s.exitCode, req)) return s;
    }
  }
  return undefined;
}

/** `matchPodFailurePolicy`: the first rule that matches the failed pod, or undefined. */
export function matchPodFailurePolicy(policy: any, status: SimPodStatus): SimMatch | undefined {
  const rules: any[] = policy?.rules ?? [];
  for (let index = 0; index < rules.length; index++) {
    const rule = rules[index];
    if (rule.onExitCodes) {
      const c = fromList(status.containerStatuses, rule.onExitCodes) ?? fromList(status.initContainerStatuses, rule.onExitCodes);
      if (c) return { index, action: rule.action, container: c.name };
    } else if (rule.onPodConditions) {
      const hit = (status.conditions ?? []).some(pc => rule.onPodConditions.some((p: any) => p.type === pc.type && p.status === pc.status));
      if (hit) return { index, action: rule.action };
    }
  }
  return undefined;
}
