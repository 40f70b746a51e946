import { ApiObject, Chart, Duration } from 'cdk8s';
import { Construct, IConstruct } from 'constructs';
import { AGENT_LIVENESS } from './agents/liveness';
import { MIN_DRAIN_SECONDS, OTEL_COLLECTOR_UID, exportTimeouts, otelCollectorShutdown, renderOtelCollectorConfig } from './agents/otel-collector/config';
import { ownManifest } from './bind/binding';
import {
  checkBoolean, checkImage, checkInteger, checkListenPort, checkPort, checkString, durationSeconds, inetAtonAddress, isBareIpv6, isHost,
  isLoopbackHost, isSecretKey, isSecretName, ownEntries,
} from './bind/checks';
import { checkManifestString, checkWellFormed } from './bind/manifest-values';
import { RANK } from './engine/spec';
import { DEFAULT_IMAGES, releaseRangeWarning, withoutDigest } from './facts/images';
import { podTemplateIn } from './facts/kinds';
import { Images } from './images';
import { Where } from './private/errors';
import { Json } from './private/json';
import { KeyMemo, shared } from './private/memo';
import { sortedKeys } from './private/order';
import { SecretKeyReference } from './secret-ref';
import { AgentDescription, SidecarBase, SidecarProps, fieldEnv } from './sidecar';

/**
 * The OTLP transport the app's SDK uses to reach the local agent
 * (`OTEL_EXPORTER_OTLP_PROTOCOL`).
 */
export enum OtlpProtocol {
  /** OTLP over gRPC, to the agent's port 4317. */
  GRPC = 'grpc',
  /** OTLP over HTTP with protobuf bodies, to the agent's port 4318. */
  HTTP_PROTOBUF = 'http/protobuf',
}

/**
 * Props of `WithTracer`.
 */
export interface WithTracerProps extends SidecarProps {
  /**
   * Where the agent sends the telemetry: `host:port` of the central OpenTelemetry Collector
   * (gateway) or of a backend that speaks OTLP over gRPC, e.g.
   * `otel-collector.observability:4317`. No scheme: TLS is chosen with `exporterTls`.
   */
  readonly exporterEndpoint: string;

  /**
   * Use TLS (with certificate verification against the image's CA bundle) towards
   * `exporterEndpoint`.
   *
   * On by default, as in the collector itself: credentials from `exporterHeaders` are never
   * sent in clear text by accident, and a plaintext in-cluster gateway fails loudly (TLS
   * handshake errors in the agent's log) instead of silently. Set `false` for a plaintext
   * in-cluster collector (the usual `otel-collector.observability:4317`).
   * @default true
   */
  readonly exporterTls?: boolean;

  /**
   * gRPC headers (metadata) sent with every export, e.g. `authorization` or a backend's API-key
   * header. Values come only from Secrets: they reach the agent as `secretKeyRef` environment
   * variables and the config refers to them as `${env:...}`; the ConfigMap never holds them.
   * @default - none
   */
  readonly exporterHeaders?: { [name: string]: SecretKeyReference };

  /**
   * `OTEL_SERVICE_NAME` given to the app containers (a container that sets it keeps its own).
   * @default - in the OpenTelemetry Operator's order (`chooseServiceName`,
   * internal/instrumentation/sdk.go, v0.158.0), from the pod template as it is when the construct
   * is made: its annotation `resource.opentelemetry.io/service.name`, its label
   * `app.kubernetes.io/instance`, its label `app.kubernetes.io/name`; else the workload's
   * `metadata.name` when the chart gives one, and the workload's construct id when cdk8s
   * generates the name (`shop-web-c81100ac` is not a service's name: `web` is)
   */
  readonly serviceName?: string;

  /**
   * Extra resource attributes for the app's SDK (`OTEL_RESOURCE_ATTRIBUTES`), e.g.
   * `{ 'deployment.environment.name': 'prod' }`. Values are percent-encoded for you.
   * @default - none besides the Kubernetes ones the construct sets
   */
  readonly resourceAttributes?: { [key: string]: string };

  /**
   * Head sampling ratio for the app's SDK, from 0 to 1: sets `OTEL_TRACES_SAMPLER` to
   * `parentbased_traceidratio` and `OTEL_TRACES_SAMPLER_ARG` to the ratio.
   *
   * Sampling is done in the SDK, not with a `probabilistic_sampler` processor in the agent: the
   * SDK then does not even record, serialize and send the spans it drops, and the parent-based
   * sampler follows the caller's decision, so a trace is kept or dropped as a whole across
   * services. A processor in the agent would sample only after the app paid for every span.
   * @default - not set: the SDK's default sampler (`parentbased_always_on`)
   */
  readonly samplingRatio?: number;

