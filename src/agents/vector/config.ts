/**
 * Vector config rendering (YAML). Pure: options in, config out.
 *
 * Every key emitted here was read in Vector's source at the pinned tag v0.57.0 (see
 * `Images.VECTOR` in images.ts) and at v0.54.0, the lowest release of the range the config is
 * written for (the config structs, and `website/cue/reference/components/<kind>/generated/<name>.cue`,
 * whose option names are the same at both tags for every component below):
 * - global `data_dir` (must exist and be writable; the file source keeps its checkpoints in a
 *   `<data_dir>/<source id>/` subdirectory it creates)
 * - `api.enabled: false`: the API stays off. From 0.55 it serves the gRPC observability API
 *   (`vector tap` streams the events, i.e. the logs) and `GET /health` on one port, with no way
 *   to limit it (src/config/api.rs and src/api/grpc_server.rs, v0.57.0), so the probes do not
 *   use it (see `vectorHealthEndpoint`)
 * - file source `include`, `exclude`, `read_from`, `fingerprint.strategy`, `max_line_bytes`
 * - http_server source `address`, `method`, `path`, `strict_path` (the probes' endpoint)
 * - remap transform `inputs`, `source` (VRL `get_env_var!`)
 * - sinks: common `type`, `inputs`, `encoding.codec`;
 *   blackhole (no key of its own: `print_interval_secs` defaults to 0, no reports);
 *   console `target`;
 *   http `uri`, `method`, `framing.method`, `auth.{strategy,user,password}`, `request.headers`,
 *   `tls.{verify_certificate,verify_hostname}` (0.55 removed the top-level `headers`);
 *   loki `endpoint`, `labels`, `tenant_id`, `auth`, `tls`;
 *   elasticsearch `endpoints`, `mode`, `api_version`, `bulk.index`, `auth`, `tls`
 * - sinks' `acknowledgements.enabled` (end-to-end acknowledgements, every sink config at v0.54.0 and v0.57.0)
 * - secrets: the `directory` secret backend (`secret.<name>.{type,path,remove_trailing_whitespace}`,
 *   src/secrets/directory.rs) and `SECRET[<backend>.<key>]` placeholders (src/config/loading/secret.rs),
 *   the same at v0.54.0 and v0.57.0 (see `VECTOR_SECRETS`). Not `${NAME}`: from 0.57 Vector no longer
 *   interpolates environment variables in its config unless started with
 *   `--dangerously-allow-env-var-interpolation` (src/cli.rs, `default_value = "false"`, and
 *   src/config/loading/mod.rs `env_var_interpolation_enabled`, "Defaults to `false`", v0.57.0): a
 *   `${NAME}` would be sent as that text.
 *
 * Vector has no Fluent forward sink: `LogOutput.forward()` is refused by the agent.
 */
import { SidecarError, internalError } from '../../private/errors';
import { Json } from '../../private/json';
import { agentYaml } from '../../private/values';
import { LogOutputConfig } from '../log-output-config';
import { ShutdownModel, shutdownModel } from '../shutdown-model';

/** The component ids of the rendered topology. */
export const VECTOR_COMPONENTS = {
  source: 'app_logs',
  transform: 'pod_metadata',
  sink: 'output',
  /** The probes' http_server source and the blackhole sink it feeds (`vectorHealthEndpoint`). */
  healthSource: 'health',
  healthSink: 'health_discard',
} as const;

/**
 * The longest line the file source passes on: 1 MiB, as the other agents' longest line. Longer
 * lines are dropped whole, with a warning (`max_line_bytes`, default 100 KiB, src/sources/file.rs;
 * lib/file-source-common/src/buffer.rs `read_until_with_max_size` discards up to the next newline;
 * v0.54.0 and v0.57.0).
 */
export const VECTOR_MAX_LINE_BYTES = 1024 * 1024;

