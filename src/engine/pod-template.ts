/**
 * Layer 2: the pod-template engine. Plain Kubernetes JSON in, plain JSON out.
 *
 * "How does a sidecar get into the manifest?" is answered here, in `applySidecars`: it finds the
 * pod template of any workload kind, places each sidecar in its layout, adds volumes, mounts,
 * env, annotations and shutdown handling, sets the grace period and checks the API server's
 * rules on the result.
 */
import { applyCapture, podLogsContainer, podLogsEnv } from './capture';
import { InjectedProxy, MESH_FACTS, asGraceSpec, checkInjected, injectedStopTimes, meshAnnotations, nativeSidecarNames } from './injected';
import { DNS1123_LABEL_MAX_LENGTH, checkJobPodFailurePolicy, checkPodSpecByRule, isDns1123Label, podSpecShapeErrors } from './rules';
import {
  GracePlan, TOOLS, agentArgv, exitWithAppCommand, exitWithAppPrograms, holdSigtermCommand, lifecycleFor, planGrace, sidecarPrograms,
  toolsInitContainer, toolsVolume, userSidecarStopOf, watchesApp,
} from './shutdown';
import { EngineTarget, SidecarSpec } from './spec';
import { APP_SHUTDOWN_ANNOTATION, NATIVE_SIDECARS_ANNOTATION, STOP_TIMES_ANNOTATION } from '../facts/annotations';
import { COMPLETING_KINDS, SUPPORTED_KINDS, podTemplateIn, podTemplateOf } from '../facts/kinds';
import { Json } from '../private/json';
import { compareCodePoints, inCodePointOrder, setOwn, sortedKeys } from '../private/order';
import { capabilities } from '../target/capabilities';

/** `Deployment 'web'` */
export function describeObject(manifest: Json): string {
  return `${manifest.kind} '${manifest.metadata?.name ?? '?'}'`;
}

/**
 * Volume names the workload's controller adds to each pod: one per StatefulSet
 * `volumeClaimTemplates` entry, named after the claim template (kubernetes
 * `pkg/controller/statefulset/stateful_set_utils.go`, `updateStorage`).
 */
export function controllerVolumesOf(manifest: Json): string[] {
  if (manifest.kind !== 'StatefulSet') return [];
  const templates: Json[] = Array.isArray(manifest.spec?.volumeClaimTemplates) ? manifest.spec.volumeClaimTemplates : [];
  return templates.map(t => t?.metadata?.name).filter((n): n is string => typeof n === 'string');
}

/** The annotation `kubectl logs` / `exec` / `attach` read to pick a container when none is named. */
export const DEFAULT_CONTAINER_ANNOTATION = 'kubectl.kubernetes.io/default-container';


export interface EngineResult {
  /**
   * The manifest with the sidecars in place: a new object, unless `ApplyOptions.mutateInput`
   * was set, in which case it is the input itself, changed in place.
   */
  readonly manifest: Json;
  /** Every problem found; the manifest must not be emitted when there is any. */
  readonly errors: string[];
  /**
   * What the engine inferred from the manifest where no prop said it (a grace period taken as the
   * app's budget, a default stop time for the user's native sidecars, ...), for the user to see.
   */
  readonly warnings?: string[];
  /**
   * The app's budget and the grace period the sidecars were placed with (`planGrace`), for
   * `SidecarTimeline`; undefined when the engine stopped before planning.
   */
  readonly grace?: GracePlan;
}

/**
 * Places `sidecars` into the pod template of `input` for `target`.
 */
export interface ApplyOptions extends EngineTarget {
  /**
   * A `terminationGracePeriodSeconds` value that stands for "not set by the user" (cdk8s-plus,
   * every major, always writes 30 when its prop is unset); such a value is raised like an absent one.
   */
  readonly graceWrittenByDefault?: number;
  /**
   * The workload's `shareProcessNamespace: false` was written by its construct, not chosen by its
   * user (cdk8s-plus 29 to 34 always write it): it is treated as unset, so a sidecar that needs the
   * processes shared may set it to true.
   * @default false
   */
  readonly processNamespaceWrittenByDefault?: boolean;
  /**
   * Work on `input` itself instead of a copy (the caller hands over a fresh object): the result's
   * `manifest` is then `input`, changed in place.
   * @default false
   */
  readonly mutateInput?: boolean;
  /** Proxies a mesh injects at admission (src/engine/injected.ts): checked and budgeted, never placed. */
  readonly injected?: InjectedProxy[];
  /**
   * What to append to the error of a pod spec rule, by the rule's name (`POD_SPEC_RULES`): the id of
   * the rule of `cdk8s-sidecars check` (src/engine/check-rules.ts, which the binding reads).
   * @default - nothing
   */
  readonly ruleSuffix?: (check: string) => string;
}

/**
 * Places `sidecars` into the pod template of `input` for `target`, in steps: refuse a pod no sidecar
 * can join (`podRefusals`), take over the adopted containers, check the pod for the sidecars
 * (`checkPodForSidecars`), plan how it stops (`planShutdown`), place each sidecar's container in
 * its layout (`placeSidecars`), wire the app containers (`wireAppContainers`), assemble the pod spec
 * (`assemblePodSpec`), annotate the template (`annotatePod`), then write the grace period and check
 * the API server's rules on the result (`finishPod`). Every error is collected; the manifest must
 * not be emitted when there is one.
 */
export function applySidecars(input: Json, sidecars: SidecarSpec[], target: ApplyOptions): EngineResult {
  const manifest: Json = target.mutateInput ? input : structuredClone(input);
  const where = describeObject(manifest);
  const template = podTemplateOf(manifest);
  if (!template) {
    return { manifest, errors: [`${where}: kind ${manifest.kind} has no pod template; supported kinds: ${SUPPORTED_KINDS.join(', ')}.`] };
  }
  const spec = template.spec;
  const refused = podRefusals(where, spec, sidecars);
  if (refused.length > 0) return { manifest, errors: refused };
  const userInit: Json[] = spec.initContainers ?? [];
  // Adopted containers leave spec.containers and become sidecars with their own fields.
  const adoption = adoptContainers(where, sidecars, spec.containers ?? [], userInit);
  if (adoption.errors.length > 0) return { manifest, errors: adoption.errors };
  const ordered = [...adoption.sidecars].sort(byRankThenName);
  const pod: Pod = {
    manifest,
    where,
    template,
    spec,
    target,
    ordered,
    natives: nativesOf(ordered),
    injected: target.injected ?? [],
    userInit,
    userContainers: adoption.containers,
    userVolumes: spec.volumes ?? [],
    controllerVolumes: controllerVolumesOf(manifest),
    errors: [],
    warnings: [],
  };
  checkPodForSidecars(pod);
  const shutdown = planShutdown(pod);
  const placed = placeSidecars(pod, shutdown);
  const appContainers = wireAppContainers(pod, shutdown, placed);
  assemblePodSpec(pod, placed, appContainers);
  annotatePod(pod, shutdown, placed, appContainers);
  finishPod(pod, shutdown.plan);
  return { manifest, errors: pod.errors, warnings: pod.warnings, grace: shutdown.plan };
}

/** The pod `applySidecars` works on, and the errors and warnings its steps add, in their order. */
interface Pod {
  readonly manifest: Json;
  readonly where: string;
  readonly template: { metadata: Json; spec: Json };
  readonly spec: Json;
  readonly target: ApplyOptions;
  /** The library's sidecars (adopted ones included) in the pod's order, and the native ones of them. */
  readonly ordered: SidecarSpec[];
  readonly natives: SidecarSpec[];
  readonly injected: InjectedProxy[];
  /** The user's init containers, app containers (without the adopted ones) and volumes. */
  readonly userInit: Json[];
  readonly userContainers: Json[];
  readonly userVolumes: Json[];
  readonly controllerVolumes: string[];
  readonly errors: string[];
  readonly warnings: string[];
}