  /**
   * The OTLP transport the app's SDK uses to reach the agent. Both receivers listen anyway; this
   * chooses `OTEL_EXPORTER_OTLP_ENDPOINT` (port 4317 or 4318) and `OTEL_EXPORTER_OTLP_PROTOCOL`.
   * @default OtlpProtocol.GRPC
   */
  readonly protocol?: OtlpProtocol;

  /**
   * The collector image. Any distribution that has the otlp receiver and exporter, the
   * memory_limiter and resource processors and the health_check extension works
   * (core `otel/opentelemetry-collector`, `otel/opentelemetry-collector-contrib`,
   * `otel/opentelemetry-collector-k8s`). Only `args` is set, so the image's own entrypoint runs.
   * @default Images.OTEL_COLLECTOR
   */
  readonly image?: string;

  /**
   * The bound on the agent's drain after SIGTERM. The collector shuts its traces, metrics and
   * logs exporters down one after another, so this time is split among them as their export
   * timeouts (10 s: 4 + 3 + 3); each exporter's queue holds only as many requests as it sends in
   * parallel, and retries stop at shutdown, so even with an unreachable backend the agent exits
   * within this time. Counts toward the pod's grace period (plus one second to exit). At least
   * 3 seconds (a second per signal).
   * @default Duration.seconds(10)
   */
  readonly drainTime?: Duration;

  /**
   * Port of the health_check extension, bound on all interfaces so that the kubelet's startup
   * probe reaches it (the only probe: no readiness probe, so that a telemetry backend outage does
   * not take the app out of its Services).
   * 1024 or above: the agent runs as non-root without NET_BIND_SERVICE.
   * @default 13133
   */
  readonly healthPort?: number;

  /**
   * Legacy layout only: start the agent first in `containers` with a `postStart` hook that waits
   * (up to 30 tries, a second apart: the startup probe's budget) until its health_check endpoint
   * answers, so that the app starts only then (as WithEnvoy's `holdApplicationUntilProxyStarts`).
   * The native layout always starts the agent first (its startup probe holds the app); there this
   * prop changes nothing.
   *
   * Off by default, unlike WithEnvoy's: the app does not need the agent to start or to serve, the
   * SDKs' batch span processor exports a span only seconds after it was made (its schedule delay,
   * `OTEL_BSP_SCHEDULE_DELAY`, 5 s by default), and most OTLP exporters retry a refused export;
   * the hold costs the app the collector's startup time. Turn it on when the app exports at once
   * at its start (a span processor without batching, a startup log or metric) and that must not
   * be lost. A legacy agent that holds the app cannot exit with it, so a legacy Job or
   * CronJob then needs `allowLegacyOnJob` (the app stops the agent itself).
   * @default false
   */
  readonly holdApplicationUntilCollectorStarts?: boolean;

  /**
   * The uid the collector runs as (`runAsUser`), e.g. one of the range a platform assigns to the
   * namespace (OpenShift's `MustRunAsRange`), or one a policy asks for. Never 0. The collector
   * writes nothing to its image's filesystem (it is read-only) and reads its config from the
   * ConfigMap (readable by every uid), so any uid works.
   * @default 10001 (the core image's `USER`)
   */
  readonly user?: number;

  /**
   * The primary gid the collector runs as (`runAsGroup`).
   * @default - the same number as `user`
   */
  readonly group?: number;
}

/** What `describeAgent` is given: every value here has been checked. */
interface AgentInputs {
  readonly image: string;
  readonly healthPort: number;
  readonly drainSeconds: number;
  readonly headers: HeaderEnv[];
  readonly memoryLimitMiB: number;
  readonly resources: Json;
  readonly appEnv: Json[];
  /** `holdApplicationUntilCollectorStarts` (the engine applies it in the legacy layout only). */
  readonly hold: boolean;
  readonly user: number;
  readonly group?: number;
}

/** Receiver ports (the OTLP defaults). */
const GRPC_PORT = 4317;
const HTTP_PORT = 4318;
/**
 * The receivers bind to, and the app is pointed at, `127.0.0.1` rather than `localhost`: some
 * runtimes resolve `localhost` to `::1` first (Node.js >= 17 without happy eyeballs) and would
 * miss a listener on the IPv4 loopback. Every pod network namespace has `127.0.0.1`, also on
 * IPv6-only clusters.
 */
const LOOPBACK = '127.0.0.1';
const CONFIG_DIRECTORY = '/etc/otelcol';
const CONFIG_FILE = 'config.yaml';
const HEALTH_PATH = '/';
const EXPORT_CONSUMERS = 10;
const DEFAULT_DRAIN_SECONDS = 10;
const DEFAULT_RESOURCES = { cpuRequest: '50m', cpuLimit: '500m', memoryRequest: '64Mi', memoryLimit: '128Mi' };
const MIN_MEMORY_LIMIT_MIB = 64;
/** The startup probe's budget (`periodSeconds` 1 x `failureThreshold`), and the legacy hold's tries. */
const STARTUP_TRIES = 30;

