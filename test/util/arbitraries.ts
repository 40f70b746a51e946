/**
 * Generators for the property tests: random targets, random workloads (cdk8s-plus-27 objects
 * and raw ApiObjects) and random sidecar constructs on them, as PLAIN DATA (a `Scenario`), plus
 * `buildScenario()` that turns one scenario into a cdk8s app. Plain data prints well when
 * fast-check reports a counterexample, and the same value can be built twice (determinism) or
 * without its sidecars (the baseline the invariants compare against).
 *
 * Collisions with the library's own names, volumes, ports and mount paths are generated on
 * purpose, with a small weight: the model in `invariants.ts` says which errors each scenario must
 * produce, and the property checks that synthesis fails exactly then, with those messages.
 */
import { ApiObject, App, Chart, Cron, Duration, JsonPatch, Size, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { Construct, IConstruct } from 'constructs';
import * as fc from 'fast-check';
// Imported module by module (not from '../../src'), so that constructs in progress cannot break this suite.
import { manifestStringProblem } from '../../src/bind/manifest-values';
import { LogAgent } from '../../src/log-agent';
import { LogOutput } from '../../src/log-output';
import { Sidecars } from '../../src/settings';
import { SidecarMode } from '../../src/target/capabilities';
import { SidecarValidation } from '../../src/validation';
import { EnvoyAppProtocol, WithEnvoy } from '../../src/with-envoy';
import { WithLogAgent } from '../../src/with-log-agent';
import { OtlpProtocol, WithTracer } from '../../src/with-tracer';

// ---------------------------------------------------------------------------
// The data
// ---------------------------------------------------------------------------

export const KPLUS_KINDS = ['Deployment', 'StatefulSet', 'DaemonSet', 'Job', 'CronJob', 'Pod'] as const;
export const RAW_KINDS = [...KPLUS_KINDS, 'ReplicaSet'] as const;
export type Kind = typeof RAW_KINDS[number];
export const COMPLETING_KINDS: ReadonlySet<string> = new Set(['Job', 'CronJob']);

/** Kubernetes minor versions the generators target (every release with a schema). */
export const MINORS = [27, 28, 29, 30, 31, 32, 33, 34, 35];

/** The target cluster, and how the app tells the constructs about it. */
export interface TargetCase {
  readonly minor: number;
  /** The SidecarContainers gate (only matters for 1.28). */
  readonly gate: boolean;
  /** How the version is spelled: '1.29', 'v1.29', '1.29.3', 'v1.29.3'. */
  readonly versionText: string;
  /**
   * Where the target is set: on every construct (`prop`), with `Sidecars.configure()` on the
   * app, the chart, or the construct scope that holds the sidecars, in the environment variable
   * `CDK8S_SIDECARS_KUBERNETES_VERSION` (gate and mode from `Sidecars.configure()` on the app),
   * or `mixed`: on the first construct as props, the others inherit from the app's configure.
   */
  readonly source: 'prop' | 'app' | 'chart' | 'scope' | 'env' | 'mixed';
  /** `Sidecars.configure()` is called after the constructs are created (it is read at synthesis). */
  readonly configureAfter: boolean;
  /** A mode given to `Sidecars.configure()` (constructs without their own mode inherit it). */
  readonly configureMode?: SidecarMode;
  /** The app also runs `SidecarValidation.addTo(app, <target>)`. */
  readonly validate: boolean;
}

export interface EnvCase {
  readonly name: string;
  readonly value: string;
}

export interface MountCase {
  /** One of the workload's volumes. */
  readonly volume: string;
  readonly path: string;
}

export interface ContainerCase {
  readonly name: string;
  readonly image: string;
  /** TCP container ports. */
  readonly ports: number[];
  readonly env: EnvCase[];
  readonly mounts: MountCase[];
  /** The app container's own preStop hook (app containers only). */
  readonly preStop?: PreStopCase;
}

/**
 * An app container's own `preStop` hook: a sleep action or an exec of exactly `sleep N` (their
 * duration can be read), or an exec of another program / an httpGet (it cannot: e.g.
 * ingress-nginx's `/wait-shutdown`).
 */
export type PreStopCase =
  | { readonly type: 'sleep'; readonly seconds: number }
  | { readonly type: 'exec-sleep'; readonly bin: 'sleep' | '/bin/sleep'; readonly seconds: number }
  | { readonly type: 'exec-other' }
  | { readonly type: 'http' };

/** The JSON of a preStop hook. */
export function preStopJson(h: PreStopCase): any {
  switch (h.type) {
    case 'sleep': return { sleep: { seconds: h.seconds } };
    case 'exec-sleep': return { exec: { command: [h.bin, String(h.seconds)] } };
    case 'exec-other': return { exec: { command: ['/wait-shutdown'] } };
    case 'http': return { httpGet: { path: '/drain', port: 8080 } };
  }
}

export interface InitCase extends ContainerCase {
  /** The user's own native sidecar (`restartPolicy: Always` + startupProbe); raw objects on targets that know the field only. */
  readonly native: boolean;
}

export interface WorkloadCase {
  readonly flavor: 'kplus' | 'raw';
  readonly kind: Kind;
  /** The chart's namespace (cdk8s applies it to every object of the chart). */
  readonly chartNamespace?: string;
  /** `metadata.name` (raw: always; cdk8s-plus: undefined = the generated name). */
  readonly name?: string;
  readonly namespace?: string;
  readonly containers: ContainerCase[];
  /** How many of the trailing containers are added after the sidecar constructs (cdk8s-plus: addContainer; raw: a JSON patch). */
  readonly late: number;
  readonly initContainers: InitCase[];
  /** cdk8s-plus: the init containers are added after the sidecar constructs. */
  readonly lateInit: boolean;
  /** Names of the user's own emptyDir volumes; every mount names one of them. */
  readonly volumes: string[];
  /** terminationGracePeriodSeconds set by the user. */
  readonly grace?: number;
  /** Job / CronJob pod restartPolicy (raw). */
  readonly jobRestartPolicy: 'Never' | 'OnFailure';
  /** A JSON patch the user adds to the workload's ApiObject: an annotation on the object... */
  readonly annotation: [string, string];
  /** ...and `priorityClassName` on the pod spec. */
  readonly podPatch: boolean;
}

/** Resources given to a sidecar (cpu in millicores, memory in MiB); the rest are the agent's defaults. */
export interface ResourcesCase {
  readonly cpuRequest?: number;
  readonly cpuLimit?: number;
  readonly memoryRequest?: number;
  readonly memoryLimit?: number;
}

interface CommonSidecarCase {
  readonly containerName?: string;
  readonly mode?: SidecarMode;
  /** appShutdownTime in seconds. */
  readonly appShutdown?: number;
  readonly allowLegacyOnJob?: boolean;
  readonly resources?: ResourcesCase;
  /** userSidecarStopTime in seconds. */
  readonly userSidecarStop?: number;
}

export type OutputCase = 'stdout' | 'forward' | 'http' | 'loki' | 'elasticsearch' | 'opensearch';

export type AgentCase = 'fluent-bit' | 'vector' | 'fluentd';

export interface LogAgentCase extends CommonSidecarCase {
  readonly type: 'log';
  readonly agent: AgentCase;
  readonly logDirectory?: string;
  /** Fluent Bit `grace`, Vector `gracefulShutdownLimit`, Fluentd `shutdownGrace`, in seconds. */
  readonly agentGrace?: number;
  /** Fluent Bit `httpPort`, Vector `apiPort`, Fluentd `monitorPort`. */
  readonly healthPort?: number;
  readonly output: OutputCase;
}

export interface TracerCase extends CommonSidecarCase {
  readonly type: 'tracer';
  readonly protocol?: OtlpProtocol;
  readonly healthPort?: number;
  /** drainTime, seconds. */
  readonly drain?: number;
  readonly sampling?: number;
  readonly serviceName?: string;
  readonly exporterTls?: boolean;
  readonly resourceAttributes?: { [key: string]: string };
}

export interface EnvoyUpstreamCase {
  readonly name: string;
  readonly localPort: number;
  readonly tls: boolean;
}

export interface EnvoyCase extends CommonSidecarCase {
  readonly type: 'envoy';
  readonly appPort: number;
  readonly listenerPort?: number;
  readonly adminPort?: number;
  readonly healthPort?: number;
  /** undefined: no TLS; 'tls': terminate TLS; 'mtls': and verify client certificates. */
  readonly tls?: 'tls' | 'mtls';
  readonly upstreams: EnvoyUpstreamCase[];
  readonly hold?: boolean;
  /** drainTime, seconds (at most appShutdownTime). */
  readonly drain?: number;
  readonly http2: boolean;
}

export type SidecarCase = LogAgentCase | TracerCase | EnvoyCase;
export type SidecarType = SidecarCase['type'];

export interface Scenario {
  readonly target: TargetCase;
  readonly workload: WorkloadCase;
  /** The constructs, in creation order (a random subset of the types). */
  readonly sidecars: SidecarCase[];
}

/** The name of the library's hook tools (init container and volume). */
const TOOLS = 'sidecar-tools';
/** What `renameToolsClashes` renames them to: no generated name starts with `x-`. */
const RENAMED_TOOLS = 'x-tools-renamed';

/**
 * The same scenario with every name 'sidecar-tools' of the user's (containers, init containers,
 * volumes and their mounts) and of the constructs (containerName) renamed; undefined when there
 * is none. Its synthesized output says whether the hooks need the tools, which the original's
 * failed synthesis cannot (the names change nothing the hooks depend on).
 */
export function renameToolsClashes(s: Scenario): Scenario | undefined {
  const w = s.workload;
  const has = [...w.containers, ...w.initContainers].some(c => c.name === TOOLS)
    || w.volumes.includes(TOOLS) || s.sidecars.some(c => c.containerName === TOOLS);
  if (!has) return undefined;
  const name = (n: string) => (n === TOOLS ? RENAMED_TOOLS : n);
  const container = <C extends ContainerCase>(c: C): C => ({
    ...c, name: name(c.name), mounts: c.mounts.map(m => ({ ...m, volume: name(m.volume) })),
  });
  return {
    ...s,
    workload: { ...w, containers: w.containers.map(container), initContainers: w.initContainers.map(container), volumes: w.volumes.map(name) },
    sidecars: s.sidecars.map(c => (c.containerName === TOOLS ? { ...c, containerName: RENAMED_TOOLS } : c)),
  };
}

/** Native sidecars work on the target (SIDECARS.md §2). */
export function nativeWorks(t: Pick<TargetCase, 'minor' | 'gate'>): boolean {
  return t.minor >= 29 || (t.minor === 28 && t.gate);
}

// ---------------------------------------------------------------------------
// Pools: mostly harmless random values, a few that collide with the library's own
// ---------------------------------------------------------------------------

/** The library's default container names, a reserved one, and the custom names the generators use. */
export const SIDECAR_NAMES = ['log-agent', 'tracer', 'envoy', 'sidecar-tools', 'shipper', 'otel', 'proxy'];
/** Volume names the library derives from container names, and the tools volume. */
export const SIDECAR_VOLUMES = [
  'log-agent-logs', 'log-agent-config', 'log-agent-tmp', 'tracer-config', 'envoy-config', 'envoy-tls', 'envoy-client-ca',
  'shipper-logs', 'otel-config', 'proxy-config', 'sidecar-tools',
];
/** Ports the sidecars bind by default or in the generators' custom settings. */
export const SIDECAR_PORTS = [2020, 2021, 8686, 24220, 4317, 4318, 13133, 13134, 10000, 8443, 9901, 15021, 15000, 9000, 9001];
/** Log directories the generators use (the default first). */
export const LOG_DIRECTORIES = ['/var/log/app', '/logs', '/var/log/web'];

const label = fc.stringMatching(/^[a-z][a-z0-9]{0,6}(-[a-z0-9]{1,5})?$/);

function sometimes<T>(usual: fc.Arbitrary<T>, rare: T[], rareWeight = 1, usualWeight = 24): fc.Arbitrary<T> {
  return fc.oneof({ weight: usualWeight, arbitrary: usual }, { weight: rareWeight, arbitrary: fc.constantFrom(...rare) });
}

/** A user container name: random, rarely one of the library's. */
const containerName = sometimes(label.map(l => `c-${l}`), SIDECAR_NAMES, 1, 40);
/** A user volume name: random, rarely one the library derives. */
const volumeName = sometimes(label.map(l => `v-${l}`), SIDECAR_VOLUMES, 1, 30);
/** A user port: random from 1024 up, rarely one a sidecar binds. */
const port = sometimes(fc.integer({ min: 1024, max: 65535 }), SIDECAR_PORTS, 1, 40);
const ENV_NAMES = ['OTEL_SERVICE_NAME', 'OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_RESOURCE_ATTRIBUTES', 'OTEL_EXPORTER_OTLP_PROTOCOL', 'OTEL_TRACES_SAMPLER'];
const envName = sometimes(fc.stringMatching(/^[A-Z][A-Z0-9_]{0,10}$/), ENV_NAMES, 1, 6);
// The user's own values (the app's env, an annotation of the user's JSON patch) are not the
// library's to check: only values cdk8s' writer carries as the API server reads them (a value such as
// '0B0' is written plain and read as a number, whoever wrote it; test/values.test.ts shows the rule).
const carried = (v: string) => manifestStringProblem(v) === undefined;
const envValue = fc.string({ maxLength: 16 }).filter(carried);
const mountPath = sometimes(label.map(l => `/data/${l}`), LOG_DIRECTORIES, 1, 30);
const image = fc.constantFrom('ghcr.io/example/app:1.0.0', 'nginx:1.27', 'registry.local/team/api@sha256:' + 'a'.repeat(64));

function containerArb(name: string, volumes: string[]): fc.Arbitrary<ContainerCase> {
  const mounts: fc.Arbitrary<MountCase[]> = volumes.length === 0
    ? fc.constant([])
    : fc.uniqueArray(fc.record({ volume: fc.constantFrom(...volumes), path: mountPath }), { maxLength: 3, selector: m => m.path });
  return fc.record({
    name: fc.constant(name),
    image,
    ports: fc.uniqueArray(port, { maxLength: 3 }),
    env: fc.uniqueArray(fc.record({ name: envName, value: envValue }), { maxLength: 4, selector: e => e.name }),
    mounts,
  });
}

/** Versions spelled the ways users spell them. */
function versionText(minor: number): fc.Arbitrary<string> {
  return fc.constantFrom(`1.${minor}`, `v1.${minor}`, `1.${minor}.3`, `v1.${minor}.0`);
}

export const targetArb: fc.Arbitrary<TargetCase> = fc.record({
  minor: fc.constantFrom(...MINORS),
  gate: fc.boolean(),
}).chain(({ minor, gate }) => fc.record({
  minor: fc.constant(minor),
  gate: fc.constant(gate),
  versionText: versionText(minor),
  source: fc.constantFrom('prop' as const, 'app' as const, 'chart' as const, 'scope' as const, 'env' as const, 'mixed' as const),
  configureAfter: fc.boolean(),
  configureMode: fc.option(fc.constantFrom(SidecarMode.AUTO, SidecarMode.NATIVE, SidecarMode.LEGACY), { nil: undefined, freq: 3 }),
  validate: fc.boolean(),
}));

/** A workload for `target`: native init containers only where the target knows them. */
export function workloadArb(target: TargetCase, flavor?: 'kplus' | 'raw'): fc.Arbitrary<WorkloadCase> {
  const flavors = flavor ? [flavor] : ['kplus' as const, 'raw' as const];
  return fc.record({
    flavor: fc.constantFrom(...flavors),
    volumes: fc.uniqueArray(volumeName, { maxLength: 3 }),
    counts: fc.record({ containers: fc.integer({ min: 0, max: 4 }), init: fc.integer({ min: 0, max: 3 }) }),
  }).chain(({ flavor: f, volumes, counts }) => {
    // cdk8s-plus needs at least one container (and a StatefulSet a port: see below)
    const nContainers = f === 'kplus' ? Math.max(1, counts.containers) : counts.containers;
    return fc.record({
      kind: fc.constantFrom(...(f === 'kplus' ? KPLUS_KINDS : RAW_KINDS)),
      names: fc.uniqueArray(containerName, { minLength: nContainers + counts.init, maxLength: nContainers + counts.init }),
      native: fc.array(fc.boolean(), { minLength: counts.init, maxLength: counts.init }),
      name: f === 'raw' ? label.map(l => `w-${l}`) : fc.option(label.map(l => `w-${l}`), { nil: undefined }),
      namespace: fc.option(fc.constantFrom('shop', 'team-a'), { nil: undefined }),
      chartNamespace: fc.option(fc.constantFrom('platform'), { nil: undefined, freq: 4 }),
      // rarely, the user's own native sidecar on a target that cannot run it: the rules must say so
      badNative: fc.integer({ min: 0, max: 19 }).map(n => n === 0),
      late: fc.integer({ min: 0, max: nContainers === 0 ? 0 : nContainers - (f === 'kplus' ? 1 : 0) }),
      lateInit: fc.boolean(),
      grace: fc.option(fc.oneof(fc.integer({ min: 0, max: 100 }), fc.constant(30)), { nil: undefined, freq: 2 }),
      jobRestartPolicy: fc.constantFrom('Never' as const, 'OnFailure' as const),
      annotation: fc.tuple(label.map(l => `example.com/${l}`), fc.string({ maxLength: 10 }).filter(carried)),
      podPatch: fc.boolean(),
      // the app containers' own preStop hooks (sometimes): a sleep action only where it exists, never
      // longer than the user's grace period (the API server rejects that, a rule of its own)
      preStops: fc.array(fc.option(preStopArb(target.minor), { nil: undefined, freq: 3 }), { minLength: nContainers, maxLength: nContainers }),
    }).chain(w => {
      const fits = (h: PreStopCase | undefined) => h === undefined || !('seconds' in h) || w.grace === undefined || h.seconds <= w.grace;
      const containerArbs = w.names.slice(0, nContainers).map((n, i) => containerArb(n, volumes).map((c): ContainerCase => {
        const h = w.preStops[i];
        return h !== undefined && fits(h) ? { ...c, preStop: h } : c;
      }));
      const initArbs = w.names.slice(nContainers).map((n, i) => containerArb(n, volumes).map((c): InitCase => ({
        ...c,
        // a native init container (the user's own sidecar) only on raw objects and targets that know the field
        native: f === 'raw' && (nativeWorks(target) || w.badNative) && w.native[i],
      })));
      return fc.tuple(fc.tuple(...containerArbs), fc.tuple(...initArbs)).map(([containers, initContainers]): WorkloadCase => {
        let cs = containers as ContainerCase[];
        if (f === 'kplus' && w.kind === 'StatefulSet' && !cs.some(c => c.ports.length > 0)) {
          // cdk8s-plus-27 refuses a StatefulSet without container ports
          cs = [{ ...cs[0], ports: [8080] }, ...cs.slice(1)];
        }
        return {
          flavor: f,
          kind: w.kind,
          chartNamespace: w.chartNamespace,
          name: w.name,
          namespace: w.namespace,
          containers: cs,
          late: w.late,
          initContainers: initContainers as InitCase[],
          lateInit: w.lateInit,
          volumes,
          grace: w.grace,
          jobRestartPolicy: w.jobRestartPolicy,
          annotation: w.annotation,
          podPatch: w.podPatch,
        };
      });
    });
  });
}

function preStopArb(minor: number): fc.Arbitrary<PreStopCase> {
  return fc.oneof(
    ...(minor >= 30 ? [fc.record({ type: fc.constant('sleep' as const), seconds: fc.integer({ min: 1, max: 25 }) })] : []),
    fc.record({ type: fc.constant('exec-sleep' as const), bin: fc.constantFrom('sleep' as const, '/bin/sleep' as const), seconds: fc.integer({ min: 0, max: 25 }) }),
    fc.constant({ type: 'exec-other' as const }),
    fc.constant({ type: 'http' as const }),
  );
}

const userSidecarStopArb = fc.option(fc.integer({ min: 0, max: 12 }), { nil: undefined, freq: 2 });
const modeArb = fc.option(fc.constantFrom(SidecarMode.AUTO, SidecarMode.NATIVE, SidecarMode.LEGACY), { nil: undefined, freq: 2 });
const appShutdownArb = fc.option(fc.integer({ min: 0, max: 60 }), { nil: undefined });
const allowArb = fc.option(fc.boolean(), { nil: undefined });
/** Mostly the defaults; sometimes a partial override (a request above the default limit is the user's mistake). */
const resourcesArb: fc.Arbitrary<ResourcesCase | undefined> = fc.oneof(
  { weight: 4, arbitrary: fc.constant(undefined) },
  {
    weight: 1,
    arbitrary: fc.record({
      cpuRequest: fc.option(fc.constantFrom(10, 100, 300, 1000), { nil: undefined }),
      cpuLimit: fc.option(fc.constantFrom(200, 500, 2000), { nil: undefined }),
      memoryRequest: fc.option(fc.constantFrom(16, 64, 200), { nil: undefined }),
      // at least 64: the collector's own floor (a construct check of its own, in the catalogue)
      memoryLimit: fc.option(fc.constantFrom(64, 128, 512), { nil: undefined }),
    }),
  },
);

const OUTPUTS: OutputCase[] = ['stdout', 'forward', 'http', 'loki', 'elasticsearch', 'opensearch'];

export const logAgentArb: fc.Arbitrary<LogAgentCase> = fc.record({
  type: fc.constant('log' as const),
  agent: fc.constantFrom<AgentCase>('fluent-bit', 'vector', 'fluentd'),
  containerName: fc.option(fc.constantFrom('shipper', 'tracer', 'sidecar-tools'), { nil: undefined, freq: 8 }),
  mode: modeArb,
  appShutdown: appShutdownArb,
  userSidecarStop: userSidecarStopArb,
  allowLegacyOnJob: allowArb,
  resources: resourcesArb,
  logDirectory: fc.option(fc.constantFrom(...LOG_DIRECTORIES.slice(1)), { nil: undefined }),
  agentGrace: fc.option(fc.integer({ min: 1, max: 20 }), { nil: undefined }),
  healthPort: fc.option(fc.constantFrom(2021, 13133, 4317, 10000), { nil: undefined, freq: 8 }),
  // Vector has no forward sink (a construct-time error: see the bad-input catalogue)
  output: fc.constantFrom(...OUTPUTS),
}).map(c => (c.agent === 'vector' && c.output === 'forward' ? { ...c, output: 'http' as const } : c));

export const tracerArb: fc.Arbitrary<TracerCase> = fc.record({
  type: fc.constant('tracer' as const),
  containerName: fc.option(fc.constantFrom('otel', 'log-agent'), { nil: undefined, freq: 8 }),
  mode: modeArb,
  appShutdown: appShutdownArb,
  userSidecarStop: userSidecarStopArb,
  allowLegacyOnJob: allowArb,
  resources: resourcesArb,
  protocol: fc.option(fc.constantFrom(OtlpProtocol.GRPC, OtlpProtocol.HTTP_PROTOBUF), { nil: undefined }),
  healthPort: fc.option(fc.constantFrom(13134, 2020), { nil: undefined, freq: 8 }),
  drain: fc.option(fc.integer({ min: 3, max: 20 }), { nil: undefined }),
  sampling: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined }),
  serviceName: fc.option(fc.constantFrom('checkout', 'price$svc', 'a b'), { nil: undefined }),
  exporterTls: fc.option(fc.boolean(), { nil: undefined }),
  resourceAttributes: fc.option(fc.dictionary(fc.constantFrom('deployment.environment.name', 'team', 'x_y'), fc.string({ maxLength: 8 }), { maxKeys: 2 }), { nil: undefined }),
});

