/**
 * The model and the invariants of the property tests.
 *
 * The model (`sidecarFacts`, `expectedErrors`) says, from a scenario's plain data and the
 * library's documented behaviour, what each sidecar looks like (name, volumes, ports, layout,
 * resources, shutdown needs) and which errors synthesis must report. It is written from the docs
 * and SIDECARS.md, not from the engine's code: where the two disagree, a property fails. It does
 * not restate the library's formulas:
 * - default resources are read from the docs (test/util/docs.ts `documentedResources`);
 * - the grace period a pod needs, and whether and how long a sidecar's preStop delay is, come
 *   from a simulation of the kubelet's termination (test/util/kubelet-termination.ts);
 * - whether the hook tools are there is read from the output, and what the hooks may run is a
 *   property of the output (test/util/hooks.ts);
 * - an expected error is a pattern for its owner, its bad value and "says what to do"
 *   (`errorPattern`); the exact wording of each is pinned in test/bad-input.test.ts.
 *
 * Every invariant returns a list of violations (empty when it holds), so that a failing case
 * prints every broken rule at once.
 */
import { createHash } from 'crypto';
import {
  CHART_ID, COMPLETING_KINDS, EnvoyCase, LogAgentCase, Scenario, SidecarCase, SidecarType, TracerCase, nativeWorks, sidecarPath,
} from './arbitraries';
import { ResourceOwner, documentedDiskRequests, documentedResources } from './docs';
import { podMetadataOf, podSpecOf } from './fixtures';
import { TOOLS_NAME, TOOLS_PATH, hookSleep, hookViolations, shortenedSleep, usesTools } from './hooks';
import { schemaErrors } from './k8s-schema';
import { Simulation, cutShort, leastGrace, simulateTermination } from './kubelet-termination';
import { restrictedViolations, volumeViolations } from './pss';
import { sigtermHoldOf } from './sigterm-hold';
import { envoyShutdown } from '../../src/agents/envoy/shutdown';
import { fluentBitShutdown } from '../../src/agents/fluent-bit/config';
import { fluentdShutdown } from '../../src/agents/fluentd/config';
import { otelCollectorShutdown } from '../../src/agents/otel-collector/config';
import { ShutdownModel } from '../../src/agents/shutdown-model';
import { vectorShutdown } from '../../src/agents/vector/config';
import { SidecarMode } from '../../src/target/capabilities';
import { SidecarValidation } from '../../src/validation';

// ---------------------------------------------------------------------------
// The model
// ---------------------------------------------------------------------------

const KUBERNETES_DEFAULT_GRACE = 30;
const CHECKSUM_PREFIX = 'checksum.sidecars.cdk8s.io/';
/** NativeSidecarGuard's marker on pod templates with native sidecars (the names, in initContainers order). */
const NATIVE_MARKER = 'sidecars.cdk8s.io/native-sidecars';

/** What the docs promise about one sidecar construct of a scenario. */
export interface SidecarFacts {
  readonly type: SidecarType;
  readonly ctor: string;
  readonly path: string;
  /** How messages name the construct: `WithLogAgent 'test/logs'`. */
  readonly owner: string;
  readonly name: string;
  readonly rank: number;
  /** undefined when the target cannot run the requested mode. */
  readonly layout?: 'NATIVE' | 'LEGACY';
  readonly volumes: string[];
  readonly configVolume: string;
  /** Every port the agent binds (declared and localhost-only). */
  readonly ports: number[];
  /** Mounts added to every app container. */
  readonly appMounts: Array<{ mountPath: string; name: string }>;
  /** Env added to every app container (unless it sets the variable itself), in order. */
  readonly appEnv: string[];
  /** Known values of some of the added env variables. */
  readonly appEnvValues: Record<string, string>;
  /** Seconds from SIGTERM to exit, at most: the agent's shutdown model (src/agents/). */
  readonly stopSeconds: number;
  /** Seconds the agent must keep reading after the app's exit before SIGTERM (the model). */
  readonly readAfterAppExitSeconds: number;
  /** The agent polls its files: native too, its SIGTERM is held back by its read delay (the model). */
  readonly holdSigtermInNative?: boolean;
  readonly appShutdownSeconds: number;
  /** appShutdownTime was given on the construct. */
  readonly appShutdownGiven: boolean;
  /** userSidecarStopTime in seconds, when given. */
  readonly userSidecarStop?: number;
  /** Envoy: holdApplicationUntilProxyStarts (legacy: first in spec.containers, a postStart wait). */
  readonly hold: boolean;
  /** The agent's health port (the hold's postStart waits on it). */
  readonly healthPort: number;
  /** Envoy's admin port (its preStop POSTs the drain there, docs/envoy.md), else undefined. */
  readonly adminPort?: number;
  readonly allowLegacyOnJob: boolean;
  readonly mode: SidecarMode;
  /** Ports the sidecar sends the app's traffic to (Envoy's appPort): no other sidecar may bind them. */
  readonly appPorts: number[];
  /** The container's resources: the given ones, the agent's defaults for the rest. */
  readonly resources: { requests: { 'cpu': string; 'memory': string; 'ephemeral-storage'?: string }; limits: { cpu: string; memory: string } };
}

/** The default resources as the docs state them (read from docs/*.md, not copied from the code). */
const DOCUMENTED_RESOURCES = documentedResources();

/**
 * The container's resources: each given value unchanged (in the unit the scenario gives it), the
 * documented default for each one not given.
 */
function resourcesOf(sc: SidecarCase, owner: ResourceOwner, ephemeralStorage?: string): SidecarFacts['resources'] {
  const d = DOCUMENTED_RESOURCES[owner];
  const r = sc.resources ?? {};
  const cpu = (n: number | undefined, dflt: string) => (n === undefined ? dflt : `${n}m`);
  const mem = (n: number | undefined, dflt: string) => (n === undefined ? dflt : `${n}Mi`);
  return {
    requests: {
      cpu: cpu(r.cpuRequest, d.requests.cpu),
      memory: mem(r.memoryRequest, d.requests.memory),
      ...(ephemeralStorage !== undefined ? { 'ephemeral-storage': ephemeralStorage } : {}),
    },
    limits: { cpu: cpu(r.cpuLimit, d.limits.cpu), memory: mem(r.memoryLimit, d.limits.memory) },
  };
}

/** A log agent's ephemeral-storage request with the default log volume (docs/log-agents.md, "Disk"). */
const DOCUMENTED_DISK = documentedDiskRequests();

const TRACER_APP_ENV = [
  'OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_PROTOCOL', 'OTEL_SERVICE_NAME',
  'OTEL_RESOURCE_ATTRIBUTES_POD_NAMESPACE', 'OTEL_RESOURCE_ATTRIBUTES_NODE_NAME',
  'OTEL_RESOURCE_ATTRIBUTES_POD_NAME', 'OTEL_RESOURCE_ATTRIBUTES_POD_UID', 'OTEL_RESOURCE_ATTRIBUTES',
];

/** The documented layout decision (SIDECARS.md §2), or undefined for NATIVE on a target that cannot. */
export function expectedLayout(s: Scenario, mode: SidecarMode): 'NATIVE' | 'LEGACY' | undefined {
  const works = nativeWorks(s.target);
  switch (mode) {
    case SidecarMode.LEGACY: return 'LEGACY';
    case SidecarMode.AUTO: return works ? 'NATIVE' : 'LEGACY';
    case SidecarMode.NATIVE: return works ? 'NATIVE' : undefined;
  }
}

