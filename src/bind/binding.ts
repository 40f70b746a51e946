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
import { ApiObject, App, Chart, JsonPatch } from 'cdk8s';
import { IConstruct } from 'constructs';
import { describeValue } from './checks';
import { hookToJson } from './hooks';
import { ignoredRules, printWarnings, recordWarnings, ruleSuffix, tagWarning, warningsOf } from './warnings';
import { checkSelfStoppingPreStops } from '../engine/around';
import { CHECK_IGNORE_ANNOTATION as CHECK_IGNORE, CLI_CHECKS, ruleOfCheck, ruleSuffixOfCheck } from '../engine/check-rules';
import { InjectedProxy } from '../engine/injected';
import { SET_RULES } from '../engine/manifests-check';
import { EngineResult, applySidecars, describeObject } from '../engine/pod-template';
import { checkJobPodFailurePolicy, podSpecShapeErrors } from '../engine/rules';
import { SidecarSpec } from '../engine/spec';
import { SUPPORTED_KINDS, podTemplateOf } from '../facts/kinds';
import { Where, recordRefusals, synthesisError } from '../private/errors';
import { Json } from '../private/json';
import { formatFullVersion } from '../target/capabilities';

// The known-bug tables of the patch releases only for a target with a patch (without one, no bug
// can be told apart): a synthesis for `1.29` does not load them (issue 50, the import's share).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const knownBugs = (): typeof import('../facts/known-bugs') => require('../facts/known-bugs');

const BINDING = Symbol.for('cdk8s-sidecars.binding');

/**
 * The warnings that are facts of the target release rather than of one workload: an open upstream
 * bug (no fix released) that every pod of a common shape has (kubernetes#137710 and #140309: any pod
 * with two init containers). Each is recorded per workload (`SidecarWarnings.of`) but printed once
 * per synthesis call, as one summary line with the number of workloads it holds for (issue 48: one
 * Envoy workload at 1.33.0 printed three warnings, two of them these). Warning text -> the bug.
 */
const APP_WIDE_WARNINGS = new Map<string, { readonly issue: string; readonly summary: string }>();

/** The rule of the known-bug warnings (CS021). */
const KNOWN_BUG_RULE = () => ruleOfCheck(CLI_CHECKS.knownBug).id;

/**
 * One render per synthesis, with what cdk8s offers (issue 35: no cdk8s method is wrapped).
 * cdk8s (2.70) validates the whole app at the start of `app.synth()` / `synthYaml()` and again in
 * every chart's `toJson()` (`App._synthChart`): C + 1 validation passes per call for C charts, and
 * nothing marks where a call starts or ends. So:
 * - a pass starts with a validation on the App root (`passesOf`, added once): cdk8s validates in
 *   pre-order, so it runs first in every pass (`App.synth`, `synthYaml`, `Chart.toJson`,
 *   `Testing.synth`). It tells the later passes of a call by their shape: a call of `synth` /
 *   `synthYaml` validates once, then once before each chart's objects are emitted, each chart
 *   once; so a pass is taken for the next of the same call when it is at most the (C + 1)th, the
 *   pass before it emitted nothing (the second) or, at most, objects of one chart not emitted
 *   before in the call (the later ones; the emits of the bound objects are seen). Anything else
 *   starts a call. (The charts are counted with a walk of the tree, once per call: `app.charts`
 *   sorts them with a dependency graph of the whole app, 11 ms at 500 workloads, issue 36.)
 * - in a later pass of the same call a binding whose validation found nothing returns that
 *   (nothing the user wrote ran since but validations and lazy values, as with the wrapper);
 *   otherwise it renders. App-wide facts (`appFact`, e.g. WithEnvoy's index of the app's Services)
 *   are computed once per call and shared by every workload's render, never once per workload
 *   (issue 36: that was quadratic). Before the first pass (a direct `toJson()`) they are computed
 *   afresh; after a call, its facts serve until the next pass starts.
 * - a binding keeps its last render under a key of everything it is made from (`renderKey`: the
 *   workload's own manifest as its `toJson()` returns it now, the sidecars' frozen specs, the mesh
 *   proxies, the target). A validation that renders and every `toJson()` read the workload's own
 *   manifest and take the kept render when the key is equal: the engine runs once per change
 *   (once per workload per call), and the output always has every change (between calls, within a
 *   call, before a direct `toJson()`), even where a pass was taken for the wrong call (its
 *   validation's errors then come from the emit). A kept manifest is handed out by one `toJson()`.
 * - a workload's warnings are printed when its `toJson()` emits it (cdk8s emits each object once
 *   per call, in every synth path); SidecarValidation's once per call as told above; a notice once
 *   per App per emit sequence (a sequence ends when an object it emitted is emitted again).
 */
