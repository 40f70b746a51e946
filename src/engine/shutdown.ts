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

/**
 * The lifecycle hooks of a sidecar in its layout, and whether they need the tools.
 * `appShutdownSeconds` is the workload's (the largest of its sidecars'): every sidecar that
 * is stopped together with the app must outlive the app's whole shutdown, not its own guess.
 */
export function lifecycleFor(spec: SidecarSpec, target: EngineTarget, appShutdownSeconds: number): { lifecycle?: Json; needsTools: boolean } {
  const caps = capabilities(target.minor, target.gate);
  const B = TOOLS.busybox;
  const posts = (spec.shutdown.preStopPosts ?? []).map(url => `${B} wget -q -T 2 -O /dev/null --post-data '' '${url}'`);
  const steps: string[] = [...posts];
  const lifecycle: Json = {};
  let needsTools = posts.length > 0;

  // Native from 1.29: ordering does the work, the sidecar is stopped only after the app has
  // exited. Legacy, and native on 1.28 (gate on) where sidecars are NOT stopped after the app:
  // a preStop delay keeps the sidecar alive while the app shuts down.
  const delay = spec.layout === 'NATIVE' && caps.orderedTermination ? 0 : appShutdownSeconds;
  if (delay > 0 && posts.length === 0 && caps.sleepAction) {
    lifecycle.preStop = { sleep: { seconds: delay } };
  } else {
    if (delay > 0) steps.push(`${B} sleep ${delay}`);
    if (steps.length > 0) {
      lifecycle.preStop = shell(steps.join('; '));
      needsTools = true;
    }
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
 * The grace period the sidecars need (SIDECARS.md §3), with `app` the workload's app shutdown
 * time (the largest of its sidecars'):
 * - native (>= 1.29): the app shuts down first, then the sidecars stop one after another:
 *   app + sum(stop);
 * - legacy (and native on 1.28): every sidecar waits out the app, then stops, all in parallel:
 *   app + max(stop).
 */
export function graceNeed(sidecars: SidecarSpec[], target: EngineTarget): GraceNeed {
  const app = appShutdownOf(sidecars);
  const ordered = capabilities(target.minor, target.gate).orderedTermination;
  const sequential = sidecars.filter(s => s.layout === 'NATIVE' && ordered);
  const parallel = sidecars.filter(s => !(s.layout === 'NATIVE' && ordered));
  let seconds = 0;
  const parts: string[] = [];
  if (sequential.length > 0) {
    seconds = app + sequential.reduce((acc, s) => acc + s.shutdown.stopSeconds, 0);
    parts.push(`native: app ${app}s + ${sequential.map(s => `${s.container.name} ${s.shutdown.stopSeconds}s`).join(' + ')}`);
  }
  for (const s of parallel) {
    seconds = Math.max(seconds, app + s.shutdown.stopSeconds);
    const label = s.layout === 'LEGACY' ? 'legacy' : 'native on 1.28 (unordered stop)';
    parts.push(`${label} ${s.container.name}: preStop delay ${app}s + stop ${s.shutdown.stopSeconds}s`);
  }
  return { seconds: Math.ceil(seconds), explanation: parts.join('; ') };
}

/** The workload's app shutdown time: the largest of its sidecars' `appShutdownSeconds`. */
export function appShutdownOf(sidecars: SidecarSpec[]): number {
  return Math.max(0, ...sidecars.map(s => s.shutdown.appShutdownSeconds));
}
