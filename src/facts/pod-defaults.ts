/** What the API server fills in on a pod spec that does not say (k8s.io/api core/v1 defaults). */

/** Kubernetes' default `terminationGracePeriodSeconds` (core/v1 `DefaultTerminationGracePeriodSeconds`). */
export const KUBERNETES_DEFAULT_GRACE_SECONDS = 30;