const envoyPort = fc.constantFrom(10000, 8443, 9901, 15021, 15000, 9000, 9001, 2020, 4317, 13133, 8686);

export const envoyArb: fc.Arbitrary<EnvoyCase> = fc.record({
  type: fc.constant('envoy' as const),
  containerName: fc.option(fc.constantFrom('proxy', 'tracer'), { nil: undefined, freq: 8 }),
  mode: modeArb,
  // Envoy's drain must fit into appShutdownTime, so at least a second
  appShutdown: fc.option(fc.integer({ min: 1, max: 60 }), { nil: undefined }),
  userSidecarStop: userSidecarStopArb,
  allowLegacyOnJob: allowArb,
  resources: resourcesArb,
  // rarely a port another sidecar binds (Envoy would send the app's traffic there)
  appPort: sometimes(fc.constantFrom(8080, 3000, 8443), [2020, 4317, 13133], 1, 12),
  listenerPort: fc.option(envoyPort, { nil: undefined, freq: 4 }),
  adminPort: fc.option(envoyPort, { nil: undefined, freq: 4 }),
  healthPort: fc.option(envoyPort, { nil: undefined, freq: 4 }),
  tls: fc.option(fc.constantFrom('tls' as const, 'mtls' as const), { nil: undefined }),
  upstreams: fc.uniqueArray(fc.record({
    name: fc.constantFrom('payments', 'users', 'api-example'),
    localPort: fc.constantFrom(9100, 9101, 9102, 4317, 2020),
    tls: fc.boolean(),
  }), { maxLength: 2, selector: u => u.name }),
  hold: fc.option(fc.boolean(), { nil: undefined }),
  drain: fc.option(fc.integer({ min: 1, max: 10 }), { nil: undefined }),
  http2: fc.boolean(),
})
  // The construct's own checks (ports of one Envoy distinct, drain within appShutdownTime) are
  // the bad-input catalogue's: keep the generated props valid for the constructor.
  .map(c => ({ ...c, drain: c.drain === undefined ? undefined : Math.min(c.drain, c.appShutdown ?? 10) }))
  .filter(c => {
    const ports = [
      c.appPort,
      c.listenerPort ?? (c.tls ? 8443 : 10000),
      c.adminPort ?? 9901,
      c.healthPort ?? 15021,
      ...c.upstreams.map(u => u.localPort),
    ];
    return new Set(ports).size === ports.length && (c.appShutdown ?? 10) >= (c.drain ?? 5);
  });