/** How the pod stops (`planShutdown`). */
interface Shutdown {
  /** The pod runs to completion (a Job's, a bare Pod's that is not restarted). */
  readonly completes: boolean;
  /** The legacy sidecars wrapped to exit with the app, and the programs their wrapper takes for the sidecars'. */
  readonly wrapped: ReadonlySet<SidecarSpec>;
  readonly wrapPrograms: string[];
  /** The programs watchAppExit's hooks take for the sidecars'. */
  readonly programs: string[];
  readonly plan: GracePlan;
}

/** The sidecars' containers in their layout (`placeSidecars`), and who needs the tools' init container. */
interface Placed {
  readonly native: Json[];
  readonly legacyFirst: Json[];
  readonly legacyLast: Json[];
  needsTools: boolean;
  readonly toolUsers: string[];
}

/**
 * What makes the engine stop before anything else: a malformed pod spec, a Windows pod, two
 * sidecars of one kind. Empty when none holds.
 */
function podRefusals(where: string, spec: Json, sidecars: SidecarSpec[]): string[] {
  // A malformed pod spec (`containers: [null]`) is reported as such, before anything reads it.
  const shape = podSpecShapeErrors(where, spec);
  if (shape.length > 0) return shape;
  // The sidecars are Linux images with Linux-only securityContext fields (seccompProfile,
  // runAsUser...), which the API server rejects in a pod with spec.os.name windows
  // (validation.go validateWindows): the library cannot serve such a pod.
  if (spec.os?.name === 'windows' && sidecars.length > 0) {
    return [
      `${where}: is a Windows pod (spec.os.name: windows), but the sidecars (${sidecars.map(s => s.owner).join(', ')}) are Linux ` +
      'images whose Linux-only securityContext fields the API server rejects on Windows pods; attach no sidecar to a Windows ' +
      'workload (run it in a Linux pod, or give the Windows workload its agents another way).',
    ];
  }
  // Two sidecars of one kind: the cause of every clash that would follow (names, volumes,
  // ports), so it is reported alone.
  return duplicateKinds(where, sidecars);
}

/** What the pod must be for the sidecars: their places, app containers, no clash of names or ports, the injected proxies, no host network. */
function checkPodForSidecars(pod: Pod): void {
  const { where, spec, ordered, userContainers, errors } = pod;
  errors.push(...checkPlacement(where, ordered, pod.userInit, pod.target));
  // Without an app container a native layout leaves `containers: []`, which the API server
  // rejects, and a legacy one emits a pod that runs nothing but sidecars.
  if (userContainers.length === 0) {
    errors.push(
      `${where}: has no app containers (spec.containers is empty), so its sidecars would have nothing to serve ` +
      'and the API server rejects a pod without containers. Add the app\'s containers to the workload ' +
      '(containers added after the sidecar constructs count too).',
    );
  }
  const ephemeral = spec.ephemeralContainers ?? [];
  errors.push(...checkCollisions(where, ordered, userContainers, pod.userInit, pod.userVolumes, pod.controllerVolumes, ephemeral));
  const injectedChecks = checkInjected(where, pod.manifest, pod.template, pod.injected, ordered, boundPorts, pod.target);
  errors.push(...injectedChecks.errors);
  pod.warnings.push(...injectedChecks.warnings);

  // Sidecars share the pod's network namespace: their localhost-only ports and the ports the
  // kubelet probes must be the pod's, not the node's.
  if (spec.hostNetwork === true) {
    errors.push(
      `${where}: uses hostNetwork: true, so its sidecars would listen on the node's network (admin and ` +
      'receiver ports on the node\'s loopback, open to every host-network process; health ports on the node IP, ' +
      'colliding between pods on one node). Drop hostNetwork from the workload, or attach no sidecar to it.',
    );
  }
}

/**
 * How the pod stops: which legacy sidecars exit with a completing pod's app, the grace period the
 * sidecars need, and the processes the exit-with-app wrapper and watchAppExit's hooks watch (the
 * pod then shares its process namespace).
 */
function planShutdown(pod: Pod): Shutdown {
  const { manifest, where, spec, target, ordered, injected, userContainers, errors, warnings } = pod;
  // A legacy sidecar never exits by itself, so a Job's pod (or a bare Pod that is meant to
  // complete) would never complete: where it can, the sidecar is wrapped so that it exits with the
  // app (`exitsWithApp`, docs/shutdown.md "A legacy sidecar on a Job"); otherwise refused.
  const podCompletes = manifest.kind === 'Pod' && spec.restartPolicy !== undefined && spec.restartPolicy !== 'Always';
  const completes = COMPLETING_KINDS.has(manifest.kind) || podCompletes;
  // an injected container in the legacy layout that exits by itself once the other containers
  // have ended (GKE's gcsfuse, Datadog's auto-exit) runs beside the wrapper, which would take it for
  // the app (a proxy the app stops itself, `allowLegacyOnJob`, ends before the app: no deadlock)
  const injectedLegacy = injected.filter(p => p.layout === 'LEGACY' && MESH_FACTS[p.mesh].legacyExits !== 'NEVER')
    .map(p => `'${MESH_FACTS[p.mesh].proxyName}' (${MESH_FACTS[p.mesh].label})`);
  // an explicit `shareProcessNamespace: false` of the user's (not one cdk8s-plus 29+ writes by default)
  const unshared = spec.shareProcessNamespace === false && target.processNamespaceWrittenByDefault !== true;
  const exiting = completes ? exitsWithApp(where, ordered, spec, podCompletes, injectedLegacy, unshared) : { specs: [], errors: [], warnings: [] };
  errors.push(...exiting.errors);
  warnings.push(...exiting.warnings);
  const wrapped = new Set(exiting.specs);

  // When the app has exited (its own preStop hook, then its shutdown), and the grace it needs;
  // what the manifest says stands in for the props not given (src/engine/shutdown.ts, planGrace).
  const graceSpecs = [...ordered, ...injected.map(p => asGraceSpec(p, target))];
  const current = spec.terminationGracePeriodSeconds;
  const plan = planGrace(where, graceSpecs, target, pod.userInit, userContainers, {
    // in the order they will be placed (`after` can put one of ours behind a user's native sidecar)
    initOrder: initOrderOf(pod.natives, pod.userInit),
    current,
    explicitGrace: current === undefined || current === target.graceWrittenByDefault ? undefined : current,
    completes,
  });
  errors.push(...plan.errors);
  warnings.push(...plan.warnings);
  // watchAppExit: the hooks tell the sidecars' processes by their programs; the pod shares its
  // process namespace (a user's explicit `false` is kept, and refused)
  const watching: SidecarSpec[] = [];
  for (const s of ordered) if (watchesApp(s, target, plan.appEndSeconds)) watching.push(s);
  const programs = watching.length > 0 ? sidecarPrograms(ordered) : [];
  // (a wrapped sidecar's own first process is the tools' busybox: the other wrappers count it as a sidecar's)
  const wrapPrograms = wrapped.size > 0 ? exitWithAppPrograms(ordered) : [];
  errors.push(...programClashes(where, ordered, [...wrapped], userContainers, wrapPrograms, 'wrap'));
  // the watchAppExit wait tells the app's processes by the same rule
  errors.push(...programClashes(where, ordered, watching.filter(s => !wrapped.has(s)), userContainers, programs, 'watch'));
  if (watching.length > 0) {
    if (unshared) {
      errors.push(
        `${where}: sets shareProcessNamespace: false, but ${watching.map(s => s.owner).join(', ')} ${watching.length > 1 ? 'have' : 'has'} ` +
        'watchAppExit, which needs the containers to see each other\'s processes. Drop shareProcessNamespace from the workload, or watchAppExit.',
      );
    }
  }
  if (watching.length > 0 || wrapped.size > 0) {
    if (spec.shareProcessNamespace === false) {
      // only a false its construct writes by default reaches here (a user's on an ApiObject is refused above)
      warnings.push(
        `${where}: sets shareProcessNamespace: true over the workload's false, which cdk8s-plus 29+ writes when none is given, so the library ` +
        'cannot tell it from a false you chose: the wrapper that exits with a Job\'s app and watchAppExit need the containers to see each other\'s ' +
        'processes (docs/security.md). To keep them apart, target Kubernetes 1.29+ (native sidecars) without watchAppExit.',
      );
    }
    spec.shareProcessNamespace = true;
  }
  return { completes, wrapped, wrapPrograms, programs, plan };
}

