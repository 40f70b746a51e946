/**
 * Layer 2: shutdown handling per layout, the sidecar tools, and the grace-period arithmetic.
 */
import { capabilities } from '../target';
import { EngineTarget, Json, SidecarSpec } from './spec';

/**
 * Distroless agent images (Fluent Bit, the OpenTelemetry Collector) have no shell and no
 * `sleep`. Where a hook needs one (a legacy `preStop` delay before Kubernetes 1.30 has the
 * `sleep` action, Envoy's drain request, the legacy "hold the app" wait), a tiny init container
 * copies a static busybox into an emptyDir that those sidecars mount read-only.
 */
export const TOOLS = {
  containerName: 'sidecar-tools',
  volumeName: 'sidecar-tools',
  mountPath: '/sidecar-tools',
  // The musl build is static; the default (glibc) one is dynamic and cannot run in a FROM-scratch image.
  image: 'busybox:1.36.1-musl',
  /** the busybox binary inside the sidecars */
  busybox: '/sidecar-tools/busybox',
} as const;

/** Kubernetes' default `terminationGracePeriodSeconds`. */
export const KUBERNETES_DEFAULT_GRACE_SECONDS = 30;

/** The Pod Security Standard "restricted" container security context, for a non-root uid. */
export function restrictedSecurityContext(uid: number): Json {
  return {
    allowPrivilegeEscalation: false,
    capabilities: { drop: ['ALL'] },
    privileged: false,
    readOnlyRootFilesystem: true,
    runAsGroup: uid,
    runAsNonRoot: true,
    runAsUser: uid,
    seccompProfile: { type: 'RuntimeDefault' },
  };
}

/** The init container that provides busybox to the hooks. */
export function toolsInitContainer(): Json {
  return {
    command: ['/bin/busybox', 'cp', '/bin/busybox', TOOLS.busybox],
    image: TOOLS.image,
    imagePullPolicy: 'IfNotPresent',
    name: TOOLS.containerName,
    resources: {
      limits: { cpu: '50m', memory: '16Mi' },
      requests: { cpu: '10m', memory: '16Mi' },
    },
    securityContext: restrictedSecurityContext(65532),
    volumeMounts: [{ mountPath: TOOLS.mountPath, name: TOOLS.volumeName }],
  };
}

export function toolsVolume(): Json {
  return { emptyDir: { sizeLimit: '8Mi' }, name: TOOLS.volumeName };
}

function shell(script: string): Json {
  return { exec: { command: [TOOLS.busybox, 'sh', '-c', script] } };
}

/** The stop time and read delay of an agent's shutdown model, as the engine takes them. */
export function shutdownOf(
  model: { readonly stopSeconds: number; readonly readAfterAppExitSeconds: number },
): { stopSeconds: number; readAfterAppExitSeconds?: number } {
  return model.readAfterAppExitSeconds > 0
    ? { stopSeconds: model.stopSeconds, readAfterAppExitSeconds: model.readAfterAppExitSeconds }
    : { stopSeconds: model.stopSeconds };
}

/**
 * What a native sidecar of the USER's own (an init container with `restartPolicy: Always`)
 * counts in the budget: the kubelet's minimum grace (`minimumGracePeriodInSeconds`, 2 s,
 * `pkg/kubelet/kuberuntime/kuberuntime_container.go`). They sit after ours in `initContainers`,
 * so from 1.29 they are stopped before ours, one after another, and ours wait for them.
 */
export const USER_NATIVE_SIDECAR_STOP_SECONDS = 2;

/**
 * How long a sidecar's `preStop` hook holds its SIGTERM back, counted from the pod's
 * termination: the kubelet runs every container's `preStop` at once when the pod starts
 * terminating, also a native sidecar's, NOT when its turn comes (`killContainer`,
 * `pkg/kubelet/kuberuntime/kuberuntime_container.go`: preStop, then `waitForTurn`, then SIGTERM).
 * - stopped with the app (legacy, and native on 1.28 where the stop is not ordered): the app's
 *   whole shutdown, plus the agent's read delay;
 * - native from 1.29 (stopped after every app container has exited): only an agent that must
 *   keep reading after the app's exit needs a delay, and it too runs from the termination's
 *   start: the app's shutdown plus the read delay.
 */
export function preStopDelayOf(spec: SidecarSpec, target: EngineTarget, appShutdownSeconds: number): number {
  const ordered = spec.layout === 'NATIVE' && capabilities(target.minor, target.gate).orderedTermination;
  const read = spec.shutdown.readAfterAppExitSeconds ?? 0;
  if (ordered) return read > 0 ? appShutdownSeconds + read : 0;
  return (spec.shutdown.outliveApp ?? true) ? appShutdownSeconds + read : read;
}

/**
 * The lifecycle hooks of a sidecar in its layout, and whether they need the tools.
 * `appShutdownSeconds` is the workload's (the largest of its sidecars'): every sidecar that
 * is stopped together with the app must outlive the app's whole shutdown, not its own guess.
 */