const SIDECAR_ARBS: Record<SidecarType, fc.Arbitrary<SidecarCase>> = { log: logAgentArb, tracer: tracerArb, envoy: envoyArb };

/** The sidecar types the generators know (creation order is shuffled per scenario). */
export const SIDECAR_TYPES = Object.keys(SIDECAR_ARBS) as SidecarType[];

/** A random subset of the constructs, in random creation order. */
export const sidecarsArb: fc.Arbitrary<SidecarCase[]> = fc.shuffledSubarray(SIDECAR_TYPES)
  .chain(types => fc.tuple(...types.map(t => SIDECAR_ARBS[t])));

/** A whole scenario: the target first, then a workload that makes sense for it, then the sidecars. */
export function scenarioArb(flavor?: 'kplus' | 'raw'): fc.Arbitrary<Scenario> {
  return targetArb.chain(target => fc.record({
    target: fc.constant(target),
    workload: workloadArb(target, flavor),
    sidecars: sidecarsArb,
  }));
}

// ---------------------------------------------------------------------------
// Building a cdk8s app from a scenario
// ---------------------------------------------------------------------------

/** Construct ids and paths of the sidecars. */
export const SIDECAR_IDS: Record<SidecarType, string> = { log: 'logs', tracer: 'tracer', envoy: 'envoy' };
export const CHART_ID = 'test';