/** Each sidecar's container in its layout (native, legacy before or after the app), with its hooks for the shutdown planned. */
function placeSidecars(pod: Pod, shutdown: Shutdown): Placed {
  const { where, spec, target, ordered, errors, warnings } = pod;
  const appShutdown = shutdown.plan.appEndSeconds;
  const placed: Placed = { native: [], legacyFirst: [], legacyLast: [], needsTools: false, toolUsers: [] };
  const unprobed: string[] = [];
  for (const s of ordered) {
    const one = placeContainer(s, target, appShutdown, shutdown.programs, shutdown.wrapped.has(s) ? shutdown.wrapPrograms : undefined);
    if (s.adopt) errors.push(...hookConflicts(s, target, appShutdown, shutdown.programs));
    placed.needsTools = placed.needsTools || one.needsTools;
    if (one.needsTools) placed.toolUsers.push(s.owner);
    // A copy (placeContainer's): the output must never share objects with the specs (callers may edit it).
    const c = one.container;
    // A legacy sidecar of a `restartPolicy: Never` pod (a Job's, below 1.29) is never restarted:
    // a liveness probe that fails would only kill it and fail the pod (a Job's retry of the whole
    // app for a hung agent), so it gets none (docs/shutdown.md "A legacy sidecar on a Job").
    if (s.layout === 'LEGACY' && spec.restartPolicy === 'Never' && c.livenessProbe !== undefined) {
      delete c.livenessProbe;
      if (s.kind.startsWith('WithSidecar') || s.kind.startsWith('AdoptSidecar')) unprobed.push(s.owner);
    }
    if (s.layout === 'NATIVE') {
      placed.native.push(c);
    } else if (s.hold) {
      placed.legacyFirst.push(c);
    } else {
      placed.legacyLast.push(c);
    }
  }
  // RestartAllContainers (kubernetes v1.37.2 pkg/kubelet/kuberuntime): computePodActions orders
  // the app containers first, then the init containers, the triggering container last
  // (kuberuntime_manager.go:1294-1303); SyncPod kills the running ones one after another with
  // killContainer(grace 0) (:1632-1646), which skips preStop (kuberuntime_container.go:896) and
  // raises the grace to minimumGracePeriodInSeconds = 2 (:907-909, kuberuntime_manager.go:84);
  // then the pod starts again from its init containers.
  const restarting: SidecarSpec[] = [];
  for (const s of ordered) if (s.layout === 'NATIVE' && (s.restartPodOnExitCodes ?? []).length > 0) restarting.push(s);
  if (restarting.length > 0) {
    warnings.push(
      `${restarting.map(s => s.owner).join(', ')}: restartPodOnExitCodes restarts every container of ${where} in place when the sidecar exits with ` +
      'one of those codes; the kubelet then stops them one after another, app containers first, with no preStop hook and SIGTERM with only its 2 s minimum ' +
      'grace period (no ordered stop of the sidecars after the app), ' +
      'so the app gets no graceful shutdown and a log agent or collector loses what it has buffered. Use it for a sidecar the app cannot run without ' +
      '(a proxy holding its credentials), not for one that must flush.',
    );
  }
  if (unprobed.length > 0) {
    warnings.push(
      `${unprobed.join(', ')}: the livenessProbe is left out on ${where}: in a pod with restartPolicy Never a legacy sidecar is never ` +
      'restarted, so a failed probe would only kill it and fail the pod (a Job would retry the whole app). Target Kubernetes 1.29+ ' +
      '(a native sidecar is restarted), or drop livenessCheck on this workload.',
    );
  }
  return placed;
}

/**
 * The app containers as the sidecars need them: captureStdout's wrapper (with the tools), podLogs'
 * glob in the agent's env, the sidecars' shared mounts and env (the user's own values win) and, on
 * a completing pod, the quit URLs of the legacy sidecars the app stops.
 */
function wireAppContainers(pod: Pod, shutdown: Shutdown, placed: Placed): Json[] {
  const { where, ordered, userContainers, errors } = pod;
  // captureStdout: the app containers' commands run under the wrapper, with the tools
  const capturing: SidecarSpec[] = [];
  for (const s of ordered) {
    if (s.capture === undefined) continue;
    capturing.push(s);
    placed.needsTools = true;
    if (!placed.toolUsers.includes(s.owner)) placed.toolUsers.push(s.owner);
  }
  // podLogs: the agent gets the glob of its app container's kubelet log files
  for (const s of ordered) {
    if (s.podLogs === undefined) continue;
    const chosen = podLogsContainer(where, s.owner, s.podLogs!, userContainers);
    if (chosen.error !== undefined) {
      errors.push(chosen.error);
      continue;
    }
    // (a copy of placeContainer's; the agent's env lists the downward API variables the value refers to)
    const c = [...placed.native, ...placed.legacyFirst, ...placed.legacyLast].find(x => x.name === s.container.name);
    if (c !== undefined) c.env = [...(c.env ?? []), podLogsEnv(s.podLogs!, chosen.container!)];
  }

  // The tools' names are the library's whenever a hook needs them.
  if (placed.needsTools) {
    const why = () => `the preStop/postStart hooks of ${placed.toolUsers.join(', ')} need (busybox)`;
    for (const list of [userContainers, pod.userInit]) {
      for (const c of list) {
        if (c.name === TOOLS.containerName) {
          errors.push(`${where}: container name '${c.name}' is the name of the library's init container that ${why()}; rename your container.`);
        }
      }
    }
    for (const v of pod.userVolumes) {
      if (v.name === TOOLS.volumeName) errors.push(`${where}: volume name '${v.name}' is the name of the library's volume that ${why()}; rename your volume.`);
    }
  }

  // App containers: shared mounts and env (the user's own values win); on a completing pod, the
  // quit URLs of the legacy sidecars the app stops.
  const appWiring: SidecarSpec[] = [];
  for (const s of ordered) {
    appWiring.push(shutdown.completes && s.layout === 'LEGACY' && s.quit
      // the kubelet expands `$(NAME)` in an env value and reads `$$` as `$` (third_party/forked/golang/expansion/expand.go):
      // each `$` of the URL doubled, so the app gets the URL as given
      ? { ...s, appEnv: [...s.appEnv, { name: s.quit.env, value: s.quit.url.split('$').join('$$') }] }
      : s);
  }
  let appContainers: Json[] = [];
  for (const app of userContainers) appContainers.push(withAppWiring(app, appWiring));
  for (const s of capturing) {
    const captured = applyCapture(where, s.owner, s.capture!, appContainers);
    errors.push(...captured.errors);
    appContainers = captured.containers;
  }
  return appContainers;
}