/** Downward-API variables of the agent container, and the resource attributes they feed. */
const AGENT_POD_ENV: Array<[attribute: string, env: string, fieldPath: string]> = [
  ['k8s.namespace.name', 'POD_NAMESPACE', 'metadata.namespace'],
  ['k8s.node.name', 'NODE_NAME', 'spec.nodeName'],
  ['k8s.pod.name', 'POD_NAME', 'metadata.name'],
  ['k8s.pod.uid', 'POD_UID', 'metadata.uid'],
];

/**
 * Downward-API variables added to the app containers, referenced from `OTEL_RESOURCE_ATTRIBUTES`
 * as `$(VAR)`. The names follow the OpenTelemetry operator's injection; the SDKs do not read
 * them themselves, so they cannot change an SDK's behaviour.
 */
const APP_POD_ENV: Array<[attribute: string, env: string, fieldPath: string]> = [
  ['k8s.namespace.name', 'OTEL_RESOURCE_ATTRIBUTES_POD_NAMESPACE', 'metadata.namespace'],
  ['k8s.node.name', 'OTEL_RESOURCE_ATTRIBUTES_NODE_NAME', 'spec.nodeName'],
  ['k8s.pod.name', 'OTEL_RESOURCE_ATTRIBUTES_POD_NAME', 'metadata.name'],
  ['k8s.pod.uid', 'OTEL_RESOURCE_ATTRIBUTES_POD_UID', 'metadata.uid'],
];

/** The agent's env var that holds the workload's name (the config refers to it). */
const WORKLOAD_NAME_ENV = 'K8S_WORKLOAD_NAME';

const PROTOCOLS = new Set<string>(Object.values(OtlpProtocol));

/** The env entries and attribute text of AGENT_POD_ENV and APP_POD_ENV, made once (frozen, shared). */
const AGENT_POD_ENV_ENTRIES = AGENT_POD_ENV.map(([, name, fieldPath]) => fieldEnv(name, fieldPath));
const APP_POD_ENV_ENTRIES = APP_POD_ENV.map(([, name, fieldPath]) => fieldEnv(name, fieldPath));
const APP_POD_ATTRIBUTES = APP_POD_ENV.map(([attribute, name]) => `${attribute}=$(${name})`).join(',');

/** The collector's configs without exporter headers, by the values that vary (`describeAgent`). */
const renderedConfigs = new KeyMemo<ReturnType<typeof renderOtelCollectorConfig>>();

/** The agent's constant parts, frozen and shared by every workload (not one copy per workload). */
const ARGS = shared([`--config=${CONFIG_DIRECTORY}/${CONFIG_FILE}`]);
const VOLUMES = shared([{ suffix: '-config', mountPath: CONFIG_DIRECTORY, readOnly: true }]);
const LOCAL_PORTS = shared([GRPC_PORT, HTTP_PORT]);

/** The `k8s.<kind>.name` resource attribute of each workload kind (semantic conventions). */
const WORKLOAD_ATTRIBUTE: Record<string, string | undefined> = {
  Deployment: 'k8s.deployment.name',
  StatefulSet: 'k8s.statefulset.name',
  DaemonSet: 'k8s.daemonset.name',
  ReplicaSet: 'k8s.replicaset.name',
  Job: 'k8s.job.name',
  CronJob: 'k8s.cronjob.name',
  Pod: undefined,
};

/**
 * Attaches an OpenTelemetry Collector agent sidecar to a workload and wires the app to it.
 *
 * The agent receives OTLP (gRPC 4317 and HTTP 4318) on the pod's loopback only, protects itself
 * with `memory_limiter`, adds where the telemetry came from (namespace, node, pod name and uid,
 * workload) with a `resource` processor fed by the downward API, and batches and exports over OTLP
 * to `exporterEndpoint`. Traces, metrics and logs all pass, because the SDKs send every signal to
 * `OTEL_EXPORTER_OTLP_ENDPOINT`.
 *
 * Every app container (also those added after this construct) gets `OTEL_EXPORTER_OTLP_ENDPOINT`,
 * `OTEL_EXPORTER_OTLP_PROTOCOL`, `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES` and, with
 * `samplingRatio`, the sampler variables; a variable a container already sets keeps its value.
 *
 * Native layout: the agent starts (its health check answers) before the app, and stops after
 * it, so the last spans of a dying app are exported. Legacy layout: a `preStop` delay keeps it
 * alive while the app shuts down; with `holdApplicationUntilCollectorStarts` it also starts
 * before the app.
 */
