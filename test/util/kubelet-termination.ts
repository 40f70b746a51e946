/**
 * A simulation of how the kubelet terminates a pod, written from the kubelet's code, NOT from
 * the library's grace formula: the property tests derive the grace period a pod needs from it.
 *
 * Sources (kubernetes/kubernetes):
 * - `pkg/kubelet/kuberuntime/kuberuntime_container.go`, `killContainersWithSyncResult` /
 *   `killContainer`: every running container (regular containers and restartable init
 *   containers) is killed in its own goroutine, all at once. Each one: `gp` = the pod's grace
 *   period; if it has a `preStop` hook and `gp > 0`, run it (waiting at most `gp`) and
 *   `gp -= whole seconds it took`; if there is a termination ordering and `gp > 0`,
 *   `waitForTurn` (at most `gp`) and `gp -= whole seconds waited` (truncated downward); then
 *   `gp = max(gp, minimumGracePeriodInSeconds = 2)`; `StopContainer(gp)`: SIGTERM, SIGKILL after
 *   `gp` seconds; on return, the container counts as terminated for those waiting on it.
 * - `pkg/kubelet/kuberuntime/kuberuntime_termination_order.go` (1.29+): a restartable init
 *   container waits for every running container of `spec.containers`, and for the next
 *   restartable init container after it in `initContainers`. Before 1.29 (also 1.28 with the
 *   SidecarContainers gate on) there is no ordering: everything gets SIGTERM after its own
 *   `preStop`.
 *
 * Times are seconds from the pod's termination (deletion) on.
 */

/** How a container behaves after SIGTERM. */
export interface Behaviour {
  /** Seconds from SIGTERM to its exit, when not killed first. */
  readonly exitAfterSigterm: number;
  /**
   * How long its `preStop` hook takes, for a hook whose duration cannot be read from it (an
   * exec of some program, `httpGet`).
   * @default - read from the hook (`preStopSeconds`)
   */
  readonly preStopSeconds?: number;
}

export interface SimulationInput {
  /** The pod spec (containers, initContainers, terminationGracePeriodSeconds). */
  readonly spec: any;
  readonly minor: number;
  /** How each running container behaves, by name. */
  readonly behaviour: (name: string) => Behaviour;
  /**
   * Apply the kubelet's 2-second minimum to what is left of the grace period. The budget is
   * derived without it (a container that lives only thanks to the minimum is cut short by
   * design), the real kubelet has it.
   * @default true
   */
  readonly minimumGrace?: boolean;
  /** The grace period to use instead of the spec's. */
  readonly graceSeconds?: number;
}

export interface ContainerTimeline {
  readonly name: string;
  readonly kind: 'container' | 'native';
  /** When its preStop hook ended (0 without one). */
  readonly preStopEnd: number;
  /** When its turn came (1.29+ native sidecars: every container it waits for had exited). */
  readonly turn: number;
  readonly sigterm: number;
  /** When the kubelet kills it (SIGKILL) if it has not exited. */
  readonly deadline: number;
  readonly exit: number;
  /** It was killed before it exited by itself. */
  readonly killed: boolean;
  /** It got SIGTERM before its turn (the grace period ran out while it waited). */
  readonly early: boolean;
}

export interface Simulation {
  readonly grace: number;
  /** The release orders the stop (1.29+): native sidecars wait for the app containers and each other. */
  readonly ordered: boolean;
  readonly containers: Map<string, ContainerTimeline>;
  /** When the last container was gone. */
  readonly end: number;
}

const MINIMUM_GRACE = 2;

/** The preStop hook's duration, read from the hook: a `sleep` action, or `sleep N` in an exec command. */
export function preStopSeconds(container: any): number {
  const hook = container.lifecycle?.preStop;
  if (!hook) return 0;
  if (hook.sleep) return Number(hook.sleep.seconds);
  const command: string[] = hook.exec?.command ?? [];
  const text = command.join(' ');
  // `.../busybox sleep 12` (exec form, or inside `sh -c`): the wget POSTs to localhost return at once.
  const m = /(?:^|[\s;/])sleep (\d+)(?:$|[\s;])/.exec(text);
  return m ? Number(m[1]) : 0;
}