/** The facts of one sidecar; `workloadName` is the workload's `metadata.name`. */
export function sidecarFacts(s: Scenario, sc: SidecarCase, _workloadName: string): SidecarFacts {
  // precedence: the construct's own mode, then Sidecars.configure()'s (none in the 'prop' scenarios), then AUTO
  const mode = sc.mode ?? (s.target.source === 'prop' ? undefined : s.target.configureMode) ?? SidecarMode.AUTO;
  const path = sidecarPath(s, sc.type);
  const common = {
    type: sc.type,
    path,
    layout: expectedLayout(s, mode),
    appShutdownSeconds: sc.appShutdown ?? 10,
    appShutdownGiven: sc.appShutdown !== undefined,
    userSidecarStop: sc.userSidecarStop,
    allowLegacyOnJob: sc.allowLegacyOnJob ?? false,
    mode,
    hold: false,
    appPorts: [] as number[],
  };
  switch (sc.type) {
    case 'log': {
      const c = sc as LogAgentCase;
      const name = c.containerName ?? 'log-agent';
      // Fluent Bit: HTTP server 2020; Vector: its http_server health source 8686; Fluentd: monitor agent 24220, and a scratch
      // emptyDir for /tmp. The shutdown: each agent's model, beside its renderer.
      const agent = {
        'fluent-bit': { port: 2020, model: () => fluentBitShutdown(c.agentGrace ?? 5, c.output), scratch: false },
        'vector': { port: 8686, model: () => vectorShutdown(c.agentGrace ?? 5), scratch: false },
        'fluentd': { port: 24220, model: () => fluentdShutdown(c.agentGrace ?? 10, outputConfig(c.output), 15), scratch: true },
      }[c.agent];
      const model = agent.model();
      return {
        ...common,
        ctor: 'WithLogAgent',
        owner: `WithLogAgent '${path}'`,
        name,
        rank: 100,
        // Vector reads the output's secrets (the scenarios' http header, loki basic auth: arbitraries.ts
        // `logOutput`) from a Secret volume of its own (docs/log-agents.md, "How secrets reach Vector")
        volumes: [
          `${name}-logs`, `${name}-config`, ...(agent.scratch ? [`${name}-tmp`] : []),
          ...(c.agent === 'vector' && (c.output === 'http' || c.output === 'loki') ? [`${name}-secrets`] : []),
        ],
        configVolume: `${name}-config`,
        ports: [c.healthPort ?? agent.port],
        healthPort: c.healthPort ?? agent.port,
        appMounts: [{ mountPath: c.logDirectory ?? '/var/log/app', name: `${name}-logs` }],
        appEnv: [],
        appEnvValues: {},
        ...shutdownFacts(model),
        resources: resourcesOf(c, c.agent, DOCUMENTED_DISK[c.agent][c.output === 'stdout' ? 'stdout' : 'buffered']),
      };
    }
    case 'envoy': {
      const c = sc as EnvoyCase;
      const name = c.containerName ?? 'envoy';
      return {
        ...common,
        ctor: 'WithEnvoy',
        owner: `WithEnvoy '${path}'`,
        name,
        rank: 300,
        volumes: [`${name}-config`, ...(c.tls ? [`${name}-tls`] : []), ...(c.tls === 'mtls' ? [`${name}-client-ca`] : [])],
        configVolume: `${name}-config`,
        ports: [c.listenerPort ?? (c.tls ? 8443 : 10000), c.healthPort ?? 15021, c.adminPort ?? 9901, ...c.upstreams.map(u => u.localPort)],
        appMounts: [],
        appEnv: [],
        appEnvValues: {},
        // Envoy exits at once on SIGTERM (the drain runs in preStop, within appShutdownTime)
        ...shutdownFacts(envoyShutdown()),
        hold: c.hold ?? true,
        healthPort: c.healthPort ?? 15021,
        adminPort: c.adminPort ?? 9901,
        appPorts: [c.appPort],
        resources: resourcesOf(c, 'envoy'),
      };
    }
    case 'tracer': {
      const c = sc as TracerCase;
      const name = c.containerName ?? 'tracer';
      const http = c.protocol === 'http/protobuf';
      const drain = c.drain ?? 10;
      return {
        ...common,
        ctor: 'WithTracer',
        owner: `WithTracer '${path}'`,
        name,
        rank: 200,
        volumes: [`${name}-config`],
        configVolume: `${name}-config`,
        ports: [c.healthPort ?? 13133, 4317, 4318],
        healthPort: c.healthPort ?? 13133,
        appMounts: [],
        appEnv: [...TRACER_APP_ENV, ...(c.sampling !== undefined ? ['OTEL_TRACES_SAMPLER', 'OTEL_TRACES_SAMPLER_ARG'] : [])],
        appEnvValues: {
          OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${http ? 4318 : 4317}`,
          OTEL_EXPORTER_OTLP_PROTOCOL: http ? 'http/protobuf' : 'grpc',
          // the OpenTelemetry Operator's order (the scenarios set no app.kubernetes.io labels): the name the chart gives the
          // workload, else its construct id ('web'), not the name cdk8s generates (issue 39)
          OTEL_SERVICE_NAME: (c.serviceName ?? s.workload.name ?? 'web').replace(/\$/g, '$$$$'),
          ...(c.sampling !== undefined ? { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: String(c.sampling) } : {}),
        },
        // the three exporters drain one after another within drainTime, plus a second to exit
        ...shutdownFacts(otelCollectorShutdown(drain)),
        resources: resourcesOf(c, 'tracer'),
      };
    }
  }
}

function shutdownFacts(m: ShutdownModel): { stopSeconds: number; readAfterAppExitSeconds: number; holdSigtermInNative: boolean } {
  return { stopSeconds: m.stopSeconds, readAfterAppExitSeconds: m.readAfterAppExitSeconds, holdSigtermInNative: m.holdSigtermInNative === true };
}

/**
 * The seconds a native sidecar's wrapper keeps SIGTERM from the agent on `minor` (docs/shutdown.md,
 * "Vector's last line"): its read delay, for an agent that polls its files, from 1.29.
 */
export function nativeHoldOf(f: SidecarFacts, minor: number): number {
  return f.layout === 'NATIVE' && minor >= 29 && f.holdSigtermInNative ? f.readAfterAppExitSeconds : 0;
}

/** The output as the renderers see it (what the shutdown models look at: type and TLS, as generated). */
function outputConfig(o: LogAgentCase['output']): any {
  return { type: o, tls: o === 'http' || o === 'elasticsearch' };
}

/** The facts of every sidecar of a scenario, in the library's order (rank, then name). */
export function orderedFacts(s: Scenario, workloadName: string): SidecarFacts[] {
  return s.sidecars.map(sc => sidecarFacts(s, sc, workloadName))
    .sort((a, b) => a.rank - b.rank || a.name.localeCompare(b.name));
}

/**
 * How long the app of the workload takes to shut down: the longest `appShutdownTime` of its
 * sidecars. Every sidecar stopped together with the app must outlive all of it (SIDECARS.md §1:
 * the point is that no sidecar dies before the app is done).
 */
export function appShutdown(facts: SidecarFacts[]): number {
  return Math.max(0, ...facts.map(f => f.appShutdownSeconds));
}

/** An app container's preStop hook the library cannot read (README): an exec of something other than `sleep N`, an httpGet. */
function unreadableHook(c: any): boolean {
  const h = c.lifecycle?.preStop;
  if (!h || h.sleep) return false;
  const command: string[] | undefined = h.exec?.command;
  return !(command && command.length === 2 && ['sleep', '/bin/sleep'].includes(command[0]) && /^\d+$/.test(command[1]));
}

/**
 * When the user's app containers have exited, counted from the pod's termination, when each
 * takes `app` seconds after its SIGTERM: what the simulated kubelet says (it runs each one's own
 * preStop hook first). A hook the library cannot read counts nothing: `appShutdownTime` covers it.
 */
function appEnd(user: UserPod, app: number, minor: number): number {
  const containers = (user.containers.length > 0 ? user.containers : [{}]).map((c, i) => ({ name: `app-${i}`, lifecycle: c.lifecycle }));
  const unreadable = new Set(containers.filter(unreadableHook).map(c => c.name));
  const sim = simulateTermination({
    spec: { containers }, minor, graceSeconds: 3600, behaviour: n => ({ exitAfterSigterm: app, ...(unreadable.has(n) ? { preStopSeconds: 0 } : {}) }),
  });
  return sim.end;
}

/** Every sidecar gets SIGTERM only after the app has exited (at `appExit`) and it has read the app's last line. */
function lastLineViolations(sim: Simulation, sidecars: Array<[SidecarFacts, string]>, appExit: number, holdOf?: (id: string) => number): string[] {
  const v: string[] = [];
  for (const [f, id] of sidecars) {
    const c = sim.containers.get(id);
    if (!c) continue;
    // Stopped in order after the app (a native sidecar from 1.29): its turn comes after the app's
    // exit, and no delay may hold it beyond (issue 26); stopped with the app: the app's exit plus
    // the agent's read delay.
    // A native agent that polls its files (Vector) reads on for its wrapper's hold after its SIGTERM.
    const ordered = c.kind === 'native' && sim.ordered;
    // the hold: the synthesized pod's wrapper as the manifest has it (holdOf), the model pod's from the facts
    const held = holdOf ? holdOf(id) : ordered && f.holdSigtermInNative ? f.readAfterAppExitSeconds : 0;
    const needed = ordered && !f.holdSigtermInNative ? appExit : appExit + f.readAfterAppExitSeconds;
    if (c.sigterm + held < needed) {
      v.push(`'${f.name}' stops reading at ${c.sigterm + held}s, before the app's last line (written at ${appExit}s) is read (${needed}s)`);
    }
  }
  return v;
}

/**
 * The pod the docs describe (the user's containers and init containers, the sidecars in their
 * layout with their documented preStop delays), for the termination simulation. Containers are
 * named by position (a scenario may give two of them one name: that is an error of its own).
 */
interface ModelPod {
  readonly spec: any;
  /** seconds from SIGTERM to exit, by container name */
  readonly exits: Map<string, number>;
  readonly sidecars: Array<[SidecarFacts, string]>;
  /** App containers whose preStop hook the library cannot read (appShutdownTime covers it). */
  readonly unreadable: Set<string>;
}

function modelPod(facts: SidecarFacts[], user: UserPod, minor: number, app: number): ModelPod {
  // A sidecar stopped with the app: its preStop holds it until the app's last line is in (the
  // requirement itself, SIDECARS.md §1). One stopped in order (native, 1.29+) is held by its turn,
  // and a preStop (which starts at the pod's termination) would only delay it (issue 26).
  const end = appEnd(user, app, minor);
  const hook = (f: SidecarFacts) => {
    const d = f.layout === 'NATIVE' && minor >= 29 ? 0 : end + f.readAfterAppExitSeconds;
    return d > 0 ? { lifecycle: { preStop: { sleep: { seconds: d } } } } : {};
  };
  const exits = new Map<string, number>();
  const sidecars: Array<[SidecarFacts, string]> = facts.map((f, i) => [f, `sidecar-${i}`]);
  for (const [f, id] of sidecars) exits.set(id, nativeHoldOf(f, minor) + f.stopSeconds);
  // (a workload without app containers is an error of its own; the budget still counts the app's time)
  // The user's app containers keep their own preStop hooks (the kubelet runs them before SIGTERM).
  const containers = (user.containers.length > 0 ? user.containers : [{}]).map((c, i) => ({ name: `app-${i}`, lifecycle: c.lifecycle }));
  const unreadable = new Set(containers.filter(unreadableHook).map(c => c.name));
  containers.forEach(c => exits.set(c.name, app));
  // the user's own native sidecars: the userSidecarStopTime given (README); none given, nothing
  const init = user.init.map((c, i) => ({ name: `init-${i}`, restartPolicy: c.restartPolicy }));
  init.forEach(c => exits.set(c.name, userStopCounted(facts, minor, user)));
  return {
    spec: {
      containers: [...containers, ...sidecars.filter(([f]) => f.layout === 'LEGACY').map(([f, id]) => ({ name: id, ...hook(f) }))],
      initContainers: [...sidecars.filter(([f]) => f.layout === 'NATIVE').map(([f, id]) => ({ name: id, restartPolicy: 'Always', ...hook(f) })), ...init],
    },
    exits,
    sidecars,
    unreadable,
  };
}

/**
 * What the budget counts per user native sidecar: the userSidecarStopTime given, else (docs/target.md,
 * "Inferred from the manifest") 10 s where a native sidecar of ours waits for them (1.29+), else nothing.
 */
function userStopCounted(facts: SidecarFacts[], minor: number, user: UserPod): number {
  const given = userSidecarStop(facts);
  if (given !== undefined) return given;
  return minor >= 29 && facts.some(f => f.layout === 'NATIVE') && user.init.some(c => c.restartPolicy === 'Always') ? DEFAULT_USER_SIDECAR_STOP : 0;
}

/** docs/target.md: the stop time counted for each of the user's native sidecars without userSidecarStopTime. */
const DEFAULT_USER_SIDECAR_STOP = 10;

/**
 * The seconds each app container takes after its SIGTERM (after its own preStop hook), as the docs
 * say the library takes it (docs/target.md, "Inferred from the manifest"): `appShutdownTime`; but
 * when no construct gives it and an app container has a preStop hook the library cannot read, or
 * the workload's own grace is below the need (not on a pod that completes), the workload's grace
 * (30 s when unset) is the app's budget in place of appShutdownTime's default; an app with a
 * readable preStop hook is taken to end no earlier than that.
 */
function appTime(facts: SidecarFacts[], minor: number, user: UserPod): number {
  const app = appShutdown(facts);
  if (facts.length === 0 || facts.some(f => f.appShutdownGiven)) return app;
  const unreadable = user.containers.some(unreadableHook);
  const low = user.grace !== undefined && !user.completes && user.grace < graceNeed(facts, minor, user, app);
  if (!unreadable && !low) return app;
  const budget = user.grace ?? KUBERNETES_DEFAULT_GRACE;
  // the vendor's number stands for the default; a readable preStop hook still runs in full before the app's shutdown
  return appEnd(user, 0, minor) > 0 ? app + Math.max(0, budget - appEnd(user, app, minor)) : budget;
}

/**
 * The seconds each app container takes after its SIGTERM for a scenario (`appTime`: the docs'
 * rule, with the need from the simulated kubelet), `baseline` being the workload synthesized
 * without sidecars (SidecarTimeline's property test).
 */
export function appTimeOf(s: Scenario, baseline: any): number {
  return appTime(orderedFacts(s, baseline.metadata.name), s.target.minor, userPod(s, baseline));
}

/** The user's native sidecars' stop time the constructs give (the largest), or undefined. */
export function userSidecarStop(facts: SidecarFacts[]): number | undefined {
  const given = facts.map(f => f.userSidecarStop).filter((x): x is number => x !== undefined);
  return given.length > 0 ? Math.max(...given) : undefined;
}

/** The sidecars that got SIGTERM before the app's last line (written when the last app container exits) was read. */
function lastLines(sim: Simulation, sidecars: Array<[SidecarFacts, string]>, appNames: string[], holdOf?: (id: string) => number): string[] {
  const exit = Math.max(0, ...appNames.map(n => sim.containers.get(n)?.exit ?? 0));
  return lastLineViolations(sim, sidecars, exit, holdOf);
}

/**
 * The grace period the pod needs, derived from the kubelet's termination order
 * (test/util/kubelet-termination.ts), not from the library's formula: the least one with which
 * no container is killed or stopped before its turn, and every sidecar gets SIGTERM only after
 * the app's last line (written when the app exits, after its own preStop hook and `app`
 * seconds of shutdown) is read.
 */
export function graceNeed(facts: SidecarFacts[], minor: number, user: UserPod, app = appTime(facts, minor, user)): number {
  const pod = modelPod(facts, user, minor, app);
  const appNames = pod.spec.containers.filter((c: any) => c.name.startsWith('app-')).map((c: any) => c.name);
  return leastGrace(
    { spec: pod.spec, minor, behaviour: id => ({ exitAfterSigterm: pod.exits.get(id)!, ...(pod.unreadable.has(id) ? { preStopSeconds: 0 } : {}) }) },
    sim => lastLines(sim, pod.sidecars, appNames),
  );
}

/**
 * The workload's own explicit grace period is above the need, and its pod does not complete
 * (README: then the rest is given to the app; a Job's is not, or every completed run would wait).
 */
function slackGoesToApp(facts: SidecarFacts[], minor: number, user: UserPod): boolean {
  return user.grace !== undefined && !user.completes && user.grace >= graceNeed(facts, minor, user);
}

/**
 * The longest the app may take after its SIGTERM with the workload's own explicit grace period
 * `grace`: the largest app time whose simulated need still fits (README: a grace period above
 * what the sidecars need is given to the app). Searched, not computed.
 */
function appTimeWithin(facts: SidecarFacts[], minor: number, user: UserPod, grace: number): number {
  let lo = appShutdown(facts);
  let hi = grace;
  if (graceNeed(facts, minor, user, lo) > grace) return lo;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (graceNeed(facts, minor, user, mid) <= grace) lo = mid; else hi = mid - 1;
  }
  return lo;
}

/**
 * The synthesized pod, terminated by the simulated kubelet with its grace period (and the
 * kubelet's 2-second minimum): no container is cut short, and the app's last line is read
 * before each sidecar's SIGTERM, whether the app takes its whole shutdown time or exits at once.
 */
export function terminationViolations(s: Scenario, baseline: any, out: any): string[] {
  const facts = orderedFacts(s, baseline.metadata.name);
  if (facts.length === 0 || facts.some(f => f.layout === undefined)) return [];
  const user = userPod(s, baseline);
  const app = appTime(facts, s.target.minor, user);
  const userStop = userStopCounted(facts, s.target.minor, user);
  const natives = new Set(user.init.filter(c => c.restartPolicy === 'Always').map(c => c.name));
  const appNames = (podSpecOf(out).containers ?? []).map((c: any) => c.name).filter((n: string) => user.containers.some(c => c.name === n));
  const unreadable = new Set(user.containers.filter(unreadableHook).map(c => c.name));
  // with the workload's own grace above the need, the app may take longer (README)
  const within = slackGoesToApp(facts, s.target.minor, user) ? appTimeWithin(facts, s.target.minor, user, user.grace!) : app;
  // Every sidecar (ours, and the user's own native ones) takes its whole stop time (what the grace
  // period must cover) or exits at once (what one that waits its turn after it must not rely
  // on), in every combination.
  const stoppable = [...facts.map(f => f.name), ...natives];
  const quick = (n: number): Array<Set<string>> => (n === 0 ? [new Set()] : quick(n - 1).flatMap(q => [q, new Set([...q, stoppable[n - 1]])]));
  const combinations = quick(stoppable.length);
  const violations = (spec: any): string[] => {
    const v: string[] = [];
    for (const appExit of new Set([within, app, Math.floor(app / 2), 0])) {
      for (const fast of combinations) {
        // the sidecars: their models; the user's own native sidecars: the userSidecarStopTime given (README); the app: appExit after its hook
        const behaviour = (name: string) => {
          const f = facts.find(x => x.name === name);
          // a held agent's wrapper (read from the manifest) waits its hold before the agent's own stop
          const hold = sigtermHoldOf([...(spec.initContainers ?? []), ...(spec.containers ?? [])].find((c: any) => c.name === name));
          const exitAfterSigterm = hold + (fast.has(name) ? 0 : f ? f.stopSeconds : natives.has(name) ? userStop : appExit);
          return { exitAfterSigterm, ...(unreadable.has(name) ? { preStopSeconds: 0 } : {}) };
        };
        const sim = simulateTermination({ spec, minor: s.target.minor, behaviour });
        const when = `app exits ${appExit}s after its SIGTERM${fast.size > 0 ? `, ${[...fast].map(n => `'${n}'`).join(', ')} at once after theirs` : ''}`;
        const holdOf = (name: string) => sigtermHoldOf([...(spec.initContainers ?? []), ...(spec.containers ?? [])]
          .find((c: any) => c.name === name));
        for (const x of [...cutShort(sim), ...lastLines(sim, facts.map(f => [f, f.name]), appNames, holdOf)]) v.push(`${when}: ${x}`);
      }
    }
    return [...new Set(v)];
  };
  const spec = podSpecOf(out);
  const v = violations(spec);
  if (v.length > 0) return v;
  // No sidecar's preStop delay is longer than needed: with a second less, something above
  // breaks. (Together: each delay is exactly what the kubelet's order needs, and there is a
  // delay exactly where one is needed, without restating when that is.)
  for (const f of facts) {
    const list = f.layout === 'NATIVE' ? 'initContainers' : 'containers';
    const i = (spec[list] ?? []).findIndex((c: any) => c.name === f.name);
    const hook = spec[list]?.[i]?.lifecycle?.preStop;
    const seconds = hookSleep(hook);
    if (seconds === undefined || !(seconds > 0)) continue;
    const shorter = structuredClone(spec);
    shorter[list][i].lifecycle.preStop = shortenedSleep(hook, 1);
    if (violations(shorter).length === 0) v.push(`'${f.name}': its preStop delay of ${seconds}s is longer than needed (${seconds - 1}s breaks nothing)`);
  }
  return v;
}

/** The user's containers / init containers / volumes of the workload (from the baseline synth). */
interface UserPod {
  readonly where: string;
  readonly containers: any[];
  readonly init: any[];
  readonly volumes: string[];
  /** terminationGracePeriodSeconds as the user set it; undefined when unset (or cdk8s-plus's default 30). */
  readonly grace?: number;
  /** The value the workload has before the library touches it. */
  readonly graceWritten?: number;
  /** Its pods are meant to complete (a Job's, a CronJob's, a bare Pod's with restartPolicy other than Always). */
  readonly completes: boolean;
}

function userPod(s: Scenario, baseline: any): UserPod {
  const spec = podSpecOf(baseline);
  const written: number | undefined = spec.terminationGracePeriodSeconds;
  // cdk8s-plus-27 writes 30 when its prop is unset; on its workloads 30 means "unset" (documented in sidecar.ts)
  const grace = s.workload.flavor === 'kplus' && written === KUBERNETES_DEFAULT_GRACE ? undefined : written;
  return {
    where: `${baseline.kind} '${baseline.metadata.name}'`,
    containers: spec.containers ?? [],
    init: spec.initContainers ?? [],
    volumes: (spec.volumes ?? []).map((v: any) => v.name),
    grace,
    graceWritten: written,
    completes: COMPLETING_KINDS.has(baseline.kind) || (baseline.kind === 'Pod' && spec.restartPolicy !== undefined && spec.restartPolicy !== 'Always'),
  };
}

function esc(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A value named in a message: quoted, or standing alone (not part of a longer name, number, version or path). */
function valueRe(value: string | number): string {
  const v = esc(String(value));
  return `(?:'${v}'|(?<![\\w./-])${v}(?![\\w-]|\\.\\w))`;
}

/** The message says what to do: a clause that starts with an imperative ("; set ...", ". Raise ...", "Either move ..."). */
const FIX = '(?=.*(?:[.;:(] |, or |Either )(?:[Ss]et|[Uu]se|[Aa]dd|[Rr]aise|[Rr]emove|[Mm]ove|[Rr]ename|[Tt]arget|[Gg]ive|[Cc]hoose|[Dd]eclare|[Ss]horten|[Aa]ttach|[Dd]rop)\\b)';

/**
 * A reported error, by what it must say rather than how: it starts with `who` (the construct's
 * description, which holds its path, or the workload's), names each of `values` (the bad value,
 * the field it is in), and says what to do. The exact wording of every message is pinned in the
 * bad-input catalogue (test/bad-input.test.ts), not here.
 */
function errorPattern(who: string, values: Array<string | number>, o: { prefix?: string; fix?: boolean } = {}): string {
  return `^${o.prefix ?? ''}${esc(who)}: ${values.map(x => `(?=.*${valueRe(x)})`).join('')}${o.fix === false ? '' : FIX}`;
}

/** One expected error, as a pattern that names the construct or workload, the bad value and the fix. */
export interface ExpectedError {
  readonly pattern: RegExp;
  /** The kind of mistake (for coverage statistics). */
  readonly category: string;
  /** The mistake, with its values. */
  readonly why: string;
  /**
   * Allowed but not required: the model cannot tell whether the output would have had the hook
   * tools (the scenario with the user's clashing name renamed failed too).
   */
  readonly optional?: boolean;
}

/**
 * The errors synthesis must report for a scenario (empty: it must succeed). `baseline` is the
 * workload's manifest synthesized without the sidecars. `tools`: whether the output has the hook
 * tools, as seen on the synthesized output of the same scenario with every user name
 * 'sidecar-tools' renamed (`renameToolsClashes`); undefined when that failed too, or was not needed.
 */
export function expectedErrors(s: Scenario, baseline: any, tools?: boolean): ExpectedError[] {
  const user = userPod(s, baseline);
  const facts = orderedFacts(s, baseline.metadata.name);
  const W = user.where;
  const out: ExpectedError[] = [];
  const add = (category: string, detail: string, pattern: string, optional = false) =>
    out.push({ category, why: `${category}: ${detail}`, pattern: new RegExp(pattern), ...(optional ? { optional } : {}) });
  // The user's own native sidecars on a target that drops the field (the rules of the result)
  const userNativeErrors = () => {
    if (nativeWorks(s.target)) return;
    for (const c of user.init.filter(x => x.restartPolicy === 'Always')) {
      // reported by the binding, or (no sidecars) by SidecarValidation (naming itself and its release) under the object's path
      const prefix = `(?:SidecarValidation\\.addTo\\([^)]*\\), Kubernetes 1\\.\\d+: )?(?:${esc(CHART_ID)}/\\S+: )?`;
      add('user\'s native sidecar on a target without native sidecars', c.name, errorPattern(W, [c.name, 'Always', `1.${s.target.minor}`], { prefix }));
    }
  };
  if (s.sidecars.length === 0) {
    if (s.target.validate) userNativeErrors();
    return out;
  }

  // Constructor errors: the first construct (in creation order) with one throws, nothing else runs.
  for (const sc of s.sidecars) {
    const f = facts.find(x => x.type === sc.type)!;
    for (const resource of ['cpu', 'memory'] as const) {
      const request = f.resources.requests[resource];
      const limit = f.resources.limits[resource];
      if (quantity(request) > quantity(limit)) {
        add('resource request above its limit', `${resource} ${request} > ${limit}`, errorPattern(f.owner, [`resources.${resource}`, request, limit]));
        return out;
      }
    }
  }

  // WithEnvoy's own check of the app's side (src/with-envoy.ts checkAppContainers): when the app's
  // containers declare ports, appPort must be one of them. (The generated containers declare
  // their ports with `ports`, which adds no probe, so the probe check never fires here.) It is a
  // validation of its own: reported whatever the layout decision says.
  const declared = user.containers.flatMap((c: any) => (c.ports ?? []).map((p: any) => p.containerPort as number));
  for (const f of facts) {
    for (const p of f.appPorts) {
      if (declared.length > 0 && !declared.includes(p)) {
        add('appPort is none of the declared ports', String(p), errorPattern(f.owner, ['appPort', p]));
      }
    }
  }
  // The layout decision fails first: the engine then does not run.
  const beforeLayout = out.length;
  for (const f of facts) {
    if (f.layout !== undefined) continue;
    add('NATIVE mode where it cannot run', `1.${s.target.minor}`, errorPattern(f.owner, ['NATIVE', `1.${s.target.minor}`]));
  }
  if (out.length > beforeLayout) return out;

  if (user.containers.length === 0) {
    add('no app containers', user.where, errorPattern(W, ['spec.containers']));
  }
  const userNames = new Set([...user.containers, ...user.init].map(c => c.name));
  const sidecarNames = new Map<string, string>();
  for (const f of facts) {
    if (userNames.has(f.name)) {
      add('sidecar name is a user container\'s', f.name, errorPattern(f.owner, [f.name]));
    }
    const other = sidecarNames.get(f.name);
    if (other !== undefined) {
      add('two sidecars with one name', f.name, errorPattern(f.owner, [f.name]));
    }
    sidecarNames.set(f.name, f.owner);
    if (f.name === TOOLS_NAME) {
      add('reserved container name', f.name, errorPattern(f.owner, [f.name]));
    }
  }
  const sidecarVolumes = new Map<string, string>();
  for (const f of facts) {
    for (const v of f.volumes) {
      if (user.volumes.includes(v) || v === TOOLS_NAME) {
        add('sidecar volume is a user volume\'s name', v, errorPattern(f.owner, [v]));
      }
      const other = sidecarVolumes.get(v);
      if (other !== undefined) {
        add('two sidecars with one volume name', v, errorPattern(f.owner, [v]));
      }
      sidecarVolumes.set(v, f.owner);
    }
  }
  const userPorts = new Set<number>();
  for (const c of [...user.containers, ...user.init]) for (const p of c.ports ?? []) userPorts.add(p.containerPort);
  const sidecarPorts = new Map<number, string>();
  for (const f of facts) {
    for (const p of new Set(f.ports)) {
      if (userPorts.has(p)) {
        add('sidecar port is a user container\'s', String(p), errorPattern(f.owner, [p]));
      }
      const other = sidecarPorts.get(p);
      if (other !== undefined) {
        add('two sidecars bind one port', String(p), errorPattern(f.owner, [p]));
      }
      sidecarPorts.set(p, f.name);
    }
  }
  for (const f of facts) {
    for (const p of f.appPorts) {
      for (const o of facts.filter(x => x !== f && x.ports.includes(p))) {
        add('the app\'s port is bound by another sidecar', `${p} ${o.name}`, errorPattern(f.owner, [p, o.name]));
      }
    }
  }
  for (const f of facts) {
    for (const m of f.appMounts) {
      for (const c of user.containers) {
        const clash = (c.volumeMounts ?? []).find((x: any) => x.mountPath === m.mountPath && x.name !== m.name);
        if (clash) {
          add('log directory is a user mount', m.mountPath, errorPattern(f.owner, [m.mountPath, c.name]));
        }
      }
    }
  }
  if (COMPLETING_KINDS.has(baseline.kind)) {
    // A legacy sidecar never exits by itself. With restartPolicy Never the library's own agents
    // (their program known) run under a wrapper that exits with the app; refused (docs/shutdown.md,
    // "A legacy sidecar on a Job") with OnFailure (a failed app is restarted in place and the
    // wrapper cannot tell a failed try from the last) and for a sidecar that holds the app (it
    // starts before the app, so it cannot tell "not started" from "exited").
    const never = podSpecOf(baseline)?.restartPolicy === 'Never';
    for (const f of facts) {
      if (f.layout === 'LEGACY' && !f.allowLegacyOnJob && (!never || f.hold)) {
        add('legacy sidecar on a Job', f.name, errorPattern(f.owner, ['legacy', W]));
      }
    }
  }
  // An app preStop hook the library cannot read and the user's own native sidecars without
  // userSidecarStopTime are inferred (docs/target.md), not errors; a grace period below the need
  // is an error only where a construct said how long the app takes (appShutdownTime).
  const need = graceNeed(facts, s.target.minor, user);
  if (user.grace !== undefined && user.grace < need && facts.some(f => f.appShutdownGiven)) {
    add('grace period set too low', `${user.grace} < ${need}`, errorPattern(W, ['terminationGracePeriodSeconds', user.grace, need]));
  }

  // The API server's rules on the result: duplicates the library would emit, the user's own mistakes.
  userNativeErrors();
  // The hook tools' names, where the output has the tools (unknown: allowed, not required).
  if (tools !== false) {
    const optional = tools === undefined;
    for (const c of [...user.containers, ...user.init].filter(x => x.name === TOOLS_NAME)) {
      add('a user container has the tools\' name', c.name, errorPattern(W, [TOOLS_NAME]), optional);
    }
    if (user.volumes.includes(TOOLS_NAME)) {
      add('a user volume has the tools\' name', TOOLS_NAME, errorPattern(W, [TOOLS_NAME]), optional);
    }
  }
  // Names used twice in the result: the library's and the user's, and the tools' once more where the output has them.
  const duplicates = (category: string, values: string[]) => {
    for (const [name, count] of countOf(values)) {
      const counts = name !== TOOLS_NAME || tools === false ? [count] : tools ? [count + 1] : [count, count + 1];
      for (const n of counts.filter(x => x > 1)) add(category, name, errorPattern(W, [name, n], { fix: false }), counts.length > 1);
    }
  };
  // (a sidecar's name used twice is reported once, as its cause above: README, issue 27)
  const sidecarNameSet = new Set(facts.map(f => f.name));
  duplicates('duplicate container name in the result', [...facts.map(f => f.name), ...[...user.init, ...user.containers].map(c => c.name)]
    .filter(n => !sidecarNameSet.has(n)));
  duplicates('duplicate volume name in the result', [...user.volumes, ...facts.flatMap(f => f.volumes)]);
  return out;
}

function countOf(values: string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const v of values) m.set(v, (m.get(v) ?? 0) + 1);
  return m;
}

/**
 * The single error lines of a failed synthesis ("Validation failed with the following errors:
 * [path] message", one per line), without the construct-path prefix.
 */
export function errorLines(message: string): string[] {
  const lines = message.split('\n');
  if (!lines[0].startsWith('Validation failed with the following errors:')) return [message];
  return lines.slice(1).map(l => l.replace(/^ {2}\[[^\]]*\] /, ''));
}