/** The pod spec's init containers (the tools', then the natives among the user's), containers and volumes. */
function assemblePodSpec(pod: Pod, placed: Placed, appContainers: Json[]): void {
  const { spec, ordered } = pod;
  // The tools' image: the one the sidecars that need them give (toolsImage), the same for all.
  const toolImages = new Map<string, string[]>();
  for (const s of ordered) {
    if (!placed.toolUsers.includes(s.owner)) continue;
    const image = s.toolsImage ?? TOOLS.image;
    const owners = toolImages.get(image);
    if (owners === undefined) toolImages.set(image, [s.owner]);
    else owners.push(s.owner);
  }
  if (toolImages.size > 1) {
    pod.errors.push(
      `${pod.where}: its sidecars ask for different sidecar-tools images (${[...toolImages].map(([i, o]) => `'${i}' by ${o.join(', ')}`).join('; ')}); ` +
      'a pod has one tools init container. Give them the same toolsImage (or set it once with Sidecars.configure).',
    );
  }
  const tools = placed.needsTools ? [toolsInitContainer([...toolImages.keys()][0] ?? TOOLS.image)] : [];
  const initContainers = placeNative(tools, pod.natives, placed.native, pod.userInit);
  if (initContainers.length > 0) spec.initContainers = initContainers;
  spec.containers = [...placed.legacyFirst, ...appContainers, ...placed.legacyLast];
  const volumes = [...pod.userVolumes];
  for (const s of ordered) for (const v of s.volumes) volumes.push(sortedCopy(v));
  if (placed.needsTools) volumes.push(toolsVolume());
  if (volumes.length > 0) spec.volumes = volumes;
}

/**
 * The pod template's annotations: the sidecars' (a config's checksum rolls the pods), the
 * injectors', the stop times and the app's budget the timelines read, the native sidecars'
 * marker, and kubectl's default container.
 */
function annotatePod(pod: Pod, shutdown: Shutdown, placed: Placed, appContainers: Json[]): void {
  const { template, target, ordered, injected } = pod;
  const plan = shutdown.plan;
  // Annotations that roll the pods when a sidecar's config changes; the injectors' own.
  let nativeStops = 0;
  for (const s of pod.natives) nativeStops += s.shutdown.stopSeconds;
  const annotations: Record<string, string> = {};
  for (const s of ordered) Object.assign(annotations, s.podAnnotations);
  for (const p of injected) Object.assign(annotations, meshAnnotations(p, plan.appEndSeconds, target, nativeStops));
  // What the timelines of the manifest need (`SidecarTimeline.ofManifest`, `cdk8s-sidecars
  // timeline`): each sidecar's stop time as the grace was planned with it (STOP_TIMES_ANNOTATION:
  // ours in the pod's order, then the user's own native sidecars where a construct gives
  // userSidecarStopTime (without it the timeline takes the worst case: they run until killed),
  // then the proxies a mesh injects at admission) and the app's budget (APP_SHUTDOWN_ANNOTATION).
  if (ordered.length > 0 || injected.length > 0) {
    const stops: string[] = [];
    for (const s of ordered) stops.push(`${s.container.name}=${s.shutdown.stopSeconds}s`);
    const userStop = userSidecarStopOf(ordered);
    if (userStop !== undefined) {
      for (const c of pod.userInit) if (c.restartPolicy === 'Always') stops.push(`${c.name}=${userStop}s`);
    }
    stops.push(...injectedStopTimes(injected, target, plan.appShutdownSeconds));
    annotations[STOP_TIMES_ANNOTATION] = stops.join(',');
    annotations[APP_SHUTDOWN_ANNOTATION] = `${plan.appShutdownSeconds}s`;
  }
  // The marker NativeSidecarGuard (src/guard.ts) checks: these must arrive with restartPolicy Always.
  const marked = nativeSidecarNames(injected, placed.native, target);
  if (marked.length > 0) annotations[NATIVE_SIDECARS_ANNOTATION] = marked.join(',');
  // A sidecar first in spec.containers would be what `kubectl logs` and `kubectl exec` pick
  // without -c: point them at the app (kubectl's podcmd.FindOrDefaultContainerByName reads this
  // annotation), unless the user chose a container already.
  if (placed.legacyFirst.length > 0 && appContainers.length > 0 && template.metadata.annotations?.[DEFAULT_CONTAINER_ANNOTATION] === undefined) {
    annotations[DEFAULT_CONTAINER_ANNOTATION] = appContainers[0].name;
  }
  if (Object.keys(annotations).length > 0) {
    template.metadata.annotations = sortKeys({ ...(template.metadata.annotations ?? {}), ...annotations });
  }
}

/** The grace period the plan writes, the API server's rules on the finished pod spec, and cdk8s' key order. */
function finishPod(pod: Pod, plan: GracePlan): void {
  const { manifest, where, template, spec, target } = pod;
  // Grace period: raised only where the sidecars need more than the pod gets (planGrace).
  if (plan.write !== undefined) spec.terminationGracePeriodSeconds = plan.write;

  // The sidecars' own hooks are covered by the grace-period check above (reported once, as the cause).
  const graceCheckedContainers = pod.ordered.map(s => s.container.name);
  // A sidecar's name used twice is reported above, with its cause (checkCollisions): once.
  const namesReported = graceCheckedContainers;
  // (each with the id of the rule `cdk8s-sidecars check` reports it under, where the caller gives them: one rule set, one id)
  const tag = target.ruleSuffix ?? (() => '');
  const controllerVolumes = pod.controllerVolumes;
  pod.errors.push(...checkPodSpecByRule(spec, target, where, { kind: manifest.kind, controllerVolumes, graceCheckedContainers, namesReported })
    .map(f => `${f.message}${tag(f.rule)}`));
  // A Job's podFailurePolicy that the native sidecars' teardown exit codes match (its warnings: src/bind/binding.ts).
  pod.errors.push(...checkJobPodFailurePolicy(manifest, where).errors);
  // Keep cdk8s' alphabetical key order for the objects the engine added keys to: sorted copies in
  // their places (an object whose every key was deleted and set again is left in V8's slow
  // dictionary mode, for every later read of the manifest).
  const node = podTemplateIn(manifest)!;
  if (!inOrder(template.metadata)) node.metadata = reordered(template.metadata);
  if (!inOrder(spec)) node.spec = reordered(spec);
}

/**
 * An app container that runs one of the programs the exit-with-app wrapper (`exitWithAppPrograms`)
 * or the `watchAppExit` wait of a `preStop` hook (`sidecarPrograms`) takes for the library's
 * sidecars: both tell containers apart by the program (`argv[0]`) of their processes (`appScan`,
 * src/engine/shutdown.ts), so they would count that app container as a sidecar's and stop the
 * agent while the app still runs (measured on a real kubelet: a wrapped sidecar run as `sh` beside
 * an app run as `sh` was stopped ~1.9 s before the app's exit). Refused, with the sidecar that
 * runs the program and the fix: a spelling of the program that differs (`argv[0]` is compared
 * exactly, e.g. `/bin/sh` against `sh`). An app container without a `command` runs its image's
 * entrypoint, which the library cannot read: not checked.
 */
