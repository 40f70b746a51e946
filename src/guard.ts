import { ApiObject, ApiObjectProps } from 'cdk8s';
import { Construct } from 'constructs';
import { checkBoolean, checkDnsLabel, checkObjectName, checkString, describeValue, isPropsObject, listOf, snapshot } from './bind/checks';
import { TargetVersionedApiObject } from './bind/hooks';
import { resolveTarget } from './bind/target-reader';
import { GUARD_EXPRESSION, GUARD_MESSAGE, GUARD_MESSAGE_EXPRESSION } from './facts/annotations';
import { compareCodePoints } from './private/order';
import { KubeVersion, formatVersion } from './target/capabilities';
import { checkVersion } from './target/resolver';

/**
 * Props of `NativeSidecarGuard`.
 */
export interface NativeSidecarGuardProps {
  /**
   * The namespaces whose pods the guard checks (matched by their `kubernetes.io/metadata.name`
   * label, which the API server sets on every namespace).
   */
  readonly namespaces: string[];

  /**
   * Name of the ValidatingAdmissionPolicy and of its binding (cluster-scoped: one per cluster).
   * @default 'cdk8s-sidecars-native-sidecars'
   */
  readonly name?: string;

  /**
   * The LOWEST minor version among the cluster's API servers. Precedence as on the sidecar
   * constructs: this prop, then `CDK8S_SIDECARS_KUBERNETES_VERSION`, then
   * `Sidecars.configure()`, then 1.27.
   * @default - the environment variable CDK8S_SIDECARS_KUBERNETES_VERSION if set, else the
   * value given to Sidecars.configure() on an enclosing scope, else '1.27' (no policy API: an error)
   */
  readonly kubernetesVersion?: string;

  /**
   * Emit `admissionregistration.k8s.io/v1beta1` on Kubernetes 1.28 and 1.29, where the policy
   * API is beta and OFF by default: set this only when the API servers run with the
   * `ValidatingAdmissionPolicy` feature gate on and
   * `--runtime-config=admissionregistration.k8s.io/v1beta1=true`. Ignored from 1.30 (v1, on by
   * default).
   * @default false
   */
  readonly allowBetaApi?: boolean;
}

const DEFAULT_NAME = 'cdk8s-sidecars-native-sidecars';
const GROUP = 'admissionregistration.k8s.io';

/**
 * An opt-in admission guard for native sidecars: a `ValidatingAdmissionPolicy` and its binding
 * that reject a pod (and say why) whose init containers that this library emitted as native
 * sidecars arrive without `restartPolicy: Always`.
 *
 * The engine marks every pod template with native sidecars with the annotation
 * `sidecars.cdk8s.io/native-sidecars` (the container names), so one policy serves every
 * workload. Validating admission runs after every mutating webhook, so the guard sees the pod
 * as it would be stored and catches a webhook or controller built against an old client that
 * drops the field (istio#49054, linkerd2#13033), where it happens, instead of a pod that hangs.
 *
 * The policy API is `admissionregistration.k8s.io/v1` from Kubernetes 1.30, beta and off by
 * default in 1.28 and 1.29 (opt in with `allowBetaApi`), absent before (an error).
 *
 * @example
 * new NativeSidecarGuard(chart, 'guard', { namespaces: ['shop'] });
 */
export class NativeSidecarGuard extends Construct {
  /** The ValidatingAdmissionPolicy. */
  public readonly policy: ApiObject;
  /** The ValidatingAdmissionPolicyBinding. */
  public readonly binding: ApiObject;
  /** The policy's name (also the binding's). */
  public readonly name: string;

  private readonly props: NativeSidecarGuardProps;