/** Every reported error is expected and every expected error is reported. */
export function errorViolations(message: string, expected: ExpectedError[]): string[] {
  const v: string[] = [];
  const lines = errorLines(message);
  for (const line of lines) {
    if (!expected.some(e => e.pattern.test(line))) v.push(`unexpected error: ${line}`);
  }
  for (const e of expected) {
    if (!e.optional && !lines.some(l => e.pattern.test(l))) v.push(`missing error (${e.why}): ${e.pattern}`);
  }
  return v;
}

// ---------------------------------------------------------------------------
// Invariants of a successful synthesis
// ---------------------------------------------------------------------------

/** Canonical JSON (keys sorted), for comparisons that ignore key order. */
export function canonical(x: any): string {
  return JSON.stringify(x, (_k, v) => (v && typeof v === 'object' && !Array.isArray(v)
    ? Object.fromEntries(Object.keys(v).sort().map(k => [k, v[k]]))
    : v));
}

function same(a: any, b: any): boolean {
  return canonical(a) === canonical(b);
}

const IANA_SVC_NAME = /^(?=.*[a-z])(?!.*--)[a-z0-9]([a-z0-9-]{0,13}[a-z0-9])?$/;

/**
 * API server rules that neither the schema nor the library's rules module check, on every
 * container of the result: mount paths and port names unique per container, port names valid
 * IANA service names, requests not above limits.
 */