function programClashes(
  where: string, sidecars: SidecarSpec[], users: SidecarSpec[], apps: Json[], programs: string[], how: 'wrap' | 'watch',
): string[] {
  if (users.length === 0) return [];
  const errors: string[] = [];
  for (const app of apps) {
    const p = Array.isArray(app.command) && app.command.length > 0 ? String(app.command[0]) : undefined;
    if (p === undefined || !programs.includes(p)) continue;
    const owners = sidecars.filter(s => (s.container.command?.[0] ?? s.shutdown.entrypoint) === p).map(s => `${s.owner} (container '${s.container.name}')`);
    const whose = owners.length > 0 ? owners.join(', ') : 'the library\'s tools (the wrapper\'s own busybox)';
    const names = users.map(s => s.owner).join(', ');
    const one = users.length === 1;
    const what = how === 'wrap'
      ? `${names} exit${one ? 's' : ''} with the app under a wrapper that tells the app's processes from the sidecars' by their program (argv[0])`
      : `${names} ${one ? 'has' : 'have'} watchAppExit: ${one ? 'its' : 'their'} preStop hook waits until no process of the app is left, ` +
        'telling the app\'s processes from the sidecars\' by their program (argv[0])';
    errors.push(
      `${where}: the app container '${app.name}' runs '${p}', the program of ${whose}. ${what}, so it would take '${app.name}' for a ` +
      'sidecar and stop the agent while the app still runs. Spell the program differently in the sidecar\'s or the app\'s command ' +
      `(argv[0] is compared exactly: e.g. '${p.includes('/') ? p.replace(/^.*\//, '') : `/bin/${p}`}' instead of '${p}', where the image has it).`,
    );
  }
  return errors;
}

/**
 * The legacy sidecars of a pod that completes (a Job's, a CronJob's, a bare Pod's with
 * `restartPolicy` Never or OnFailure) that neither `allowLegacyOnJob` nor a quit endpoint covers: a
 * legacy sidecar never exits by itself, so the pod would never complete. Each is wrapped so that
 * it exits with the app (`exitWithAppScript`, src/engine/shutdown.ts), where that can work:
 * - `restartPolicy: Never`: every container runs once; the pod is Succeeded when every container
 *   of `spec.containers` exited 0, else Failed (kubelet `getPhase`, `pkg/kubelet/kubelet_pods.go`,
 *   read at kubernetes commit df5f02437d38, a stored copy: no release tag could be fetched here),
 *   so the wrapper exits 0 and the app's exit codes decide the phase, as without the sidecar.
 * - `restartPolicy: OnFailure`: refused. The kubelet restarts a failed container in place (with a
 *   back-off of 10 s doubling to 5 min: `backOffPeriod`, `MaxContainerBackOff`, `pkg/kubelet/kubelet.go`), and the pod stays
 *   Running until every container's last run exited 0 (`getPhase`). A container cannot see another
 *   one's exit code, so the wrapper cannot tell a failure (the app comes back) from a success: it
 *   would stop after the first failed try, and the retries would run without it.
 * - a sidecar that holds the app (`hold`, first in `spec.containers`): refused. It starts before
 *   the app, so its wrapper could not tell an app that has not started yet from one that has exited.
 * - a sidecar whose program is not known (no `command`, and no entrypoint the construct knows):
 *   refused, there is nothing to run under the wrapper.
 * - the workload's user set `shareProcessNamespace: false`: refused (the wrapper must see the app's
 *   processes); a `false` its construct wrote by default (cdk8s-plus 29+) counts as unset.
 */
function exitsWithApp(where: string, sidecars: SidecarSpec[], spec: Json, podCompletes: boolean, injectedLegacy: string[] = [], unshared = false):
{ specs: SidecarSpec[]; errors: string[]; warnings: string[] } {
  const errors: string[] = [];
  const specs: SidecarSpec[] = [];
  const what = podCompletes ? `pod (restartPolicy ${spec.restartPolicy})` : 'Job';
  const policy = spec.restartPolicy;
  const others = 'Target Kubernetes 1.29+ (native sidecars do not block completion), or set `allowLegacyOnJob: true` if the app stops the sidecar itself.';
  for (const s of sidecars.filter(x => x.layout === 'LEGACY' && !x.allowLegacyOnJob && !x.quit)) {
    const head = `${s.owner}: a legacy sidecar on ${where} never exits, so the ${what} never completes`;
    if (policy !== 'Never') {
      errors.push(
        `${head}; with restartPolicy ${policy === undefined ? 'unset' : policy} the library cannot make it exit with the app: the kubelet restarts a failed ` +
        'app container in place, and a container cannot see another one\'s exit code, so the sidecar cannot tell a failed try (the app comes back) ' +
        'from the last one; it would stop after the first failure and the retries would run without it. Set restartPolicy: Never on the pod ' +
        `template (a Job then retries with a new pod, up to backoffLimit), so that the sidecar exits with the app. ${others}`,
      );
    } else if (s.hold) {
      errors.push(
        `${head}; it holds the app until it is ready (it starts before the app), so it cannot be made to exit with the app: it could not tell ` +
        `an app that has not started yet from one that has exited. Drop the hold (holdApplicationUntilStarted / holdApplicationUntilProxyStarts / holdApplicationUntilCollectorStarts) on this workload. ${others}`,
      );
    } else if (agentArgv(s) === undefined) {
      errors.push(
        `${head}; the program its image runs is not known (no command), so the library cannot run it under the wrapper that exits with the app. ` +
        `Give the sidecar's command (the image's entrypoint, e.g. from \`docker inspect\`). ${others}`,
      );
    } else if (unshared) {
      errors.push(
        `${head}; the library would make it exit with the app, which needs the containers to see each other's processes, but the workload sets ` +
        `shareProcessNamespace: false. Drop shareProcessNamespace from the workload. ${others}`,
      );
    } else if (injectedLegacy.length > 0) {
      // e.g. GKE's gcsfuse sidecar exits only once every other container has ended (putExitFile,
      // pkg/csi_driver/utils.go, gcs-fuse-csi-driver v1.24.4): each would wait for the other
      errors.push(
        `${head}; the library would make it exit with the app, but ${injectedLegacy.join(', ')} ${injectedLegacy.length > 1 ? 'are' : 'is'} injected beside it in ` +
        'the legacy layout: the wrapper cannot tell that container from the app and would wait for it, while an injected container that exits ' +
        `with the pod waits for the other containers in turn, so neither would exit. ${others}`,
      );
    } else {
      specs.push(s);
    }
  }
  const warnings = specs.length === 0 ? [] : [
    `${where}: its pods complete, and in the legacy layout a sidecar never exits by itself, so ${specs.map(s => `'${s.container.name}'`).join(', ')} ` +
    `${specs.length > 1 ? 'are' : 'is'} run under a wrapper that exits with the app: once no process of the app containers is left it waits the agent's ` +
    'read delay, stops the agent (SIGTERM), waits for it and exits 0, so the app\'s exit codes decide the pod\'s phase; the pod gets ' +
    'shareProcessNamespace: true for it (the containers see each other\'s processes: docs/security.md). One case it cannot tell: an app container ' +
    'whose start failed (an image pull error) counts as exited, so its later run goes without the sidecar. Target Kubernetes 1.29+ to use native ' +
    'sidecars instead, or set `allowLegacyOnJob: true` if the app stops the sidecar itself.',
  ];
  return { specs, errors, warnings };
}

/**
 * A sidecar's container in its layout for a target: the spec's container with the lifecycle
 * hooks, the tools mount and `restartPolicy`, keys sorted: a deep copy (the output never shares
 * objects with the specs). Worked out at every
 * render: a workload renders once per synthesis call (src/bind/binding.ts), so a cache of it per
 * (spec, target), as there once was, was only ever read by a second call in the same process,
 * and cost every render a key, a look-up and one more copy of the container.
 * `wrapPrograms`: the sidecar exits with the app (`exitsWithApp`), its wrapper telling the sidecars' processes by these.
 */
