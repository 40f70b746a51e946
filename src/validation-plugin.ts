import * as fs from 'fs';
import { parseYamlLocated } from './bind/yaml-files';
import { CheckTarget, checkDocuments } from './engine/check-objects';
import { CHECK_IGNORE_ANNOTATION, RULES_DOC_URL, parseRuleList } from './engine/check-rules';
import { SidecarError, Where } from './private/errors';
import { KUBERNETES_VERSION_ENV, assembleTarget } from './target/resolver';

/**
 * The `properties` of the plugin's entry in cdk8s.yaml `validations:`.
 */
export interface SidecarValidationPluginProps {
  /**
   * The lowest Kubernetes version of the cluster's API server and kubelets: `1.29`, `v1.29` or
   * `1.29.3` (with a patch, the known bugs of that patch release are checked too). Quote it in
   * cdk8s.yaml: YAML reads `1.30` as the number 1.3.
   *
   * @default - the environment variable CDK8S_SIDECARS_KUBERNETES_VERSION (what the constructs read); one of the two is required
   */
  readonly kubernetesVersion?: string;

  /**
   * Whether the SidecarContainers feature gate is on (only matters for 1.28).
   *
   * @default - the environment variable CDK8S_SIDECARS_SIDECAR_CONTAINERS_GATE, else false
   */
  readonly sidecarContainersGate?: boolean;

  /**
   * Rules silenced for every object: ids or names of docs/cli.md ("Rules"), e.g. `CS022` or
   * `native-sidecar-without-requests`. One object is silenced by its annotation
   * `sidecars.cdk8s.io/check-ignore: "CS022"`.
   *
   * @default - none
   */
  readonly ignore?: string[];

  /**
   * Whether a warning fails the validation (and so `cdk8s synth`), as an error does.
   *
   * @default false
   */
  readonly failOnWarnings?: boolean;
}

/**
 * A resource that violates a rule, as the cdk8s CLI's validation report takes it.
 */
export interface ValidationPluginResource {
  /** The resource's `metadata.name`. */
  readonly resourceName: string;
  /** Where in its manifest (`line 12 (document 3)`). */
  readonly locations: string[];
  /** The manifest file. */
  readonly manifestPath: string;
}

/**
 * One violation, as the cdk8s CLI's validation report takes it.
 */
export interface ValidationPluginViolation {
  /** The rule: `CS001 native-sidecar-below-1.29 (error)`. */
  readonly ruleName: string;
  /** The problem found and what to do about it. */
  readonly recommendation: string;
  /** Where the rule is documented, and how to silence it. */
  readonly fix: string;
  /** The resource that violates it. */
  readonly violatingResources: ValidationPluginResource[];
}

/**
 * The report of a validation (the cdk8s CLI's `ValidationReport`, the part the plugin uses).
 */
export interface IValidationPluginReport {
  /** Adds a violation. */
  addViolation(violation: ValidationPluginViolation): void;
  /**
   * Submits the report.
   * @param status `success` or `failure`
   * @param metadata shown in the report's summary
   */
  submit(status: string, metadata?: { [key: string]: string }): void;
}

/**
 * What the cdk8s CLI hands a validation plugin (its `ValidationContext`, the part the plugin uses).
 */
export interface IValidationPluginContext {
  /** The synthesized manifest files. */
  readonly manifests: string[];
  /** The report to fill in and submit. */
  readonly report: IValidationPluginReport;
}

/**
 * A cdk8s CLI validation plugin: `cdk8s synth` runs the checks of `cdk8s-sidecars check` on every
 * object of any cdk8s app (also one that uses none of the constructs), with the same rule ids,
 * and fails on errors. In cdk8s.yaml:
 *
 * ```yaml
 * validations:
 *   - package: cdk8s-sidecars
 *     version: 0.1.0          # the exact version installed; cdk8s installs it for itself otherwise
 *     class: SidecarValidationPlugin
 *     properties:
 *       kubernetesVersion: "1.29"
 * ```
 *
 * The cdk8s CLI creates it from the entry's `properties` and calls `validate`; it is not meant to
 * be used from code (see `SidecarValidation.addTo` for the same checks inside an app).
 */