export function moreApiRuleViolations(workload: any): string[] {
  const v: string[] = [];
  const spec = podSpecOf(workload);
  for (const c of [...(spec.initContainers ?? []), ...(spec.containers ?? [])]) {
    const at = `container '${c.name}'`;
    const paths = (c.volumeMounts ?? []).map((m: any) => m.mountPath);
    for (const p of new Set(paths)) if (paths.filter((x: string) => x === p).length > 1) v.push(`${at}: mountPath ${p} is not unique`);
    const portNames = (c.ports ?? []).map((p: any) => p.name).filter((n: any) => n !== undefined);
    for (const n of portNames) {
      if (!IANA_SVC_NAME.test(n)) v.push(`${at}: port name '${n}' is not an IANA service name`);
      if (portNames.filter((x: string) => x === n).length > 1) v.push(`${at}: port name '${n}' is not unique`);
    }
    for (const r of ['cpu', 'memory']) {
      const req = c.resources?.requests?.[r];
      const lim = c.resources?.limits?.[r];
      if (req !== undefined && lim !== undefined && quantity(req) > quantity(lim)) v.push(`${at}: ${r} request ${req} is above its limit ${lim}`);
    }
  }
  return v;
}

/** A Kubernetes quantity ('500m', '1', '1.5', '64Mi', '1Gi') as a number (cpu in cores, memory in bytes). */
function quantity(q: string | number): number {
  const m = /^(\d+(?:\.\d+)?)(m|Ki|Mi|Gi)?$/.exec(String(q));
  if (!m) return NaN;
  const scale: Record<string, number> = { m: 0.001, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30 };
  return Number(m[1]) * (m[2] ? scale[m[2]] : 1);
}

