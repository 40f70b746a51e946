/**
 * Layer 1 (target): known bugs of Kubernetes patch releases that hit the pods this library
 * emits. THE one table of them; checked on the final pod template of every workload with a
 * sidecar, when the target names a patch version (`1.29.3`; a bare `1.29` says nothing about
 * the patch, so nothing is checked).
 *
 * Each entry names the upstream issue, the pull requests that fixed it and the first fixed
 * patch of each release line, as the kubernetes/kubernetes CHANGELOG files give them. A bug
 * whose pods still work (but slower, or hang only after some other failure) is a warning; one
 * where the pod cannot work would be an error.
 *
 * The engine (src/engine) never compares versions; this module does, on the engine's output.
 */
import { NATIVE_SIDECARS_ANNOTATION } from './annotations';
import { KUBERNETES_DEFAULT_GRACE_SECONDS } from './pod-defaults';
import { parseQuantity } from './quantity';
import { selectsPods, serviceSelects } from './services';
import { WorkloadIndex } from './workload-index';
import { Json } from '../private/json';
import { KubeVersion, formatFullVersion, parseKubernetesVersion } from '../target/capabilities';

/** What a known bug does to one pod, with what to do about it. @internal */
export interface KnownBugHit {
  readonly level: 'error' | 'warning';
  /** What happens in this pod, naming its containers (no version, no fix: the caller adds those). */
  readonly what: string;
  /** What the user can do besides upgrading (a layout or a setting that avoids it). */
  readonly avoid: string;
}

/** A known bug of some Kubernetes patch releases. @internal */
export interface KnownKubernetesBug {
  /** The upstream issue, e.g. `kubernetes#125880`. */
  readonly issue: string;
  /**
   * The pull requests that fixed it, e.g. `kubernetes#125935`; for an open bug, the fix proposed.
   */
  readonly fixedBy: string;
  /**
   * The bug is open upstream: no release has the fix (`fixedIn` is empty), so every patch of every
   * release from `firstAffectedMinor` on has it and is warned, until a fix is released and the entry
   * gets its `fixedIn`.
   */
  readonly open?: boolean;
  /** One line: what goes wrong. */
  readonly summary: string;
  /**
   * The first fixed patch of each release line, ascending. The last entry is an `x.y.0`: every
   * later minor has the fix. A minor line between `firstAffectedMinor` and that one without an
   * entry never got the fix. Empty for an `open` bug.
   */
  readonly fixedIn: readonly string[];
  /** The first minor release that has the bug. */
  readonly firstAffectedMinor: number;
  /** Where the fixed versions were read (CHANGELOG file and release). */
  readonly sources: readonly string[];
  /** Whether (and how) the bug hits this pod spec. */
  readonly check: (pod: Json) => KnownBugHit | undefined;
}

const quoted = (names: string[]) => names.map(n => `'${n}'`).join(', ');

/**
 * THE table. Versions checked in kubernetes/kubernetes (master, 2026):
 * - kubernetes#125880: CHANGELOG/CHANGELOG-1.29.md v1.29.8 (cherry-pick #126332),
 *   CHANGELOG-1.30.md v1.30.4 (#126331), CHANGELOG-1.31.md v1.31.0 (#125935): "Fixed a bug that
 *   init containers with `Always` restartPolicy may not terminate gracefully if the pod hasn't
 *   initialized yet." 1.28 has no ordered termination, so not this bug.
 * - kubernetes#132826: CHANGELOG-1.33.md v1.33.6 (#134801), CHANGELOG-1.34.md v1.34.2 (#134800),
 *   CHANGELOG-1.35.md v1.35.0-alpha.2 (#133072): "Fixed a startup probe race condition that caused
 *   main containers to remain stuck in "Initializing" state when sidecar containers with startup
 *   probes failed initially but succeeded on restart in pods with restartPolicy=Never." No
 *   cherry-pick to 1.28-1.32.
 * - kubernetes#123323: CHANGELOG-1.29.md v1.29.3 (#123709), v1.30.0 (#123323), 1.28.8 (#123710, the 1.28
 *   line's release notes): "Fixed a bug that an init container with containerRestartPolicy with `Always`
 *   cannot update its state from terminated to non-terminated for the pod with restartPolicy with
 *   `Never` or `OnFailure`."
 * - kubernetes#126543: v1.29.9 (#127214), v1.30.5 (#127213), v1.31.1 (#127212), CHANGELOG-1.32.md
 *   v1.32.0 (#126543): "Fixed a bug where init containers may fail to start due to a temporary
 *   container runtime failure." (the cherry-picks: "a regression in default 1.29 configurations with
 *   the SidecarContainers feature enabled"). The regular init containers' half of it is #127162
 *   (v1.29.9 #127204, v1.30.5 #127203), not this entry.
 * - kubernetes#127868 (fix kubernetes#127878): CHANGELOG-1.32.md v1.32.0-alpha.2 (#127878): "Scheduler will start
 *   considering the resource requests of existing sidecar containers during the scoring process." A search of the
 *   CHANGELOG files (and of the cherry-pick PRs) found it in CHANGELOG-1.32.md only: 1.28-1.31 never got it.
 * - kubernetes#119447 and kubernetes#120715 (the CPU and memory managers' halves of kubernetes#119442):
 *   CHANGELOG-1.29.md, in the v1.29.0 notes (changelog since v1.28.0): "Fixed a bug where the CPU set allocated to
 *   an init container, with containerRestartPolicy of `Always`, were erroneously reused by a regular container."
 *   (#119447) and the same for "the memory resources" (#120715). Not found in CHANGELOG-1.28.md: only 1.28
 *   (native sidecars behind the gate) has them.
 * - kubernetes#137146 (issue kubernetes#136910): CHANGELOG-1.35.md v1.35.4 (#137885, "Automated cherry pick of
 *   #137146"): "Fixed a 1.35 regression where, after a kubelet restart, regular containers in a pod with a sidecar
 *   (initContainer with restartPolicy: Always) and a startupProbe failed to restart after crashing. Affected pods
 *   remained stuck with RestartCount: 0 indefinitely."; CHANGELOG-1.36.md v1.36.0-beta.0 (#137146). The PR: the
 *   regression came with ChangeContainerStatusOnKubeletRestart off by default in 1.35, so 1.34 and older are not
 *   affected; only the release-1.35 cherry-pick exists.
 * - kubernetes#141155 (fix kubernetes#141342) and kubernetes#141473 (fix kubernetes#141487): CHANGELOG-1.38.md
 *   v1.38.0-alpha.1: "Fixed an issue where liveness and readiness probes could run before the startup probe
 *   succeeded after a container restart." and "Fixed an issue where a container that was recreated while the
 *   kubelet could not reach the API server was reported Ready after a kubelet restart, before its own readiness
 *   probe had run." Both come from ChangeContainerStatusOnKubeletRestart being off by default since 1.35 (the
 *   PRs and kubernetes#141473), so 1.34 and older are not affected. The cherry-picks to 1.35-1.37
 *   (kubernetes#142041-#142043, #142254, #142255) were open when read and no CHANGELOG-1.35/1.36/1.37 entry
 *   names them: no patch of those lines counts as fixed.
 * - kubernetes#136598: CHANGELOG-1.36.md v1.36.0-alpha.1 and v1.36.0 ("Fixed a bug where pod lifecycle hooks
 *   could run for their full duration when pods are terminated", under Dependency). The note does not say since
 *   when; no CHANGELOG-1.27 ... 1.35 entry names it: taken as every supported release before 1.36.
 * - Open (no fix released): kubernetes#137710 (a proposed fix kubernetes#137730) and kubernetes#140309 (proposed
 *   kubernetes#140364), both in the kubelet's pod restart after a node reboot
 *   (pkg/kubelet/kuberuntime/kuberuntime_manager.go computePodActions / computeInitContainerActions reading the
 *   statuses of every sandbox, not only the active one). Reported on 1.34 (kubernetes#138706, the same
 *   failure) and later; the code path is older than the library's oldest release: taken as every release.
 * @internal
 */