export class WithTracer extends SidecarBase {
  /** Where the agent exports to (`host:port`). */
  public readonly exporterEndpoint: string;
  /** Whether the agent uses TLS towards `exporterEndpoint`. */
  public readonly exporterTls: boolean;
  /** `OTEL_SERVICE_NAME` for the app containers. */
  public readonly serviceName: string;
  /** The transport the app uses to reach the agent. */
  public readonly protocol: OtlpProtocol;
  /** `OTEL_EXPORTER_OTLP_ENDPOINT` for the app containers, e.g. `http://127.0.0.1:4317`. */
  public readonly appEndpoint: string;

  constructor(scope: Construct, id: string, props: WithTracerProps) {
    super(scope, id, props, 'tracer');
    // from here on the copy SidecarBase made (a props object changed afterwards changes nothing)
    props = this._props as WithTracerProps;
    const who = this._where();
    this.exporterEndpoint = checkEndpoint(who, props.exporterEndpoint);
    checkBoolean(who, 'exporterTls', props.exporterTls);
    checkBoolean(who, 'holdApplicationUntilCollectorStarts', props.holdApplicationUntilCollectorStarts);
    this.exporterTls = props.exporterTls ?? true;
    this.protocol = props.protocol ?? OtlpProtocol.GRPC;
    if (!PROTOCOLS.has(this.protocol)) {
      throw who.error(`protocol '${this.protocol}' is not supported`, this.protocol, 'use OtlpProtocol.GRPC or OtlpProtocol.HTTP_PROTOBUF');
    }
    this.serviceName = checkServiceName(who, props.serviceName ?? defaultServiceName(props.workload, this.workloadObject));
    const sampling = checkSamplingRatio(who, props.samplingRatio);
    const healthPort = props.healthPort ?? 13133;
    checkListenPort(who, 'healthPort', healthPort);
    if (healthPort === GRPC_PORT || healthPort === HTTP_PORT) {
      throw who.error(`healthPort ${healthPort} is taken by the agent's OTLP receivers (${GRPC_PORT}, ${HTTP_PORT})`, healthPort, 'choose another port');
    }
    const drainSeconds = durationSeconds(who, 'drainTime', props.drainTime, DEFAULT_DRAIN_SECONDS);
    if (drainSeconds < MIN_DRAIN_SECONDS) {
      throw who.error(
        `drainTime ${drainSeconds}s is too short: it is split among the traces, metrics and logs exporters, which ` +
        'the collector stops one after another, and each export attempt needs a second',
        props.drainTime, `use at least Duration.seconds(${MIN_DRAIN_SECONDS})`,
      );
    }
    ownEntries(who, 'exporterHeaders', props.exporterHeaders, "{ authorization: { secret, key: 'token' } }");
    ownEntries(who, 'resourceAttributes', props.resourceAttributes, "{ 'deployment.environment.name': 'prod' }");
    const headers = headerEnv(who, props.exporterHeaders ?? {});
    const userAttributes = checkResourceAttributes(who, props.resourceAttributes ?? {});
    const image = props.image ?? Images.OTEL_COLLECTOR;
    checkImage(who, 'image', image, Images.OTEL_COLLECTOR);
    // The collector's own floor first: its message says more than "request above limit".
    const memoryLimitMiB = this.memoryLimitMiB(who);
    const resources = this._resources(DEFAULT_RESOURCES);
    this.appEndpoint = `http://${LOOPBACK}:${this.protocol === OtlpProtocol.GRPC ? GRPC_PORT : HTTP_PORT}`;
    const appEnv = this.appEnv(userAttributes, sampling);
    const hold = props.holdApplicationUntilCollectorStarts ?? false;
    const user = props.user ?? OTEL_COLLECTOR_UID;
    checkInteger(who, 'user', user, 1, 2147483647, 'a non-root uid', 'e.g. 10001');
    if (props.group !== undefined) checkInteger(who, 'group', props.group, 0, 2147483647, 'a gid', 'e.g. 10001');
    this._attach(this.describeAgent({ image, healthPort, drainSeconds, headers, memoryLimitMiB, resources, appEnv, hold, user, group: props.group }));
  }

