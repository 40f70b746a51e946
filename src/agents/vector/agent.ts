/**
 * Vector as a log agent, all of it but the config writer (./config.ts): its options, its default
 * image, the factory's checks and the container it runs in.
 */
import { Duration } from 'cdk8s';
import { checkImage, checkListenPort, positiveSeconds } from '../../bind/checks';
import { DefaultImage, releaseRangeWarning } from '../../facts/images';
import { SidecarError, Where } from '../../private/errors';
import { LogAgentSpec, agentDiskRequest } from '../log-agent-spec';

// The config writer loads when a Vector sidecar is asked for: an app that ships with another agent does not load it.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const config = (): typeof import('./config') => require('./config');

/**
 * Options of the Vector agent.
 */
export interface VectorOptions {
  /**
   * The Vector image. The rendered config is written for Vector 0.54.0 up to, not including,
   * 0.58.0; an image outside that range, or whose tag names no version, is a warning.
   * @default 'timberio/vector:0.57.0-distroless-libc'
   */
  readonly image?: string;
  /**
   * How long Vector keeps draining its pipeline after SIGTERM before it exits anyway
   * (`--graceful-shutdown-limit-secs`). Counts toward the pod's grace period.
   * @default Duration.seconds(5)
   */
  readonly gracefulShutdownLimit?: Duration;
  /**
   * Port of the probes' endpoint `GET /health`, bound to 0.0.0.0 so that the kubelet can reach
   * it. It is an `http_server` source that answers only that request (its events go nowhere),
   * not Vector's API, which stays off (the name is kept from the releases that probed the API).
   * 1024 or above: the agent runs as non-root without NET_BIND_SERVICE.
   * @default 8686
   */
  readonly apiPort?: number;
  /**
   * No effect (kept so that existing code compiles). It let Vector 0.55+ serve the probes from
   * its API, which also serves the gRPC observability API; the probes no longer use the API,
   * which stays off with any image.
   * @default false
   * @deprecated the probes use an http_server source; Vector's API is off with every image.
   */
  readonly exposeGrpcApi?: boolean;
}

/**
 * The default image, pinned, with the upstream source of its tag and the releases the config is
 * written for (`Images`, the README's image table, the cluster's image list read it from the registry).
 */
const IMAGE = {
  image: 'timberio/vector:0.57.0-distroless-libc',
  usedBy: 'LogAgent.vector()',
  // Checked 2026-12-01: v0.57.0 (2026-07-14) is the newest release tag of vectordotdev/vector
  // (the repository's snapshot of 2026-08-22: master's Cargo.toml is at 0.58.0, untagged; no
  // 0.57.x patch tag). Vector releases only the newest line, monthly (0.54.0 March, 0.55.0 April,
  // 0.56.0 June, 0.57.0 July 2026). distribution/docker/distroless-libc/Dockerfile at v0.57.0:
  // FROM gcr.io/distroless/cc-debian12, no USER (the library runs it as 65532), binary at
  // /usr/bin/vector, /var/lib/vector owned by root (unused: data_dir is on the log volume).
  // From 0.55 the API cannot be limited to /health, so the probes use an http_server source and
  // the API is off (src/agents/vector/config.ts `vectorHealthEndpoint`).
  source: 'vectordotdev/vector release v0.57.0 (git tag v0.57.0, 2026-07-14; distribution/docker/distroless-libc/Dockerfile, ' +
      'pushed as timberio/vector:<version>-distroless-libc by scripts/build-docker.sh)',
  // Every key the library emits has the same name at v0.54.0 and v0.57.0 (the structs and
  // website/cue/reference/components/<kind>/generated/<name>.cue at both tags; 0.55 removed only
  // api.graphql/playground and the http sink's top-level headers, neither emitted now), and the
  // shutdown code is the same at both tags. test/agents/vector.agent-test.ts runs a binary built from
  // the tag when one is cached (CONTRIBUTING.md "The real Vector"); not run yet (the first build here
  // did not finish in its session).
  releases: { program: 'Vector', from: '0.54.0', below: '0.58.0', checked: 'the keys and the shutdown read at v0.54.0 and v0.57.0' },
} as const satisfies DefaultImage;