/** Where the kubelet probes Vector: an HTTP GET on the pod IP. */
export interface VectorHealthEndpoint {
  readonly path: string;
  readonly port: number;
  readonly portName: string;
  /** The http_server source that serves it, as it goes into `sources` of vector.yaml. */
  readonly source: Json;
}

/**
 * The one place the probes' endpoint is decided (the startupProbe, and any other probe of the
 * agent, take path and port from here).
 *
 * Not Vector's API: from 0.55 the API port also serves the gRPC observability API, events included,
 * and cannot be limited to `/health`. Instead an `http_server` source accepts only `GET /health`
 * (vectordotdev/vector src/sources/http_server.rs and src/sources/util/http/prelude.rs, v0.57.0 as
 * v0.54.0): `method: GET` makes warp refuse every other method, `strict_path` every other path
 * (404), except the built-in `GET /ping`; a GET without a body decodes to no event and is
 * answered with `response_code` 200 once the (empty) batch is accepted. Whatever a GET body would
 * decode to goes to a blackhole sink, never to the output. The source serves once the topology has
 * started, and stops serving at SIGTERM (the server's graceful shutdown), as the API's `/health`
 * did (it answered 503 while shutting down at v0.54.0).
 */
export function vectorHealthEndpoint(port: number): VectorHealthEndpoint {
  const path = '/health';
  return {
    path,
    port,
    portName: 'vector-health',
    source: { type: 'http_server', address: `0.0.0.0:${port}`, method: 'GET', path, strict_path: true },
  };
}

export interface VectorConfigOptions {
  /** Directory the app writes its log files into (also Vector's data_dir: see below). */
  readonly logDirectory: string;
  /** Glob of the files to tail inside logDirectory. */
  readonly filePattern: string;
  /** Port of the probes' endpoint (`vectorHealthEndpoint`), on 0.0.0.0. */
  readonly healthPort: number;
  readonly output: LogOutputConfig;
  /** secret id -> the secret's name (see outputSecretEnv): here the name of its file in `VECTOR_SECRETS.directory`. */
  readonly secretVars: Record<string, string>;
  /** The capture files' glob and the pod-logs env var, when those sources are on (`AgentSources`). */
  readonly sources?: { readonly capture?: string; readonly podLogsEnv?: string };
}

/**
 * How the output's secrets reach Vector: each one a file of a Secret volume mounted read-only at
 * `directory` (the file named after the secret, `outputSecretEnv`'s name: `LOG_OUTPUT_PASSWORD`),
 * read at start by Vector's `directory` secret backend named `backend`, and put where the config
 * says `SECRET[<backend>.<file>]` (vectordotdev/vector src/secrets/directory.rs and
 * src/config/loading/secret.rs, v0.57.0, the same at v0.54.0):
 * - the key is the file name under `path` (`path.join(key)`); a key matches `[[:word:].\-/]+`
 *   (`COLLECTOR`), which `LOG_OUTPUT_*` does; the backend name `[[:word:]]+`;
 * - the file is read whole: an empty one stops Vector at start ("secret in file '...' was empty");
 *   `remove_trailing_whitespace` (default false, written here) would also strip trailing spaces
 *   and tabs of a password, so it stays off;
 * - the value replaces the placeholder in the config's text before it is parsed (as `${NAME}`
 *   was), after the environment interpolation of 0.54 to 0.56, which does not reach it: the
 *   placeholder is the only line of a `|-` block scalar, so quotes, `: `, ` #` and backslashes
 *   stay in the string and a trailing line break of the Secret's value is dropped (YAML's strip
 *   chomping); a value with a line break inside is not one YAML line and Vector refuses to start.
 * - `vector validate` reads the files too (it loads the config with its secrets).
 * Not in the environment: the values never enter the pod spec, the ConfigMap or `/proc/<pid>/environ`.
 */
export const VECTOR_SECRETS = {
  backend: 'log_output',
  directory: '/etc/log-agent-secrets',
} as const;

