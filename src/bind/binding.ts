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
import { ApiObject, App, JsonPatch, YamlOutputType } from 'cdk8s';
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
// can be told apart): a synthesis for `1.29` does not load them (what importing the library costs).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const knownBugs = (): typeof import('../facts/known-bugs') => require('../facts/known-bugs');

const BINDING = Symbol.for('cdk8s-sidecars.binding');

/**
 * The warnings that are facts of the target release rather than of one workload: an open upstream
 * bug (no fix released) that every pod of a common shape has (kubernetes#137710 and #140309: any pod
 * with two init containers). Each is recorded per workload (`SidecarWarnings.of`) but printed once
 * per synthesis call, as one summary line with the number of workloads it holds for (printed per
 * workload, they made one Envoy workload at 1.33.0 print three warnings, two of them these). Warning text -> the bug.
 */
const APP_WIDE_WARNINGS = new Map<string, { readonly issue: string; readonly summary: string }>();

/** The rule of the known-bug warnings (CS021). */
const KNOWN_BUG_RULE = () => ruleOfCheck(CLI_CHECKS.knownBug).id;

/**
 * One render per change and per synthesis, with documented cdk8s API only: a synthesis validates
 * the app's constructs (`node.addValidation`), then emits every object once (its `toJson()`).
 * Nothing here counts how often cdk8s validates the app or depends on the order of its calls:
 * - a binding keeps its last render under a key of its content (`renderKey`: the workload's own
 *   manifest as its `toJson()` returns it now, the sidecars' frozen specs, the mesh proxies, the
 *   target). A validation and every `toJson()` read the workload's own manifest and take the kept
 *   render when the key is equal: the engine runs once per change, and the output always has every
 *   change. A kept manifest is handed out by one `toJson()`; inside `App.synth()` and
 *   `App.synthYaml()`, where no code of the user's runs between the App's validation and the emit,
 *   without reading the workload again (`synthesisPassOf`).
 * - an epoch is one synthesis: it ends when every bound workload of the App has been emitted since
 *   it began (a synthesis emits every object once), when a workload emitted in it is emitted again
 *   (another synthesis has begun), or, after a validation that found errors (the synthesis fails),
 *   at the next validation on the App root. Within an epoch a binding whose validation found
 *   nothing is not validated again (cdk8s validates the whole app once more per chart it emits: a
 *   render per validation made synthesis quadratic in the number of charts); should its workload
 *   change all the same, its `toJson()` sees it (the key) and throws the errors there. Facts about the whole app (`appFact`, e.g. WithEnvoy's index of the app's
 *   Services) are computed once per epoch and shared by every workload's render, never once per
 *   workload (quadratic too); before the first validation (a direct `toJson()`), afresh each time.
 * - a workload's warnings are printed when its `toJson()` emits it; SidecarValidation's and the
 *   app-wide line once per epoch, by their text (an App without bound workloads never ends its
 *   first: nothing shows where its synthesis ends); a notice once per App per emit sequence (a
 *   sequence ends when an object it emitted is emitted again).
 */
interface AppState {
  /** Bumped at each new epoch (0: never validated yet). */
  generation: number;
  /** The whole-App synthesis call the App's validation that runs (or ran last) belongs to (`synthesisPassOf`), or undefined. */
  call?: number;
  /**
   * That validation is the App's own, and a chart's validation follows it before any object is
   * emitted (`synthesisPassOf`): the workloads are rendered in the next.
   */
  firstPass: boolean;
  /** Facts about the whole app, computed once per epoch (appFact). */
  readonly facts: Map<symbol, unknown>;
  /** Every binding of the App. */
  readonly bindings: Set<WorkloadBinding>;
  /** The bindings validated without errors in this epoch (not validated again in it). */
  readonly clean: Set<WorkloadBinding>;
  /** The bindings emitted in this epoch (all of them: the epoch ends). */
  readonly emittedInEpoch: Set<WorkloadBinding>;
  /** A validation of this epoch found errors: the next validation on the App root starts another. */
  failed: boolean;
  /** The warnings printed in this epoch (SidecarValidation's, the app-wide line), by text. */
  readonly printed: Set<string>;
  /** The bindings emitted in the current emit sequence, and the notices printed in it. */
  readonly emitted: Set<WorkloadBinding>;
  readonly noticed: Set<string>;
}

