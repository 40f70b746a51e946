/**
 * Layer 3 glue: how the engine gets into a workload's manifest. The one module that does it.
 *
 * Why not a JSON patch or a resolver: cdk8s-plus-27's `KubeDeployment.toJson()` applies the
 * object's patches and the app's resolvers, THEN filters the result down to the 1.27 schema,
 * which drops `initContainers[].restartPolicy` (cdk8s#2172, SIDECARS.md §7). So the binding
 * wraps the object's own `toJson()` and runs the engine on what it returns. Every synth path
 * (`App.synth`, `App.synthYaml`, `Testing.synth`, `Chart.toJson`) ends in that call, the user's
 * patches are already applied, and containers or volumes added before or after the sidecar
 * constructs are all in the JSON. The same holds for plain `ApiObject`s (`Include`, `Helm`).
 */
import { ApiObject, JsonPatch } from 'cdk8s';
import { IConstruct } from 'constructs';
import { describeValue } from './checks';
import { printWarnings, recordWarnings } from './warnings';
import { checkSelfStoppingPreStops } from '../engine/around';
import { InjectedProxy } from '../engine/injected';
import { EngineResult, applySidecars, describeObject } from '../engine/pod-template';
import { checkJobPodFailurePolicy } from '../engine/rules';
import { SidecarSpec } from '../engine/spec';
import { SUPPORTED_KINDS, podTemplateOf } from '../facts/kinds';
import { asAdmitted, findKnownBugs } from '../facts/known-bugs';
import { Where } from '../private/errors';
import { Json } from '../private/json';

const BINDING = Symbol.for('cdk8s-sidecars.binding');
const SYNTHESIS = Symbol.for('cdk8s-sidecars.synthesis');

/**
 * One call of `app.synth()` or `app.synthYaml()`. cdk8s validates the whole app at the start of
 * the call and then again inside every chart's `toJson()` (`App._synthChart`, cdk8s 2.70), so an
 * app of C charts is validated C + 1 times by one call. Nothing the user wrote runs between
 * those passes, so each binding renders for its validation once per call and the later passes
 * reuse the errors (a render per pass made synthesis quadratic in the number of charts).
 *
 * The validation's manifest is kept for the first `toJson()` of the same call, under a key of
 * everything a render reads (`renderKey`: the workload's own manifest as its `toJson()` returns
 * it at that moment, the sidecars' frozen specs, the mesh proxies, the target). `toJson()`
 * computes the key afresh and takes the kept manifest only when the keys are equal, and only
 * once (it is dropped then; nobody else ever sees it, so it is not copied). The scope starts when
 * the call starts and is dropped when it returns: nothing is kept from one call to the next, and
 * a direct `toJson()`, `Chart.toJson()` or `Testing.synth()` outside a call renders afresh.
 */
interface Synthesis {
  readonly errors: Map<WorkloadBinding, string[]>;
  readonly kept: Map<WorkloadBinding, { readonly key: string; readonly manifest: Json; readonly warnings: string[] }>;
  /** The warnings printed to stderr in this call (each once per call, src/warnings.ts). */
  readonly printed: Set<string>;
  /** Facts about the whole app, each computed once per call (appFact). */
  readonly facts: Map<symbol, unknown>;
}

const specIds = new WeakMap<SidecarSpec, number>();
let nextSpecId = 0;

/** The key of a render (see Synthesis), or undefined when a spec is not frozen (its identity then does not stand for its content). */
function renderKey(base: Json, specs: SidecarSpec[], injected: InjectedProxy[], minor: number, gate: boolean, patch?: number): string | undefined {
  const ids: number[] = [];
  for (const s of specs) {
    if (!Object.isFrozen(s) || !Object.isFrozen(s.container)) return undefined;
    let id = specIds.get(s);
    if (id === undefined) {
      id = nextSpecId++;
      specIds.set(s, id);
    }
    ids.push(id);
  }
  return `${minor}|${gate}|${patch}|${ids.join(',')}|${JSON.stringify(injected)}|${JSON.stringify(base)}`;
}