  /** The collector as data: every value here has been checked. */
  private describeAgent(a: AgentInputs): AgentDescription {
    // memory_limiter: hard limit at 80 % of the container's limit (the collector's own RSS sits
    // ~50 MiB above its heap), spike limit 20 % of that; GOMEMLIMIT at 80 % of the container's
    // limit, as the memory_limiter documentation recommends.
    const limitMiB = Math.floor(a.memoryLimitMiB * 0.8);
    const spikeMiB = Math.max(1, Math.floor(limitMiB * 0.2));
    const workloadAttribute = WORKLOAD_ATTRIBUTE[this.workloadObject.kind];
    const render = () => renderOtelCollectorConfig({
      receiverHost: LOOPBACK,
      grpcPort: GRPC_PORT,
      httpPort: HTTP_PORT,
      healthPort: a.healthPort,
      healthPath: HEALTH_PATH,
      exporterEndpoint: this.exporterEndpoint,
      exporterTls: this.exporterTls,
      headerVars: Object.fromEntries(a.headers.map(h => [h.header, h.env])),
      resourceVars: {
        ...Object.fromEntries(AGENT_POD_ENV.map(([attribute, name]) => [attribute, name])),
        ...(workloadAttribute ? { [workloadAttribute]: WORKLOAD_NAME_ENV } : {}),
      },
      exportTimeoutSeconds: exportTimeouts(a.drainSeconds),
      exportConsumers: EXPORT_CONSUMERS,
      memoryLimitMiB: limitMiB,
      memorySpikeLimitMiB: spikeMiB,
    });
    // Without headers, the options are a function of these values (the rest are constants): the
    // config is looked up by them, without the options object and its JSON (a JSON per workload
    // was most of its cost).
    const rendered = a.headers.length === 0
      ? renderedConfigs.get([a.healthPort, this.exporterEndpoint, this.exporterTls, workloadAttribute, a.drainSeconds, limitMiB, spikeMiB], render)
      : render();
    // Only the upstream images' tags are collector versions; the tag of an image of your own is not.
    // (The default image is the pinned one, which is never warned about.)
    const warning = withoutDigest(a.image) === DEFAULT_IMAGES.otelCollector.image ? undefined : this.imageWarning(a.image);
    return {
      ...(warning ? { warnings: [warning] } : {}),
      kind: 'WithTracer',
      rank: RANK.TRACER,
      image: a.image,
      args: ARGS,
      // the default image's ENTRYPOINT ["/otelcol"] (open-telemetry/opentelemetry-collector-releases
      // distributions/otelcol/Dockerfile, as stored); another image's is not known
      ...(withoutDigest(a.image) === Images.OTEL_COLLECTOR ? { entrypoint: '/otelcol' } : {}),
      user: a.user,
      group: a.group,
      env: [
        ...AGENT_POD_ENV_ENTRIES,
        ...(workloadAttribute ? [{ name: WORKLOAD_NAME_ENV, value: this.workloadObject.name }] : []),
        { name: 'GOMEMLIMIT', value: `${limitMiB}MiB` },
        ...a.headers.map(h => ({ name: h.env, valueFrom: { secretKeyRef: { key: h.key, name: h.secretName } } })),
      ],
      ports: shared([{ containerPort: a.healthPort, name: 'otel-health', protocol: 'TCP' }]),
      // No readinessProbe: the agent is not in the request path, and a telemetry backend outage
      // must not take the app out of its Services.
      // Liveness on the same endpoint: the health_check extension answers 200 from its own HTTP
      // server goroutine once the pipelines have started (`Ready()`) and 503 only from `NotReady()`
      // at shutdown; exporter errors do not change it (healthcheckextension.go and
      // internal/healthcheck/handler.go, contrib v0.159.0 and v0.165.0; the component-status variant that
      // would is behind the alpha gate extension.healthcheck.useComponentStatus, off).
      health: {
        path: HEALTH_PATH,
        port: a.healthPort,
        startup: { periodSeconds: 1, failureThreshold: STARTUP_TRIES },
        liveness: { path: HEALTH_PATH, ...AGENT_LIVENESS },
      },
      resources: a.resources,
      files: { [CONFIG_FILE]: rendered.yaml },
      volumes: VOLUMES,
      // Bound on loopback only, so not container ports; still checked against the app's ports.
      localPorts: LOCAL_PORTS,
      appEnv: a.appEnv,
      // The drain bound, plus a second to exit (the model beside the renderer).
      shutdown: otelCollectorShutdown(a.drainSeconds),
      // Legacy only (the engine ignores it in the native layout, where the startup probe holds the
      // app): first in `containers`, with a postStart wait on the endpoint the probes use. The
      // extension binds all interfaces, so the pod's loopback reaches it; it answers 200 once
      // every pipeline (the OTLP receivers too) has started.
      ...(a.hold ? { hold: { readyUrl: `http://${LOOPBACK}:${a.healthPort}${HEALTH_PATH}`, timeoutSeconds: STARTUP_TRIES } } : {}),
    };
  }