const APP_STATES = new WeakMap<IConstruct, AppState>();

/** The state of the App at the root of `scope`: the first call adds the validation on the root (see AppState). */
function appState(scope: IConstruct): AppState {
  const root = scope.node.root;
  let state = APP_STATES.get(root);
  if (!state) {
    const created: AppState = {
      generation: 0,
      firstPass: false,
      facts: new Map(),
      bindings: new Set(),
      clean: new Set(),
      emittedInEpoch: new Set(),
      failed: false,
      printed: new Set(),
      emitted: new Set(),
      noticed: new Set(),
    };
    root.node.addValidation({
      validate: () => {
        if (created.failed || created.generation === 0) nextEpoch(created);
        const pass = synthesisPassOf(created.call, root);
        created.call = pass.call;
        created.firstPass = pass.first;
        // (a whole-App call is one emit sequence: its renders, and so its notices, come before any emit)
        if (pass.first) {
          created.emitted.clear();
          created.noticed.clear();
        }
        return [];
      },
    });
    APP_STATES.set(root, created);
    state = created;
  }
  return state;
}

/** Numbers the whole-App synthesis calls (`synthesisPassOf`). */
let lastSynthesisCall = 0;

/** One frame of the call path: its function's name and file, as V8 has them (no source map applied). */
interface Frame { readonly fn: string; readonly file: string }

/** `Error.prepareStackTrace` for `callPath` (a function of the module: no closure per call). */
function framesOf(_e: Error, sites: NodeJS.CallSite[]): Frame[] {
  const frames: Frame[] = [];
  for (const site of sites) frames.push({ fn: site.getFunctionName() ?? '', file: site.getFileName() ?? '' });
  return frames;
}

/** The call path of the caller, innermost first (V8's structured stack, read without any formatting). */
function callPath(): Frame[] {
  const frames = readStack(framesOf, callPath);
  return Array.isArray(frames) ? frames : [];
}

/**
 * What `prepare` makes of the caller's stack (up to 16 frames above `above`), or undefined where
 * the stack is not V8's structured one.
 */
function readStack<T>(prepare: (e: Error, sites: NodeJS.CallSite[]) => T, above: Function): T | undefined {
  const before = Error.prepareStackTrace;
  const limit = Error.stackTraceLimit;
  try {
    Error.stackTraceLimit = 16;
    Error.prepareStackTrace = prepare;
    const holder: { stack?: T } = {};
    Error.captureStackTrace(holder, above);
    return holder.stack;
  } finally {
    Error.prepareStackTrace = before;
    Error.stackTraceLimit = limit;
  }
}

/**
 * `Error.prepareStackTrace` that tells a path through `App.synth()` or `App.synthYaml()` (as
 * `inWholeSynthesis(callPath())`, without a frame object per site: every workload's emit asks).
 */
function throughWholeSynthesis(_e: Error, sites: NodeJS.CallSite[]): boolean {
  for (const site of sites) {
    const fn = site.getFunctionName();
    if ((fn === 'synth' || fn === 'synthYaml') && CDK8S_FILE.test(site.getFileName() ?? '')) return true;
  }
  return false;
}

/** The caller's stack passes through `App.synth()` or `App.synthYaml()`. */
function calledInWholeSynthesis(): boolean {
  return readStack(throughWholeSynthesis, calledInWholeSynthesis) === true;
}

/** A frame of cdk8s' own `App` or `Chart` module. */
const CDK8S_FILE = /[\\/]cdk8s[\\/]lib[\\/](app|chart)\.js$/;
const isCdk8s = (f: Frame | undefined, fn: string) => f !== undefined && f.fn === fn && CDK8S_FILE.test(f.file);

