/** What the API server fills in on a pod spec that does not say (k8s.io/api core/v1 defaults), and the size bound of a sidecar. */

/** Kubernetes' default `terminationGracePeriodSeconds` (core/v1 `DefaultTerminationGracePeriodSeconds`). */
export const KUBERNETES_DEFAULT_GRACE_SECONDS = 30;

/**
 * The largest request or limit one sidecar may ask without a warning: 64 CPUs and 256 GiB of
 * memory (docs/errors.md, "Warnings, not errors"). Nodes of the general-purpose and
 * compute-optimized machine types of the large clouds top out at 64 to 192 vCPUs and 256 to 768
 * GiB; an agent beside an app that asks more than a whole common node is a unit mistake
 * (`Cpu.units(500)` for `Cpu.millis(500)`, `Size.tebibytes(5)` for mebibytes) far more often than
 * a need: a pod that asks it stays Pending on every node that is smaller. A warning, not an error,
 * since memory-optimized nodes of several TiB exist.
 */
export const SIDECAR_RESOURCE_BOUND = { cpuCores: 64, memoryMiB: 256 * 1024 } as const;