export function simulateTermination(input: SimulationInput): Simulation {
  const spec = input.spec;
  const grace: number = input.graceSeconds ?? spec.terminationGracePeriodSeconds ?? 30;
  const floor = input.minimumGrace ?? true;
  const ordered = input.minor >= 29;
  const containers: any[] = spec.containers ?? [];
  const natives: any[] = (spec.initContainers ?? []).filter((c: any) => c.restartPolicy === 'Always');
  const out = new Map<string, ContainerTimeline>();

  const kill = (c: any, kind: ContainerTimeline['kind'], prereqsDone: number | undefined): ContainerTimeline => {
    let gp = grace;
    let t = 0;
    let preStopEnd = 0;
    const hook = input.behaviour(c.name).preStopSeconds ?? preStopSeconds(c);
    if (c.lifecycle?.preStop && gp > 0) {
      const took = Math.min(hook, gp);
      t += took;
      preStopEnd = t;
      gp -= Math.floor(took);
    }
    let early = false;
    const turn = prereqsDone ?? 0;
    if (prereqsDone !== undefined && gp > 0) {
      const wait = Math.max(0, prereqsDone - t);
      const waited = Math.min(wait, gp);
      if (waited < wait) early = true;
      t += waited;
      gp -= Math.floor(waited);
    } else if (prereqsDone !== undefined && prereqsDone > t) {
      early = true;
    }
    if (floor && gp < MINIMUM_GRACE) gp = MINIMUM_GRACE;
    const sigterm = t;
    const deadline = t + Math.max(gp, 0);
    const wanted = sigterm + input.behaviour(c.name).exitAfterSigterm;
    const killed = wanted > deadline;
    return { name: c.name, kind, preStopEnd, turn, sigterm, deadline, exit: Math.min(wanted, deadline), killed, early };
  };

  for (const c of containers) out.set(c.name, kill(c, 'container', undefined));
  const mainDone = Math.max(0, ...containers.map(c => out.get(c.name)!.exit));
  // 1.29+: natives in reverse order of initContainers, each after the main containers and the next native.
  let next: number | undefined;
  for (const c of [...natives].reverse()) {
    const prereqs = ordered ? Math.max(mainDone, next ?? 0) : undefined;
    const tl = kill(c, 'native', prereqs);
    out.set(c.name, tl);
    next = tl.exit;
  }
  return { grace, ordered, containers: out, end: Math.max(0, ...[...out.values()].map(x => x.exit)) };
}

/** Containers that were killed, or got SIGTERM before their turn. */
export function cutShort(sim: Simulation): string[] {
  const v: string[] = [];
  for (const c of sim.containers.values()) {
    if (c.killed) v.push(`'${c.name}' is killed at ${c.deadline}s, before it exits (SIGTERM at ${c.sigterm}s)`);
    if (c.early) v.push(`'${c.name}' gets SIGTERM at ${c.sigterm}s, before its turn at ${c.turn}s (the grace period ran out while it waited)`);
  }
  return v;
}

/**
 * The least grace period (whole seconds) with which nobody is cut short without the kubelet's
 * 2-second minimum, and `extra` holds too.
 */
export function leastGrace(input: Omit<SimulationInput, 'graceSeconds' | 'minimumGrace'>, extra: (sim: Simulation) => string[] = () => []): number {
  for (let g = 1; g <= 3600; g++) {
    const sim = simulateTermination({ ...input, graceSeconds: g, minimumGrace: false });
    if (cutShort(sim).length === 0 && extra(sim).length === 0) return g;
  }
  throw new Error('no grace period up to an hour lets every container stop');
}