/**
 * `SECRET[<backend>.<key>]` as Vector finds it (src/config/loading/secret.rs `COLLECTOR`, v0.57.0:
 * `[[:word:]]+` backend names), with the hyphen its next release also takes in backend names
 * (changelog.d/25849_secret_backend_hyphen.fix.md on master after v0.57.0).
 */
export const VECTOR_SECRET_PLACEHOLDER = /SECRET\[([A-Za-z0-9_-]+)\.([A-Za-z0-9_.\-/]+)\]/;

/** The component ids of the other sources (`captureStdout`, `podLogs`). */
export const VECTOR_SOURCE_IDS = { capture: 'stdout_capture', podLogs: 'pod_logs', cri: 'pod_logs_cri' } as const;

/** A CRI log line (`<time> <stream> <P|F> <log>`, the kubelet's format: kubernetes pkg/kubelet/kuberuntime/logs/logs.go, v1.37.2). */
const CRI_LINE = '^(?P<time>\\S+) (?P<stream>stdout|stderr) (?P<tag>[PF]) ?(?P<log>.*)$';
/** A partial CRI line: the next line continues it. */
const CRI_PARTIAL = '^\\S+ (stdout|stderr) P ';

/**
 * The other sources as Vector config: the capture files (a file source like the app's), and the
 * pod's kubelet log files: a file source whose `multiline` joins a run of partial (P) lines with
 * the full (F) line after it (`continue_past`: lines matching `condition_pattern` continue, the
 * first that does not ends the group and is included; a line that does not match `start_pattern`
 * passes at once: src/line_agg.rs, v0.57.0), then a remap that takes each part's `log` and joins
 * them. A file the kubelet renames away is read on: the file server keeps a watcher whose file its
 * glob no longer finds until `rotate_wait_secs` (default `u64::MAX / 2`): lib/file-source/src/file_server.rs, v0.57.0.
 */
function otherSources(o: VectorConfigOptions): { sources: Json; transforms: Json; inputs: string[] } {
  const sources: Json = {};
  const transforms: Json = {};
  const inputs: string[] = [];
  const file = { read_from: 'beginning', fingerprint: { strategy: 'device_and_inode' }, max_line_bytes: VECTOR_MAX_LINE_BYTES };
  if (o.sources?.capture !== undefined) {
    sources[VECTOR_SOURCE_IDS.capture] = { type: 'file', include: [lit(o.sources.capture)], ...file };
    inputs.push(VECTOR_SOURCE_IDS.capture);
  }
  if (o.sources?.podLogsEnv !== undefined) {
    sources[VECTOR_SOURCE_IDS.podLogs] = {
      type: 'file',
      include: [env(o.sources.podLogsEnv)],
      ...file,
      multiline: { start_pattern: CRI_PARTIAL, condition_pattern: CRI_PARTIAL, mode: 'continue_past', timeout_ms: 1000 },
    };
    transforms[VECTOR_SOURCE_IDS.cri] = {
      type: 'remap',
      inputs: [VECTOR_SOURCE_IDS.podLogs],
      source: [
        'parts = split(string!(.message), "\\n")',
        `first = parse_regex(string(parts[0]) ?? "", r'${CRI_LINE}') ?? {}`,
        '.stream = first.stream',
        '.time = first.time',
        `.message = join!(map_values(parts) -> |p| { m = parse_regex(p, r'${CRI_LINE}') ?? { "log": p }; string(m.log) ?? p }, "")`,
      ].join('\n') + '\n',
    };
    inputs.push(VECTOR_SOURCE_IDS.cri);
  }
  return { sources, transforms, inputs };
}
/** The rendered config: as an object (for tests) and as the YAML file. */
export interface VectorConfig {
  readonly config: Json;
  readonly yaml: string;
}

const secret = (name: string) => `SECRET[${VECTOR_SECRETS.backend}.${name}]`;