export function lifecycleFor(spec: SidecarSpec, target: EngineTarget, appShutdownSeconds: number): { lifecycle?: Json; needsTools: boolean } {
  const caps = capabilities(target.minor, target.gate);
  const B = TOOLS.busybox;
  const posts = (spec.shutdown.preStopPosts ?? []).map(url => `${B} wget -q -T 2 -O /dev/null --post-data '' '${url}'`);
  const lifecycle: Json = {};
  let needsTools = posts.length > 0;

  const delay = preStopDelayOf(spec, target, appShutdownSeconds);
  if (posts.length === 0) {
    if (delay > 0 && caps.sleepAction) {
      lifecycle.preStop = { sleep: { seconds: delay } };
    } else if (delay > 0) {
      // No shell needed for a plain delay.
      lifecycle.preStop = { exec: { command: [B, 'sleep', String(delay)] } };
      needsTools = true;
    }
  } else {
    lifecycle.preStop = shell([...posts, ...(delay > 0 ? [`${B} sleep ${delay}`] : [])].join('; '));
  }
  if (spec.hold && spec.layout === 'LEGACY') {
    // Regular containers start in order and a postStart hook blocks the next one.
    const { readyUrl, timeoutSeconds } = spec.hold;
    lifecycle.postStart = shell(
      `i=0; until ${B} wget -q -T 1 -O /dev/null ${readyUrl}; do ` +
      `i=$((i+1)); if [ $i -ge ${timeoutSeconds} ]; then exit 0; fi; ${B} sleep 1; done`,
    );
    needsTools = true;
  }
  return { lifecycle: Object.keys(lifecycle).length > 0 ? lifecycle : undefined, needsTools };
}

/** What the pod needs, and why (for messages). */
export interface GraceNeed {
  readonly seconds: number;
  readonly explanation: string;
}

/**
 * The grace period the pod needs, in the kubelet's termination order
 * (`pkg/kubelet/kuberuntime/kuberuntime_termination_order.go`, 1.29+; SIDECARS.md §3), with
 * `app` the workload's app shutdown time (the largest of its sidecars'). Every sidecar's time
 * runs from the pod's termination: its `preStop` delay (`preStopDelayOf`), then SIGTERM, then
 * its stop time.
 * - Stopped with the app (legacy; native on 1.28, where the stop is not ordered): at once,
 *   each ends at its delay + its stop time.
 * - Native from 1.29: a native sidecar waits for EVERY entry of `spec.containers` (the app and
 *   the legacy sidecars) and for every native sidecar after it in `initContainers` (the user's,
 *   then ours in reverse order), then for its own `preStop`: app + longest legacy stop + the
 *   sum of the native stops, when no `preStop` delay is longer.
 */
export function graceNeed(sidecars: SidecarSpec[], target: EngineTarget, userInitContainers: Json[] = [], initOrder?: string[]): GraceNeed {
  const app = appShutdownOf(sidecars);
  const ordered = capabilities(target.minor, target.gate).orderedTermination;
  const isSequential = (s: SidecarSpec) => s.layout === 'NATIVE' && ordered;
  const parts: string[] = [];
  // Everything in spec.containers, and the sidecars stopped with the app.
  let mainEnd = app;
  let end = app;
  for (const s of sidecars.filter(x => !isSequential(x))) {
    const delay = preStopDelayOf(s, target, app);
    const done = delay + s.shutdown.stopSeconds;
    end = Math.max(end, done);
    if (s.layout === 'LEGACY') mainEnd = Math.max(mainEnd, done);
    const label = s.layout === 'LEGACY' ? 'legacy' : 'native on 1.28 (unordered stop)';
    parts.push(`${label} ${s.container.name}: preStop delay ${delay}s + stop ${s.shutdown.stopSeconds}s`);
  }
  const natives = sidecars.filter(isSequential);
  // The user's native sidecars wait for our legacy ones too.
  const users = ordered ? userInitContainers.filter(c => c.restartPolicy === 'Always') : [];
  if (natives.length > 0 || users.length > 0) {
    const steps: string[] = [mainEnd === app ? `app ${app}s` : `every container of spec.containers ${mainEnd}s`];
    let t = mainEnd;
    // Stopped in reverse order of initContainers: by default ours (in rank order) come before
    // the user's; `initOrder` (the names as placed) says otherwise where a sidecar was
    // positioned after a user init container. Names it does not hold (an injected proxy) stay first.
    type Native = { name: string; stop: number; delay: number };
    let chain: Native[] = [
      ...natives.map(s => ({ name: s.container.name as string, stop: s.shutdown.stopSeconds, delay: preStopDelayOf(s, target, app) })),
      ...users.map(c => ({ name: c.name as string, stop: USER_NATIVE_SIDECAR_STOP_SECONDS, delay: 0 })),
    ];
    if (initOrder) {
      const at = (n: Native) => initOrder.indexOf(n.name);
      chain = chain.map((n, i) => ({ n, i })).sort((a, b) => at(a.n) - at(b.n) || a.i - b.i).map(x => x.n);
    }
    for (const n of [...chain].reverse()) {
      if (n.delay > t) {
        // its own preStop delay (counted from the termination's start) outlasts everything before it
        t = n.delay;
        steps.splice(0, steps.length, `${n.name}'s preStop delay ${n.delay}s`);
      }
      t += n.stop;
      steps.push(`${n.name} ${n.stop}s`);
    }
    end = Math.max(end, t);
    parts.unshift(`native: ${steps.join(' + ')}`);
  }
  return { seconds: Math.ceil(end), explanation: parts.join('; ') };
}

/** The workload's app shutdown time: the largest of its sidecars' `appShutdownSeconds`. */
export function appShutdownOf(sidecars: SidecarSpec[]): number {
  return Math.max(0, ...sidecars.map(s => s.shutdown.appShutdownSeconds));
}
