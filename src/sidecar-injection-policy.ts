import { ApiObject, App, Chart, Duration, Lazy } from 'cdk8s';
import { Construct } from 'constructs';
import { printSynthesisWarnings } from './bind/binding';
import {
  checkBoolean, checkDnsLabel, checkObjectName, checkString, describeValue, isPropsObject, listOf, snapshot,
} from './bind/checks';
import { TargetVersionedApiObject } from './bind/hooks';
import { resolveTarget } from './bind/target-reader';
import { InjectionCel, STAND_IN_NAME, injectionCel, planFromStandIn } from './engine/injection-policy';
import { STOP_TIMES_ANNOTATION } from './facts/annotations';
import { KNOWN_ADMISSION_POLICY_BUGS, findKnownBugs } from './facts/known-bugs';
import { Where, internalError, recordRefusals } from './private/errors';
import { Json } from './private/json';
import { compareCodePoints } from './private/order';
import { Sidecars } from './settings';
import { SidecarBase } from './sidecar';
import { KubeVersion, SidecarLayout, formatVersion } from './target/capabilities';
import { checkVersion } from './target/resolver';

/** What the API server does with a pod when the policy cannot be evaluated. */
export enum InjectionFailurePolicy {
  /** The pod is refused (never admitted without its sidecars). */
  FAIL = 'Fail',
  /** The pod is admitted as it is, without the sidecars (never half-injected: one patch or none). */
  IGNORE = 'Ignore',
}

/** A CEL condition the admitted pod must meet to get the sidecars (a `matchConditions` entry). */
export interface InjectionMatchCondition {
  /** A name, unique in the policy (a qualified name, e.g. 'not-a-canary'). */
  readonly name: string;
  /** CEL over `object` (the pod), `request`, `namespaceObject`; true: inject. */
  readonly expression: string;
}

/**
 * Props of `SidecarInjectionPolicy`.
 */
export interface SidecarInjectionPolicyProps {
  /** The namespaces whose new pods get the sidecars; the agents' ConfigMaps are written into each. */
  readonly namespaces: string[];

  /**
   * Only pods with these labels (the binding's `objectSelector`).
   * @default - every pod of the namespaces
   */
  readonly podLabels?: { [key: string]: string };

  /**
   * More conditions on the pod, after the library's own (not injected yet, names free, a Linux
   * pod without hostNetwork).
   * @default - none
   */
  readonly matchConditions?: InjectionMatchCondition[];

  /**
   * Name of the MutatingAdmissionPolicy and of its binding (cluster-scoped).
   * @default 'cdk8s-sidecars-injection'
   */
  readonly name?: string;

  /**
   * What happens to a pod when the policy fails to evaluate (a CEL error, a cost limit).
   * @default InjectionFailurePolicy.FAIL
   */
  readonly failurePolicy?: InjectionFailurePolicy;

  /**
   * The LOWEST minor version among the cluster's API servers; precedence as on the sidecar
   * constructs (this prop, `CDK8S_SIDECARS_KUBERNETES_VERSION`, `Sidecars.configure()`, 1.27).
   * @default - the environment variable, else `Sidecars.configure()` on an enclosing scope, else '1.27' (an error: no policy API)
   */
  readonly kubernetesVersion?: string;

  /**
   * Emit `admissionregistration.k8s.io/v1beta1` on Kubernetes 1.34 and 1.35, where the API is
   * beta and OFF by default: only when every API server runs with the `MutatingAdmissionPolicy`
   * feature gate and `--runtime-config=admissionregistration.k8s.io/v1beta1=true`. Ignored from
   * 1.36 (v1, on by default).
   * @default false
   */
  readonly allowBetaApi?: boolean;
}

const DEFAULT_NAME = 'cdk8s-sidecars-injection';
const GROUP = 'admissionregistration.k8s.io';

/**
 * The sidecars of the library at admission, without a webhook: a `MutatingAdmissionPolicy` (JSON
 * patch, CEL inside the API server) and its binding that add to every new pod of the selected
 * namespaces what the library writes at synthesis, and the agents' ConfigMaps in each namespace.
 *
 * Attach the sidecar constructs to `pod`, a stand-in for every selected pod, with the same props
 * as on a workload. At synthesis the library renders them onto the stand-in with its engine, and
 * the policy adds the result (the native sidecars before the pod's own init containers, volumes,
 * the app containers' mounts and env, annotations) and the grace period worked out in CEL from the
 * pod's own containers' `preStop` hooks and grace period, as the engine does.
 *
 * MutatingAdmissionPolicy is `admissionregistration.k8s.io/v1` from Kubernetes 1.36, v1beta1 (off
 * by default) in 1.34 and 1.35 (`allowBetaApi`), alpha before (an error). Native sidecars only.
 *
 * @example
 * const inject = new SidecarInjectionPolicy(chart, 'inject', { namespaces: ['shop'], kubernetesVersion: '1.36' });
 * new WithLogAgent(inject.pod, 'logs', { workload: inject.pod });
 */