const WRAPPED = Symbol.for('cdk8s-sidecars.synthesis-wrapper');

/**
 * Opens a Synthesis per call of `synth` / `synthYaml` on the App at the root of `scope`: the root
 * gets a holder (once), and the prototype that owns each method (cdk8s' `App.prototype`, or a
 * subclass's that overrides it) is wrapped once for every App. The prototype, not the instance:
 * the jsii kernel calls a method, and a Python or Java subclass's `super` call, through the
 * class's prototype, and defines a host override on the instance as non-configurable. The wrapper
 * does nothing for an App without sidecars (no holder), and nothing but reuse the open Synthesis
 * when it is entered again (an override that calls `super`).
 */
export function trackSyntheses(scope: IConstruct): void {
  const root: any = scope.node.root;
  if (Object.prototype.hasOwnProperty.call(root, SYNTHESIS)) return;
  Object.defineProperty(root, SYNTHESIS, { value: { current: undefined as Synthesis | undefined }, enumerable: false });
  for (const method of ['synth', 'synthYaml']) {
    let owner = Object.getPrototypeOf(root);
    while (owner && !Object.prototype.hasOwnProperty.call(owner, method)) owner = Object.getPrototypeOf(owner);
    const original = owner?.[method];
    // the root of a construct tree that is not a cdk8s App, or a method wrapped already
    if (typeof original !== 'function' || original[WRAPPED]) continue;
    const wrapper = function (this: any, ...args: unknown[]) {
      const holder = this !== null && typeof this === 'object' ? this[SYNTHESIS] : undefined;
      if (!holder) return original.apply(this, args);
      const outer: Synthesis | undefined = holder.current;
      holder.current = outer ?? { errors: new Map(), kept: new Map(), printed: new Set(), facts: new Map() };
      try {
        return original.apply(this, args);
      } finally {
        holder.current = outer;
      }
    };
    Object.defineProperty(wrapper, WRAPPED, { value: true });
    Object.defineProperty(owner, method, { value: wrapper, configurable: true, writable: true, enumerable: false });
  }
}

/** The synthesis call in progress on the App of `scope`, if any. */
function currentSynthesis(scope: IConstruct): Synthesis | undefined {
  return (scope.node.root as any)[SYNTHESIS]?.current;
}

/**
 * A fact about the whole app of `scope` (e.g. its Services, indexed), computed once per synthesis
 * call and shared by every workload's render in it: nothing the user wrote runs between the
 * passes of a call (see Synthesis), so the app cannot change meanwhile. Without it, each workload
 * walked the whole app (issue 36: synthesis was quadratic in the number of workloads). Outside a
 * call (a direct `toJson()`, `Chart.toJson()`, `Testing.synth()`), computed afresh each time.
 * @internal
 */
export function appFact<T>(scope: IConstruct, key: symbol, compute: () => T): T {
  const synthesis = currentSynthesis(scope);
  if (!synthesis) return compute();
  if (!synthesis.facts.has(key)) synthesis.facts.set(key, compute());
  return synthesis.facts.get(key) as T;
}

/**
 * Prints `warnings` to stderr once per synthesis: within one `app.synth()` / `app.synthYaml()`
 * call (validated once per chart plus once) each message is printed the first time; outside such
 * a call (a `Chart.toJson()` or `Testing.synth()`, one validation each) every time. The next call
 * prints them again: a watch loop or a second synth in the same process shows them each time.
 * @internal
 */
export function printSynthesisWarnings(scope: IConstruct, warnings: string[]): void {
  printWarnings(warnings, currentSynthesis(scope)?.printed);
}

/** The roots a notice was printed for outside a synthesis call (a `Testing.synth()`, a `Chart.toJson()`): once each. */
const NOTICED_OUTSIDE = new WeakSet<object>();