/**
 * Which pass of which whole-App synthesis the App's validation that is running is, read from its
 * call path: `App.synth()` and `App.synthYaml()` validate the App (`first`: a new call, a new
 * number), then call each chart's `toJson()`, which validates the App again (the same call) and
 * emits the chart's objects (`App.synth()` with `FOLDER_PER_CHART_FILE_PER_RESOURCE` calls no
 * chart's `toJson()`: its own pass is then the one that renders). Anything else (`Testing.synth`, a
 * chart's `toJson()` called by the user, a path this does not recognize, e.g. a bundled cdk8s) is
 * no call at all.
 *
 * Inside a call, every chart's validation of the whole App comes before that chart's objects are
 * emitted, so a workload is rendered by the first chart's validation (the App's own pass before it
 * only counts: a validation of the user's that changes a workload in that pass is seen), and its
 * `toJson()` hands out the render kept in the call without reading the workload's own manifest
 * again (`keptOfThisCall`). Everywhere else the emit reads it again and compares (`takeKept`): a
 * workload changed between a partial synthesis and the next is emitted as it is. One stack trace
 * per validation of the App, not per workload; an unrecognized path only costs the second read.
 */
function synthesisPassOf(previous: number | undefined, root: IConstruct): { readonly call?: number; readonly first: boolean } {
  const frames = callPath();
  // (cdk8s' module-level `validate(app, cache)`, which calls Node.validate of every construct)
  const at = frames.findIndex(f => isCdk8s(f, 'validate'));
  if (at < 0) return { first: false };
  const whole = (f: Frame | undefined) => isCdk8s(f, 'synth') || isCdk8s(f, 'synthYaml');
  if (whole(frames[at + 1])) {
    // App.synth() with FOLDER_PER_CHART_FILE_PER_RESOURCE emits each object without its chart's
    // toJson(), so no chart's validation follows: this pass renders (and the emit takes its render)
    const perResource = isCdk8s(frames[at + 1], 'synth') && (root as App).yamlOutputType === YamlOutputType.FOLDER_PER_CHART_FILE_PER_RESOURCE;
    return { call: ++lastSynthesisCall, first: !perResource };
  }
  if (isCdk8s(frames[at + 1], '_synthChart') && isCdk8s(frames[at + 2], 'toJson') && whole(frames[at + 3])) return { call: previous, first: false };
  return { first: false };
}

/** A validation called by cdk8s' `validate(app)` right from `App.synth()` or `App.synthYaml()`. */
function inAppOwnPass(): boolean {
  const frames = callPath();
  const at = frames.findIndex(f => isCdk8s(f, 'validate'));
  return at >= 0 && (isCdk8s(frames[at + 1], 'synth') || isCdk8s(frames[at + 1], 'synthYaml'));
}

/** Starts the next epoch (see AppState). */
function nextEpoch(state: AppState): void {
  state.generation++;
  state.facts.clear();
  state.clean.clear();
  state.emittedInEpoch.clear();
  state.printed.clear();
  state.failed = false;
}

/** A validation outside the bindings (SidecarValidation) found errors: the synthesis fails (see AppState). @internal */
export function markSynthesisFailed(scope: IConstruct): void {
  appState(scope).failed = true;
}

/** Makes the App of `scope` keep its state (SidecarValidation, which prints through it also in an app without sidecars). @internal */
export function watchApp(scope: IConstruct): void {
  appState(scope);
}

const specIds = new WeakMap<SidecarSpec, number>();
let nextSpecId = 0;

/** The key of a render (see AppState), or undefined when a spec is not frozen (its identity then does not stand for its content). */
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
 * synthesis (epoch) and shared by every workload's render (see AppState). Before the app's first
 * validation (a direct `toJson()`), computed afresh each time.
 * @internal
 */
export function appFact<T>(scope: IConstruct, key: symbol, compute: () => T): T {
  const state = APP_STATES.get(scope.node.root);
  if (!state || state.generation === 0) return compute();
  if (!state.facts.has(key)) state.facts.set(key, compute());
  return state.facts.get(key) as T;
}

/**
 * Prints the warnings of SidecarValidation's app-wide checks to stderr, each once per synthesis
 * (its validation runs in every validation pass; see AppState), or once per App where no synthesis
 * ends (an App without bound workloads).
 * @internal
 */