  /** The OTEL_* variables every app container gets. */
  /** A warning when `image` is outside the collector releases the config is written for. */
  private imageWarning(image: string): string | undefined {
    const repo = image.split('@')[0].replace(/:[^/]*$/, '');
    const upstream = repo.slice(repo.lastIndexOf('/') + 1).startsWith('opentelemetry-collector');
    const untagged = `${repo}:your-own`;
    return releaseRangeWarning(this._where(), upstream ? image : untagged, DEFAULT_IMAGES.otelCollector)?.replace(`'${untagged}'`, `'${image}'`);
  }

  private appEnv(userAttributes: string[], sampling: number | undefined): Json[] {
    const workloadAttribute = WORKLOAD_ATTRIBUTE[this.workloadObject.kind];
    const resourceAttributes = [
      APP_POD_ATTRIBUTES,
      ...(workloadAttribute ? [`${workloadAttribute}=${encodeAttributeValue(this.workloadObject.name)}`] : []),
      ...userAttributes,
    ].join(',');
    return [
      shared({ name: 'OTEL_EXPORTER_OTLP_ENDPOINT', value: this.appEndpoint }),
      shared({ name: 'OTEL_EXPORTER_OTLP_PROTOCOL', value: this.protocol }),
      { name: 'OTEL_SERVICE_NAME', value: escapeDollar(this.serviceName) },
      // Defined BEFORE OTEL_RESOURCE_ATTRIBUTES: the kubelet expands $(VAR) only from variables
      // defined earlier in the container's list (the engine appends in this order).
      ...APP_POD_ENV_ENTRIES,
      { name: 'OTEL_RESOURCE_ATTRIBUTES', value: resourceAttributes },
      ...(sampling !== undefined
        ? [
          { name: 'OTEL_TRACES_SAMPLER', value: 'parentbased_traceidratio' },
          { name: 'OTEL_TRACES_SAMPLER_ARG', value: String(sampling) },
        ]
        : []),
    ];
  }

  private memoryLimitMiB(who: Where): number {
    const limit = this._props.resources?.memory?.limit;
    // (toKibibytes: a limit that is not whole MiB is reported by _resources)
    const mib = limit ? limit.toKibibytes() / 1024 : Number(DEFAULT_RESOURCES.memoryLimit.replace('Mi', ''));
    if (!(mib >= MIN_MEMORY_LIMIT_MIB)) {
      throw who.error(`memory limit ${mib}Mi is too small for the collector (its process needs ~50 MiB besides its data)`, limit,
        `give resources.memory.limit at least Size.mebibytes(${MIN_MEMORY_LIMIT_MIB})`);
    }
    return mib;
  }
}


/** `$` starts a `$(VAR)` reference in a container's env value; `$$` is a literal `$`. */
function escapeDollar(value: string): string {
  return value.replace(/\$/g, '$$$$');
}


/**
 * The default `OTEL_SERVICE_NAME`, in the order of the OpenTelemetry Operator's `chooseServiceName`
 * (open-telemetry/opentelemetry-operator internal/instrumentation/sdk.go, v0.158.0: the pod's
 * annotation `resource.opentelemetry.io/service.name`, then its labels `app.kubernetes.io/instance`
 * and `app.kubernetes.io/name` (pkg/constants/env.go `LabelAppName`, read with
 * `useLabelsForResourceAttributes`), then the workload's name), read from the pod template as given
 * to the construct. The operator's "workload's name" is `metadata.name`; where cdk8s generated it
 * (`<chart>-<id>-<hash>`, no name given), the construct id is the name the author gave.
 */
function defaultServiceName(workload: IConstruct, obj: ApiObject): string {
  const meta = podTemplateMetadata(workload, obj);
  for (const value of [meta.annotations?.['resource.opentelemetry.io/service.name'], meta.labels?.['app.kubernetes.io/instance'], meta.labels?.['app.kubernetes.io/name']]) {
    if (typeof value === 'string' && value !== '') return value;
  }
  // An ApiObject created without metadata.name is named by its chart (`Chart.generateObjectName`,
  // `<chart>-<id>-<hash>`): a name other than that one is the author's.
  let generated: string | undefined;
  try {
    generated = Chart.of(obj).generateObjectName(obj);
  } catch {
    generated = undefined;
  }
  if (obj.name !== generated) return obj.name;
  // the cdk8s-plus workload's id (its ApiObject is its child 'Resource'), or the raw ApiObject's
  const id = ApiObject.isApiObject(workload) ? obj.node.id : workload.node.id;
  return id.trim() !== '' && !/[\u0000-\u001f\u007f]/.test(id) ? id : obj.name;
}