/** The construct path of a sidecar in a scenario. */
export function sidecarPath(s: Scenario, type: SidecarType): string {
  return s.target.source === 'scope' ? `${CHART_ID}/sidecars/${SIDECAR_IDS[type]}` : `${CHART_ID}/${SIDECAR_IDS[type]}`;
}

/** The environment variable that carries the target (precedence over `Sidecars.configure()`). */
export const VERSION_ENV = 'CDK8S_SIDECARS_KUBERNETES_VERSION';

/** Runs `fn` (a synthesis) with the scenario's environment: the target version when it comes from there. */
export function inScenarioEnv<T>(s: Scenario, fn: () => T): T {
  const before = process.env[VERSION_ENV];
  if (s.target.source === 'env') process.env[VERSION_ENV] = s.target.versionText;
  else delete process.env[VERSION_ENV];
  try {
    return fn();
  } finally {
    if (before === undefined) delete process.env[VERSION_ENV]; else process.env[VERSION_ENV] = before;
  }
}

export interface BuiltScenario {
  readonly app: App;
  readonly chart: Chart;
  /** The workload's ApiObject. */
  readonly apiObject: ApiObject;
  /** Adds an app container to the workload now (cdk8s-plus: addContainer; raw: a JSON patch). */
  addContainer(c: ContainerCase): void;
}