export class SidecarValidationPlugin {
  private readonly target: CheckTarget;
  private readonly ignore: Set<string>;
  private readonly failOnWarnings: boolean;

  public constructor(props: SidecarValidationPluginProps = {}) {
    const where = 'SidecarValidationPlugin (cdk8s.yaml validations[].properties)';
    const who = new Where(where);
    const version: unknown = props.kubernetesVersion;
    if (typeof version === 'number') {
      throw who.error(`kubernetesVersion is the number ${version}`, version, 'quote it (kubernetesVersion: "1.30"): YAML reads 1.30 as 1.3');
    }
    if (version !== undefined && typeof version !== 'string') {
      throw who.error(`kubernetesVersion is ${JSON.stringify(version)}`, version, 'give a version string such as "1.29"');
    }
    if (props.sidecarContainersGate !== undefined && typeof props.sidecarContainersGate !== 'boolean') {
      throw who.error(`sidecarContainersGate is ${JSON.stringify(props.sidecarContainersGate)}`, props.sidecarContainersGate, 'use true or false');
    }
    const ignore: unknown = props.ignore;
    if (ignore !== undefined && !(Array.isArray(ignore) && ignore.every(i => typeof i === 'string'))) {
      throw who.error(`ignore is ${JSON.stringify(ignore)}`, ignore, 'give a list of rule ids, e.g. ["CS022"]');
    }
    // The one assembly of a target (src/target/resolver.ts): the plugin's properties, then the environment.
    const { version: checked, gate } = assembleTarget({
      version,
      gate: props.sidecarContainersGate,
      where: new Where(`${where}: kubernetesVersion`),
      fail: (e: SidecarError) => e.placedAt(where),
      unset: () => who.error('no target', undefined, `give kubernetesVersion (e.g. "1.29") or set ${KUBERNETES_VERSION_ENV}`, ': '),
      versionName: 'the kubernetesVersion property',
    });
    this.target = { version: checked, gate };
    this.ignore = parseRuleList(props.ignore ?? [], new Where(`${where}: ignore`));
    this.failOnWarnings = props.failOnWarnings ?? false;
  }

  /**
   * Checks every manifest of the context and submits the report: a failure when an error (or, with
   * `failOnWarnings`, a warning) is found.
   */
  public async validate(context: IValidationPluginContext): Promise<void> {
    const inputs = context.manifests.map(file => {
      const { docs, errors } = parseYamlLocated(fs.readFileSync(file, 'utf8'));
      if (errors.length > 0) throw new Where(`SidecarValidationPlugin: ${file}`).error(`not valid YAML: ${errors[0]}`, file, '');
      return { file, docs };
    });
    const result = checkDocuments(inputs, this.target, { ignore: this.ignore });
    for (const f of result.findings) {
      context.report.addViolation({
        ruleName: `${f.rule} ${f.ruleName} (${f.level})`,
        recommendation: f.message,
        fix: `${RULES_DOC_URL} (silence it for one object with the annotation ${CHECK_IGNORE_ANNOTATION}: "${f.rule}", or for the app with the plugin's ignore property)`,
        violatingResources: [{ resourceName: f.name, locations: [`line ${f.line} (document ${f.document})`], manifestPath: f.file }],
      });
    }
    const errors = result.findings.filter(f => f.level === 'error').length;
    const warnings = result.findings.length - errors;
    const failed = errors > 0 || (this.failOnWarnings && warnings > 0);
    context.report.submit(failed ? 'failure' : 'success', {
      'kubernetes version': `${result.target}${result.gate ? ' (SidecarContainers gate on)' : ''}`,
      'objects': String(result.objects),
      'errors': String(errors),
      'warnings': String(warnings),
      ...(result.suppressed > 0 ? { silenced: String(result.suppressed) } : {}),
    });
  }
}