export const KNOWN_KUBERNETES_BUGS: readonly KnownKubernetesBug[] = [
  {
    issue: 'kubernetes#125880',
    fixedBy: 'kubernetes#125935',
    summary: 'a native sidecar followed by another native sidecar that is not running is not sent SIGTERM when the pod is deleted, until the grace period is over',
    fixedIn: ['1.29.8', '1.30.4', '1.31.0'],
    // The ordered termination it breaks came with 1.29 (kubernetes#120620, "terminate sidecars
    // after main containers"); 1.28 stops all containers at once.
    firstAffectedMinor: 29,
    sources: [
      'https://github.com/kubernetes/kubernetes/issues/125880', 'https://github.com/kubernetes/kubernetes/pull/125935',
      'CHANGELOG/CHANGELOG-1.29.md v1.29.8 (#126332)', 'CHANGELOG/CHANGELOG-1.30.md v1.30.4 (#126331)', 'CHANGELOG/CHANGELOG-1.31.md v1.31.0 (#125935)',
    ],
    check: pod => {
      // pkg/kubelet/kuberuntime/kuberuntime_termination_order.go `newTerminationOrdering`: a
      // restartable init container waits for the main containers (a channel pre-closed for one
      // that is not running) and for the NEXT restartable init container after it
      // (`previousSidecarName`); an ordinary init container's channel is waited on by nobody.
      // Before kubernetes#125935 the init containers' channels were never pre-closed
      // (`to.terminated[ic.Name] = make(chan struct{})`), so a native sidecar whose next native
      // sidecar had not started (its own start, or an ordinary init container between them, not
      // finished) waited out the grace period. The PR: "may not receive SIGTERM if the last
      // restartable init container hasn't run". So only a native sidecar with another one after it.
      const init: Json[] = pod.initContainers ?? [];
      const natives = init.filter(c => c.restartPolicy === 'Always').map(c => c.name as string);
      if (natives.length < 2) return undefined;
      const affected = natives.slice(0, -1);
      const grace = pod.terminationGracePeriodSeconds ?? KUBERNETES_DEFAULT_GRACE_SECONDS;
      return {
        level: 'warning',
        what:
          (affected.length === 1
            ? `native sidecar ${quoted(affected)} has another native sidecar after it (${quoted(natives.slice(1))}); `
            : `native sidecars ${quoted(affected)} have another native sidecar after each of them (${quoted(natives.slice(1))}); `) +
          'when the pod is deleted before that one is running (a rollout or scale-down while the pod initializes, a sidecar whose startupProbe fails), ' +
          `${quoted(affected)} ${affected.length === 1 ? 'gets' : 'get'} no SIGTERM until terminationGracePeriodSeconds (${grace}s) is over, ` +
          'so the pod stays Terminating that long and the sidecars are then killed without a graceful stop',
        avoid: 'or give at most one sidecar of the pod the native layout (mode: SidecarMode.LEGACY on the library\'s others)',
      };
    },
  },
  {
    issue: 'kubernetes#132826',
    fixedBy: 'kubernetes#133072',
    summary: 'in a pod with restartPolicy Never, a native sidecar that exits before its first startup probe keeps the app containers from ever starting',
    fixedIn: ['1.33.6', '1.34.2', '1.35.0'],
    firstAffectedMinor: 28,
    sources: [
      'https://github.com/kubernetes/kubernetes/issues/132826',
      'CHANGELOG/CHANGELOG-1.33.md v1.33.6 (#134801)', 'CHANGELOG/CHANGELOG-1.34.md v1.34.2 (#134800)', 'CHANGELOG/CHANGELOG-1.35.md v1.35.0-alpha.2 (#133072)',
    ],
    check: pod => {
      // The startup probe worker of a terminated container quits for good when the POD's
      // restartPolicy is Never, although the sidecar itself is restarted: the sidecar never
      // counts as started, so the app containers never start (pkg/kubelet/prober/worker.go
      // before #133072). OnFailure and Always keep the worker.
      if (pod.restartPolicy !== 'Never') return undefined;
      const probed = (pod.initContainers ?? []).filter((c: Json) => c.restartPolicy === 'Always' && c.startupProbe !== undefined).map((c: Json) => c.name);
      if (probed.length === 0) return undefined;
      return {
        level: 'warning',
        what:
          `the pod has restartPolicy Never and native sidecar(s) ${quoted(probed)} with a startupProbe; if one of them exits before ` +
          'its first startup probe (a crash at start: bad config, OOM), the kubelet restarts it but never probes it again, and the ' +
          'app containers never start: the pod stays in Init until it is deleted (a Job never finishes unless activeDeadlineSeconds is set)',
        avoid: 'or use restartPolicy: OnFailure in the pod template if the app may be restarted in place',
      };
    },
  },
  {
    issue: 'kubernetes#123323',
    fixedBy: 'kubernetes#123323',
    summary: 'in a pod with restartPolicy Never or OnFailure, the status of a native sidecar that exited once stays terminated although the kubelet restarted it',
    fixedIn: ['1.28.8', '1.29.3', '1.30.0'],
    // Native sidecars came with 1.28 (alpha, SidecarContainers gate).
    firstAffectedMinor: 28,
    sources: [
      'https://github.com/kubernetes/kubernetes/pull/123323',
      'release notes of v1.28.8 (#123710)', 'CHANGELOG/CHANGELOG-1.29.md v1.29.3 (#123709)', 'CHANGELOG/CHANGELOG-1.30.md v1.30.0 (#123323)',
    ],
    check: pod => {
      // #123323 "Validate restartable init container state transition": the status manager
      // (pkg/kubelet/status/status_manager.go checkContainerStateTransition) refused a terminated ->
      // running transition of every container when the POD's restartPolicy is Never or OnFailure,
      // restartable init containers included; restartPolicy Always (the default) was never affected.
      if (pod.restartPolicy !== 'Never' && pod.restartPolicy !== 'OnFailure') return undefined;
      const natives = (pod.initContainers ?? []).filter((c: Json) => c.restartPolicy === 'Always').map((c: Json) => c.name as string);
      if (natives.length === 0) return undefined;
      return {
        level: 'warning',
        what:
          `the pod has restartPolicy ${pod.restartPolicy} and native sidecar(s) ${quoted(natives)}; once one of them exits (a crash, an OOM kill), ` +
          'the kubelet restarts it but its status stays at the first termination (the status update is refused), so kubectl, ' +
          'controllers and probes see it terminated while it runs',
        avoid: 'or use restartPolicy: Always where the workload allows it (a Job does not)',
      };
    },
  },
  {
    issue: 'kubernetes#126543',
    fixedBy: 'kubernetes#126543',
    summary: 'a native sidecar whose first start fails with a transient container runtime error stays in Created and the pod stays in Init',
    fixedIn: ['1.29.9', '1.30.5', '1.31.1', '1.32.0'],
    // "Fixed a regression in default 1.29 configurations with the SidecarContainers feature
    // enabled" (the release note of #127212-#127214): the regression is the feature's code path
    // (computeInitContainerActions, from 1.28), on by default from 1.29; 1.28 runs it only with the
    // gate on, which is also the only 1.28 pod with native sidecars to check. No 1.28 cherry-pick.
    firstAffectedMinor: 28,
    sources: [
      'https://github.com/kubernetes/kubernetes/pull/126543',
      'release notes of v1.29.9 (#127214)', 'release notes of v1.30.5 (#127213)', 'release notes of v1.31.1 (#127212)',
      'CHANGELOG/CHANGELOG-1.32.md v1.32.0 (#126543)',
    ],
    check: pod => {
      // #126543 "Restart the init container to not be stuck in created state"
      // (pkg/kubelet/kuberuntime/kuberuntime_container.go computeInitContainerActions): an init
      // container left in Created by a failed start was never started again. Checked for the native
      // sidecars only: the regular init containers' case is #127162.
      const natives = (pod.initContainers ?? []).filter((c: Json) => c.restartPolicy === 'Always').map((c: Json) => c.name as string);
      if (natives.length === 0) return undefined;
      return {
        level: 'warning',
        what:
          `if the container runtime fails to start native sidecar(s) ${quoted(natives)} once (a transient runtime or image error), ` +
          'the kubelet never tries again: the container stays in Created and the pod stays in Init until it is deleted',
        avoid: 'or use the legacy layout (mode: SidecarMode.LEGACY), whose sidecars are ordinary containers',
      };
    },
  },
  {
    issue: 'kubernetes#127868',
    fixedBy: 'kubernetes#127878',
    summary: 'the scheduler\'s scoring counts a pod as max(its containers, its largest init container): the native sidecars\' requests are left out of how full a node looks',
    fixedIn: ['1.32.0'],
    firstAffectedMinor: 28,
    sources: [
      'https://github.com/kubernetes/kubernetes/issues/127868', 'https://github.com/kubernetes/kubernetes/pull/127878',
      'CHANGELOG/CHANGELOG-1.32.md v1.32.0-alpha.2 (#127878)',
    ],
    check: pod => {
      // Before #127878, pkg/scheduler/framework/types.go computed the pod's non-zero requests (what the
      // NodeResources scoring plugins add up as NonZeroRequested) as max(sum of the containers, largest init
      // container), each container without a request counted as 100m CPU / 200Mi memory
      // (pkg/scheduler/util DefaultMilliCPURequest, DefaultMemoryRequest); the fix counts the sidecars as the
      // kubelet does (sidecars declared before each init container, sidecars + containers). The Fit filter was
      // right: only the scores are off. It matters where the scoring sees at most half of the pod.
      const scored = scoringRequests(pod);
      if (!scored) return undefined;
      const short = (['cpu', 'memory'] as const).filter(r => scored.before[r] * 2 <= scored.after[r]);
      if (short.length === 0) return undefined;
      const show = (r: 'cpu' | 'memory', n: number) => (r === 'cpu' ? `${Math.round(n * 1000)}m CPU` : `${Math.round(n / 2 ** 20)}Mi memory`);
      return {
        level: 'warning',
        what:
          `the scheduler's scoring counts this pod as ${short.map(r => show(r, scored.before[r])).join(' and ')} where it holds ` +
          `${short.map(r => show(r, scored.after[r])).join(' and ')}: the requests of native sidecar(s) ${quoted(scored.natives)} are left out of how full ` +
          'a node looks, so nodes running these pods look emptier than they are and get more pods (LeastAllocated) or fewer (MostAllocated) than ' +
          'intended; whether a pod fits is still checked right',
        avoid: 'or give the app container(s) the larger share of the requests',
      };
    },
  },
  {
    issue: 'kubernetes#119447',
    fixedBy: 'kubernetes#119447',
    summary: 'with the static CPU manager policy, the exclusive CPUs of a native sidecar in a Guaranteed pod are given to the app containers too',
    fixedIn: ['1.29.0'],
    firstAffectedMinor: 28,
    sources: [
      'https://github.com/kubernetes/kubernetes/pull/119447', 'https://github.com/kubernetes/kubernetes/issues/119442',
      'CHANGELOG/CHANGELOG-1.29.md v1.29.0 (#119447)',
    ],
    check: pod => {
      // pkg/kubelet/cm/cpumanager/policy_static.go before #119447: the CPUs of an init container were put
      // back for reuse by the next containers, restartable ones included, so a regular container got CPUs
      // the still-running sidecar holds. Exclusive CPUs go only to the containers of a Guaranteed pod with an
      // integer CPU request, and only where the node runs --cpu-manager-policy=static: a warning.
      if (!isGuaranteed(pod)) return undefined;
      const natives = (pod.initContainers ?? []).filter((c: Json) => c.restartPolicy === 'Always' && isWholeCpus(cpuRequestOf(c)));
      if (natives.length === 0) return undefined;
      return {
        level: 'warning',
        what:
          `the pod is Guaranteed (every container's requests equal its limits) and native sidecar(s) ${quoted(natives.map((c: Json) => c.name))} ` +
          'request whole CPUs: on a node with the static CPU manager policy the kubelet gives their exclusive CPUs to the app containers as ' +
          'well, so the app and the sidecars share CPUs that each was meant to have alone',
        avoid: 'or give the native sidecars a fractional CPU request (e.g. 500m: they then run on the shared pool)',
      };
    },
  },
  {
    issue: 'kubernetes#120715',
    fixedBy: 'kubernetes#120715',
    summary: 'with the static memory manager policy, the memory of a native sidecar in a Guaranteed pod is given to the app containers too',
    fixedIn: ['1.29.0'],
    firstAffectedMinor: 28,
    sources: [
      'https://github.com/kubernetes/kubernetes/pull/120715', 'https://github.com/kubernetes/kubernetes/issues/119442',
      'CHANGELOG/CHANGELOG-1.29.md v1.29.0 (#120715)',
    ],
    check: pod => {
      // pkg/kubelet/cm/memorymanager/policy_static.go before #120715: the same reuse for the NUMA memory
      // blocks of a Guaranteed pod's init containers, restartable ones included (the Static policy handles
      // Guaranteed pods only, on nodes with --memory-manager-policy=Static).
      if (!isGuaranteed(pod)) return undefined;
      const natives = (pod.initContainers ?? []).filter((c: Json) => c.restartPolicy === 'Always').map((c: Json) => c.name as string);
      if (natives.length === 0) return undefined;
      return {
        level: 'warning',
        what:
          `the pod is Guaranteed (every container's requests equal its limits) with native sidecar(s) ${quoted(natives)}: on a node with the ` +
          'static memory manager policy the kubelet gives the memory it reserved for them to the app containers as well, so the pod can use ' +
          'more memory on its NUMA node than was reserved for it',
        avoid: 'or make the pod Burstable (a sidecar request below its limit) where the node\'s memory manager matters',
      };
    },
  },
  {
    issue: 'kubernetes#137146',
    fixedBy: 'kubernetes#137146',
    summary: 'after a kubelet restart, app containers of a pod with a native sidecar that has a startupProbe are never restarted when they crash',
    fixedIn: ['1.35.4', '1.36.0'],
    // "a 1.35 regression": ChangeContainerStatusOnKubeletRestart went off by default in 1.35.
    firstAffectedMinor: 35,
    sources: [
      'https://github.com/kubernetes/kubernetes/pull/137146', 'https://github.com/kubernetes/kubernetes/issues/136910',
      'CHANGELOG/CHANGELOG-1.35.md v1.35.4 (#137885)', 'CHANGELOG/CHANGELOG-1.36.md v1.36.0-beta.0 (#137146)',
    ],
    check: pod => {
      // #137146 (pkg/kubelet/prober/worker.go): after a kubelet restart the startup probe result of a sidecar
      // that was already running is never seeded, so computeInitContainerActions never sees the pod as
      // initialized and computePodActions never restarts a crashed app container. Only pods whose app
      // containers are restarted at all: restartPolicy Always (the default) or OnFailure.
      if (pod.restartPolicy === 'Never') return undefined;
      const probed = (pod.initContainers ?? []).filter((c: Json) => c.restartPolicy === 'Always' && c.startupProbe !== undefined).map((c: Json) => c.name as string);
      if (probed.length === 0) return undefined;
      return {
        level: 'warning',
        what:
          `native sidecar(s) ${quoted(probed)} have a startupProbe; after the kubelet of the node restarts (an upgrade, a crash), an app ` +
          'container of a pod that was already running and then crashes is never restarted: it stays terminated with RestartCount 0 and the pod ' +
          'NotReady until the pod is deleted',
        avoid: 'or delete (or roll) the pods of a node after its kubelet restarts',
      };
    },
  },
  {
    issue: 'kubernetes#141155',
    fixedBy: 'kubernetes#141342',
    summary: 'after a liveness restart, the new container counts as started at once: its liveness and readiness probes run before its startup probe has passed',
    fixedIn: ['1.38.0'],
    // ChangeContainerStatusOnKubeletRestart off by default since 1.35 (the PR): 1.34 and older carry Started over only on a kubelet restart.
    firstAffectedMinor: 35,
    sources: [
      'https://github.com/kubernetes/kubernetes/issues/141155', 'https://github.com/kubernetes/kubernetes/pull/141342',
      'CHANGELOG/CHANGELOG-1.38.md v1.38.0-alpha.1 (#141342)',
    ],
    check: pod => {
      // pkg/kubelet/kubelet_pods.go convertToAPIContainerStatuses inherited Started by container name, not ID.
      const all: Json[] = [...(pod.initContainers ?? []).filter((c: Json) => c.restartPolicy === 'Always'), ...(pod.containers ?? [])];
      const both = all.filter(c => c.startupProbe !== undefined && c.livenessProbe !== undefined).map(c => String(c.name));
      if (both.length === 0) return undefined;
      return {
        level: 'warning',
        what:
          `${quoted(both)} ${both.length > 1 ? 'have' : 'has'} a startupProbe and a livenessProbe; after a liveness restart the new container counts ` +
          'as started at once, so its liveness probe runs before its startup probe has passed and can kill it again while it starts (a restart loop ' +
          'for an agent that starts slowly), and a native sidecar counts as started before it is ready',
        avoid: 'or give the liveness probe an initialDelaySeconds that covers the start (livenessCheck on the constructs)',
      };
    },
  },
  {
    issue: 'kubernetes#141473',
    fixedBy: 'kubernetes#141487',
    summary: 'a container recreated while the kubelet could not reach the API server is reported Ready after a kubelet restart, before its readiness probe ran',
    fixedIn: ['1.38.0'],
    firstAffectedMinor: 35,
    sources: [
      'https://github.com/kubernetes/kubernetes/issues/141473', 'https://github.com/kubernetes/kubernetes/pull/141487',
      'CHANGELOG/CHANGELOG-1.38.md v1.38.0-alpha.1 (#141487)',
    ],
    check: pod => {
      // pkg/kubelet/prober/prober_manager.go setReadyStateOnKubeletRestart kept Ready by container name (kubernetes#141473).
      const all: Json[] = [...(pod.initContainers ?? []).filter((c: Json) => c.restartPolicy === 'Always'), ...(pod.containers ?? [])];
      const probed = all.filter(c => c.readinessProbe !== undefined).map(c => String(c.name));
      if (probed.length === 0) return undefined;
      return {
        level: 'warning',
        what:
          `${quoted(probed)} ${probed.length > 1 ? 'have' : 'has'} a readinessProbe; a container the runtime recreated while the kubelet could not ` +
          'reach the API server is reported Ready after the kubelet restarts, before its own readiness probe has run, so the pod can get traffic ' +
          'before that container (a proxy in the request path) is ready',
        avoid: 'or keep the kubelets of nodes that lost the API server from restarting before the connection is back',
      };
    },
  },
  {
    issue: 'kubernetes#136598',
    fixedBy: 'kubernetes#136598',
    summary: 'at pod termination a lifecycle hook can run for its full duration, past its container\'s exit',
    fixedIn: ['1.36.0'],
    // unverified range: #136598 is a go-systemd bump (v22.5.0 -> v22.7.0, coreos/go-systemd#496) fixing
    // kubernetes#135825 and #134338 (a preStop sleep running on after PID 1 exits, reported 2025-09);
    // neither says since which release, so the warning says the range is not established.
    firstAffectedMinor: 27,
    sources: [
      'https://github.com/kubernetes/kubernetes/pull/136598', 'CHANGELOG/CHANGELOG-1.36.md v1.36.0-alpha.1 and v1.36.0 (#136598)',
      'https://github.com/kubernetes/kubernetes/issues/134338', 'https://github.com/kubernetes/kubernetes/issues/135825',
    ],
    check: pod => {
      const all: Json[] = [...(pod.initContainers ?? []), ...(pod.containers ?? [])];
      const hooked = all.filter(c => c.lifecycle?.preStop !== undefined).map(c => String(c.name));
      if (hooked.length === 0) return undefined;
      return {
        level: 'warning',
        what:
          `${quoted(hooked)} ${hooked.length > 1 ? 'have' : 'has'} a preStop hook; when the pod is terminated a hook can run for its full duration ` +
          'instead of ending with its container, so the pod can stay Terminating up to terminationGracePeriodSeconds (a rollout or a Job\'s ' +
          'completion takes that much longer; unverified range: the fix is a go-systemd bump and the reports, kubernetes#134338 and #135825, do not say ' +
          'since which release, so this warns from 1.27)',
        avoid: 'or keep the sidecars\' hooks short (appShutdownTime, watchAppExit in the legacy layout)',
      };
    },
  },
  {
    issue: 'kubernetes#137710',
    fixedBy: 'kubernetes#137730',
    open: true,
    summary: 'after a node reboot, an init container that could not be removed is taken as done: the later init containers are skipped',
    fixedIn: [],
    firstAffectedMinor: 27,
    sources: ['https://github.com/kubernetes/kubernetes/issues/137710 (open)', 'https://github.com/kubernetes/kubernetes/pull/137730 (open)'],
    check: pod => skippedInitContainers(pod, 'when the kubelet fails to remove an old init container while restarting the pod'),
  },
  {
    issue: 'kubernetes#140309',
    fixedBy: 'kubernetes#140364',
    open: true,
    summary: 'after a node restart, only the first init container runs again when an app container of the old sandbox was left in Created',
    fixedIn: [],
    firstAffectedMinor: 27,
    sources: ['https://github.com/kubernetes/kubernetes/issues/140309 (open)', 'https://github.com/kubernetes/kubernetes/pull/140364 (open)', 'https://github.com/kubernetes/kubernetes/issues/138706 (1.34.1)'],
    check: pod => skippedInitContainers(pod, 'when the node lost power after the app container was created but before it ran'),
  },
];