const USER_SECURITY: kplus.ContainerSecurityContextProps = { user: 1000, group: 1000 };

/**
 * Builds the app of a scenario. `withSidecars: false` builds the same workload without the
 * constructs: the baseline that the invariants compare with.
 */
export function buildScenario(s: Scenario, options: { withSidecars: boolean; outdir?: string }): BuiltScenario {
  const app = options.outdir ? new App({ outdir: options.outdir }) : Testing.app();
  const { target: t, workload: w } = s;
  const chart = new Chart(app, CHART_ID, { namespace: w.chartNamespace });
  const scope = t.source === 'scope' ? new Construct(chart, 'sidecars') : chart;
  const configureScope: IConstruct | undefined = { prop: undefined, app, chart, scope, env: app, mixed: app }[t.source];
  const configure = () => {
    if (!configureScope) return;
    Sidecars.configure(configureScope, {
      // from the environment: the version only
      kubernetesVersion: t.source === 'env' ? undefined : t.versionText,
      sidecarContainersGate: t.gate,
      mode: t.configureMode,
    });
  };
  if (options.withSidecars && !t.configureAfter) configure();

  const early = w.containers.slice(0, w.containers.length - w.late);
  const late = w.containers.slice(w.containers.length - w.late);
  const { workload, apiObject, addLate, addContainer } = w.flavor === 'kplus' ? kplusWorkload(chart, w, early, late) : rawWorkload(chart, w, early, late);
  apiObject.addJsonPatch(JsonPatch.add('/metadata/annotations', { [w.annotation[0]]: w.annotation[1] }));
  if (w.podPatch) apiObject.addJsonPatch(JsonPatch.add(`${templatePointer(w.kind)}/spec/priorityClassName`, 'high'));

  if (options.withSidecars) {
    s.sidecars.forEach((sc, i) => createSidecar(scope, s, sc, workload, t.source === 'prop' || (t.source === 'mixed' && i === 0)));
  }
  addLate();
  if (options.withSidecars && t.configureAfter) configure();
  if (options.withSidecars && t.validate) {
    SidecarValidation.addTo(app, { kubernetesVersion: t.versionText, sidecarContainersGate: t.gate });
  }
  return { app, chart, apiObject, addContainer };
}

