// The public API, named one by one: the modules also export helpers for each other (the engine,
// input checks, config renderers) that are not part of it.

// target
export { SidecarLayout, SidecarMode } from './target/capabilities';
export { SidecarTargetOptions } from './target/resolver';
export { Sidecars, SidecarTarget } from './settings';
export { SidecarWarnings } from './warnings';
export { SidecarValidation } from './validation';
export { Errors, SidecarRefusal } from './errors';

// shared construct base
export { SidecarBase, SidecarCommonProps, SidecarProps } from './sidecar';

// Types a user of any cdk8s-plus major (or of none) passes: the cdk8s-plus objects of every
// major (27 to 34) are of these shapes.
export { CpuQuantity, SidecarCpuResources, SidecarResources, SidecarSizeResources } from './resources';
export { SecretKeyReference, SecretReference } from './secret-ref';
export { SidecarServicePort } from './service-port';

// WithLogAgent
export {
  BasicAuth, ForwardOutputOptions, HttpOutputOptions, LogDestinationOptions, LogOutput, LokiOutputOptions, SearchOutputOptions,
} from './log-output';
// LogAgent, each agent's options, and Images: the registry of the agents (src/agents/registry.ts)
export * from './agents/registry';
export { CaptureStdoutOptions, PodLogsOptions, WithLogAgent, WithLogAgentProps } from './with-log-agent';

// WithTracer
export { OtlpProtocol, WithTracer, WithTracerProps } from './with-tracer';

// WithEnvoy
export {
  EnvoyAppProtocol, EnvoyServicePortOptions, EnvoyTlsOptions, EnvoyUpstream, WithEnvoy, WithEnvoyProps,
} from './with-envoy';

// Any sidecar: WithSidecar, AdoptSidecar
export {
  SidecarCheck, SidecarCheckOptions, SidecarEmptyDirOptions, SidecarHttpCheckOptions, SidecarPort,
  SidecarQuit, SidecarRunOptions, SidecarVolume, WithSidecar, WithSidecarProps,
} from './with-sidecar';
export { AdoptSidecar, AdoptSidecarProps } from './adopt-sidecar';

// Meshes and the admission guard
export { Mesh, WithMeshProxy, WithMeshProxyProps } from './with-mesh';
export { NativeSidecarGuard, NativeSidecarGuardProps } from './guard';
export {
  InjectionFailurePolicy, InjectionMatchCondition, SidecarInjectionPolicy, SidecarInjectionPolicyProps,
} from './sidecar-injection-policy';

// A workload's start and stop timeline
export {
  SidecarTimeline, SidecarTimelineOptions, TimelineRequests, TimelineStartEntry, TimelineStopEntry,
} from './timeline';

// The cdk8s CLI validation plugin (cdk8s.yaml `validations:`): the checks of `cdk8s-sidecars check`
export {
  IValidationPluginContext, IValidationPluginReport, SidecarValidationPlugin, SidecarValidationPluginProps,
  ValidationPluginResource, ValidationPluginViolation,
} from './validation-plugin';