/**
 * `${NAME}`: only the pod-logs path, which the kubelet builds in the agent's env from the app
 * container's name and the pod's uid; Vector 0.57 expands it only because the agent is started
 * with `VECTOR_DANGEROUSLY_ALLOW_ENV_VAR_INTERPOLATION=true` then (log-agent.ts), and nothing
 * else of the config holds a `$`.
 */
const env = (name: string) => `\${${name}}`;

/**
 * A user-supplied string, written as it is. It must hold no `$`: Vector 0.54 to 0.56 interpolate
 * `$NAME` and `${NAME}` in the whole file (`$$` is a `$`), 0.57 and later read every `$` as
 * itself (src/config/loading/mod.rs `prepare_input`, v0.57.0), so no one text means the same
 * value to every release of the range.
 */
function lit(s: string): string {
  if (s.includes('$')) {
    throw new VectorUnsupportedOutputError({
      value: s,
      problem: `Vector cannot be given ${JSON.stringify(s)} as it is: Vector 0.54 to 0.56 read '$' in the config as an environment ` +
        'variable, 0.57 and later as itself (vector src/config/loading/mod.rs, v0.57.0), so no one config means this value to every release',
      fix: `give a value without '$', or use ${OTHER_AGENTS}`,
    });
  }
  return s;
}

/** An output Vector cannot ship to, with what to use instead (placed by the construct: src/private/errors.ts). */
export class VectorUnsupportedOutputError extends SidecarError {}

/**
 * Where a refusal's fix names the other agents: the agent's face (./agent.ts) puts the registered
 * agents that ship to the output in its place (the renderer does not know the registry).
 */
export const OTHER_AGENTS = 'another LogAgent';

function tls(on: boolean): Json {
  return on ? { tls: { verify_certificate: true, verify_hostname: true } } : {};
}

function url(tlsOn: boolean, host: string, port: number, path = ''): string {
  return lit(`${tlsOn ? 'https' : 'http'}://${host}:${port}${path}`);
}

function basicAuth(vars: Record<string, string>): Json {
  return vars.username ? { auth: { strategy: 'basic', user: secret(vars.username), password: secret(vars.password) } } : {};
}

function sink(o: LogOutputConfig, vars: Record<string, string>): Json {
  const inputs = [VECTOR_COMPONENTS.transform];
  const json = { encoding: { codec: 'json' } };
  switch (o.type) {
    case 'stdout':
      return { type: 'console', inputs, target: 'stdout', ...json };
    case 'forward':
      throw new VectorUnsupportedOutputError({
        value: o.type,
        problem: 'Vector has no Fluent forward sink, so LogAgent.vector() cannot use LogOutput.forward()',
        fix: 'ship with LogOutput.http(), loki(), elasticsearch(), opensearch() or stdout(), ' +
          `or keep the forward output with ${OTHER_AGENTS}`,
      });
    case 'http': {
      // `uri` is a template (vector src/sinks/http/config.rs `uri: Template`, 0.54 and 0.57): `%` starts
      // a strftime item (src/template.rs), so a percent-encoded path would not be sent as given.
      if (o.uri.includes('%')) {
        throw new VectorUnsupportedOutputError({
          value: o.uri,
          problem: `Vector reads the http output's uri ${JSON.stringify(o.uri)} as a template, where '%' starts a strftime time format ` +
            '(vector src/template.rs, v0.54.0 and v0.57.0), so a percent-encoded path is not sent as given',
          fix: `use a uri without '%', or ${OTHER_AGENTS}`,
        });
      }
      const headers: Record<string, string> = {};
      for (const h of Object.keys(o.headers)) headers[lit(h)] = secret(vars[`header_${h}`]);
      return {
        type: 'http',
        inputs,
        uri: url(o.tls, o.host, o.port, o.uri),
        method: 'post',
        ...json,
        framing: { method: 'newline_delimited' },
        ...basicAuth(vars),
        ...(Object.keys(headers).length > 0 ? { request: { headers } } : {}),
        ...tls(o.tls),
      };
    }
    case 'loki':
      return {
        type: 'loki',
        inputs,
        endpoint: url(o.tls, o.host, o.port),
        ...json,
        labels: Object.fromEntries(Object.entries(o.labels).map(([k, v]) => [lit(k), lit(v)])),
        ...(o.tenantId ? { tenant_id: lit(o.tenantId) } : {}),
        ...basicAuth(vars),
        ...tls(o.tls),
      };
    case 'elasticsearch':
    case 'opensearch':
      return {
        type: 'elasticsearch',
        inputs,
        endpoints: [url(o.tls, o.host, o.port)],
        mode: 'bulk',
        // OpenSearch does not report an Elasticsearch version the auto-detection understands;
        // v8 sends typeless bulk requests, which OpenSearch (1.x and 2.x+) accepts.
        api_version: o.type === 'elasticsearch' ? 'auto' : 'v8',
        // a dated index: the template's strftime items, from each event's timestamp (vector src/template.rs, v0.57.0)
        bulk: { index: o.indexDateFormat !== undefined ? `${lit(o.index)}-${o.indexDateFormat}` : lit(o.index) },
        ...basicAuth(vars),
        ...tls(o.tls),
      };
  }
}

