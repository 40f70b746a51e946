/**
 * `cdk8s-sidecars policy --config sidecars.yaml`: the render config's `admission` key as a
 * SidecarInjectionPolicy (docs/admission.md), written as YAML for kubectl or GitOps: the
 * MutatingAdmissionPolicy, its binding and the agents' ConfigMaps in each namespace. The sidecars
 * are those of one `workloads` entry (`admission.workload`), with the same props `render` gives
 * them: the same constructs, attached to the policy's stand-in pod instead of a workload.
 */
import { App, Chart } from 'cdk8s';
import { CommandError } from './io';
import { ConfigError, RenderConfig } from './render-config';
import { writeDocuments } from './writer';
import { InjectionFailurePolicy, SidecarInjectionPolicy } from '../sidecar-injection-policy';
import { WithEnvoy } from '../with-envoy';
import { WithLogAgent } from '../with-log-agent';
import { WithSidecar } from '../with-sidecar';
import { WithTracer } from '../with-tracer';

/** The policy's objects for `config` (its `admission` key), as multi-document YAML. */
export function policy(config: RenderConfig, configFile: string): string {
  const admission = config.admission;
  if (!admission) throw new ConfigError(`${configFile}: admission`, 'required key is missing: the namespaces (and whose sidecars) the policy injects into');
  const entry = config.workloads[admission.workload];
  const at = (key: string) => `${configFile}: ${key}`;
  if (entry.adopt.length > 0) {
    throw new ConfigError(at(`${entry.path}.adopt`), 'a policy cannot adopt a container of each pod (its containers are not known when the policy is written); give the sidecar as a new container (sidecars) instead');
  }
  const target = {
    ...(config.kubernetesVersion !== undefined ? { kubernetesVersion: config.kubernetesVersion } : {}),
    ...(config.sidecarContainersGate !== undefined ? { sidecarContainersGate: config.sidecarContainersGate } : {}),
  };
  const app = new App();
  const chart = new Chart(app, 'sidecars');
  let p: SidecarInjectionPolicy;
  try {
    const props = admission.props;
    p = new SidecarInjectionPolicy(chart, 'policy', {
      ...(config.kubernetesVersion !== undefined ? { kubernetesVersion: config.kubernetesVersion } : {}),
      ...props,
      namespaces: props.namespaces,
      failurePolicy: props.failurePolicy as InjectionFailurePolicy | undefined,
    });
  } catch (e) {
    throw new ConfigError(at('admission'), (e as Error).message);
  }
  const pod = p.pod;
  const add = (key: string, make: () => void) => {
    try {
      make();
    } catch (e) {
      throw new ConfigError(at(`${entry.path}.${key}`), (e as Error).message);
    }
  };
  if (entry.logAgent) add('logAgent', () => new WithLogAgent(pod, 'log-agent', { ...target, ...(entry.logAgent as any), workload: pod }));
  if (entry.envoy) add('envoy', () => new WithEnvoy(pod, 'envoy', { ...target, ...(entry.envoy as any), workload: pod }));
  if (entry.tracer) add('tracer', () => new WithTracer(pod, 'tracer', { ...target, ...(entry.tracer as any), workload: pod }));
  entry.sidecars.forEach((props, k) =>
    add(`sidecars[${k}]`, () => new WithSidecar(pod, `sidecar-${props.containerName ?? 'sidecar'}`, { ...target, ...(props as any), workload: pod })));
  try {
    return writeDocuments(chart.toJson());
  } catch (e) {
    throw new CommandError((e as Error).message);
  }
}