export function printSynthesisWarnings(scope: IConstruct, warnings: string[], ignored?: ReadonlySet<string>): void {
  printWarnings(warnings, appState(scope).printed, ignored);
}

/**
 * Prints the app-wide warnings (APP_WIDE_WARNINGS) once per synthesis, as ONE line, at the first emit of
 * a workload that has one: each open bug with the number of workloads of the app it holds for
 * (their warnings are recorded by the validation, which renders every workload before any is
 * emitted), leaving out those whose check-ignore annotation silences the rule.
 * `SidecarWarnings.of` keeps each workload's own text.
 */
function printAppWide(obj: ApiObject, state: AppState, warnings: readonly string[], ignored: ReadonlySet<string>): void {
  const rule = KNOWN_BUG_RULE();
  if (ignored.has(rule) || state.printed.has(APP_WIDE_PRINTED) || !warnings.some(w => APP_WIDE_WARNINGS.has(w))) return;
  state.printed.add(APP_WIDE_PRINTED);
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

/** The key in `AppState.printed` of the app-wide line (printAppWide). */
const APP_WIDE_PRINTED = 'app-wide known bugs';

/**
 * Prints `message` to stderr as `[cdk8s-sidecars] NOTICE: <message>`, once per App per emit
 * sequence (see AppState: once per `app.synth()` / `synthYaml()` call; once for `Testing.synth()` of
 * each chart of an App in turn). A notice is not a problem of the pods (those are warnings,
 * `SidecarWarnings.of`): it says what the library chose for the user.
 * @internal
 */
export function printSynthesisNotice(scope: IConstruct, message: string): void {
  const state = appState(scope);
  if (state.noticed.has(message)) return;
  state.noticed.add(message);
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
 * The workload's own manifest (its `toJson()` before any sidecar, its JSON patches applied), for a
 * construct that reads it when it is created: through its binding where it has one (no emit),
 * else the object's own `toJson()`. Throws as `toJson()` does.
 * @internal
 */
export function ownManifest(obj: ApiObject): Json {
  const binding = WorkloadBinding.existing(obj);
  return binding ? binding.ownManifest() : obj.toJson();
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

/**
 * The JSON patches of `obj`, for the message of one that fails only (which of them, and what it
 * does): cdk8s has no public reader of them, so this reads its `patches` field (2.x) and returns
 * undefined where that is not a list; the message then says what cdk8s' error says. Nothing else
 * depends on it.
 */
function jsonPatchesForMessage(obj: ApiObject): JsonPatch[] | undefined {
  const patches: unknown = (obj as any).patches;
  return Array.isArray(patches) && patches.length > 0 ? patches : undefined;
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
  /** The last render and its key (see AppState); its manifest until one `toJson()` hands it out. */
  private kept?: {
    readonly key: string;
    manifest?: Json;
    readonly errors: string[];
    readonly warnings: string[];
    final?: string[];
    generation?: number;
    /** The whole-App synthesis call in which it was rendered (`synthesisPassOf`). */
    call?: number;
  };
  /** Set by the emit of the last bound workload of a synthesis: the epoch ends once it is printed. */
  private endEpochAfterEmit = false;
  /** The namespace of the workload's own manifest at its last render, and the generation of the app's facts then (emittedNamespace). */
  private lastNamespace?: { readonly generation: number; readonly namespace: string | undefined };
  private constructor(obj: ApiObject, private readonly options: BindingOptions) {
    this.obj = obj;
    const state = appState(obj);
    state.bindings.add(this);
    // The workload's hook (src/bind/hooks.ts): its own toJson() is what the engine starts from.
    this.originalToJson = hookToJson(obj, () => {
      // An object emitted again: the next call (or a direct toJson()) starts a new emit sequence.
      if (state.emitted.has(this)) {
        state.emitted.clear();
        state.noticed.clear();
      }
      state.emitted.add(this);
      // Emitted already in this synthesis: another has begun, whose validations took this one's
      // results (e.g. Testing.synth of one chart twice, the other charts never emitted); the app's
      // facts are read again and the workload rendered with them (see AppState).
      if (state.generation !== 0 && state.emittedInEpoch.has(this)) nextEpoch(state);
      // From the workload as it is now: the kept render only when nothing it is made from has changed.
      const result = this.render('emit');
      if (result.errors.length > 0) {
        state.failed = true;
        state.clean.delete(this);
        throw renderErrors(result.errors);
      }
      // Every bound workload emitted: this synthesis is over (see AppState).
      state.emittedInEpoch.add(this);
      if (state.emittedInEpoch.size >= state.bindings.size && state.generation !== 0) this.endEpochAfterEmit = true;
      // the rules the workload's check-ignore annotation silences (as `check` reads it: its own metadata)
      const ignored = ignoredRules(result.manifest);
      printWarnings(this.warnings.filter(w => !APP_WIDE_WARNINGS.has(w)), undefined, ignored);
      printAppWide(obj, state, this.warnings, ignored);
      if (this.endEpochAfterEmit) {
        this.endEpochAfterEmit = false;
        const ended = state.generation;
        nextEpoch(state);
        // (the namespaces read in it stand for the ConfigMaps this synthesis emits after the workloads)
        for (const b of state.bindings) {
          if (b.lastNamespace?.generation === ended) b.lastNamespace = { generation: state.generation, namespace: b.lastNamespace.namespace };
        }
      }
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
      // (the binding itself, not a closure per workload: the validation's optimized code then
      // outlives the App it ran for, as a method's does)
      this.obj.node.addValidation(this);
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

  /** The workload's validation (see `add`). @internal */
  public validate(): string[] {
    // Validated without errors in this synthesis: nothing to add (see AppState).
    const state = appState(this.obj);
    if (state.generation === 0) nextEpoch(state);
    if (state.clean.has(this)) return [];
    // (the App's own pass of App.synth()/synthYaml(): every chart's pass follows before an emit;
    // after a pass that failed, a validation of the user's is no part of it)
    if (state.firstPass && inAppOwnPass()) return [];
    const errors = this.render('validate').errors;
    if (errors.length === 0) state.clean.add(this);
    else state.failed = true;
    // (its warnings are printed when toJson() emits the workload)
    return recordRefusals([...errors]);
  }

  /**
   * The workload's manifest with every attached sidecar, and every error found. `purpose` says
   * who asks: a validation pass, `toJson()` (which takes the kept manifest) or a reader that
   * leaves it (SidecarValidation); without one, a render afresh that keeps nothing.
   */
  public render(purpose?: 'validate' | 'emit' | 'read'): EngineResult {
    if (purpose === 'emit') {
      const ofThisCall = this.keptOfThisCall();
      if (ofThisCall) return ofThisCall;
    }
    const base = this.baseManifest();
    this.lastNamespace = { generation: APP_STATES.get(this.obj.node.root)?.generation ?? 0, namespace: base.metadata?.namespace };
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
    // (loops, not callbacks: a closure made per render is compiled anew once the collector frees it, bench/README.md)
    const workloadErrors: string[] = [];
    for (const source of this.sources) {
      const found = source.checkWorkload?.(ownSpec);
      if (found !== undefined) workloadErrors.push(...found);
    }
    // (before the engine, which works on this same object)
    const labels = podTemplateOf(base)?.metadata.labels ?? {};
    const inferred: string[] = [];
    if (workloadErrors.length === 0) {
      for (const source of this.sources) {
        const found = source.workloadWarnings?.(ownSpec, labels);
        if (found !== undefined) inferred.push(...found);
      }
    }
    const result = this.renderOn(base, workloadErrors.length === 0 ? purpose : undefined);
    if (workloadErrors.length > 0) return { manifest: result.manifest, errors: [...result.errors, ...workloadErrors] };
    if (inferred.length > 0 && result.errors.length === 0) {
      this.warnings = [...inferred, ...this.warnings];
      recordWarnings(this.obj, this.warnings);
    }
    // A render kept for the emit: with every warning, the inferred ones too, and the generation of
    // the app's facts the sources' checks read (see takeKept).
    if (this.kept?.manifest !== undefined && (this.kept !== before || purpose === 'validate')) {
      this.kept.final = this.warnings;
      this.kept.generation = APP_STATES.get(this.obj.node.root)?.generation;
      this.kept.call = APP_STATES.get(this.obj.node.root)?.call;
    }
    return result;
  }

  /**
   * The emit of the render this workload's validation kept in the same whole-App synthesis call
   * (`synthesisPassOf`): nothing of the user's has run since, so it is handed out as it is, with
   * its errors and warnings, without a second `toJson()` of the workload. Undefined otherwise.
   */
  private keptOfThisCall(): EngineResult | undefined {
    const kept = this.kept;
    const state = APP_STATES.get(this.obj.node.root);
    if (state?.call === undefined || kept?.manifest === undefined || kept.final === undefined) return undefined;
    if (kept.call !== state.call || kept.generation !== state.generation) return undefined;
    // (and this emit is App.synth()/synthYaml()'s own: after a call that threw, a direct toJson()
    // of the user's reads the workload as it is now)
    if (!calledInWholeSynthesis()) return undefined;
    this.warnings = kept.final;
    recordWarnings(this.obj, this.warnings);
    const manifest = kept.manifest;
    kept.manifest = undefined;
    return { manifest, errors: [...kept.errors] };
  }

  /**
   * The emit of a kept render whose key is equal (see AppState): its manifest, errors and warnings
   * as the render that kept it found them, without the sources' checks of the workload's own pod
   * spec. They read the same manifest (the key holds it whole) and the same generation of the
   * app's facts, so they would find the same again (and cost each workload a second run).
   * Only for a render kept in this generation (after a synthesis that failed, the next checks again).
   * Undefined when nothing is kept for this key, or a sidecar cannot render: the full render then.
   */
  private takeKept(base: Json): EngineResult | undefined {
    const kept = this.kept;
    // (made with this generation of the app's facts: the checks would read the same)
    const generation = APP_STATES.get(this.obj.node.root)?.generation;
    if (kept?.manifest === undefined || kept.final === undefined || kept.generation !== generation) return undefined;
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
   * `/metadata/namespace` moves the pod, and the sidecars' ConfigMaps must follow it). The one its
   * last render read, in the same synthesis (no extra `toJson()`); else read now.
   */
  public emittedNamespace(): string | undefined {
    const read = this.lastNamespace;
    if (read !== undefined && read.generation !== 0 && read.generation === APP_STATES.get(this.obj.node.root)?.generation) return read.namespace;
    return this.baseManifest().metadata?.namespace;
  }

  /**
   * The workload's own manifest (its `toJson()` before the sidecars): the user's JSON patches are
   * applied here, BEFORE the engine adds the sidecars, so a patch cannot reach a sidecar; one
   * that fails (it names a container, volume or hook only the sidecars bring) is reported as such.
   */
  /** The workload's own manifest (see baseManifest), for a reader outside the render (`ownManifest`). */
  public ownManifest(): Json {
    return this.baseManifest();
  }

  private baseManifest(): Json {
    try {
      return this.originalToJson();
    } catch (e) {
      if (jsonPatchesForMessage(this.obj) === undefined) throw e;
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
    const patches = jsonPatchesForMessage(this.obj)!;
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
        // (the operation as cdk8s writes it, where its JsonPatch still has that reader)
        const op = typeof (saved[index] as any)._toJson === 'function' ? (saved[index] as any)._toJson() : undefined;
        return { index, count: saved.length, op, message: (e as Error).message };
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
    // (a validation takes the kept errors alone, its manifest handed out, except in a whole-App
    // call before the workload's emit: that emit takes the validation's render, with its manifest)
    const state = APP_STATES.get(this.obj.node.root);
    const errorsServe = purpose === 'validate' && (state?.call === undefined || state.emittedInEpoch.has(this));
    if (key !== undefined && kept?.key === key && (errorsServe || kept.manifest !== undefined)) {
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