/**
 * Prints `message` to stderr as `[cdk8s-sidecars] NOTICE: <message>`: once per synthesis call
 * (`app.synth()`, `synthYaml()`), or once per App outside one. A notice is not a problem of the
 * pods (those are warnings, `SidecarWarnings.of`): it says what the library chose for the user.
 * @internal
 */
export function printSynthesisNotice(scope: IConstruct, message: string): void {
  const synthesis = currentSynthesis(scope);
  const key = `NOTICE ${message}`;
  if (synthesis) {
    if (synthesis.printed.has(key)) return;
    synthesis.printed.add(key);
  } else {
    const root = scope.node.root;
    if (NOTICED_OUTSIDE.has(root)) return;
    NOTICED_OUTSIDE.add(root);
  }
  process.stderr.write(`[cdk8s-sidecars] NOTICE: ${message}\n`);
}

/** What a sidecar construct gives the binding: its spec and target, computed at synthesis. */
export interface SidecarSource {
  readonly node: IConstruct['node'];
  /** Throws with a clear message when the construct's own input is wrong. */
  renderSidecar(): RenderedSidecar;
  /**
   * Checks of the workload's own pod spec (as its `toJson()` returns it, before any sidecar is
   * added), run in every render on the manifest the render reads anyway; returns the errors.
   */
  checkWorkload?(podSpec: Json | undefined): string[];
  /**
   * What the source infers from the workload's own pod spec (same input as `checkWorkload`) where
   * no prop says it, as warnings for the user to see.
   */
  workloadWarnings?(podSpec: Json | undefined, podLabels: Record<string, string>): string[];
}

export interface RenderedSidecar {
  /** A sidecar the engine places... */
  readonly spec?: SidecarSpec;
  /** ...or a proxy a mesh injects at admission (WithMeshProxy): checked and budgeted only. */
  readonly injected?: InjectedProxy;
  /** Kubernetes minor version the sidecar targets. */
  readonly minor: number;
  /** The patch version, when the target names one (for the known-bugs check). */
  readonly patch?: number;
  readonly gate: boolean;
  /** Warnings about the sidecar as given (`AgentDescription.warnings`), reported with the workload's. */
  readonly warnings?: string[];
}

export interface BindingOptions {
  /** See ApplyOptions.graceWrittenByDefault. */
  readonly graceWrittenByDefault?: number;
  /** See ApplyOptions.processNamespaceWrittenByDefault. */
  readonly processNamespaceWrittenByDefault?: boolean;
}

/**
 * Finds the `ApiObject` that carries the pod template of `workload` (a cdk8s-plus workload or
 * an ApiObject), or throws a message that says what is accepted.
 */
export function workloadApiObject(owner: Where, workload: IConstruct): ApiObject {
  if (workload === undefined || workload === null || typeof (workload as any).node !== 'object') {
    throw owner.error(`workload ${describeValue(workload)} is not a construct`, workload,
      'give the workload to attach to (a cdk8s-plus Deployment, StatefulSet, DaemonSet, Job, CronJob or Pod, or a cdk8s ApiObject ' +
      `of kind ${SUPPORTED_KINDS.join(', ')})`);
  }
  let obj: ApiObject | undefined;
  if (ApiObject.isApiObject(workload)) {
    obj = workload;
  } else {
    try {
      obj = ApiObject.of(workload);
    } catch {
      obj = undefined;
    }
  }
  if (!obj) {
    throw owner.error(`workload '${workload.node.path}' is neither a cdk8s-plus workload nor a cdk8s ApiObject`, workload,
      `Pass a Deployment, StatefulSet, DaemonSet, Job, CronJob or Pod of cdk8s-plus (any major, 27 to 34), or an ApiObject of kind ${SUPPORTED_KINDS.join(', ')}`, '. ');
  }
  if (!SUPPORTED_KINDS.includes(obj.kind)) {
    throw owner.error(`workload '${workload.node.path}' is a ${obj.apiVersion} ${obj.kind}, which has no pod template`, workload,
      `Attach sidecars to a ${SUPPORTED_KINDS.join(', ')}`, '. ');
  }
  return obj;
}