/** The pod template's labels and annotations as given so far: cdk8s-plus `podMetadata` (a Pod's own), a raw object's own manifest. */
function podTemplateMetadata(workload: IConstruct, obj: ApiObject): { labels?: Record<string, string>; annotations?: Record<string, string> } {
  try {
    if (obj.kind === 'Pod') return obj.metadata.toJson();
    const kplusMeta = (workload as any).podMetadata;
    if (!ApiObject.isApiObject(workload) && kplusMeta && typeof kplusMeta.toJson === 'function') return kplusMeta.toJson();
    return podTemplateIn(ownManifest(obj))?.metadata ?? {};
  } catch {
    return {};
  }
}

/** OTEL_RESOURCE_ATTRIBUTES values are percent-encoded (W3C baggage octets). */
function encodeAttributeValue(value: string): string {
  return encodeURIComponent(value);
}

/** Endpoints `checkEndpoint` passed (the check is a function of the text alone): most tracers of an app share one. */
const PASSED_ENDPOINTS = new Set<string>();

function checkEndpoint(who: Where, endpoint: string | undefined): string {
  if (typeof endpoint === 'string' && PASSED_ENDPOINTS.has(endpoint)) return endpoint;
  checkEndpointText(who, endpoint);
  if (PASSED_ENDPOINTS.size >= 256) PASSED_ENDPOINTS.clear();
  PASSED_ENDPOINTS.add(endpoint!);
  return endpoint!;
}

function checkEndpointText(who: Where, endpoint: string | undefined): void {
  const example = "e.g. 'otel-collector.observability:4317'";
  checkString(who, 'exporterEndpoint', endpoint, "'otel-collector.observability:4317'");
  if (endpoint === undefined || endpoint.trim() === '') {
    throw who.error('exporterEndpoint is empty', endpoint, `give the host:port of the central collector or backend (OTLP/gRPC), ${example}`);
  }
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(endpoint);
  if (scheme) {
    throw who.error(`exporterEndpoint '${endpoint}' has a scheme ('${scheme[1]}://')`, endpoint, `give host:port only, ${example}, and choose TLS with exporterTls`);
  }
  const m = /^(.+):(\d+)$/.exec(endpoint);
  if (!m) {
    throw who.error(`exporterEndpoint '${endpoint}' is not host:port (the port is required)`, endpoint, `use ${example}`);
  }
  const [, host, portText] = m;
  const port = Number(portText);
  const own = (address: string) => (isLoopbackHost(address) && (port === GRPC_PORT || port === HTTP_PORT)
    ? `; as ${address}:${port} it would be the agent's own receiver (it would export to itself in a loop)` : '');
  // The collector is Go: net.SplitHostPort splits host:port (IPv6 only in brackets) and a host that
  // netip.ParseAddr does not read as an address (dotted quads only) is looked up as a DNS name;
  // test/host-spellings.test.ts checks these readings against Go itself.
  if (isBareIpv6(host)) {
    throw who.error(
      `exporterEndpoint '${endpoint}' has an IPv6 address without brackets ('${host}'), which the collector cannot ` +
      `split from the port (Go's net.SplitHostPort: too many colons); write '[${host}]:${port}'${own(`[${host}]`)}`,
      endpoint, `Give the central collector's address, ${example}`, '. ',
    );
  }
  const v4 = inetAtonAddress(host);
  if (v4 !== undefined) {
    throw who.error(
      `exporterEndpoint '${endpoint}' has host '${host}', which the collector (Go: an address is four decimal ` +
      `numbers) looks up as a DNS name, while a C resolver (inet_aton) reads it as ${v4}${own(v4)}`,
      endpoint,
      own(v4) ? `Give the central collector's address, ${example}` : `Write the address as four decimal numbers (${v4}) or give a DNS name, ${example}`,
      '. ',
    );
  }
  if (!isHost(host, { allowIpv6: true })) {
    throw who.error(`exporterEndpoint '${endpoint}' has an invalid host '${host}'`, endpoint,
      `use a DNS name or an IP address (IPv6 in brackets) followed by ':port', ${example}`);
  }
  checkPort(who, `exporterEndpoint '${endpoint}' port`, port);
  // any spelling of this pod's loopback: 'LOCALHOST', '0.0.0.0', '[::ffff:127.0.0.1]' (src/bind/checks.ts)
  if (isLoopbackHost(host) && (port === GRPC_PORT || port === HTTP_PORT)) {
    throw who.error(`exporterEndpoint '${endpoint}' is the agent's own receiver: the agent would export to itself in a loop`, endpoint,
      `Give the central collector's address, ${example}`, '. ');
  }
}

function checkServiceName(who: Where, name: string): string {
  checkString(who, 'serviceName', name, "'checkout'");
  // eslint-disable-next-line no-control-regex
  if (name.trim() === '' || name !== name.trim() || /[\u0000-\u001f\u007f]/.test(name)) {
    throw who.error(`serviceName '${name}' must be a non-empty name without leading or trailing spaces or control characters`, name, "e.g. 'checkout'", ', ');
  }
  checkManifestString(who, 'serviceName', name); // the OTEL_SERVICE_NAME env value
  return name;
}