/** Strict schema of the target release, for every manifest. */
export function schemaViolations(manifests: any[], minor: number): string[] {
  return manifests.flatMap(m => schemaErrors(m, `1.${minor}`));
}

/** The API server's rules (SIDECARS.md §4) and the target's fields, through the public entry point. */
export function apiRuleViolations(s: Scenario, workload: any): string[] {
  const v = SidecarValidation.checkManifest(workload, s.target.versionText, s.target.gate);
  const spec = podSpecOf(workload);
  // spec.containers is required and may not be empty (a workload without sidecars is the user's own business)
  if (s.sidecars.length > 0 && (!Array.isArray(spec.containers) || spec.containers.length === 0)) {
    v.push('spec.containers is empty: the API server rejects the pod');
  }
  return v;
}

const names = (cs: any[] = []) => cs.map(c => c.name);

/**
 * The library's legacy sidecars that exit with the app (docs/shutdown.md, "A legacy sidecar on a
 * Job"): on a pod that completes with restartPolicy Never, every legacy sidecar the app does not
 * stop itself (allowLegacyOnJob) and that does not hold the app runs under the tools' busybox
 * wrapper, the pod sharing its process namespace.
 */
function exitingWithApp(facts: SidecarFacts[], baseline: any): SidecarFacts[] {
  if (!COMPLETING_KINDS.has(baseline.kind) || podSpecOf(baseline)?.restartPolicy !== 'Never') return [];
  return facts.filter(f => f.layout === 'LEGACY' && !f.allowLegacyOnJob && !f.hold);
}