interface Passes {
  /** Passes started (root validations run) since the App was built, and the call the last one belongs to. */
  pass: number;
  call: number;
  /** The position of the last pass in its call (0: the first), and the number of the App's charts (counted at its second pass). */
  position: number;
  charts?: number;
  /** The charts of the bound objects emitted since the last pass started, and before it in the call. */
  readonly emittedCharts: Set<IConstruct>;
  readonly callCharts: Set<IConstruct>;
  /** Facts about the whole app, computed once per call (appFact). */
  readonly facts: Map<symbol, unknown>;
  /** SidecarValidation's warnings printed in the call. */
  readonly printed: Set<string>;
  /** The bindings emitted in the current emit sequence, and the notices printed in it. */
  readonly emitted: Set<WorkloadBinding>;
  readonly noticed: Set<string>;
}

const PASSES = new WeakMap<IConstruct, Passes>();

/** The passes of the App at the root of `scope`: the first call adds the validation that starts each pass (see Passes). */
function passesOf(scope: IConstruct): Passes {
  const root = scope.node.root;
  let passes = PASSES.get(root);
  if (!passes) {
    const state: Passes = {
      pass: 0,
      call: 0,
      position: 0,
      emittedCharts: new Set(),
      callCharts: new Set(),
      facts: new Map(),
      printed: new Set(),
      emitted: new Set(),
      noticed: new Set(),
    };
    root.node.addValidation({ validate: () => { startPass(root, state); return []; } });
    PASSES.set(root, state);
    passes = state;
  }
  return passes;
}

function startPass(root: IConstruct, state: Passes): void {
  const next = state.position + 1;
  const charts = next === 1 ? (root instanceof App ? countCharts(root) : undefined) : state.charts;
  const emitted = [...state.emittedCharts];
  const sameCall = state.pass > 0 && charts !== undefined && next <= charts && (next === 1
    ? emitted.length === 0
    : emitted.length <= 1 && emitted.every(c => !state.callCharts.has(c)));
  state.pass++;
  state.emittedCharts.clear();
  if (sameCall) {
    state.position = next;
    state.charts = charts;
    for (const c of emitted) state.callCharts.add(c);
  } else {
    state.call++;
    state.position = 0;
    state.charts = undefined;
    state.callCharts.clear();
    state.facts.clear();
    state.printed.clear();
  }
}

/** The number of charts under `root`: what `app.charts` lists, without sorting them. */
function countCharts(root: IConstruct): number {
  let count = 0;
  const visit = (c: IConstruct): void => {
    for (const child of c.node.children) {
      if (child instanceof Chart) count++;
      visit(child);
    }
  };
  visit(root);
  return count;
}

/** Makes the App of `scope` tell its passes and calls apart (SidecarValidation, which prints once per call). @internal */
export function watchPasses(scope: IConstruct): void {
  passesOf(scope);
}

const specIds = new WeakMap<SidecarSpec, number>();
let nextSpecId = 0;

/** The key of a render (see Passes), or undefined when a spec is not frozen (its identity then does not stand for its content). */
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

/**
 * A fact about the whole app of `scope` (e.g. its Services, indexed), computed once per
 * synthesis call and shared by every workload's render (see Passes). Before the app's first
 * pass (a direct `toJson()`), computed afresh each time.
 * @internal
 */
export function appFact<T>(scope: IConstruct, key: symbol, compute: () => T): T {
  const passes = PASSES.get(scope.node.root);
  if (!passes || passes.pass === 0) return compute();
  if (!passes.facts.has(key)) passes.facts.set(key, compute());
  return passes.facts.get(key) as T;
}

/**
 * Prints the warnings of SidecarValidation's app-wide checks to stderr, each once per synthesis
 * call: its validation runs in every pass (C + 1 per call; see Passes for how a call is told).
 * @internal
 */
export function printSynthesisWarnings(scope: IConstruct, warnings: string[], ignored?: ReadonlySet<string>): void {
  printWarnings(warnings, passesOf(scope).printed, ignored);
}

