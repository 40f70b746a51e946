import { ApiObject } from 'cdk8s';
import { IConstruct } from 'constructs';
import { KUBERNETES_DEFAULT_GRACE_SECONDS } from '../facts/pod-defaults';

/**
 * The `terminationGracePeriodSeconds` the workload's construct writes when its user gave none,
 * found from how the construct behaves, not from which package it comes from.
 *
 * Every cdk8s-plus major from 27 to 34 keeps the pod's grace period as a `Duration` in the
 * public `terminationGracePeriod` of its workloads (AbstractPod) and sets it to
 * `props.terminationGracePeriod ?? Duration.seconds(30)`, which it writes as
 * `terminationGracePeriodSeconds` (lib/pod.js of cdk8s-plus-27 2.9.5 ... cdk8s-plus-34 2.0.54).
 * So on such a workload a 30 means "not set by the user" (it cannot be told from an explicit 30)
 * and the engine may raise it for the sidecars. A plain `ApiObject`, or a construct without that
 * property, writes only what its user wrote: no value stands for "unset".
 * @internal
 */
export function graceWrittenByDefault(workload: IConstruct): number | undefined {
  if (ApiObject.isApiObject(workload)) return undefined;
  const grace = (workload as any).terminationGracePeriod;
  if (grace === undefined || typeof grace.toSeconds !== 'function') return undefined;
  return grace.toSeconds() === KUBERNETES_DEFAULT_GRACE_SECONDS ? KUBERNETES_DEFAULT_GRACE_SECONDS : undefined;
}

/**
 * Whether the workload's construct wrote `shareProcessNamespace: false` because its user gave
 * nothing, found from how the construct behaves, as for the grace period above.
 *
 * cdk8s-plus 29 to 34 keep the pod's `shareProcessNamespace` as a public boolean of their
 * workloads (AbstractPod) set to `props.shareProcessNamespace ?? false` and always write it
 * (lib/pod.js of cdk8s-plus-29 2.6.0 ... cdk8s-plus-34 2.0.54); cdk8s-plus 27 and 28 have no such
 * property and write nothing. So on such a workload a `false` means "not set by the user" (it
 * cannot be told from an explicit false), and a sidecar that needs the pod's processes shared
 * (a legacy sidecar wrapped to exit with a Job's app, `watchAppExit`) may set it to true. A plain
 * `ApiObject`, or a construct without that property, writes only what its user wrote.
 * @internal
 */
export function processNamespaceWrittenByDefault(workload: IConstruct): boolean {
  if (ApiObject.isApiObject(workload)) return false;
  return (workload as any).shareProcessNamespace === false;
}