/** Vector, registered in src/agents/registry.ts (`LogAgent.vector()`). */
export const VECTOR_AGENT: LogAgentSpec<VectorOptions> = {
  name: 'vector',
  factory: 'vector',
  title: 'Vector',
  names: ['vector'],
  image: IMAGE,
  outputs: ['stdout', 'http', 'loki', 'elasticsearch', 'opensearch'],
  options: { image: 'string', gracefulShutdownLimit: 'duration', apiPort: 'number', exposeGrpcApi: 'boolean' },

  lokiLabelValueProblem(v: string): string | undefined {
    const rules: Array<[boolean, string]> = [
      [v.includes('{{') || v.includes('%'), "has '{{' or '%', which Vector reads as a template field or a strftime time format (vector src/template.rs, v0.54.0)"],
      [config().VECTOR_SECRET_PLACEHOLDER.test(v), "has 'SECRET[<name>.<key>]', which Vector replaces with a secret wherever it stands in its config " +
        '(vector src/config/loading/secret.rs `COLLECTOR`, v0.57.0)'],
    ];
    return rules.find(([broken]) => broken)?.[1];
  },

  check(who: Where, options: VectorOptions): void {
    checkImage(who, 'image', options.image ?? IMAGE.image, IMAGE.image);
    if (options.apiPort !== undefined) checkListenPort(who, 'apiPort', options.apiPort);
    positiveSeconds(who, 'gracefulShutdownLimit', options.gracefulShutdownLimit, 5, 'Vector accepts only a positive limit');
  },

  render(options, ctx, others) {
    const limitSeconds = positiveSeconds(ctx.who, 'vector gracefulShutdownLimit', options.gracefulShutdownLimit, 5,
      'Vector accepts only a positive limit');
    const apiPort = options.apiPort ?? 8686;
    const image = options.image ?? IMAGE.image;
    const warning = releaseRangeWarning(ctx.who, image, IMAGE);
    const health = config().vectorHealthEndpoint(apiPort);
    let rendered;
    try {
      rendered = config().renderVectorConfig({
        logDirectory: ctx.logDirectory,
        filePattern: ctx.filePattern,
        healthPort: health.port,
        output: ctx.output,
        secretVars: ctx.secretVars,
        sources: ctx.sources ?? {},
      });
    } catch (e) {
    // an output Vector has no sink for, or a value its YAML cannot hold (src/private/values.ts)
      throw ctx.who.place(e instanceof config().VectorUnsupportedOutputError
        ? new SidecarError({ value: e.value, problem: e.problem, fix: e.fix.replace(config().OTHER_AGENTS, others(ctx.output.type)), sep: e.sep })
        : e);
    }
    return {
      image,
      command: ['/usr/bin/vector'],
      args: ['--config', `${ctx.configDirectory}/vector.yaml`, '--graceful-shutdown-limit-secs', String(limitSeconds)],
      files: { 'vector.yaml': rendered.yaml },
      healthPort: health.port,
      healthPath: health.path,
      healthPortName: health.portName,
      // `nonroot` of the distroless base image.
      uid: 65532,
      shutdown: config().vectorShutdown(limitSeconds),
      // the pod-logs path is an env var the config names (`${POD_LOG_PATH}`), built by the kubelet from
      // the app container's name and the pod's uid (src/engine/capture.ts `podLogsEnv`): Vector 0.57
      // reads `${NAME}` only with this switch (src/cli.rs and src/config/loading/mod.rs, v0.57.0; older
      // releases of the range interpolate by default and ignore the variable). Nothing else of the
      // config holds a `$` (values with one are refused), and the secrets are put in after it.
      env: ctx.sources?.podLogsEnv !== undefined ? [{ name: 'VECTOR_DANGEROUSLY_ALLOW_ENV_VAR_INTERPOLATION', value: 'true' }] : [],
      // the output's secrets: files its directory secret backend reads (VECTOR_SECRETS, ./config.ts), never `${NAME}`
      secretDirectory: config().VECTOR_SECRETS.directory,
      // no disk buffer (the log files are the durable buffer, src/agents/vector/config.ts): its checkpoints only
      defaultResources: { cpuRequest: '20m', cpuLimit: '250m', memoryRequest: '64Mi', memoryLimit: '256Mi', ephemeralStorageRequest: agentDiskRequest(0) },
      ...(warning ? { warnings: [warning] } : {}),
    };
  },
};