export class SidecarInjectionPolicy extends Construct {
  /**
   * The stand-in for every pod the policy injects into: give it as `workload` (and as the scope)
   * to WithLogAgent, WithTracer, WithEnvoy or WithSidecar. It lives in a tree of its own and is
   * never emitted itself.
   */
  public readonly pod: ApiObject;
  /** The MutatingAdmissionPolicy. */
  public readonly policy: ApiObject;
  /** The MutatingAdmissionPolicyBinding. */
  public readonly binding: ApiObject;
  /** The policy's name (also the binding's). */
  public readonly name: string;

  private readonly props: SidecarInjectionPolicyProps;
  private readonly namespaces: string[];
  private readonly standIn: Chart;
  private readonly configMaps = new Map<string, ApiObject>();
  private readonly who: Where;
  private rendered?: { cel: InjectionCel; configMaps: Json[] };

  constructor(scope: Construct, id: string, props: SidecarInjectionPolicyProps) {
    super(scope, id);
    const who = new Where(`SidecarInjectionPolicy '${this.node.path}'`);
    this.who = who;
    props = snapshot(props);
    if (!isPropsObject(props)) throw who.error(`the props ${describeValue(props)} are not an object`, props, "give e.g. { namespaces: ['shop'] }");
    this.props = props;
    this.name = props.name ?? DEFAULT_NAME;
    checkString(who, 'name', this.name, `'${DEFAULT_NAME}'`);
    checkObjectName(who, 'name', this.name, 'a valid object name', DEFAULT_NAME);
    const namespaces = listOf(who, 'namespaces', props.namespaces, "['shop']");
    if (namespaces.length === 0) {
      throw who.error('namespaces is empty, so the policy would inject into no pod', namespaces, "list the namespaces to inject into, e.g. ['shop']");
    }
    for (const ns of namespaces) {
      checkString(who, 'namespaces entry', ns, "'shop'");
      checkDnsLabel(who, 'namespaces entry', ns);
    }
    this.namespaces = [...new Set(namespaces)].sort(compareCodePoints);
    checkString(who, 'kubernetesVersion', props.kubernetesVersion, "'1.36'");
    checkBoolean(who, 'allowBetaApi', props.allowBetaApi);
    if (props.kubernetesVersion !== undefined) checkVersion(who, props.kubernetesVersion);
    if (props.failurePolicy !== undefined && !Object.values(InjectionFailurePolicy).includes(props.failurePolicy)) {
      throw who.error(`failurePolicy ${describeValue(props.failurePolicy)} is not an InjectionFailurePolicy`, props.failurePolicy, 'give InjectionFailurePolicy.FAIL or .IGNORE');
    }
    const seen = new Set<string>();
    const conditions = listOf(who, 'matchConditions', props.matchConditions, "[{ name: 'not-a-canary', expression: '!has(object.metadata.labels.canary)' }]");
    for (const c of conditions) {
      if (!isPropsObject(c) || typeof c.name !== 'string' || typeof c.expression !== 'string' || c.expression.trim() === '') {
        throw who.error(`matchConditions has ${describeValue(c)}, not a { name, expression } of strings`, c, "give e.g. { name: 'not-a-canary', expression: \"!has(object.metadata.labels.canary)\" }");
      }
      if (seen.has(c.name) || ['not-injected-yet', 'names-free', 'ports-free', 'linux-pod-network', 'no-own-native-sidecars'].includes(c.name)) {
        throw who.error(`matchConditions name '${c.name}' is used twice or by the library's own conditions`, c.name, 'give each condition a name of its own');
      }
      seen.add(c.name);
    }
    if (props.podLabels !== undefined) {
      if (!isPropsObject(props.podLabels)) throw who.error(`podLabels ${describeValue(props.podLabels)} is not a map of label values`, props.podLabels, "give e.g. { 'sidecars.example.com/logs': 'true' }");
      for (const [k, v] of Object.entries(props.podLabels)) checkString(who, `podLabels '${k}'`, v, "'true'");
    }
    // the version now: the stand-in's sidecars are read with it
    const version = this.version();
    this.standIn = new Chart(new App(), this.name);
    Sidecars.configure(this.standIn.node.root, { kubernetesVersion: formatVersion(version) });
    this.pod = new ApiObject(this.standIn, 'pod', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: STAND_IN_NAME },
      spec: { containers: [{ name: 'app', image: 'app' }] },
    });
    // the objects' content is made at synthesis (Lazy: the user's JSON patches still apply), from
    // what the sidecar constructs attached to `pod` render then
    const apiVersion = () => `${GROUP}/${this.apiVersion()}`;
    this.policy = new TargetVersionedApiObject(this, 'policy', apiVersion, {
      apiVersion: `${GROUP}/v1`, kind: 'MutatingAdmissionPolicy', metadata: { name: this.name }, spec: Lazy.any({ produce: () => this.policySpec() }),
    });
    this.binding = new TargetVersionedApiObject(this, 'binding', apiVersion, {
      apiVersion: `${GROUP}/v1`, kind: 'MutatingAdmissionPolicyBinding', metadata: { name: this.name }, spec: Lazy.any({ produce: () => this.bindingSpec() }),
    });
    this.node.addValidation({
      validate: () => {
        try {
          this.apiVersion();
          this.render(true);
          // the known bugs of MutatingAdmissionPolicy in the target's patch release that this policy would hit
          const found = findKnownBugs(`SidecarInjectionPolicy '${this.node.path}'`, this.policySpec(), this.version(), KNOWN_ADMISSION_POLICY_BUGS);
          printSynthesisWarnings(this, found.filter(f => f.level === 'warning').map(f => f.message));
          return recordRefusals(found.filter(f => f.level === 'error').map(f => f.message));
        } catch (e) {
          return [(e as Error).message];
        }
      },
    });
  }

  /**
   * The policy API version: `v1` (1.36+) or `v1beta1` (1.34-1.35 with `allowBetaApi`). Throws below.
   */
  public apiVersion(): string {
    const v = this.version();
    // kubernetes v1.37.2 staging/src/k8s.io/apiserver/pkg/features/kube_features.go: MutatingAdmissionPolicy
    // alpha 1.32 (default off), beta 1.34 (default off), GA 1.36 (default on); pkg/controlplane/instance.go
    // lists admissionregistration.k8s.io/v1beta1 among the beta versions disabled by default (--runtime-config).
    if (v.minor >= 36) return 'v1';
    if (v.minor >= 34) {
      if (this.props.allowBetaApi) return 'v1beta1';
      throw this.who.error(
        `Kubernetes ${formatVersion(v)} serves MutatingAdmissionPolicy only as ${GROUP}/v1beta1, which is off by default ` +
        '(feature gate MutatingAdmissionPolicy and --runtime-config=admissionregistration.k8s.io/v1beta1=true on every API server)',
        formatVersion(v), 'Set `allowBetaApi: true` if your API servers have both, or target 1.36+ where the v1 API is on by default', '. ',
      );
    }
    throw this.who.error(
      `Kubernetes ${formatVersion(v)} has no MutatingAdmissionPolicy API this policy can use (alpha v1alpha1 in 1.32-1.33, none before)`,
      formatVersion(v), 'Target 1.36+ (or 1.34-1.35 with `allowBetaApi: true`), or give the pods their sidecars at synthesis (the sidecar constructs, `cdk8s-sidecars render`)', '. ',
    );
  }

  private version(): KubeVersion {
    // the policy is the cluster's (its API server's release), not one of the app's workloads: its own version may differ
    return resolveTarget(this, { kubernetesVersion: this.props.kubernetesVersion, overrideAppTarget: true }).version;
  }

  /** Renders the stand-in with its sidecars (once per synthesis pass that asks); creates the namespaces' ConfigMaps. */
  private render(fresh: boolean): { cel: InjectionCel; configMaps: Json[] } {
    if (this.rendered && !fresh) return this.rendered;
    const sidecars = this.standIn.node.findAll().filter((c): c is SidecarBase => c instanceof SidecarBase);
    if (sidecars.length === 0) {
      throw this.who.error('no sidecar construct is attached to its pod, so the policy would inject nothing', undefined,
        'attach WithLogAgent, WithTracer, WithEnvoy or WithSidecar to `policy.pod`, e.g. new WithLogAgent(policy.pod, \'logs\', { workload: policy.pod })', '. ');
    }
    for (const s of sidecars) {
      if (s.workloadObject !== this.pod) {
        throw this.who.error(`${s.node.path} is attached to another workload than the policy's pod`, s.node.path, 'give `workload: policy.pod`');
      }
      if (s.layout !== SidecarLayout.NATIVE) {
        throw this.who.error(`${s.node.path} is in the ${s.layout.toLowerCase()} layout, which a policy cannot give a pod at admission (the app's preStop delays and Job wrappers depend on the workload's kind)`,
          s.layout, 'Target Kubernetes 1.34+ in the native layout (SidecarMode.AUTO or NATIVE)', '. ');
      }
      const p = (s as unknown as { _props: { serveInitContainers?: boolean; after?: string } })._props;
      if (p.serveInitContainers || p.after !== undefined) {
        throw this.who.error(`${s.node.path} sets ${p.after !== undefined ? 'after' : 'serveInitContainers'}, which depends on the init containers of each pod`,
          p.after ?? true, 'Drop it: the policy puts the sidecars before every init container of the pod', '. ');
      }
    }
    let manifests: Json[];
    try {
      manifests = this.standIn.toJson();
    } catch (e) {
      throw this.who.error(`its sidecars cannot be rendered: ${(e as Error).message}`, undefined, 'Fix the sidecar constructs attached to `policy.pod`', '. ');
    }
    const pod = manifests.find(m => m.kind === 'Pod');
    if (!pod) throw internalError(`${this.node.path}: the stand-in pod was not synthesized`);
    // the engine's own numbers: the stop times it wrote (STOP_TIMES_ANNOTATION), the constructs' app shutdown
    const stops = String(pod?.metadata?.annotations?.[STOP_TIMES_ANNOTATION] ?? '').split(',').filter(x => x !== '')
      .map(x => Number(x.slice(x.lastIndexOf('=') + 1).replace(/s$/, '')));
    const props = sidecars.map(s => (s as unknown as { _props: { appShutdownTime?: Duration; userSidecarStopTime?: Duration } })._props);
    const userStops = props.filter(p => p.userSidecarStopTime !== undefined).map(p => p.userSidecarStopTime!.toSeconds());
    const plan = planFromStandIn(pod, {
      appShutdownSeconds: Math.max(0, ...sidecars.map(s => s._agent?.shutdown.appShutdownSeconds ?? 0)),
      appShutdownGiven: props.some(p => p.appShutdownTime !== undefined),
      nativeStopSeconds: stops.reduce((sum, x) => sum + x, 0),
      userSidecarStopSeconds: userStops.length > 0 ? Math.max(...userStops) : undefined,
      localPorts: sidecars.flatMap(s => s._agent?.localPorts ?? []),
    });
    const configMaps = manifests.filter(m => m.kind === 'ConfigMap');
    const extra = (this.props.matchConditions ?? []).map(c => ({ name: c.name, expression: c.expression }));
    this.rendered = { cel: injectionCel(plan, extra), configMaps };
    // one copy of each agent ConfigMap per namespace (created at the first synthesis: the sidecar constructs come after the policy)
    for (const ns of this.namespaces) {
      for (const cm of configMaps) {
        const key = `${ns}/${cm.metadata.name}`;
        if (this.configMaps.has(key)) continue;
        const name = cm.metadata.name;
        const current = () => this.render(false).configMaps.find(m => m.metadata.name === name) ?? {};
        this.configMaps.set(key, new ApiObject(this, `config-${ns}-${name}`, {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name, namespace: ns },
          data: Lazy.any({ produce: () => current().data }),
          binaryData: Lazy.any({ produce: () => current().binaryData }),
        }));
      }
    }
    return this.rendered;
  }

  private policySpec(): Json {
    const cel = this.render(false).cel;
    return {
      failurePolicy: this.props.failurePolicy ?? InjectionFailurePolicy.FAIL,
      matchConditions: cel.matchConditions,
      matchConstraints: {
        resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] }],
      },
      mutations: [{ jsonPatch: { expression: cel.patch }, patchType: 'JSONPatch' }],
      // a later mutation (another policy, a webhook) may run it again: its conditions make that a no-op
      reinvocationPolicy: 'IfNeeded',
      variables: cel.variables,
    };
  }

  private bindingSpec(): Json {
    const labels = this.props.podLabels;
    return {
      matchResources: {
        namespaceSelector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: this.namespaces }] },
        ...(labels && Object.keys(labels).length > 0 ? { objectSelector: { matchLabels: { ...labels } } } : {}),
      },
      policyName: this.name,
    };
  }
}