  constructor(scope: Construct, id: string, props: NativeSidecarGuardProps) {
    super(scope, id);
    const who = this.describe();
    // a copy, each prop read once: a props object changed afterwards (or a getter) changes nothing here
    props = snapshot(props);
    if (!isPropsObject(props)) throw new Error(`${who}: the props ${describeValue(props)} are not an object; give e.g. { namespaces: ['shop'] }.`);
    this.props = props;
    this.name = this.props.name ?? DEFAULT_NAME;
    checkString(who, 'name', this.name, `'${DEFAULT_NAME}'`);
    checkObjectName(who, 'name', this.name, 'a valid object name', DEFAULT_NAME);
    const namespaces = listOf(who, 'namespaces', this.props.namespaces, "['shop']");
    if (namespaces.length === 0) {
      throw new Error(`${who}: namespaces is empty, so the guard would check no pod; list the namespaces your workloads run in, e.g. ['shop'].`);
    }
    for (const ns of namespaces) {
      checkString(who, 'namespaces entry', ns, "'shop'");
      checkDnsLabel(who, 'namespaces entry', ns);
    }
    checkString(who, 'kubernetesVersion', this.props.kubernetesVersion, "'1.29'");
    checkBoolean(who, 'allowBetaApi', this.props.allowBetaApi);
    if (this.props.kubernetesVersion !== undefined) checkVersion(who, this.props.kubernetesVersion);
    const apiVersion = () => this.apiVersion();
    this.policy = new TargetVersionedApiObject(this, 'policy', apiVersion, policyProps(this.name));
    this.binding = new TargetVersionedApiObject(this, 'binding', apiVersion, bindingProps(this.name, [...new Set(namespaces)].sort(compareCodePoints)));
    // The target may come from the environment or Sidecars.configure(): checked at synthesis,
    // before any file is written.
    this.node.addValidation({
      validate: () => {
        try {
          this.apiVersion();
          return [];
        } catch (e) {
          return [(e as Error).message];
        }
      },
    });
  }

  /**
   * The policy API version the target serves: `admissionregistration.k8s.io/v1` (1.30+) or
   * `.../v1beta1` (1.28-1.29 with `allowBetaApi`). Throws where there is none.
   */
  public apiVersion(): string {
    const v: KubeVersion = resolveTarget(this, { kubernetesVersion: this.props.kubernetesVersion }).version;
    const who = this.describe();
    // kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/features/kube_features.go:
    // ValidatingAdmissionPolicy alpha 1.26-1.27 (v1alpha1), beta and default off 1.28-1.29
    // (v1beta1, a beta API group version disabled by default: --runtime-config), GA 1.30 (v1).
    if (v.minor >= 30) return `${GROUP}/v1`;
    if (v.minor >= 28) {
      if (this.props.allowBetaApi) return `${GROUP}/v1beta1`;
      throw new Error(
        `${who}: Kubernetes ${formatVersion(v)} serves ValidatingAdmissionPolicy only as ${GROUP}/v1beta1, which is off by default ` +
        '(feature gate ValidatingAdmissionPolicy and --runtime-config=admissionregistration.k8s.io/v1beta1=true on every API server). ' +
        'Set `allowBetaApi: true` if your API servers have both, or target 1.30+ where the v1 API is on by default.',
      );
    }
    throw new Error(
      `${who}: Kubernetes ${formatVersion(v)} has no ValidatingAdmissionPolicy API that this guard can use (alpha v1alpha1 in 1.26-1.27, none before). ` +
      'Create the guard only for clusters from 1.30 (or 1.28-1.29 with `allowBetaApi: true`); native sidecars need 1.29 anyway.',
    );
  }

  private describe(): string {
    return `NativeSidecarGuard '${this.node.path}'`;
  }
}

/** The ValidatingAdmissionPolicy: pods created with the marker annotation must carry native sidecars. */
function policyProps(name: string): ApiObjectProps {
  return {
    apiVersion: `${GROUP}/v1`,
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] }],
      },
      validations: [{
        expression: GUARD_EXPRESSION,
        message: GUARD_MESSAGE,
        messageExpression: GUARD_MESSAGE_EXPRESSION,
        reason: 'Invalid',
      }],
    },
  };
}

/** The binding: the policy, denying, in the listed namespaces. */
function bindingProps(name: string, namespaces: string[]): ApiObjectProps {
  return {
    apiVersion: `${GROUP}/v1`,
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name },
    spec: {
      matchResources: {
        namespaceSelector: {
          matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: namespaces }],
        },
      },
      policyName: name,
      validationActions: ['Deny'],
    },
  };
}