/** Whether the object has JSON patches (cdk8s keeps them in ApiObject's private `patches`, 2.x). */
function hasJsonPatches(obj: ApiObject): boolean {
  const patches: unknown = (obj as any).patches;
  return Array.isArray(patches) && patches.length > 0;
}

/**
 * The sidecars attached to one ApiObject, and the wrapped `toJson()` that emits them.
 */
export class WorkloadBinding {
  /** The binding of `obj`, created (and its `toJson` wrapped) on first use. */
  public static of(obj: ApiObject, options: BindingOptions = {}): WorkloadBinding {
    const existing: WorkloadBinding | undefined = (obj as any)[BINDING];
    if (existing) return existing;
    const binding = new WorkloadBinding(obj, options);
    (obj as any)[BINDING] = binding;
    return binding;
  }

  /** The binding of `obj` if a sidecar construct attached one, else undefined (nothing is created). */
  public static existing(obj: ApiObject): WorkloadBinding | undefined {
    return (obj as any)[BINDING];
  }

  private readonly sources: SidecarSource[] = [];

  private readonly originalToJson: () => Json;

  private readonly obj: ApiObject;
  private warnings: string[] = [];
  private constructor(obj: ApiObject, private readonly options: BindingOptions) {
    this.obj = obj;
    this.originalToJson = obj.toJson.bind(obj);
    trackSyntheses(obj);
    Object.defineProperty(obj, 'toJson', {
      value: () => {
        // From the workload as it is now: the validation's render of this synthesis call only
        // when nothing it read has changed (see Synthesis).
        const result = this.render('emit');
        if (result.errors.length > 0) {
          throw new Error(`cdk8s-sidecars: ${result.errors.join('\n')}`);
        }
        return result.manifest;
      },
      configurable: true,
      writable: true,
    });
  }

  /**
   * Attaches a sidecar. The first one also registers, on the workload's object, the validation
   * that reports every error on this workload before anything is written (cdk8s prefixes each
   * message with the workload's path; each message names the construct it is about).
   */
  public add(source: SidecarSource): void {
    this.sources.push(source);
    if (this.sources.length === 1) {
      this.obj.node.addValidation({ validate: () => this.validate() });
    }
  }

  /**
   * The attached sidecars as the engine takes them, and their target (for SidecarTimeline).
   * Throws the first construct's error.
   */
  public sidecarSpecs(): { specs: SidecarSpec[]; injected: InjectedProxy[]; minor: number; gate: boolean } {
    const specs: SidecarSpec[] = [];
    const injected: InjectedProxy[] = [];
    let minor = 0;
    let gate = false;
    for (const source of this.sources) {
      const r = source.renderSidecar();
      if (r.spec) specs.push(r.spec);
      if (r.injected) injected.push(r.injected);
      minor = r.minor;
      gate = r.gate;
    }
    return { specs, injected, minor, gate };
  }

  private validate(): string[] {
    // Within one app.synth() / app.synthYaml() call, the first pass's errors (see Synthesis).
    const synthesis = currentSynthesis(this.obj);
    const seen = synthesis?.errors.get(this);
    if (seen) return [...seen];
    const errors = this.render('validate').errors;
    synthesis?.errors.set(this, errors);
    printSynthesisWarnings(this.obj, this.warnings);
    return [...errors];
  }