/** A container whose command (the exit-with-app wrapper) or hooks run the tools' busybox. */
export function runsTools(c: any): boolean {
  return usesTools(c) || String(c.command?.[0] ?? '').startsWith(`${TOOLS_PATH}/`);
}

/**
 * Layout, order and contents: each sidecar exactly once in the layout the matrix demands, in the
 * documented order; the user's containers, init containers and volumes unchanged except for the
 * documented additions; everything outside the pod template unchanged.
 */
export function layoutViolations(s: Scenario, baseline: any, out: any): string[] {
  const v: string[] = [];
  const minor = s.target.minor;
  const facts = orderedFacts(s, baseline.metadata.name);
  const user = userPod(s, baseline);
  const spec = podSpecOf(out);
  const init: any[] = spec.initContainers ?? [];
  const containers: any[] = spec.containers ?? [];

  if (facts.length === 0) {
    if (!same(baseline, out)) v.push('a workload without sidecars changed');
    return v;
  }

  // Each sidecar exactly once, in its layout.
  for (const f of facts) {
    const inInit = init.filter(c => c.name === f.name).length;
    const inContainers = containers.filter(c => c.name === f.name).length;
    const [want, other] = f.layout === 'NATIVE' ? [inInit, inContainers] : [inContainers, inInit];
    if (want !== 1 || other !== 0) v.push(`${f.owner}: expected once in ${f.layout === 'NATIVE' ? 'initContainers' : 'containers'}, found ${inInit} in initContainers and ${inContainers} in containers`);
  }

  // initContainers: [tools], native sidecars by rank, then the user's init containers unchanged.
  // (Whether the tools are there is the output's own business: addedContainerViolations checks
  // that they are there exactly when a hook runs them, and what the hooks may run.)
  const tools = addedContainers(user, out).some(runsTools) ? 1 : 0;
  const native = facts.filter(f => f.layout === 'NATIVE');
  const expectedInit = [...(tools ? [TOOLS_NAME] : []), ...native.map(f => f.name), ...names(user.init)];
  if (!same(names(init), expectedInit)) v.push(`initContainers are ${canonical(names(init))}, expected ${canonical(expectedInit)}`);
  user.init.forEach((c, i) => {
    const got = init[tools + native.length + i];
    if (!same(got, c)) v.push(`user init container '${c.name}' changed: ${canonical(got)} != ${canonical(c)}`);
  });

  // containers: legacy sidecars that hold the app first, then the app containers, then the other legacy sidecars by rank.
  const legacy = facts.filter(f => f.layout === 'LEGACY');
  const first = legacy.filter(f => f.hold);
  const last = legacy.filter(f => !f.hold);
  const expectedContainers = [...first.map(f => f.name), ...names(user.containers), ...last.map(f => f.name)];
  if (!same(names(containers), expectedContainers)) v.push(`containers are ${canonical(names(containers))}, expected ${canonical(expectedContainers)}`);
  user.containers.forEach((c, i) => {
    const got = containers[first.length + i];
    if (got) v.push(...wiringViolations(c, got, facts));
  });

  // volumes: the user's unchanged and first, then the sidecars' by rank, then the tools'.
  const volumes: any[] = spec.volumes ?? [];
  const baseVolumes: any[] = podSpecOf(baseline).volumes ?? [];
  const expectedVolumes = [...baseVolumes.map(x => x.name), ...facts.flatMap(f => f.volumes), ...(tools ? [TOOLS_NAME] : [])];
  if (!same(names(volumes), expectedVolumes)) v.push(`volumes are ${canonical(names(volumes))}, expected ${canonical(expectedVolumes)}`);
  baseVolumes.forEach((b, i) => {
    if (!same(volumes[i], b)) v.push(`user volume '${b.name}' changed`);
  });

  // The rest of the pod spec: unchanged but for the grace period (and the shared process
  // namespace of a pod whose legacy sidecars exit with the app).
  const baseSpec = podSpecOf(baseline);
  const exiting = exitingWithApp(facts, baseline);
  if (exiting.length > 0 && baseSpec.shareProcessNamespace === undefined && spec.shareProcessNamespace !== true) {
    v.push(`${exiting.map(f => f.name).join(', ')} exit with the app, but shareProcessNamespace is ${canonical(spec.shareProcessNamespace)}`);
  }
  for (const f of exiting) {
    const c = containers.find(x => x.name === f.name);
    if (c && !(c.command?.[0] === `${TOOLS_PATH}/busybox` && c.command?.[1] === 'sh' && c.command?.[2] === '-c' && c.command?.[4] === 'sh' && c.args === undefined)) {
      v.push(`${f.owner}: exits with the app, but its command is not the wrapper: ${canonical(c.command)} ${canonical(c.args)}`);
    }
  }
  for (const key of new Set([...Object.keys(baseSpec), ...Object.keys(spec)])) {
    if (['containers', 'initContainers', 'volumes', 'terminationGracePeriodSeconds'].includes(key)) continue;
    if (key === 'shareProcessNamespace' && exiting.length > 0 && baseSpec[key] === undefined) continue;
    if (!same(baseSpec[key], spec[key])) v.push(`pod spec field ${key} changed: ${canonical(spec[key])} != ${canonical(baseSpec[key])}`);
  }
  const need = graceNeed(facts, minor, user);
  const grace = spec.terminationGracePeriodSeconds;
  if (user.grace !== undefined && user.grace < need) {
    // below the need (no appShutdownTime, or it is an error): raised to what the simulated termination needs (docs/target.md)
    if (grace !== need) v.push(`terminationGracePeriodSeconds set by the user (${user.grace}) below the need is ${grace}, expected the simulated ${need} s`);
  } else if (user.grace !== undefined) {
    if (grace !== user.grace) v.push(`terminationGracePeriodSeconds set by the user (${user.grace}) became ${grace}`);
  } else if (need > (user.graceWritten ?? KUBERNETES_DEFAULT_GRACE)) {
    if (grace !== need) v.push(`terminationGracePeriodSeconds is ${grace}, expected the ${need} s the simulated termination needs`);
  } else if (grace !== user.graceWritten) {
    // nothing needs more than the pod gets anyway: emit only what changes behaviour
    v.push(`terminationGracePeriodSeconds is ${grace}, expected it unchanged (${user.graceWritten}): the pod needs only ${need} s`);
  }

  // Pod template metadata: the user's, plus one checksum annotation per sidecar, the sidecars' stop
  // times, plus (native layout) the guard's marker listing the native sidecars in initContainers order.
  const meta = podMetadataOf(out);
  const baseMeta = podMetadataOf(baseline);
  const annotations = { ...(meta.annotations ?? {}) };
  for (const f of facts) {
    if (typeof annotations[CHECKSUM_PREFIX + f.name] !== 'string') v.push(`no checksum annotation for '${f.name}'`);
    delete annotations[CHECKSUM_PREFIX + f.name];
  }
  const marker = native.map(f => f.name).join(',');
  if ((annotations[NATIVE_MARKER] ?? '') !== marker) v.push(`annotation ${NATIVE_MARKER} is ${canonical(annotations[NATIVE_MARKER])}, expected '${marker}'`);
  delete annotations[NATIVE_MARKER];
  // Each sidecar's stop time (issue 40, sidecars.cdk8s.io/stop-times): every sidecar once, with the
  // stop time of its shutdown model (the order is the engine's: checked by the timeline tests).
  const STOP_TIMES = 'sidecars.cdk8s.io/stop-times';
  const recorded = String(annotations[STOP_TIMES] ?? '').split(',').filter(e => e !== '').sort();
  // (a native agent held back by its wrapper, Vector from 1.29: the hold is part of its stop time, issue 39)
  const expectedStops = facts.map(f => `${f.name}=${nativeHoldOf(f, s.target.minor) + f.stopSeconds}s`);
  // the user's own native sidecars, with the userSidecarStopTime given (issue 48: the timeline of
  // the manifest reads it; without one it takes the worst case, as SidecarTimeline.of does)
  const userNatives: string[] = (baseSpec.initContainers ?? []).filter((c: any) => c.restartPolicy === 'Always').map((c: any) => c.name);
  const givenUserStop = userSidecarStop(facts);
  if (facts.length > 0 && givenUserStop !== undefined) expectedStops.push(...userNatives.map(n => `${n}=${givenUserStop}s`));
  expectedStops.sort();
  if (!same(recorded, expectedStops)) v.push(`annotation ${STOP_TIMES} is ${canonical(annotations[STOP_TIMES])}, expected the entries ${canonical(expectedStops)}`);
  delete annotations[STOP_TIMES];
  // the app's budget the sidecars were placed by (issue 48, sidecars.cdk8s.io/app-shutdown-time): the docs' rule (appTime)
  const APP_SHUTDOWN = 'sidecars.cdk8s.io/app-shutdown-time';
  const expectedApp = facts.length > 0 ? `${appTime(facts, s.target.minor, user)}s` : undefined;
  if (annotations[APP_SHUTDOWN] !== expectedApp) v.push(`annotation ${APP_SHUTDOWN} is ${canonical(annotations[APP_SHUTDOWN])}, expected ${canonical(expectedApp)}`);
  delete annotations[APP_SHUTDOWN];
  // kubectl's default container: the app, when a sidecar is first in spec.containers and the
  // user did not choose one (kubectl reads kubectl.kubernetes.io/default-container).
  const DEFAULT_CONTAINER = 'kubectl.kubernetes.io/default-container';
  const sidecarNames = new Set(facts.map(f => f.name));
  const firstIsSidecar = (spec.containers ?? []).length > 0 && sidecarNames.has(spec.containers[0].name);
  if (firstIsSidecar && baseMeta.annotations?.[DEFAULT_CONTAINER] === undefined) {
    const app = spec.containers.find((c: any) => !sidecarNames.has(c.name));
    if (annotations[DEFAULT_CONTAINER] !== app?.name) v.push(`${DEFAULT_CONTAINER} is ${annotations[DEFAULT_CONTAINER]}, expected the app '${app?.name}'`);
    delete annotations[DEFAULT_CONTAINER];
  }
  if (!same(annotations, baseMeta.annotations ?? {})) v.push(`pod template annotations changed: ${canonical(annotations)} != ${canonical(baseMeta.annotations ?? {})}`);

  // Everything outside the pod template: unchanged.
  const strip = (m: any) => {
    const c = structuredClone(m);
    const pm = podMetadataOf(c);
    delete pm.annotations;
    delete podSpecOf(c).containers;
    delete podSpecOf(c).initContainers;
    delete podSpecOf(c).volumes;
    delete podSpecOf(c).terminationGracePeriodSeconds;
    // (checked above)
    delete podSpecOf(c).shareProcessNamespace;
    if (m.kind === 'Pod') {
      // checked above with the pod template's annotations
      c.metadata.annotations = Object.fromEntries(Object.entries(m.metadata.annotations ?? {})
        .filter(([k]) => !k.startsWith(CHECKSUM_PREFIX) && k !== NATIVE_MARKER && k !== DEFAULT_CONTAINER && k !== STOP_TIMES && k !== APP_SHUTDOWN));
    }
    return c;
  };
  if (!same(strip(baseline), strip(out))) v.push(`the workload changed outside the pod template: ${canonical(strip(out))} != ${canonical(strip(baseline))}`);
  return v;
}