/** JSON pointer to the pod template of a kind ('' for a Pod, whose spec is the pod spec). */
export function templatePointer(kind: Kind): string {
  switch (kind) {
    case 'Pod': return '';
    case 'CronJob': return '/spec/jobTemplate/spec/template';
    default: return '/spec/template';
  }
}

function createSidecar(scope: Construct, s: Scenario, sc: SidecarCase, workload: IConstruct, targetProps: boolean): void {
  const t = s.target;
  const common = {
    workload,
    containerName: sc.containerName,
    mode: sc.mode,
    appShutdownTime: sc.appShutdown === undefined ? undefined : Duration.seconds(sc.appShutdown),
    userSidecarStopTime: sc.userSidecarStop === undefined ? undefined : Duration.seconds(sc.userSidecarStop),
    allowLegacyOnJob: sc.allowLegacyOnJob,
    resources: sc.resources === undefined ? undefined : {
      cpu: { request: millis(sc.resources.cpuRequest), limit: millis(sc.resources.cpuLimit) },
      memory: { request: mebibytes(sc.resources.memoryRequest), limit: mebibytes(sc.resources.memoryLimit) },
    },
    ...(targetProps ? { kubernetesVersion: t.versionText, sidecarContainersGate: t.gate } : {}),
  };
  const id = SIDECAR_IDS[sc.type];
  switch (sc.type) {
    case 'log':
      new WithLogAgent(scope, id, {
        ...common,
        logDirectory: sc.logDirectory,
        agent: logAgent(sc),
        output: logOutput(scope, sc.output),
      });
      return;
    case 'envoy':
      new WithEnvoy(scope, id, {
        ...common,
        appPort: sc.appPort,
        appProtocol: sc.http2 ? EnvoyAppProtocol.HTTP2 : undefined,
        listenerPort: sc.listenerPort,
        adminPort: sc.adminPort,
        healthPort: sc.healthPort,
        tls: sc.tls === undefined ? undefined : { secret: { name: 'web-tls' }, clientCaSecret: sc.tls === 'mtls' ? { name: 'web-client-ca' } : undefined },
        upstreams: sc.upstreams.map(u => ({ name: u.name, localPort: u.localPort, host: `${u.name}.shop.svc.cluster.local`, tls: u.tls })),
        holdApplicationUntilProxyStarts: sc.hold,
        drainTime: sc.drain === undefined ? undefined : Duration.seconds(sc.drain),
      });
      return;
    case 'tracer':
      new WithTracer(scope, id, {
        ...common,
        exporterEndpoint: 'otel-collector.observability:4317',
        exporterTls: sc.exporterTls,
        protocol: sc.protocol,
        healthPort: sc.healthPort,
        drainTime: sc.drain === undefined ? undefined : Duration.seconds(sc.drain),
        samplingRatio: sc.sampling,
        serviceName: sc.serviceName,
        resourceAttributes: sc.resourceAttributes,
      });
      return;
  }
}

const millis = (n?: number) => (n === undefined ? undefined : kplus.Cpu.millis(n));
const mebibytes = (n?: number) => (n === undefined ? undefined : Size.mebibytes(n));

function logAgent(sc: LogAgentCase): LogAgent {
  const grace = sc.agentGrace === undefined ? undefined : Duration.seconds(sc.agentGrace);
  switch (sc.agent) {
    case 'fluent-bit': return LogAgent.fluentBit({ grace, httpPort: sc.healthPort });
    case 'vector': return LogAgent.vector({ gracefulShutdownLimit: grace, apiPort: sc.healthPort });
    case 'fluentd': return LogAgent.fluentd({
      shutdownGrace: grace,
      monitorPort: sc.healthPort,
      // the default image has the core output plugins only
      image: ['loki', 'elasticsearch', 'opensearch'].includes(sc.output) ? 'registry.local/fluentd-plugins:1.19.3' : undefined,
    });
  }
}