/** Vector's `vector.yaml`. Throws VectorUnsupportedOutputError for the forward output. */
export function renderVectorConfig(o: VectorConfigOptions): VectorConfig {
  const { source, transform, sink: sinkId } = VECTOR_COMPONENTS;
  const health = vectorHealthEndpoint(o.healthPort);
  const secrets = Object.keys(o.secretVars).length > 0;
  const others = otherSources(o);
  const config: Json = {
    // The shared log volume: checkpoints survive restarts of the agent container. Vector
    // creates `<logDirectory>/app_logs/` for them; it is excluded from the tailed files.
    data_dir: lit(o.logDirectory),
    // Off (its default, said here): see vectorHealthEndpoint.
    api: { enabled: false },
    // The output's secrets, read from the Secret volume (see VECTOR_SECRETS); none, no backend.
    ...(secrets ? { secret: { [VECTOR_SECRETS.backend]: { type: 'directory', path: VECTOR_SECRETS.directory, remove_trailing_whitespace: false } } } : {}),
    sources: {
      [source]: {
        type: 'file',
        include: [lit(`${o.logDirectory}/${o.filePattern}`)],
        exclude: [lit(`${o.logDirectory}/${source}`), lit(`${o.logDirectory}/${source}/*`)],
        read_from: 'beginning',
        // The default `checksum` fingerprint skips a file until its first line is complete and
        // takes files whose first lines are equal for one file (vectordotdev/vector
        // src/sources/file.rs `FingerprintConfig`, lib/file-source-common/src/fingerprinter.rs,
        // v0.54.0 and v0.57.0). Device and inode tell every file on the log volume apart from its first byte.
        fingerprint: { strategy: 'device_and_inode' },
        max_line_bytes: VECTOR_MAX_LINE_BYTES,
      },
      [VECTOR_COMPONENTS.healthSource]: health.source,
      ...others.sources,
    },
    transforms: {
      ...others.transforms,
      [transform]: {
        type: 'remap',
        inputs: [source, ...others.inputs],
        source: [
          '.pod = get_env_var!("POD_NAME")',
          '.namespace = get_env_var!("POD_NAMESPACE")',
          '.node = get_env_var!("NODE_NAME")',
        ].join('\n') + '\n',
      },
    },
    sinks: {
      // End-to-end acknowledgements: the file source moves its checkpoint only past what the
      // sink has delivered (src/sources/file.rs, v0.54.0 and v0.57.0: with acknowledgements the checkpoint
      // is updated on `BatchStatus::Delivered`, otherwise when read). The log files on the
      // shared volume are then the durable buffer: a restarted agent resumes from the last
      // delivered line instead of losing what sat in its memory buffer. No disk buffer: it
      // needs a `max_size` of at least ~256 MB (lib/vector-buffers/src/config.rs), more than
      // the log volume has to spare.
      [sinkId]: { ...sink(o.output, o.secretVars), acknowledgements: { enabled: true } },
      [VECTOR_COMPONENTS.healthSink]: { type: 'blackhole', inputs: [VECTOR_COMPONENTS.healthSource] },
    },
  };
  // Every string double-quoted and escaped (src/private/values.ts): a label, tenant or index
  // `0o17` stays a string for Vector's YAML 1.2 reader (written plain, it read 15). Vector puts
  // each secret into the text before parsing it: a literal block scalar keeps any one-line secret
  // (quotes, `: `, ` #`, backslashes) one YAML string (VECTOR_SECRETS).
  const ours = new Set(Object.values(o.secretVars).map(secret));
  const yaml = agentYaml(config, { literal: s => ours.has(s) || /^\$\{[A-Z0-9_]+\}$/.test(s) });
  // Vector replaces every `SECRET[a.b]` of the text, wherever it stands: only ours may be there
  // (LogOutput refuses one in a label value, the only string of the user's that can hold one).
  for (const m of yaml.matchAll(new RegExp(VECTOR_SECRET_PLACEHOLDER.source, 'g'))) {
    if (!ours.has(m[0])) throw internalError(`vector.yaml holds ${m[0]}, which is not one of the output's secrets`);
  }
  return { config, yaml };
}