/** An app container: unchanged but for the documented mounts and env, appended; the user's env wins. */
function wiringViolations(base: any, got: any, facts: SidecarFacts[]): string[] {
  const v: string[] = [];
  const at = `app container '${base.name}'`;
  const mounts: any[] = [...(base.volumeMounts ?? [])];
  const env: any[] = [...(base.env ?? [])];
  const added: Array<[string, SidecarFacts]> = [];
  for (const f of facts) {
    for (const m of f.appMounts) {
      if (!mounts.some(x => x.mountPath === m.mountPath && x.name === m.name)) mounts.push(m);
    }
    for (const name of f.appEnv) {
      if (!env.some(x => x.name === name)) {
        env.push({ name });
        added.push([name, f]);
      }
    }
  }
  for (const key of new Set([...Object.keys(base), ...Object.keys(got)])) {
    if (key === 'env' || key === 'volumeMounts') continue;
    if (!same(base[key], got[key])) v.push(`${at}: field ${key} changed`);
  }
  if (!same(got.volumeMounts ?? [], mounts)) v.push(`${at}: volumeMounts ${canonical(got.volumeMounts ?? [])}, expected ${canonical(mounts)}`);
  const gotEnv: any[] = got.env ?? [];
  if (!same(names(gotEnv), names(env))) v.push(`${at}: env names ${canonical(names(gotEnv))}, expected ${canonical(names(env))}`);
  (base.env ?? []).forEach((e: any, i: number) => {
    if (!same(gotEnv[i], e)) v.push(`${at}: the user's env ${e.name} changed`);
  });
  for (const [name, f] of added) {
    const e = gotEnv.find(x => x.name === name);
    if (!e) continue;
    const want = f.appEnvValues[name];
    if (want !== undefined && e.value !== want) v.push(`${at}: ${name} is ${JSON.stringify(e.value)}, expected ${JSON.stringify(want)}`);
  }
  // $(VAR) in an added value refers only to variables defined before it (the kubelet expands in order)
  gotEnv.forEach((e, i) => {
    if (!added.some(([n]) => n === e.name) || typeof e.value !== 'string') return;
    for (const m of e.value.replace(/\$\$/g, '').matchAll(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g)) {
      if (!gotEnv.slice(0, i).some(x => x.name === m[1])) v.push(`${at}: ${e.name} refers to $(${m[1]}), which is not defined before it`);
    }
  });
  return v;
}

/** The containers of the output that are not the user's. */
function addedContainers(user: UserPod, out: any): any[] {
  const spec = podSpecOf(out);
  const userNames = new Set([...user.containers, ...user.init].map(c => c.name));
  return [...(spec.initContainers ?? []), ...(spec.containers ?? [])].filter(c => !userNames.has(c.name));
}

/**
 * The containers the library adds: restricted profile, resources, probes and hooks per layout,
 * the tools wired where a hook uses them, allowed volume types.
 */