function checkSamplingRatio(who: Where, ratio: number | undefined): number | undefined {
  if (ratio === undefined) return undefined;
  if (typeof ratio !== 'number' || !Number.isFinite(ratio) || ratio < 0 || ratio > 1) {
    throw who.error(`samplingRatio ${ratio} is out of range`, ratio, 'use a number from 0 (no traces) to 1 (every trace), e.g. 0.1');
  }
  return ratio;
}

/** gRPC metadata keys: lower-case letters, digits, '-', '_', '.' (gRPC lower-cases them anyway). */
const HEADER = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

interface HeaderEnv {
  readonly header: string;
  readonly env: string;
  readonly secretName: string;
  readonly key: string;
}

function headerEnv(who: Where, headers: { [name: string]: SecretKeyReference }): HeaderEnv[] {
  const out: HeaderEnv[] = [];
  const seen = new Map<string, string>();
  for (const header of sortedKeys(headers)) {
    if (!HEADER.test(header) || header.length > 128) {
      throw who.error(`exporterHeaders name '${header}' is not a valid gRPC header name`, header,
        "use letters, digits, '-', '_' and '.', e.g. 'authorization' or 'x-api-key'");
    }
    const lower = header.toLowerCase();
    if (lower.startsWith('grpc-') || lower.endsWith('-bin')) {
      throw who.error(`exporterHeaders name '${header}' is reserved by gRPC ('grpc-' prefix) or marks a binary value ('-bin' suffix)`, header,
        'use a plain text header name');
    }
    const env = `OTEL_EXPORTER_HEADER_${header.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
    const other = seen.get(env);
    if (other !== undefined) {
      throw who.error(
        `exporterHeaders '${other}' and '${header}' are the same header for gRPC (names are case-insensitive, ` +
        "and '-', '_', '.' map to one environment variable)",
        header, 'keep one of them',
      );
    }
    seen.set(env, header);
    const value = headers[header];
    if (!value || typeof value.secret?.name !== 'string' || value.secret.name === '' || typeof value.key !== 'string' || value.key === '') {
      throw who.error(`exporterHeaders '${header}' needs a Secret reference`, value,
        "({ secret, key }, e.g. { secret: { name: 'otel-auth' }, key: 'token' }); values come only from Secrets", ' ');
    }
    if (!isSecretName(value.secret.name) || !isSecretKey(value.key)) {
      throw who.error(
        `exporterHeaders '${header}' refers to Secret '${value.secret.name}' key '${value.key}', which is not a Secret name ` +
        "(lower-case letters, digits, '-' and '.') and key (letters, digits, '-', '_' and '.'); the API server rejects such a reference",
        value, "Give e.g. { secret: kplus.Secret.fromSecretName(scope, 'id', 'otel-auth'), key: 'token' }", '. ',
      );
    }
    checkManifestString(who, `exporterHeaders '${header}' Secret name`, value.secret.name);
    checkManifestString(who, `exporterHeaders '${header}' key`, value.key);
    out.push({ header, env, secretName: value.secret.name, key: value.key });
  }
  return out;
}

/** Reserved: the construct sets these itself. */
const RESERVED_ATTRIBUTES = /^(k8s\.|service\.name$)/;
const ATTRIBUTE_KEY = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

function checkResourceAttributes(who: Where, attributes: { [key: string]: string }): string[] {
  const out: string[] = [];
  for (const key of sortedKeys(attributes)) {
    if (!ATTRIBUTE_KEY.test(key)) {
      throw who.error(`resourceAttributes key '${key}' is not a valid attribute key`, key, "use letters, digits, '.', '_' and '-', e.g. 'deployment.environment.name'");
    }
    if (RESERVED_ATTRIBUTES.test(key)) {
      throw who.error(`resourceAttributes key '${key}' is set by the construct (k8s.* from the downward API, service.name from serviceName)`, key,
        'remove it, or use serviceName for the service name');
    }
    const value = attributes[key];
    if (typeof value !== 'string') {
      throw who.error(`resourceAttributes '${key}' must be a string; got ${typeof value}`, value, "quote it, e.g. 'prod'");
    }
    // Percent-encoded into OTEL_RESOURCE_ATTRIBUTES (printable ASCII, which the manifest carries):
    // only a lone surrogate cannot be encoded.
    checkWellFormed(who, `resourceAttributes '${key}' value`, value);
    out.push(`${key}=${encodeAttributeValue(value)}`);
  }
  return out;
}