function logOutput(scope: Construct, o: OutputCase): LogOutput {
  const secret = (key: string) => ({ secret: kplus.Secret.fromSecretName(scope, `secret-${key}`, 'log-credentials'), key });
  switch (o) {
    case 'stdout': return LogOutput.stdout();
    case 'forward': return LogOutput.forward({ host: 'fluentd.logging' });
    case 'http': return LogOutput.http({ host: 'logs.example.com', secretHeaders: { Authorization: secret('token') } });
    case 'loki': return LogOutput.loki({ host: 'loki.monitoring', basicAuth: { username: secret('user'), password: secret('pass') } });
    case 'elasticsearch': return LogOutput.elasticsearch({ host: 'es.logging' });
    case 'opensearch': return LogOutput.opensearch({ host: 'os.logging', tls: false });
  }
}

interface MadeWorkload {
  readonly workload: IConstruct;
  readonly apiObject: ApiObject;
  /** Adds what the scenario adds after the constructs. */
  readonly addLate: () => void;
  readonly addContainer: (c: ContainerCase) => void;
}

function kplusWorkload(chart: Chart, w: WorkloadCase, early: ContainerCase[], late: ContainerCase[]): MadeWorkload {
  const volumes = new Map(w.volumes.map(name => [name, kplus.Volume.fromEmptyDir(chart, `vol-${name}`, name)]));
  const props = (c: ContainerCase): kplus.ContainerProps => ({
    name: c.name,
    image: c.image,
    ports: c.ports.map(number => ({ number })),
    envVariables: Object.fromEntries(c.env.map(e => [e.name, kplus.EnvValue.fromValue(e.value)])),
    volumeMounts: c.mounts.map(m => ({ volume: volumes.get(m.volume)!, path: m.path })),
    securityContext: USER_SECURITY,
    // cdk8s-plus-27 has no sleep action: that hook is left out here (the model reads the baseline)
    ...(c.preStop && c.preStop.type !== 'sleep' ? { lifecycle: { preStop: kplusPreStop(c.preStop) } } : {}),
  });
  const common = {
    // (an explicit `name: undefined` breaks cdk8s' metadata: leave absent keys out)
    metadata: { ...(w.name ? { name: w.name } : {}), ...(w.namespace ? { namespace: w.namespace } : {}) },
    containers: early.map(props),
    terminationGracePeriod: w.grace === undefined ? undefined : Duration.seconds(w.grace),
  };
  let workload: kplus.AbstractPod;
  switch (w.kind) {
    case 'Deployment': workload = new kplus.Deployment(chart, 'web', common); break;
    case 'StatefulSet': {
      const service = new kplus.Service(chart, 'web-svc', { ports: [{ port: 80 }], clusterIP: 'None' });
      workload = new kplus.StatefulSet(chart, 'web', { ...common, service });
      break;
    }
    case 'DaemonSet': workload = new kplus.DaemonSet(chart, 'web', common); break;
    case 'Job': workload = new kplus.Job(chart, 'web', common); break;
    case 'CronJob': workload = new kplus.CronJob(chart, 'web', { ...common, schedule: Cron.daily() }); break;
    case 'Pod': workload = new kplus.Pod(chart, 'web', common); break;
    default: throw new Error(`cdk8s-plus has no ${w.kind}`);
  }
  for (const v of volumes.values()) workload.addVolume(v);
  const addInit = () => {
    // `ports` (unlike `portNumber`) adds no startup probe, which init containers may not have
    for (const c of w.initContainers) workload.addInitContainer(props(c));
  };
  if (!w.lateInit) addInit();
  return {
    workload,
    apiObject: ApiObject.of(workload),
    addLate: () => {
      for (const c of late) workload.addContainer(props(c));
      if (w.lateInit) addInit();
    },
    addContainer: c => workload.addContainer(props(c)),
  };
}

function kplusPreStop(h: PreStopCase): kplus.Handler {
  const json = preStopJson(h);
  return json.httpGet ? kplus.Handler.fromHttpGet(json.httpGet.path, { port: json.httpGet.port }) : kplus.Handler.fromCommand(json.exec.command);
}

/** The raw JSON of a user container. */
export function rawContainer(c: ContainerCase, native = false): any {
  const out: any = { name: c.name, image: c.image };
  if (c.ports.length > 0) out.ports = c.ports.map(containerPort => ({ containerPort }));
  if (c.env.length > 0) out.env = c.env.map(e => ({ name: e.name, value: e.value }));
  if (c.mounts.length > 0) out.volumeMounts = c.mounts.map(m => ({ mountPath: m.path, name: m.volume }));
  if (c.preStop) out.lifecycle = { preStop: preStopJson(c.preStop) };
  if (native) {
    out.restartPolicy = 'Always';
    out.startupProbe = { exec: { command: ['/bin/true'] }, periodSeconds: 1 };
  }
  return out;
}