  /**
   * The workload's manifest with every attached sidecar, and every error found. `purpose` says
   * who asks within a synthesis call: the validation (its manifest may be kept) or `toJson()`
   * (which may take it).
   */
  public render(purpose?: 'validate' | 'emit'): EngineResult {
    const base = this.baseManifest();
    // The sources' checks of the workload's own pod spec, on this same manifest (before the
    // engine adds the sidecars to it): no extra toJson() of the workload per check.
    const ownSpec = podTemplateOf(base)?.spec;
    const workloadErrors = this.sources.flatMap(source => source.checkWorkload?.(ownSpec) ?? []);
    // (before the engine, which works on this same object)
    const labels = podTemplateOf(base)?.metadata.labels ?? {};
    const inferred = workloadErrors.length > 0 ? [] : this.sources.flatMap(source => source.workloadWarnings?.(ownSpec, labels) ?? []);
    const synthesis = purpose === undefined ? undefined : currentSynthesis(this.obj);
    const result = this.renderOn(base, workloadErrors.length === 0 ? synthesis : undefined, purpose);
    if (workloadErrors.length > 0) return { manifest: result.manifest, errors: [...result.errors, ...workloadErrors] };
    if (inferred.length > 0 && result.errors.length === 0) {
      this.warnings = [...inferred, ...this.warnings];
      recordWarnings(this.obj, this.warnings);
    }
    return result;
  }

  /**
   * The workload's namespace as emitted: its JSON patches applied (a patch of
   * `/metadata/namespace` moves the pod, and the sidecars' ConfigMaps must follow it). Without
   * patches, the metadata's (no extra `toJson()`).
   */
  public emittedNamespace(): string | undefined {
    if (!hasJsonPatches(this.obj)) return this.obj.metadata.namespace;
    return this.baseManifest().metadata?.namespace;
  }

  /**
   * The workload's own manifest (its `toJson()` before the sidecars): the user's JSON patches are
   * applied here, BEFORE the engine adds the sidecars, so a patch cannot reach a sidecar; one
   * that fails (it names a container, volume or hook only the sidecars bring) is reported as such.
   */
  private baseManifest(): Json {
    try {
      return this.originalToJson();
    } catch (e) {
      if (!hasJsonPatches(this.obj)) throw e;
      const failed = this.failingPatch();
      const which = failed
        ? `: patch ${failed.index + 1} of ${failed.count} (addJsonPatch order), ${JSON.stringify(failed.op)}, at path '${failed.op?.path}' ` +
          `(${failed.message})`
        : ` (${(e as Error).message})`;
      throw new Where(`'${this.obj.node.path}'`).error(
        `a JSON patch of the workload failed${which}. The workload's patches are applied ` +
        "to its own manifest BEFORE the sidecars are added (docs/validation.md), so a patch cannot change a sidecar's container, volume or hook",
        failed?.op,
        "set those through the sidecar construct's props, or fix the patch's path to one the workload itself has " +
        '(see the workload without the sidecars: its `toJson()` before the patches)',
      );
    }
  }

  /**
   * Which of the workload's JSON patches fails, for the message: the patches applied one by one,
   * in order, to the workload's manifest without them (what cdk8s applies them to). Only on the
   * failure path; undefined when the manifest itself cannot be made.
   */
  private failingPatch(): { index: number; count: number; op: Json; message: string } | undefined {
    const patches: JsonPatch[] = (this.obj as any).patches;
    const saved = [...patches];
    let doc: Json;
    try {
      patches.length = 0;
      doc = this.originalToJson();
    } catch {
      return undefined;
    } finally {
      patches.length = 0;
      patches.push(...saved);
    }
    for (let index = 0; index < saved.length; index++) {
      try {
        doc = JsonPatch.apply(doc, saved[index]);
      } catch (e) {
        return { index, count: saved.length, op: (saved[index] as any)._toJson(), message: (e as Error).message };
      }
    }
    return undefined;
  }