export function addedContainerViolations(s: Scenario, baseline: any, out: any): string[] {
  const v: string[] = [];
  const minor = s.target.minor;
  const facts = orderedFacts(s, baseline.metadata.name);
  if (facts.length === 0) return v;
  const user = userPod(s, baseline);
  const spec = podSpecOf(out);
  const all: any[] = [...(spec.initContainers ?? []), ...(spec.containers ?? [])];
  const userNames = new Set([...user.containers, ...user.init].map(c => c.name));
  const added = addedContainers(user, out);

  for (const c of added) {
    for (const p of restrictedViolations(c, {})) v.push(`restricted profile: ${p}`);
    for (const kind of ['requests', 'limits']) {
      for (const r of ['cpu', 'memory']) {
        if (c.resources?.[kind]?.[r] === undefined) v.push(`container '${c.name}' has no ${kind}.${r}`);
      }
    }
    // hooks run only what exists, a sleep action only where the target has it (test/util/hooks.ts)
    v.push(...hookViolations(c, minor));
    if (runsTools(c) && !(c.volumeMounts ?? []).some((m: any) => m.name === TOOLS_NAME && m.mountPath === TOOLS_PATH && m.readOnly === true)) {
      v.push(`container '${c.name}' runs ${TOOLS_PATH} (a hook, or the exit-with-app wrapper) but does not mount it read-only`);
    }
  }
  // The tools init container: there exactly when a hook of an added container runs the tools,
  // first (it must have copied busybox before any hook can run), a plain init container.
  const toolsUsed = added.some(runsTools);
  // (a user's own init container may carry the name when the library needs no tools)
  const toolsContainer = userNames.has(TOOLS_NAME) ? -1 : (spec.initContainers ?? []).findIndex((c: any) => c.name === TOOLS_NAME);
  if (toolsUsed !== (toolsContainer === 0)) v.push(`hooks ${toolsUsed ? 'use' : 'do not use'} the tools, but the tools init container is at ${toolsContainer}`);
  if (toolsContainer >= 0) {
    const t = spec.initContainers[toolsContainer];
    if (t.restartPolicy !== undefined) v.push('the tools init container has a restartPolicy');
    if (!(t.volumeMounts ?? []).some((m: any) => m.name === TOOLS_NAME && m.mountPath === TOOLS_PATH && !m.readOnly)) v.push('the tools init container does not mount the tools volume writable');
    if (!(spec.volumes ?? []).some((x: any) => x.name === TOOLS_NAME && x.emptyDir)) v.push('no emptyDir volume for the tools');
  }

  const containers: any[] = spec.containers ?? [];
  const firstApp = containers.findIndex(c => userNames.has(c.name));
  for (const f of facts) {
    const c = all.find(x => x.name === f.name);
    if (!c) continue;
    const at = `${f.owner} (${f.layout})`;
    if (!same(c.resources, f.resources)) v.push(`${at}: resources ${canonical(c.resources)}, expected ${canonical(f.resources)}`);
    if (f.layout === 'NATIVE') {
      if (c.restartPolicy !== 'Always') v.push(`${at}: restartPolicy is ${c.restartPolicy}`);
      if (!c.startupProbe) v.push(`${at}: no startupProbe (the app would start before the sidecar is ready)`);
    } else if (c.restartPolicy !== undefined) {
      v.push(`${at}: a regular container with restartPolicy`);
    }
    // Only the proxy is in the request path: its readiness counts toward the pod's. An agent's
    // must not (a log or telemetry backend outage would take the app out of its Services).
    const inRequestPath = f.ctor === 'WithEnvoy';
    if (inRequestPath && !c.readinessProbe) v.push(`${at}: no readinessProbe`);
    if (!inRequestPath && c.readinessProbe) v.push(`${at}: a readinessProbe on an agent outside the request path`);
    // Every agent is restarted when it hangs (issue 28): a livenessProbe on its health port (the
    // one the kubelet reaches), in both layouts, never on Envoy's admin port.
    // Not a legacy one of a restartPolicy Never pod: never restarted, a failed probe would only kill it
    // and fail the pod (docs/shutdown.md "A legacy sidecar on a Job").
    const livePort = c.livenessProbe?.httpGet?.port;
    if (f.layout === 'LEGACY' && spec.restartPolicy === 'Never') {
      if (c.livenessProbe !== undefined) v.push(`${at}: a livenessProbe on a legacy sidecar of a restartPolicy Never pod (never restarted)`);
    } else if (livePort !== f.healthPort) {
      v.push(`${at}: livenessProbe on port ${livePort}, not on the health port ${f.healthPort}`);
    }
    // A regular container before the app holds it back only with a postStart hook that waits
    // until the sidecar is ready: the kubelet starts the next container when it returns
    // (docs/envoy.md, legacy hold: up to 60 s on http://127.0.0.1:15021/ready).
    const index = containers.indexOf(c);
    if (index >= 0 && firstApp >= 0 && index < firstApp) {
      const waits = JSON.stringify(c.lifecycle?.postStart ?? {}).includes(`http://127.0.0.1:${f.healthPort}/`);
      if (!waits) v.push(`${at}: before the app in spec.containers without a postStart that waits on its health port ${f.healthPort}`);
    }
    // Envoy's preStop (docs/envoy.md): POST /healthcheck/fail, then /drain_listeners, on its admin port.
    if (f.adminPort !== undefined) {
      const script = JSON.stringify(c.lifecycle?.preStop?.exec?.command ?? []);
      const fail = script.indexOf(`http://127.0.0.1:${f.adminPort}/healthcheck/fail`);
      const drain = script.indexOf(`http://127.0.0.1:${f.adminPort}/drain_listeners?inboundonly&graceful`);
      if (fail < 0 || drain < fail || !script.includes('--post-data')) v.push(`${at}: preStop does not POST healthcheck/fail, then drain_listeners, to the admin port ${f.adminPort}`);
    }
  }

  const userVolumes = new Set(user.volumes);
  for (const vol of spec.volumes ?? []) {
    if (!userVolumes.has(vol.name)) for (const p of volumeViolations(vol)) v.push(`restricted profile: ${p}`);
  }
  return v;
}

/**
 * Manifests besides the workload: the baseline's unchanged, plus one ConfigMap per sidecar in the
 * workload's namespace, whose checksum is the pod template's annotation.
 */
export function manifestSetViolations(s: Scenario, baselineManifests: any[], manifests: any[]): string[] {
  const v: string[] = [];
  const baseIndex = workloadIndex(baselineManifests);
  const outIndex = workloadIndex(manifests);
  const baseline = baselineManifests[baseIndex];
  const out = manifests[outIndex];
  const facts = orderedFacts(s, baseline.metadata.name);
  const others = manifests.filter((_m, i) => i !== outIndex);
  const baseOthers = baselineManifests.filter((_m, i) => i !== baseIndex);
  for (const b of baseOthers) {
    if (!others.some(m => same(m, b))) v.push(`${b.kind} '${b.metadata?.name}' changed or disappeared`);
  }
  const extra = others.filter(m => !baseOthers.some(b => same(m, b)));
  if (extra.length !== facts.length || !extra.every(m => m.kind === 'ConfigMap')) {
    v.push(`expected ${facts.length} new ConfigMap(s), got ${extra.map(m => m.kind).join(', ') || 'none'}`);
  }
  const volumes: any[] = podSpecOf(out).volumes ?? [];
  const annotations = podMetadataOf(out).annotations ?? {};
  for (const f of facts) {
    const vol = volumes.find(x => x.name === f.configVolume);
    const cm = extra.find(m => m.metadata?.name === vol?.configMap?.name);
    if (!cm) {
      v.push(`${f.owner}: no ConfigMap behind volume '${f.configVolume}'`);
      continue;
    }
    if (cm.metadata.namespace !== out.metadata.namespace) v.push(`${f.owner}: ConfigMap in namespace ${cm.metadata.namespace}, workload in ${out.metadata.namespace}`);
    const checksum = createHash('sha256').update(JSON.stringify(cm.data)).digest('hex');
    if (annotations[CHECKSUM_PREFIX + f.name] !== checksum) v.push(`${f.owner}: checksum annotation does not match its ConfigMap`);
  }
  // the user's JSON patches are still applied
  const [key, value] = s.workload.annotation;
  if (out.metadata.annotations?.[key] !== value) v.push(`the user's annotation patch ${key} is gone`);
  if (s.workload.podPatch && podSpecOf(out).priorityClassName !== 'high') v.push("the user's priorityClassName patch is gone");
  return v;
}

/** The index of the workload manifest (the one with a pod template) in a synthesized chart. */
export function workloadIndex(manifests: any[]): number {
  const kinds = ['Pod', 'Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job', 'CronJob'];
  const found = manifests.map((m, i) => [m, i] as const).filter(([m]) => kinds.includes(m.kind));
  if (found.length !== 1) throw new Error(`expected one workload, found ${found.length}`);
  return found[0][1];
}