function placeContainer(
  s: SidecarSpec, target: EngineTarget, appShutdown: number, programs: string[], wrapPrograms?: string[],
): { container: Json; needsTools: boolean } {
  const hooks = lifecycleFor(s, target, appShutdown, programs);
  const lifecycle = hooks.lifecycle;
  let needsTools = hooks.needsTools;
  // The top-level keys the layout sets over the spec's container (no shallow copy of the frozen
  // spec's container first: the output below is the one copy).
  const from: Json = s.container;
  const set: Json = {};
  let dropArgs = false;
  const wrapper = wrapPrograms ? exitWithAppCommand(s, wrapPrograms)
    : s.layout === 'NATIVE' ? holdSigtermCommand(s) : undefined;
  if (wrapper) {
    // the agent's argv goes into the wrapper's arguments (the kubelet expands `$(NAME)` in command and args alike)
    set.command = wrapper;
    dropArgs = true;
    needsTools = true;
  }
  // An adopted container's own hooks are kept beside the engine's (a clash is an error, hookConflicts).
  if (lifecycle) set.lifecycle = { ...(from.lifecycle ?? {}), ...lifecycle };
  if (needsTools) set.volumeMounts = [...(from.volumeMounts ?? []), { mountPath: TOOLS.mountPath, name: TOOLS.volumeName, readOnly: true }];
  if (s.layout === 'NATIVE') set.restartPolicy = 'Always';
  // RestartAllContainers (KEP-5532, beta 1.36): checked in checkPlacement (native, 1.36+)
  if (s.layout === 'NATIVE' && s.restartPodOnExitCodes !== undefined && s.restartPodOnExitCodes.length > 0 &&
    capabilities(target.minor, target.gate).restartAllContainers) {
    set.restartPolicyRules = [{ action: 'RestartAllContainers', exitCodes: { operator: 'In', values: [...s.restartPodOnExitCodes] } }];
  }
  const keys = Object.keys(from);
  for (const k of Object.keys(set)) {
    if (!keys.includes(k)) keys.push(k);
  }
  // the keys sorted and every value copied in one pass (the output never shares objects with the specs)
  const out: Json = {};
  for (const k of inCodePointOrder(keys)) {
    if (dropArgs && k === 'args') continue;
    out[k] = copyJson(Object.prototype.hasOwnProperty.call(set, k) ? set[k] : from[k]);
  }
  return { container: out, needsTools };
}

/** A deep copy of plain JSON (objects, arrays, scalars): faster than structuredClone for small objects. */
export function copyJson<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  // (loops without a callback or an array of keys per object: every render copies its sidecars)
  if (Array.isArray(value)) {
    const list: unknown[] = [];
    for (let i = 0; i < value.length; i++) list.push(copyJson(value[i]));
    return list as unknown as T;
  }
  const out: Json = {};
  for (const k in value) {
    if (Object.prototype.hasOwnProperty.call(value, k)) out[k] = copyJson((value as Json)[k]);
  }
  return out as T;
}

/** The sidecars' order: by rank, then by container name. */
function byRankThenName(a: SidecarSpec, b: SidecarSpec): number {
  return a.rank - b.rank || compareCodePoints(a.container.name, b.container.name);
}

function nativesOf(ordered: SidecarSpec[]): SidecarSpec[] {
  const out: SidecarSpec[] = [];
  for (const s of ordered) if (s.layout === 'NATIVE') out.push(s);
  return out;
}

function hasMount(mounts: Json[], m: Json): boolean {
  for (const x of mounts) if (x.mountPath === m.mountPath && x.name === m.name) return true;
  return false;
}

function hasEnv(env: Json[], e: Json): boolean {
  for (const x of env) if (x.name === e.name) return true;
  return false;
}

function withAppWiring(app: Json, sidecars: SidecarSpec[]): Json {
  const mounts: Json[] = [...(app.volumeMounts ?? [])];
  const env: Json[] = [...(app.env ?? [])];
  let changed = false;
  // (indexed loops: a spec's lists are frozen arrays, which for-of walks at twice the cost)
  for (const s of sidecars) {
    const appMounts = s.appMounts;
    for (let i = 0; i < appMounts.length; i++) {
      const m = appMounts[i];
      if (hasMount(mounts, m)) continue;
      mounts.push(sortedCopy(m));
      changed = true;
    }
    const appEnv = s.appEnv;
    for (let i = 0; i < appEnv.length; i++) {
      const e = appEnv[i];
      if (hasEnv(env, e)) continue;
      env.push(sortedCopy(e));
      changed = true;
    }
  }
  if (!changed) return app;
  // the app's keys with env and volumeMounts set, in order (no shallow copy to sort again)
  const keys = Object.keys(app);
  if (env.length > 0 && !keys.includes('env')) keys.push('env');
  if (mounts.length > 0 && !keys.includes('volumeMounts')) keys.push('volumeMounts');
  const out: Json = {};
  for (const k of inCodePointOrder(keys)) {
    setOwn(out, k, k === 'env' && env.length > 0 ? env : k === 'volumeMounts' && mounts.length > 0 ? mounts : app[k]);
  }
  return out;
}

function duplicateKinds(where: string, sidecars: SidecarSpec[]): string[] {
  const errors: string[] = [];
  // (a workload has a few sidecars: a look back at each, no map)
  for (let i = 1; i < sidecars.length; i++) {
    const s = sidecars[i];
    for (let j = 0; j < i; j++) {
      if (sidecars[j].kind === s.kind) {
        errors.push(`${s.owner}: ${where} already has one: ${sidecars[j].owner}; attach one ${s.kind} per workload.`);
        break;
      }
    }
  }
  return errors;
}

/** Every way the sidecars collide with the workload or with each other (paths, names, volumes, ports), in that order. */
function checkCollisions(
  where: string, sidecars: SidecarSpec[], containers: Json[], init: Json[], volumes: Json[], controllerVolumes: string[], ephemeral: Json[] = [],
): string[] {
  return [
    ...appMountPathClashes(where, sidecars),
    ...containerNameClashes(where, sidecars, containers, init, ephemeral),
    ...volumeNameClashes(where, sidecars, volumes, controllerVolumes),
    ...portClashes(where, sidecars, containers, init),
    ...appMountClashes(where, sidecars, containers),
  ];
}

/**
 * Two sidecars that mount something at one path of the app containers (a WithSidecar
 * appMountPath equal to a WithLogAgent's logDirectory): the API server rejects a container with
 * two mounts at one path ("must be unique"), and only one could be the app's anyway.
 */
function appMountPathClashes(where: string, sidecars: SidecarSpec[]): string[] {
  const errors: string[] = [];
  const appPaths = new Map<string, SidecarSpec>();
  for (const s of sidecars) {
    const appMounts = s.appMounts;
    for (let i = 0; i < appMounts.length; i++) {
      const m = appMounts[i];
      const other = appPaths.get(m.mountPath);
      if (other !== undefined && other.owner !== s.owner) {
        errors.push(
          `${s.owner}: mounts volume '${m.name}' at ${m.mountPath} in the app containers of ${where}, where ${other.owner} mounts ` +
          'its own volume too; give one of them another directory.',
        );
      }
      if (other === undefined) appPaths.set(m.mountPath, s);
    }
  }
  return errors;
}

/** A sidecar's container name taken by the workload's containers, another sidecar, or the library's tools. */
function containerNameClashes(where: string, sidecars: SidecarSpec[], containers: Json[], init: Json[], ephemeral: Json[]): string[] {
  const errors: string[] = [];
  const userNames = new Set<unknown>();
  for (const c of containers) userNames.add(c.name);
  for (const c of init) userNames.add(c.name);
  // Names are unique across containers, initContainers AND ephemeralContainers (validation.go
  // validateEphemeralContainers: "must be unique among all containers, init containers, and
  // ephemeral containers").
  const ephemeralNames = ephemeral.length > 0 ? new Set(ephemeral.map(c => c.name)) : undefined;
  const sidecarNames = new Map<string, string>();
  for (const s of sidecars) {
    const name = s.container.name;
    if (userNames.has(name)) {
      errors.push(`${s.owner}: container name '${name}' is already used by a container of ${where}; choose another containerName.`);
    } else if (ephemeralNames?.has(name)) {
      errors.push(`${s.owner}: container name '${name}' is already used by an ephemeral container of ${where}; choose another containerName.`);
    }
    const other = sidecarNames.get(name);
    if (other !== undefined && other !== s.owner) {
      errors.push(`${s.owner}: container name '${name}' is already used by the sidecar of ${other} on ${where}; choose another containerName.`);
    }
    sidecarNames.set(name, s.owner);
    if (name === TOOLS.containerName) {
      errors.push(`${s.owner}: container name '${name}' is reserved for the library's hook tools; choose another containerName.`);
    }
  }
  return errors;
}