/**
 * Prints the app-wide warnings (APP_WIDE_WARNINGS) once per synthesis call, as ONE line, at the
 * first emit of a workload that has one: each open bug with the number of workloads of the app it
 * holds for (their warnings are recorded by this call's validation, which renders every workload
 * before any is emitted), leaving out those whose check-ignore annotation silences the rule.
 * `SidecarWarnings.of` keeps each workload's own text.
 */
function printAppWide(obj: ApiObject, passes: Passes, warnings: readonly string[], ignored: ReadonlySet<string>): void {
  const rule = KNOWN_BUG_RULE();
  if (ignored.has(rule) || passes.printed.has(APP_WIDE_PRINTED) || !warnings.some(w => APP_WIDE_WARNINGS.has(w))) return;
  passes.printed.add(APP_WIDE_PRINTED);
  const byBug = new Map<string, string[]>();
  const workloads = new Set<string>();
  for (const c of obj.node.root.node.findAll()) {
    if (!ApiObject.isApiObject(c) || WorkloadBinding.existing(c) === undefined) continue;
    if (c !== obj && ignoredRules({ metadata: c.metadata.toJson() }).has(rule)) continue;
    for (const w of c === obj ? warnings : warningsOf(c)) {
      const fact = APP_WIDE_WARNINGS.get(w);
      if (fact === undefined) continue;
      const paths = byBug.get(fact.summary) ?? byBug.set(fact.summary, []).get(fact.summary)!;
      if (!paths.includes(c.node.path)) paths.push(c.node.path);
      workloads.add(c.node.path);
    }
  }
  const all = [...workloads].map(p => `'${p}'`);
  const shown = all.length > 3 ? `${all.slice(0, 3).join(', ')} and ${all.length - 3} more` : all.join(', ');
  const bugs = [...byBug].map(([summary, paths]) => `${summary} (${paths.length} workload${paths.length === 1 ? '' : 's'})`).join('; ');
  process.stderr.write(
    `[cdk8s-sidecars] WARNING: ${all.length} workload${all.length === 1 ? ' of this synthesis (' + shown + ') runs' : 's of this synthesis (' + shown + ') run'} into bugs open upstream ` +
    `(no fix released), which every pod of that shape on the release has: ${bugs}. Printed once per synthesis; SidecarWarnings.of(workload) ` +
    `and \`cdk8s-sidecars check\` give each workload's details and what to do; silence them on a workload with the annotation ${CHECK_IGNORE}: "${rule}".` +
    `${ruleSuffix(rule)}\n`,
  );
}

/** The key in `Passes.printed` of the app-wide line (printAppWide). */
const APP_WIDE_PRINTED = 'app-wide known bugs';

/**
 * Prints `message` to stderr as `[cdk8s-sidecars] NOTICE: <message>`, once per App per emit
 * sequence (see Passes: once per `app.synth()` / `synthYaml()` call; once for `Testing.synth()` of
 * each chart of an App in turn). A notice is not a problem of the pods (those are warnings,
 * `SidecarWarnings.of`): it says what the library chose for the user.
 * @internal
 */
export function printSynthesisNotice(scope: IConstruct, message: string): void {
  const passes = passesOf(scope);
  if (passes.noticed.has(message)) return;
  passes.noticed.add(message);
  process.stderr.write(`[cdk8s-sidecars] NOTICE: ${message}\n`);
}

/**
 * The manifest of `obj` for a check that only reads it (SidecarValidation): a workload with
 * sidecars as its `toJson()` emits it, without printing its warnings or taking the render its
 * `toJson()` will hand out. Throws as `toJson()` does.
 * @internal
 */
export function manifestToRead(obj: ApiObject): Json {
  const binding = WorkloadBinding.existing(obj);
  if (!binding) return obj.toJson();
  const result = binding.render('read');
  if (result.errors.length > 0) throw renderErrors(result.errors);
  return result.manifest;
}

/**
 * The engine's errors of one workload's render, as `toJson()` throws them (`synthesisError`, the
 * one builder of refusals, src/private/errors.ts).
 * @internal
 */