/**
 * Known bugs of MutatingAdmissionPolicy itself, in the releases SidecarInjectionPolicy supports
 * (1.34+). The same entries as above, but `check` reads the policy's `spec` (what
 * SidecarInjectionPolicy emits) instead of a pod: `findKnownBugs(where, policySpec, version,
 * KNOWN_ADMISSION_POLICY_BUGS)`. The library's policy is written so that none of them hits it
 * (test/sidecar-injection-policy.test.ts); the construct checks its spec at synthesis when the target names a patch.
 * Read in kubernetes v1.37.2 CHANGELOG/CHANGELOG-1.37.md (v1.37.0, "Bug or Regression"); the
 * stored CHANGELOG-1.36.md goes to v1.36.0 only, so no 1.36 patch is known to have a fix.
 */
export const KNOWN_ADMISSION_POLICY_BUGS: readonly KnownKubernetesBug[] = [
  {
    issue: 'kubernetes#129309',
    fixedBy: 'kubernetes/website#53977 (documents it; the behaviour stays)',
    open: true,
    summary: 'between the mutations of one policy the object is encoded, decoded and defaulted again, so an empty list one mutation adds is gone when the next one appends to it ("doc is missing path")',
    fixedIn: [],
    firstAffectedMinor: 32,
    sources: ['kubernetes#129309 (closed as the documented behaviour)', 'kubernetes/website#49641'],
    check: spec => ((spec.mutations ?? []).length > 1 ? {
      level: 'warning',
      what: `the policy has ${spec.mutations.length} mutations: a later one sees the object re-encoded, without the empty lists an earlier one added`,
      avoid: 'or give the patches as one JSONPatch mutation (as SidecarInjectionPolicy does)',
    } : undefined),
  },
  {
    issue: 'kubernetes#140293',
    fixedBy: 'kubernetes#140293',
    summary: 'CEL `+` on a listType=map or set list (a container\'s env, volumeMounts) did not apply the merge semantics to the appended elements, and `==` matched lists with duplicates',
    fixedIn: ['1.37.0'],
    firstAffectedMinor: 34,
    sources: ['CHANGELOG-1.37.md v1.37.0 (#140293)'],
    check: spec => (JSON.stringify(spec.mutations ?? []).match(/\+ \[Object\.spec\.(init)?[cC]ontainers\.(env|volumeMounts)\{/) ? {
      level: 'warning',
      what: 'the patch appends entries to a container\'s env or volumeMounts without checking that their key is absent, which the API server may keep as duplicates',
      avoid: 'or add each entry only where its name (mountPath) is absent (as SidecarInjectionPolicy does)',
    } : undefined),
  },
  {
    issue: 'kubernetes#140201',
    fixedBy: 'kubernetes#140201',
    summary: 'a policy\'s params loaded through another path (a cache miss) could look different to CEL (quantities, type meta)',
    fixedIn: ['1.37.0'],
    firstAffectedMinor: 34,
    sources: ['CHANGELOG-1.37.md v1.37.0 (#140201)'],
    check: spec => (spec.paramKind !== undefined ? {
      level: 'warning',
      what: 'the policy reads params (paramKind), which CEL may see in another form after a cache miss',
      avoid: 'or write the values into the policy instead of params (as SidecarInjectionPolicy does)',
    } : undefined),
  },
];

/** kubernetes#137710, #140309: a pod whose init containers after the first can be skipped after a node restart. */
function skippedInitContainers(pod: Json, when: string): KnownBugHit | undefined {
  const init: Json[] = Array.isArray(pod.initContainers) ? pod.initContainers : [];
  if (init.length < 2) return undefined;
  const later = init.slice(1).map(c => String(c?.name));
  const natives = init.slice(1).filter(c => c?.restartPolicy === 'Always').map(c => String(c.name));
  return {
    level: 'warning',
    what:
      `the pod has ${init.length} init containers; after a node restart, ${when}, the kubelet can run only the first again and start the ` +
      `app without ${quoted(later)}${natives.length > 0 ? `: the app then runs without native sidecar(s) ${quoted(natives)}` : ''}, until the pod is deleted`,
    avoid: 'or delete (or roll) the pods of a node after it restarts',
  };
}

/** Requests as the scheduler's scoring counted them before and after kubernetes#127878 (cores, bytes), for a pod with native sidecars. */
function scoringRequests(pod: Json): { before: Record<'cpu' | 'memory', number>; after: Record<'cpu' | 'memory', number>; natives: string[] } | undefined {
  const init: Json[] = Array.isArray(pod.initContainers) ? pod.initContainers : [];
  const containers: Json[] = Array.isArray(pod.containers) ? pod.containers : [];
  const natives = init.filter(c => c && c.restartPolicy === 'Always');
  if (natives.length === 0) return undefined;
  // pkg/scheduler/util/pod_resources.go: 100m CPU and 200Mi memory for a container without a request
  const nonZero = (c: Json, r: 'cpu' | 'memory') => {
    const q = parseQuantity(c?.resources?.requests?.[r] ?? c?.resources?.limits?.[r]);
    return q !== undefined && q !== 0 ? q : r === 'cpu' ? 0.1 : 200 * 2 ** 20;
  };
  const before = { cpu: 0, memory: 0 };
  const after = { cpu: 0, memory: 0 };
  for (const r of ['cpu', 'memory'] as const) {
    const apps = containers.reduce((sum, c) => sum + nonZero(c, r), 0);
    before[r] = Math.max(apps, ...init.map(c => nonZero(c, r)));
    let sidecars = 0;
    let peak = 0;
    for (const c of init) {
      peak = Math.max(peak, sidecars + nonZero(c, r));
      if (c && c.restartPolicy === 'Always') sidecars += nonZero(c, r);
    }
    after[r] = Math.max(peak, sidecars + apps);
  }
  return { before, after, natives: natives.map(c => String(c.name)) };
}

/**
 * Whether the pod's QoS class is Guaranteed: every container (init containers included) has CPU and
 * memory limits, and its requests (defaulted to the limits by the API server) equal them
 * (pkg/apis/core/helper/qos/qos.go ComputePodQOS, v1.28.0).
 */
function isGuaranteed(pod: Json): boolean {
  const all: Json[] = [...(Array.isArray(pod.initContainers) ? pod.initContainers : []), ...(Array.isArray(pod.containers) ? pod.containers : [])];
  if (all.length === 0) return false;
  return all.every(c => (['cpu', 'memory'] as const).every(r => {
    const limit = parseQuantity(c?.resources?.limits?.[r]);
    if (limit === undefined || limit === 0) return false;
    const request = c?.resources?.requests?.[r];
    return request === undefined || parseQuantity(request) === limit;
  }));
}

/** A container's CPU request (the limit where no request is given: the API server's default), in cores. */
function cpuRequestOf(c: Json): number | undefined {
  return parseQuantity(c?.resources?.requests?.cpu ?? c?.resources?.limits?.cpu);
}

/** The static CPU manager gives exclusive CPUs to a whole number of cores only (policy_static.go guaranteedCPUs). */
function isWholeCpus(cores: number | undefined): boolean {
  return cores !== undefined && cores >= 1 && Math.abs(cores * 1000 - Math.round(cores) * 1000) < 1e-6;
}

function parseFixed(v: string): { minor: number; patch: number } {
  const { minor, patch } = parseKubernetesVersion(v)!; // the table's `x.y.z` (test/known-bugs.test.ts)
  return { minor, patch: patch! };
}

/**
 * Whether `bug` is present in `version`: true, false, or undefined when the patch is needed to
 * tell and was not given. @internal
 */
export function hasBug(bug: KnownKubernetesBug, version: KubeVersion): boolean | undefined {
  if (version.minor < bug.firstAffectedMinor) return false;
  if (bug.fixedIn.length === 0) return true; // open: no release has the fix
  const fixes = bug.fixedIn.map(parseFixed);
  if (version.minor > fixes[fixes.length - 1].minor) return false;
  const line = fixes.find(f => f.minor === version.minor);
  if (!line) return true;
  if (line.patch === 0) return false;
  if (version.patch === undefined) return undefined;
  return version.patch < line.patch;
}

/** `1.29.8 or later`, or for a line that never got the fix `1.29.8 or later (no 1.28 patch has the fix)`. */
function upgradeAdvice(bug: KnownKubernetesBug, version: KubeVersion): string {
  const fixes = bug.fixedIn.map(parseFixed);
  const line = fixes.find(f => f.minor === version.minor);
  if (line) return `To avoid it, upgrade the cluster to 1.${line.minor}.${line.patch} or later`;
  const next = fixes.find(f => f.minor > version.minor)!;
  return `No 1.${version.minor} patch has the fix. To avoid it, upgrade the cluster to 1.${next.minor}.${next.patch} or later`;
}

/**
 * The pod spec as the kubelet will see it after admission: the native proxies a mesh injects
 * (`WithMeshProxy`), which the emitted pod lacks but its marker annotation
 * (`sidecars.cdk8s.io/native-sidecars`, in initContainers order: the mesh's proxy, then ours) names,
 * stand in `initContainers` where the marker places them, before the user's own native sidecars.
 * @internal
 */
export function asAdmitted(spec: Json, annotations: Record<string, string> | undefined): Json {
  const marker = annotations?.[NATIVE_SIDECARS_ANNOTATION];
  if (!marker) return spec;
  const init: Json[] = spec.initContainers ?? [];
  const names = marker.split(',').filter(n => n !== '');
  const missing = names.filter(n => !init.some(c => c.name === n));
  if (missing.length === 0) return spec;
  // The marker lists the names in the admitted initContainers order (src/engine/injected.ts
  // nativeSidecarNames): the stand-ins it lists before the first container the pod has go right
  // before it (Istio, Linkerd, Kuma, GCS FUSE inject first), those it lists after the last one go
  // right after it (the OpenTelemetry operator and Consul append theirs).
  const present = names.filter(n => init.some(c => c.name === n));
  const stub = (name: string) => ({ name, restartPolicy: 'Always' });
  if (present.length === 0) return { ...spec, initContainers: [...init, ...missing.map(stub)] };
  const firstPresent = names.indexOf(present[0]);
  const lastPresent = names.indexOf(present[present.length - 1]);
  const before = missing.filter(n => names.indexOf(n) < firstPresent).map(stub);
  const after = missing.filter(n => names.indexOf(n) > lastPresent).map(stub);
  const between = missing.filter(n => names.indexOf(n) > firstPresent && names.indexOf(n) < lastPresent).map(stub);
  const at = init.findIndex(c => c.name === present[0]);
  const end = init.findIndex(c => c.name === present[present.length - 1]);
  const out = [...init.slice(0, at), ...before, ...init.slice(at, end + 1), ...between, ...after, ...init.slice(end + 1)];
  return { ...spec, initContainers: out };
}

/** One finding: a known bug that hits a pod at the target version. @internal */
export interface KnownBugFinding {
  readonly issue: string;
  readonly level: 'error' | 'warning';
  readonly message: string;
}

/**
 * The known bugs of `version` that hit the pod spec `pod` of the workload described by `where`.
 * Only a target with a patch version is checked. @internal
 */
export function findKnownBugs(
  where: string, pod: Json, version: KubeVersion, table: readonly KnownKubernetesBug[] = KNOWN_KUBERNETES_BUGS,
): KnownBugFinding[] {
  if (version.patch === undefined) return [];
  const out: KnownBugFinding[] = [];
  for (const bug of table) {
    if (hasBug(bug, version) !== true) continue;
    const hit = bug.check(pod);
    if (!hit) continue;
    out.push({
      issue: bug.issue,
      level: hit.level,
      message:
        `${where}: Kubernetes ${formatFullVersion(version)} has ${bug.issue} ` +
        `(${bug.fixedIn.length === 0 ? `open upstream: no fix released; ${bug.fixedBy} proposes one` : `fixed in ${bug.fixedIn.join(', ')} by ${bug.fixedBy}`}): ` +
        (bug.fixedIn.length === 0
          ? `${hit.what}. No release has a fix yet (warned on every release until one does): ${hit.avoid.replace(/^or /, '')}.`
          : `${hit.what}. ${upgradeAdvice(bug, version)}, ${hit.avoid}.`),
    });
  }
  return out;
}

/** A workload of the app as a Service check sees it: its construct path and its manifest. @internal */
export interface WorkloadOfApp {
  readonly path: string;
  readonly manifest: Json;
}

/** What the Service checks found for one Service. @internal */
export interface ServiceFindings {
  readonly errors: string[];
  readonly warnings: string[];
}

/**
 * A Service's named `targetPort` that, in a pod it selects, only a native sidecar declares.
 *
 * - Below 1.32 an error: the endpoints and EndpointSlice controllers look a named port up with
 *   `podutil.FindPort` (pkg/api/v1/pod/util.go), which read `spec.containers` only; the pod is left
 *   out of the Service's endpoints for that port (kubernetes#127958). Fixed by kubernetes#127976,
 *   in CHANGELOG/CHANGELOG-1.32.md (v1.32.0-alpha.3: "The name port of the sidecar will also be
 *   allowed to be used"); a search of the CHANGELOG files found that release note in
 *   CHANGELOG-1.32.md only, so 1.31 and older count as unfixed.
 * - A LoadBalancer Service at any release a warning: kubernetes#134651 (open, read 2026): a named
 *   targetPort on a native sidecar was unreachable through a LoadBalancer Service (GKE 1.33) while
 *   the same Service as ClusterIP worked; it depends on the cloud's load balancer.
 * The version is compared here (layer 1), not in the engine. @internal
 */
export function checkServiceTargetPorts(service: Json, workloads: WorkloadIndex, minor: number): ServiceFindings {
  const out: ServiceFindings = { errors: [], warnings: [] };
  if (!service || service.kind !== 'Service' || typeof service.spec !== 'object' || service.spec === null) return out;
  const selector = service.spec.selector;
  if (!selectsPods(selector)) return out; // endpoints managed by hand
  const ports: Json[] = Array.isArray(service.spec.ports) ? service.spec.ports : [];
  const named = ports.filter(p => p && typeof p.targetPort === 'string' && !/^\d+$/.test(p.targetPort));
  if (named.length === 0) return out;
  const ns = service.metadata?.namespace ?? '';
  const svcName = `Service '${service.metadata?.name ?? '?'}'`;
  const loadBalancer = service.spec.type === 'LoadBalancer';
  // (the index's candidates, in the order of the app; the rule below decides)
  for (const w of workloads.candidatesSelectedBy(ns, selector)) {
    const template = w.template;
    if (!template) continue;
    if (!serviceSelects(service, w.manifest?.metadata?.namespace, template.metadata?.labels ?? {})) continue;
    const containers: Json[] = Array.isArray(template.spec?.containers) ? template.spec.containers : [];
    const natives: Json[] = Array.isArray(template.spec?.initContainers) ? template.spec.initContainers.filter((c: Json) => c && c.restartPolicy === 'Always') : [];
    const declares = (c: Json, name: string) => Array.isArray(c?.ports) && c.ports.some((p: Json) => p && p.name === name);
    for (const p of named) {
      const name: string = p.targetPort;
      if (containers.some(c => declares(c, name))) continue;
      const owners = natives.filter(c => declares(c, name));
      if (owners.length === 0) continue;
      const number = owners[0].ports.find((x: Json) => x && x.name === name).containerPort;
      const what = `${svcName} port ${JSON.stringify(p.name ?? p.port)} (targetPort '${name}') selects the pods of '${w.path}', where only the native ` +
        `sidecar(s) ${quoted(owners.map(c => String(c.name)))} declare a port named '${name}'`;
      const fix = `Give the Service targetPort: ${number} (the number), or declare the name on an app container`;
      if (minor < 32) {
        out.errors.push(
          `${what}; Kubernetes 1.${minor} looks a named targetPort up in spec.containers only (kubernetes#127958, fixed in 1.32.0 by kubernetes#127976), ` +
          `so these pods get no endpoint for this port and the Service sends them nothing. ${fix}, or target Kubernetes 1.32 or later.`,
        );
      } else if (loadBalancer) {
        out.warnings.push(
          `${what}; the Service is of type LoadBalancer, for which such a port was reported unreachable although the same ClusterIP Service ` +
          `works (kubernetes#134651, open; it depends on the cloud's load balancer). ${fix}.`,
        );
      }
    }
  }
  return out;
}

/**
 * A HorizontalPodAutoscaler of the app with a `Resource` metric of target type `Utilization` (or
 * autoscaling/v1 `targetCPUUtilizationPercentage`) on a workload of the app whose pod has a
 * container without a request for that resource.
 *
 * Source: kubernetes `pkg/controller/podautoscaler/replica_calculator.go` `calculatePodRequests`
 * (the code index's current copy, also `calculatePodRequestsFromContainers`): the containers
 * counted are `spec.containers` plus the restartable init containers (native sidecars); one
 * without a request fails the metric ("missing request for cpu in container X of Pod Y") and the
 * HPA does not scale on it. Older controllers read `spec.containers` only (a native sidecar was
 * then not counted), and a pod-level request (`spec.resources`, PodLevelResources) is used in place
 * of the containers' where the gate is on: so a warning, naming the containers. @internal
 */
export function checkAutoscalerRequests(hpa: Json, workloads: WorkloadIndex): string[] {
  if (!hpa || hpa.kind !== 'HorizontalPodAutoscaler' || typeof hpa.spec !== 'object' || hpa.spec === null) return [];
  const ref = hpa.spec.scaleTargetRef;
  if (!ref || typeof ref !== 'object') return [];
  const resources: string[] = [];
  if (typeof hpa.spec.targetCPUUtilizationPercentage === 'number') resources.push('cpu');
  for (const m of Array.isArray(hpa.spec.metrics) ? hpa.spec.metrics : []) {
    if (m?.type === 'Resource' && typeof m.resource?.name === 'string' && m.resource.target?.type === 'Utilization' && !resources.includes(m.resource.name)) {
      resources.push(m.resource.name);
    }
  }
  if (resources.length === 0) return [];
  const ns = hpa.metadata?.namespace ?? '';
  const out: string[] = [];
  for (const w of workloads.candidatesNamed(ns, ref.kind, ref.name)) {
    const m = w.manifest;
    if (m?.kind !== ref.kind || m?.metadata?.name !== ref.name || (m?.metadata?.namespace ?? '') !== ns) continue;
    const template = w.template;
    if (!template) continue;
    const spec = template.spec ?? {};
    const natives: Json[] = Array.isArray(spec.initContainers) ? spec.initContainers.filter((c: Json) => c && c.restartPolicy === 'Always') : [];
    const counted: Json[] = [...(Array.isArray(spec.containers) ? spec.containers : []), ...natives];
    for (const resource of resources) {
      if (spec.resources?.requests?.[resource] !== undefined) continue; // a pod-level request
      const missing = counted.filter(c => c && c.resources?.requests?.[resource] === undefined);
      if (missing.length === 0) continue;
      const names = missing.map(c => `'${c.name}'${natives.includes(c) ? ' (native sidecar)' : ''}`).join(', ');
      out.push(
        `HorizontalPodAutoscaler '${hpa.metadata?.name ?? '?'}' scales '${w.path}' on ${resource} utilization, but container(s) ${names} of its pod ` +
        `have no ${resource} request: the HPA controller sums the requests of every container and native sidecar and fails the metric ` +
        `("missing request for ${resource} in container ...", replica_calculator.go calculatePodRequests), so it does not scale on it. ` +
        `Give each of them resources.requests.${resource} (WithSidecar: resources).`,
      );
    }
  }
  return out;
}