function rawWorkload(chart: Chart, w: WorkloadCase, early: ContainerCase[], late: ContainerCase[]): MadeWorkload {
  const name = w.name!;
  const labels = { app: name };
  const podSpec: any = {
    containers: early.map(c => rawContainer(c)),
  };
  if (w.initContainers.length > 0) podSpec.initContainers = w.initContainers.map(c => rawContainer(c, c.native));
  if (w.volumes.length > 0) podSpec.volumes = w.volumes.map(v => ({ emptyDir: {}, name: v }));
  if (w.grace !== undefined) podSpec.terminationGracePeriodSeconds = w.grace;
  const template = { metadata: { labels }, spec: podSpec };
  const metadata = { name, ...(w.namespace ? { namespace: w.namespace } : {}) };
  let body: any;
  switch (w.kind) {
    case 'Pod':
      body = { apiVersion: 'v1', kind: 'Pod', metadata: { ...metadata, labels }, spec: podSpec };
      break;
    case 'Deployment':
    case 'ReplicaSet':
    case 'DaemonSet':
      body = { apiVersion: 'apps/v1', kind: w.kind, metadata, spec: { selector: { matchLabels: labels }, template } };
      break;
    case 'StatefulSet':
      body = { apiVersion: 'apps/v1', kind: w.kind, metadata, spec: { selector: { matchLabels: labels }, serviceName: name, template } };
      break;
    case 'Job':
      podSpec.restartPolicy = w.jobRestartPolicy;
      body = { apiVersion: 'batch/v1', kind: 'Job', metadata, spec: { template } };
      break;
    case 'CronJob':
      podSpec.restartPolicy = w.jobRestartPolicy;
      body = { apiVersion: 'batch/v1', kind: 'CronJob', metadata, spec: { schedule: '0 3 * * *', jobTemplate: { spec: { template } } } };
      break;
  }
  const apiObject = new ApiObject(chart, 'web', body);
  // a container added after the constructs, by the user's own JSON patch
  const addContainer = (c: ContainerCase) => apiObject.addJsonPatch(JsonPatch.add(`${templatePointer(w.kind)}/spec/containers/-`, rawContainer(c)));
  return {
    workload: apiObject,
    apiObject,
    addLate: () => late.forEach(addContainer),
    addContainer,
  };
}

// ---------------------------------------------------------------------------
// WithSidecar and AdoptSidecar (issue 18): a random container and options, or a random vendor
// container of the workload to adopt, on a raw workload with random user init containers.
// ---------------------------------------------------------------------------

export interface AnyCheckCase {
  readonly type: 'http' | 'tcp' | 'exec';
  readonly port: number;
  readonly path: string;
  readonly period: number;
  readonly timeout: number;
}

export interface AnySidecarCase {
  readonly minor: number;
  readonly gate: boolean;
  readonly kind: 'Deployment' | 'Job' | 'CronJob' | 'DaemonSet' | 'StatefulSet';
  /** The user's init containers; `native` ones only where the target runs native sidecars. */
  readonly init: { readonly name: string; readonly native: boolean }[];
  /** Adopt the workload's container 'vendor-proxy' instead of adding one. */
  readonly adopt: boolean;
  /** The vendor container's own fields (adopt), or the WithSidecar's container. */
  readonly args: string[];
  readonly ports: number[];
  readonly env: { readonly name: string; readonly value: string }[];
  readonly readiness: boolean;
  readonly check?: AnyCheckCase;
  /** Only with an HTTP check. */
  readonly hold: boolean;
  readonly stopSeconds: number;
  readonly outliveApp?: boolean;
  readonly quit: boolean;
  readonly allowLegacyOnJob: boolean;
  /** Index into `init` to place the sidecar after. */
  readonly after?: number;
  readonly serve: boolean;
  readonly appShutdownSeconds: number;
  readonly appEnv: { readonly name: string; readonly value: string }[];
  /** A shared emptyDir mounted into the app (WithSidecar only). */
  readonly shared: boolean;
}

const anyCheckArb: fc.Arbitrary<AnyCheckCase> = fc.record({
  type: fc.constantFrom('http', 'tcp', 'exec'),
  port: fc.integer({ min: 20000, max: 20999 }),
  path: fc.constantFrom('/', '/ready', '/startup', '/healthz'),
  period: fc.integer({ min: 1, max: 5 }),
  timeout: fc.integer({ min: 5, max: 300 }),
});

export const anySidecarArb: fc.Arbitrary<AnySidecarCase> = fc.record({
  minor: fc.constantFrom(...MINORS),
  gate: fc.boolean(),
  kind: fc.constantFrom('Deployment', 'Job', 'CronJob', 'DaemonSet', 'StatefulSet'),
  init: fc.uniqueArray(fc.record({ name: label.map(l => `init-${l}`), native: fc.boolean() }), { maxLength: 3, selector: c => c.name }),
  adopt: fc.boolean(),
  args: fc.array(fc.constantFrom('--verbose', '--port=20500', '--structured-logs', 'instance:a:b'), { maxLength: 3 }),
  ports: fc.uniqueArray(fc.integer({ min: 21000, max: 21999 }), { maxLength: 2 }),
  env: fc.uniqueArray(fc.record({ name: fc.stringMatching(/^S_[A-Z]{1,6}$/), value: envValue }), { maxLength: 2, selector: e => e.name }),
  readiness: fc.boolean(),
  check: fc.option(anyCheckArb, { nil: undefined }),
  hold: fc.boolean(),
  stopSeconds: fc.integer({ min: 0, max: 40 }),
  outliveApp: fc.option(fc.boolean(), { nil: undefined }),
  quit: fc.boolean(),
  allowLegacyOnJob: fc.boolean(),
  after: fc.option(fc.integer({ min: 0, max: 2 }), { nil: undefined }),
  serve: fc.boolean(),
  appShutdownSeconds: fc.integer({ min: 0, max: 60 }),
  appEnv: fc.uniqueArray(fc.record({ name: fc.stringMatching(/^A_[A-Z]{1,6}$/), value: envValue }), { maxLength: 2, selector: e => e.name }),
  shared: fc.boolean(),
}).map(c => ({
  ...c,
  init: c.init.map(i => ({ ...i, native: i.native && nativeWorks(c) })),
  after: c.after !== undefined && c.after < c.init.length ? c.after : undefined,
  hold: c.hold && c.check?.type === 'http',
  // a check on a port none of the declared ones is refused (issue 27): valid cases check a declared port
  check: c.check && c.check.type !== 'exec' && c.ports.length > 0 && !c.ports.includes(c.check.port) ? { ...c.check, port: c.ports[0] } : c.check,
}));