// ---------------------------------------------------------------------------
// Shutdown model (vectordotdev/vector v0.57.0, unchanged from v0.54.0)
// ---------------------------------------------------------------------------

/** The values the shutdown model rests on. */
export const VECTOR_SHUTDOWN = {
  /**
   * The file source's idle poll backoff: after a pass that read nothing it sleeps up to
   * 2048 ms (`backoff_cap`, `lib/file-source/src/file_server.rs`), and a SIGTERM ends that sleep
   * and the source. New files are globbed in the same loop (`glob_minimum_cooldown_ms`, 1 s,
   * elapsed by the end of a 2 s sleep).
   */
  pollBackoffMillis: 2048,
  /** Leaving the process after the topology has stopped. */
  exitSeconds: 1,
} as const;

/**
 * Vector's shutdown (v0.57.0; the same code at v0.54.0: lib/file-source/src/file_server.rs'
 * backoff and shutdown select, src/topology/running.rs `stop`, src/cli.rs
 * `--graceful-shutdown-limit-secs`, default 60):
 * - Reads: nothing after SIGTERM. The file server stops at the shutdown signal instead of
 *   finishing its backoff sleep (`lib/file-source/src/file_server.rs`). A line written at the
 *   app's exit is read by the next pass, at most 2048 ms later: 3 s in whole seconds (leaving
 *   ~0.95 s for the pass itself), so the agent must get SIGTERM that long after the app's exit.
 * - Flushes: what the source has read drains through the transform to the sink; batches are
 *   sent when the stream ends. `RunningTopology::stop` (`src/topology/running.rs`) waits for the
 *   components until `--graceful-shutdown-limit-secs`, then kills them ("Failed to gracefully
 *   shut down in time. Killing components."), whatever the sink's request timeout.
 * - Bound: the limit, plus a second to exit.
 */
export function vectorShutdown(gracefulShutdownLimitSeconds: number): ShutdownModel {
  const v = VECTOR_SHUTDOWN;
  return shutdownModel(
    [['--graceful-shutdown-limit-secs', gracefulShutdownLimitSeconds], ['exit', v.exitSeconds]],
    Math.ceil(v.pollBackoffMillis / 1000),
    // native too: the kubelet stops it right after the app, while it may sleep 2048 ms between reads
    true,
  );
}