/** A sidecar's volume name that is no DNS-1123 label, or taken by the workload, a claim template or another sidecar. */
function volumeNameClashes(where: string, sidecars: SidecarSpec[], volumes: Json[], controllerVolumes: string[]): string[] {
  const errors: string[] = [];
  const userVolumeNames = new Set(volumes.map(v => v.name));
  const claimNames = controllerVolumes.length > 0 ? new Set(controllerVolumes) : undefined;
  const sidecarVolumes = new Map<string, string>();
  for (const s of sidecars) {
    const sidecarVolumeList = s.volumes;
    for (let i = 0; i < sidecarVolumeList.length; i++) {
      const v = sidecarVolumeList[i];
      // The API server checks every volume name as a DNS-1123 label (validation.go ValidateVolumes).
      if (!isDns1123Label(v.name)) {
        const longest = Math.max(...s.volumes.map(x => String(x.name).length - s.container.name.length));
        errors.push(
          `${s.owner}: volume name '${v.name}' (derived from containerName '${s.container.name}') is not a DNS-1123 label of at most ` +
          `${DNS1123_LABEL_MAX_LENGTH} characters, so the API server would reject the pod; use a containerName of at most ` +
          `${DNS1123_LABEL_MAX_LENGTH - longest} characters.`,
        );
      }
      if (claimNames?.has(v.name)) {
        errors.push(
          `${s.owner}: volume name '${v.name}' is the name of a volumeClaimTemplate of ${where}, whose claim the StatefulSet controller ` +
          'would mount in its place; choose another containerName (volume names derive from it).',
        );
      } else if (userVolumeNames.has(v.name) || v.name === TOOLS.volumeName) {
        // WithSidecar's volumes are named by the user; the agents' derive from the container name.
        const fix = v.name.startsWith(s.container.name) ? 'choose another containerName (volume names derive from it)' : 'give the sidecar\'s volume another name';
        errors.push(`${s.owner}: volume name '${v.name}' is already used by ${where}; ${fix}.`);
      }
      const other = sidecarVolumes.get(v.name);
      if (other !== undefined && other !== s.owner) {
        errors.push(
          `${s.owner}: volume name '${v.name}' is already used by the sidecar of ${other} on ${where}; ` +
          'choose another containerName for one of them (volume names derive from it).',
        );
      }
      sidecarVolumes.set(v.name, s.owner);
    }
  }
  return errors;
}

/** Ports: every container of a pod shares one network namespace. */
function portClashes(where: string, sidecars: SidecarSpec[], containers: Json[], init: Json[]): string[] {
  const errors: string[] = [];
  const appPorts = new Map<number, string>();
  for (const list of [containers, init]) {
    for (const c of list) {
      for (const p of c.ports ?? []) appPorts.set(p.containerPort, c.name);
    }
  }
  const sidecarPorts = new Map<number, string>();
  for (const s of sidecars) {
    for (const port of boundPorts(s)) {
      const app = appPorts.get(port);
      if (app !== undefined) {
        errors.push(`${s.owner}: port ${port} of sidecar '${s.container.name}' is also a port of container '${app}' on ${where}; choose another port for one of them.`);
      }
      const other = sidecarPorts.get(port);
      if (other !== undefined) {
        errors.push(`${s.owner}: port ${port} of sidecar '${s.container.name}' is also used by sidecar '${other}' on ${where}; choose another port.`);
      }
      sidecarPorts.set(port, s.container.name);
    }
  }
  for (const s of sidecars) {
    for (const port of s.appPorts ?? []) {
      for (const other of sidecars) {
        if (other === s || !boundPorts(other).includes(port)) continue;
        errors.push(
          `${s.owner}: the app's port ${port}, where ${s.container.name} sends the app's traffic, is bound by sidecar ` +
          `'${other.container.name}' (${other.owner}) on ${where}; the traffic would reach that sidecar. Choose another port for one of them.`,
        );
      }
    }
  }
  return errors;
}

/** Mount paths the sidecars add to the app containers, where an app container mounts another volume. */
function appMountClashes(where: string, sidecars: SidecarSpec[], containers: Json[]): string[] {
  const errors: string[] = [];
  for (const s of sidecars) {
    const appMounts = s.appMounts;
    for (let i = 0; i < appMounts.length; i++) {
      const m = appMounts[i];
      for (const c of containers) {
        const clash = (c.volumeMounts ?? []).find((x: Json) => x.mountPath === m.mountPath && x.name !== m.name);
        if (clash) {
          errors.push(`${s.owner}: container '${c.name}' of ${where} already mounts volume '${clash.name}' at ${m.mountPath}; choose another directory for the sidecar.`);
        }
      }
    }
  }
  return errors;
}

/** `boundPorts` of the frozen specs (a spec renders once per target and is read by every check of every render). */
const BOUND_PORTS = new WeakMap<SidecarSpec, readonly number[]>();

/** The ports a sidecar binds: the declared ones plus the undeclared (localhost-only) ones. */
function boundPorts(s: SidecarSpec): readonly number[] {
  const frozen = Object.isFrozen(s) && Object.isFrozen(s.container) &&
    Object.isFrozen(s.container.ports ?? []) && Object.isFrozen(s.localPorts ?? []);
  const kept = frozen ? BOUND_PORTS.get(s) : undefined;
  if (kept !== undefined) return kept;
  // each port once, the declared ones first (as `[...new Set([...declared, ...local])]`)
  const out: number[] = [];
  for (const p of (s.container.ports ?? []) as Json[]) if (!out.includes(p.containerPort)) out.push(p.containerPort);
  for (const port of s.localPorts ?? []) if (!out.includes(port)) out.push(port);
  if (frozen) BOUND_PORTS.set(s, out);
  return out;
}

/**
 * Takes the adopted containers out of `containers`: each adopting spec gets the workload's own
 * container with every field kept, the spec's fields laid over it.
 */
function adoptContainers(where: string, sidecars: SidecarSpec[], containers: Json[], init: Json[]):
{ sidecars: SidecarSpec[]; containers: Json[]; errors: string[] } {
  // (most workloads adopt nothing: no pass over their containers)
  if (!sidecars.some(s => s.adopt)) return { sidecars, containers, errors: [] };
  const errors: string[] = [];
  const taken = new Set<string>();
  const present = containers.map(c => `'${c.name}'`).join(', ') || 'none';
  const out = sidecars.map(s => {
    if (!s.adopt) return s;
    const name: string = s.container.name;
    const original = containers.find(c => c.name === name);
    if (!original) {
      const inInit = init.find(c => c.name === name);
      errors.push(inInit
        ? `${s.owner}: '${name}' is an init container of ${where}${inInit.restartPolicy === 'Always' ? ' (a native sidecar already)' : ''}, ` +
          `not an entry of spec.containers; adopt takes one of spec.containers (${present}).`
        : `${s.owner}: ${where} has no container named '${name}' to adopt; its spec.containers are ${present}. ` +
          'Name one of them as containerName (the name in the manifest, e.g. from `kubectl get -o yaml`).');
      return s;
    }
    if (taken.has(name)) {
      errors.push(`${s.owner}: container '${name}' of ${where} is adopted twice; adopt it once.`);
      return s;
    }
    taken.add(name);
    const container: Json = { ...copyJson(original), ...copyJson(s.container) };
    // Its place is decided by the layout: a restartPolicy of its own is not kept.
    delete container.restartPolicy;
    return { ...s, container };
  });
  const rest = containers.filter(c => !taken.has(c.name));
  if (errors.length === 0 && taken.size > 0 && rest.length === 0) {
    errors.push(
      `${where}: adopting ${[...taken].map(n => `'${n}'`).join(', ')} as sidecar leaves no app container in spec.containers; ` +
      'a sidecar needs an app to serve. Adopt only the sidecars, not the app.',
    );
  }
  return { sidecars: out, containers: rest, errors };
}