  private renderOn(base: Json, synthesis?: Synthesis, purpose?: 'validate' | 'emit'): EngineResult {
    const errors: string[] = [];
    const specs: SidecarSpec[] = [];
    const injected: InjectedProxy[] = [];
    const targets = new Map<string, string>();
    const sidecarWarnings: string[] = [];
    let minor = 0;
    let gate = false;
    let patch: number | undefined;
    for (const source of this.sources) {
      try {
        const r = source.renderSidecar();
        if (r.spec) specs.push(r.spec);
        if (r.injected) injected.push(r.injected);
        sidecarWarnings.push(...r.warnings ?? []);
        minor = r.minor;
        gate = r.gate;
        // The lowest patch any of them names (the cluster's oldest node decides).
        if (r.patch !== undefined) patch = Math.min(patch ?? r.patch, r.patch);
        targets.set(source.node.path, `1.${r.minor}${r.gate ? ' (gate on)' : ''}`);
      } catch (e) {
        errors.push((e as Error).message);
      }
    }
    if (new Set(targets.values()).size > 1) {
      errors.push(
        `${describeObject(base)}: its sidecars target different clusters (` +
        [...targets].map(([path, t]) => `'${path}': ${t}`).join(', ') +
        '). A workload runs on one cluster: give them the same kubernetesVersion (or set it once with Sidecars.configure).',
      );
    }
    this.warnings = [];
    recordWarnings(this.obj, []);
    if (errors.length > 0) return { manifest: base, errors };
    const key = synthesis ? renderKey(base, specs, injected, minor, gate, patch) : undefined;
    if (synthesis && purpose === 'emit') {
      const kept = synthesis.kept.get(this);
      synthesis.kept.delete(this);
      if (kept !== undefined && kept.key === key) {
        this.warnings = kept.warnings;
        recordWarnings(this.obj, this.warnings);
        return { manifest: kept.manifest, errors: [] };
      }
    }
    const rendered = this.renderAnew(base, specs, injected, minor, gate, patch, sidecarWarnings);
    if (synthesis && purpose === 'validate' && key !== undefined && rendered.errors.length === 0) {
      synthesis.kept.set(this, { key, manifest: rendered.manifest, warnings: this.warnings });
    }
    return rendered;
  }

  private renderAnew(
    base: Json, specs: SidecarSpec[], injected: InjectedProxy[], minor: number, gate: boolean, patch: number | undefined,
    sidecarWarnings: string[],
  ): EngineResult {
    // `base` is a fresh object from toJson(): the engine may work on it in place.
    const result = applySidecars(base, specs, {
      minor,
      gate,
      graceWrittenByDefault: this.options.graceWrittenByDefault,
      processNamespaceWrittenByDefault: this.options.processNamespaceWrittenByDefault,
      mutateInput: true,
      injected,
    });
    if (result.errors.length > 0) return result;
    // What the engine inferred from the manifest, then the known bugs of the target's patch
    // release, on the pod as emitted (src/facts/known-bugs.ts).
    const subject = `'${this.obj.node.path}' (${describeObject(result.manifest)})`;
    const inferred = (result.warnings ?? []).map(w => w.replace(describeObject(result.manifest), subject));
    // Known bugs of the target's patch release, on the pod as emitted (src/facts/known-bugs.ts).
    // (as admitted: a mesh's injected native proxy counts, src/facts/known-bugs.ts asAdmitted)
    const template = podTemplateOf(result.manifest)!;
    const findings = findKnownBugs(subject, asAdmitted(template.spec, template.metadata.annotations), { major: 1, minor, patch, raw: '' });
    // A podFailurePolicy rule the sidecars may match (its error half is the engine's: src/engine/rules.ts).
    const failurePolicy = checkJobPodFailurePolicy(result.manifest, subject);
    // A native sidecar's own preStop that stops its process (src/engine/around.ts): the user's, kept by AdoptSidecar or in the manifest.
    const preStops = checkSelfStoppingPreStops(result.manifest, subject);
    this.warnings = [
      ...sidecarWarnings, ...inferred, ...findings.filter(f => f.level === 'warning').map(f => f.message), ...failurePolicy.warnings, ...preStops.warnings,
    ];
    recordWarnings(this.obj, this.warnings);
    const bugErrors = [...findings.filter(f => f.level === 'error').map(f => f.message), ...preStops.errors];
    return bugErrors.length > 0 ? { manifest: result.manifest, errors: bugErrors } : result;
  }
}