export function renderErrors(errors: readonly string[]): Error {
  return synthesisError(errors);
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
  /** The last render and its key (see Passes); its manifest until one `toJson()` hands it out. */
  private kept?: { readonly key: string; manifest?: Json; readonly errors: string[]; readonly warnings: string[]; final?: string[]; call?: number };
  /** The call and the last pass of it in which this binding's validation found nothing (see Passes). */
  private validated?: { readonly call: number; pass: number };
  private constructor(obj: ApiObject, private readonly options: BindingOptions) {
    this.obj = obj;
    const passes = passesOf(obj);
    // The workload's hook (src/bind/hooks.ts): its own toJson() is what the engine starts from.
    this.originalToJson = hookToJson(obj, () => {
      // An object emitted again: the next call (or a direct toJson()) starts a new emit sequence.
      if (passes.emitted.has(this)) {
        passes.emitted.clear();
        passes.noticed.clear();
      }
      passes.emitted.add(this);
      passes.emittedCharts.add(Chart.of(obj));
      // From the workload as it is now: the kept render only when nothing it is made from has changed.
      const result = this.render('emit');
      if (result.errors.length > 0) {
        throw renderErrors(result.errors);
      }
      // the rules the workload's check-ignore annotation silences (as `check` reads it: its own metadata)
      const ignored = ignoredRules(result.manifest);
      printWarnings(this.warnings.filter(w => !APP_WIDE_WARNINGS.has(w)), undefined, ignored);
      printAppWide(obj, passes, this.warnings, ignored);
      return result.manifest;
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
    // A later pass of the same call: the first pass's result, when it found nothing (see Passes).
    const passes = passesOf(this.obj);
    if (this.validated?.call === passes.call && this.validated.pass !== passes.pass) {
      this.validated.pass = passes.pass;
      return [];
    }
    const errors = this.render('validate').errors;
    this.validated = errors.length === 0 ? { call: passes.call, pass: passes.pass } : undefined;
    // (its warnings are printed when toJson() emits the workload)
    return recordRefusals([...errors]);
  }

  /**
   * The workload's manifest with every attached sidecar, and every error found. `purpose` says
   * who asks: a validation pass, `toJson()` (which takes the kept manifest) or a reader that
   * leaves it (SidecarValidation); without one, a render afresh that keeps nothing.
   */
  public render(purpose?: 'validate' | 'emit' | 'read'): EngineResult {
    const base = this.baseManifest();
    if (purpose === 'emit') {
      const kept = this.takeKept(base);
      if (kept) return kept;
    }
    const before = this.kept;
    // A malformed pod spec (`containers: [null]`, `ports: "x"`) is reported as the engine reports
    // it, before any sidecar reads the app's containers (which would end in a raw TypeError).
    const ownSpec = podTemplateOf(base)?.spec;
    const shape = ownSpec === undefined ? [] : podSpecShapeErrors(describeObject(base), ownSpec);
    if (shape.length > 0) return { manifest: base, errors: shape };
    // The sources' checks of the workload's own pod spec, on this same manifest (before the
    // engine adds the sidecars to it): no extra toJson() of the workload per check.
    const workloadErrors = this.sources.flatMap(source => source.checkWorkload?.(ownSpec) ?? []);
    // (before the engine, which works on this same object)
    const labels = podTemplateOf(base)?.metadata.labels ?? {};
    const inferred = workloadErrors.length > 0 ? [] : this.sources.flatMap(source => source.workloadWarnings?.(ownSpec, labels) ?? []);
    const result = this.renderOn(base, workloadErrors.length === 0 ? purpose : undefined);
    if (workloadErrors.length > 0) return { manifest: result.manifest, errors: [...result.errors, ...workloadErrors] };
    if (inferred.length > 0 && result.errors.length === 0) {
      this.warnings = [...inferred, ...this.warnings];
      recordWarnings(this.obj, this.warnings);
    }
    // A render kept for the emit: with every warning, the inferred ones too (see takeKept).
    if (this.kept !== before && this.kept?.manifest !== undefined) {
      this.kept.final = this.warnings;
      this.kept.call = PASSES.get(this.obj.node.root)?.call;
    }
    return result;
  }

  /**
   * The emit of a kept render whose key is equal (see Passes): its manifest, errors and warnings
   * as the render that kept it found them, without the sources' checks of the workload's own pod
   * spec. They read the same manifest (the key holds it whole) and the app's facts of the call,
   * so they would find the same again (issue 36: they cost each workload a second run per call).
   * Only for a render kept in this call (after a call that failed, the next one checks again).
   * Undefined when nothing is kept for this key, or a sidecar cannot render: the full render then.
   */
  private takeKept(base: Json): EngineResult | undefined {
    const kept = this.kept;
    // (made in this call: the app's facts the checks read are the same)
    if (kept?.manifest === undefined || kept.final === undefined || kept.call !== PASSES.get(this.obj.node.root)?.call) return undefined;
    const specs: SidecarSpec[] = [];
    const injected: InjectedProxy[] = [];
    let minor = 0;
    let gate = false;
    let patch: number | undefined;
    try {
      for (const source of this.sources) {
        const r = source.renderSidecar();
        if (r.spec) specs.push(r.spec);
        if (r.injected) injected.push(r.injected);
        if (minor !== 0 && (r.minor !== minor || r.gate !== gate)) return undefined; // (different targets: the full render says so)
        minor = r.minor;
        gate = r.gate;
        if (r.patch !== undefined) patch = Math.min(patch ?? r.patch, r.patch);
      }
    } catch {
      return undefined;
    }
    if (renderKey(base, specs, injected, minor, gate, patch) !== kept.key) return undefined;
    this.warnings = kept.final;
    recordWarnings(this.obj, this.warnings);
    const manifest = kept.manifest;
    kept.manifest = undefined;
    return { manifest, errors: [...kept.errors] };
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

  private renderOn(base: Json, purpose?: 'validate' | 'emit' | 'read'): EngineResult {
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
    const key = purpose ? renderKey(base, specs, injected, minor, gate, patch) : undefined;
    const kept = this.kept;
    if (key !== undefined && kept?.key === key && (purpose === 'validate' || kept.manifest !== undefined)) {
      this.warnings = kept.warnings;
      recordWarnings(this.obj, this.warnings);
      const manifest = kept.manifest ?? base;
      if (purpose === 'emit') kept.manifest = undefined;
      return { manifest, errors: [...kept.errors] };
    }
    const rendered = this.renderAnew(base, specs, injected, minor, gate, patch, sidecarWarnings);
    if (key !== undefined) {
      const manifest = purpose === 'emit' || rendered.errors.length > 0 ? undefined : rendered.manifest;
      this.kept = { key, manifest, errors: rendered.errors, warnings: this.warnings };
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
      ruleSuffix: ruleSuffixOfCheck,
    });
    if (result.errors.length > 0) return result;
    // What the engine inferred from the manifest, then the known bugs of the target's patch
    // release, on the pod as emitted (src/facts/known-bugs.ts).
    const subject = `'${this.obj.node.path}' (${describeObject(result.manifest)})`;
    const inferred = (result.warnings ?? []).map(w => w.replace(describeObject(result.manifest), subject));
    // Known bugs of the target's patch release, on the pod as emitted (src/facts/known-bugs.ts).
    // (as admitted: a mesh's injected native proxy counts, src/facts/known-bugs.ts asAdmitted)
    const template = podTemplateOf(result.manifest)!;
    const version = { major: 1, minor, patch, raw: '' };
    const bugs = patch === undefined ? undefined : knownBugs();
    const findings = bugs ? bugs.findKnownBugs(subject, bugs.asAdmitted(template.spec, template.metadata.annotations), version) : [];
    // A podFailurePolicy rule the sidecars may match (its error half is the engine's: src/engine/rules.ts).
    const failurePolicy = checkJobPodFailurePolicy(result.manifest, subject);
    // A native sidecar's own preStop that stops its process (src/engine/around.ts): the user's, kept by AdoptSidecar or in the manifest.
    const preStops = checkSelfStoppingPreStops(result.manifest, subject);
    // each with the rule `check` finds it by (its id printed, its check-ignore annotation honoured)
    const bugWarnings = findings.filter(f => f.level === 'warning').map(f => {
      const bug = bugs!.KNOWN_KUBERNETES_BUGS.find(b => b.issue === f.issue);
      if (bug?.open === true && !APP_WIDE_WARNINGS.has(f.message)) {
        APP_WIDE_WARNINGS.set(f.message, {
          issue: bug.issue,
          summary: `Kubernetes ${formatFullVersion(version)} has ${bug.issue} (open upstream: no fix released; ${bug.fixedBy} proposes one): ${bug.summary}`,
        });
      }
      return tagWarning(f.message, KNOWN_BUG_RULE());
    });
    this.warnings = [
      ...sidecarWarnings, ...inferred, ...bugWarnings,
      ...failurePolicy.warnings.map(w => tagWarning(w, ruleOfCheck(SET_RULES.jobPodFailurePolicy).id)),
      ...preStops.warnings.map(w => tagWarning(w, ruleOfCheck(SET_RULES.selfStoppingPreStop).id)),
    ];
    recordWarnings(this.obj, this.warnings);
    const bugErrors = [...findings.filter(f => f.level === 'error').map(f => f.message), ...preStops.errors];
    return bugErrors.length > 0 ? { manifest: result.manifest, errors: bugErrors } : result;
  }
}