/**
 * An adopted container's own hooks where the engine needs the same hook (a legacy `preStop`
 * delay or drain, the legacy hold's `postStart`): the engine cannot honour both.
 */
function hookConflicts(s: SidecarSpec, target: EngineTarget, appShutdown: number, programs: string[]): string[] {
  const own: Json = s.container.lifecycle ?? {};
  const { lifecycle } = lifecycleFor(s, target, appShutdown, programs);
  return Object.keys(lifecycle ?? {}).filter(hook => own[hook] !== undefined).map(hook =>
    `${s.owner}: adopted container '${s.container.name}' has its own lifecycle.${hook}, but in the ${s.layout.toLowerCase()} ` +
    `layout at Kubernetes 1.${target.minor} the library needs that hook (${hook === 'preStop' ? 'to keep it alive through the app\'s shutdown' : 'to hold the app until it has started'}). ` +
    `Remove lifecycle.${hook} from the manifest (e.g. with a JSON patch), or ${hook === 'preStop' ? 'set outliveApp: false' : 'drop holdApplicationUntilStarted'}.`,
  );
}

/** `after` names a user init container; `serveInitContainers` needs the native layout. */
function checkPlacement(where: string, sidecars: SidecarSpec[], init: Json[], target: EngineTarget): string[] {
  const errors: string[] = [];
  const names = init.map(c => c.name as string);
  for (const s of sidecars) {
    if (s.after !== undefined && !names.includes(s.after)) {
      errors.push(
        `${s.owner}: after '${s.after}' names no init container of ${where}; its init containers are ` +
        `${names.length > 0 ? names.map(n => `'${n}'`).join(', ') : 'none'}. Name one of them, or drop \`after\`.`,
      );
    }
    if (s.restartPodOnExitCodes !== undefined && s.restartPodOnExitCodes.length > 0 &&
      (s.layout !== 'NATIVE' || !capabilities(target.minor, target.gate).restartAllContainers)) {
      errors.push(
        `${s.owner}: restartPodOnExitCodes [${s.restartPodOnExitCodes.join(', ')}] asks the kubelet to restart every container of ${where} when the ` +
        'sidecar exits with one of them (the RestartAllContainers action), which needs a native sidecar on Kubernetes 1.36 or later ' +
        `(RestartAllContainersOnContainerExits, beta 1.36); ${s.layout === 'NATIVE' ? `Kubernetes 1.${target.minor} refuses restartPolicyRules on a native sidecar` : `here it is in the legacy layout (Kubernetes 1.${target.minor})`}. ` +
        'Target 1.36+, or drop restartPodOnExitCodes (the kubelet then restarts the sidecar alone).',
      );
    }
    if (s.serveInitContainers && s.layout === 'LEGACY') {
      errors.push(
        `${s.owner}: serveInitContainers asks the sidecar to serve the init containers of ${where}, but in the legacy layout ` +
        `(Kubernetes 1.${target.minor}${target.minor === 28 && !target.gate ? ' without the SidecarContainers gate' : ''}) it is an entry of spec.containers, ` +
        'which starts only after every init container has finished. Target Kubernetes 1.29 or later (native sidecars start before them), or drop serveInitContainers.',
      );
    }
    if (s.serveInitContainers && s.layout === 'NATIVE') {
      const served = s.after === undefined ? init : init.slice(names.indexOf(s.after) + 1);
      for (const m of s.appMounts) {
        for (const c of served) {
          const clash = (c.volumeMounts ?? []).find((x: Json) => x.mountPath === m.mountPath && x.name !== m.name);
          if (clash) {
            errors.push(
              `${s.owner}: init container '${c.name}' of ${where} already mounts volume '${clash.name}' at ${m.mountPath}, where ` +
              'serveInitContainers would mount the sidecar\'s; choose another directory for the sidecar.',
            );
          }
        }
      }
    }
  }
  return errors;
}

/** The names of `initContainers` as `placeNative` lays them out (without the tools). */
function initOrderOf(natives: SidecarSpec[], userInit: Json[]): string[] {
  const named = natives.map(s => ({ name: s.container.name as string }));
  return placeNative([], natives, named, userInit).map(c => c.name);
}

/**
 * initContainers in order: the tools, then our native sidecars (rank order), then the user's;
 * a sidecar with `after` goes right after that user init container (after any of ours placed
 * there before it). The user's init containers after a sidecar with `serveInitContainers` get
 * its app wiring.
 */
function placeNative(tools: Json[], specs: SidecarSpec[], placed: Json[], userInit: Json[]): Json[] {
  // (no native sidecar, as in every legacy layout: the tools, then the user's, as they are)
  if (specs.length === 0) return [...tools, ...userInit];
  const out: Json[] = [...tools];
  const owner = new Map<Json, SidecarSpec>();
  for (let i = 0; i < specs.length; i++) {
    owner.set(placed[i], specs[i]);
    if (specs[i].after === undefined) out.push(placed[i]);
  }
  out.push(...userInit);
  for (const [i, s] of specs.entries()) {
    if (s.after === undefined) continue;
    let at = out.findIndex(c => c.name === s.after && !owner.has(c) && !tools.includes(c)) + 1;
    if (at === 0) at = out.length; // reported by checkPlacement
    while (at < out.length && owner.get(out[at])?.after === s.after) at++;
    out.splice(at, 0, placed[i]);
  }
  const users = new Set(userInit);
  const serving: SidecarSpec[] = [];
  for (let i = 0; i < out.length; i++) {
    const s = owner.get(out[i]);
    if (s?.serveInitContainers) serving.push(s);
    if (users.has(out[i]) && serving.length > 0) out[i] = withAppWiring(out[i], serving);
  }
  return out;
}

/** Whether the object's own keys are in code point order. */
function inOrder(o: Json): boolean {
  const keys = Object.keys(o);
  for (let i = 1; i < keys.length; i++) {
    if (compareCodePoints(keys[i - 1], keys[i]) > 0) return false;
  }
  return true;
}

/**
 * A shallow copy with the keys in code point order, each set by assignment, as the old reorder in
 * place (every key deleted, then `Object.assign`) set them.
 */
function reordered(o: Json): Json {
  const out: Json = {};
  for (const k of sortedKeys(o)) out[k] = o[k];
  return out;
}

/**
 * `sortKeys(copyJson(o))` in one pass: a deep copy with the top-level keys in alphabetical order
 * (a key `__proto__` is left out, as the copy's assignment of it sets no own key).
 */
function sortedCopy(o: Json): Json {
  const out: Json = {};
  for (const k of sortedKeys(o)) {
    if (k !== '__proto__') out[k] = copyJson(o[k]);
  }
  return out;
}

/** Returns a shallow copy with the keys in alphabetical order (as cdk8s emits them). */
function sortKeys<T extends Json>(o: T): T {
  const out: Json = {};
  for (const k of sortedKeys(o)) setOwn(out, k, o[k]);
  return out as T;
}
