/**
 * Vector config rendering (YAML). Pure: options in, config out.
 *
 * Every key emitted here was checked against Vector's reference for the pinned release (see
 * `VECTOR_IMAGE` in log-agent.ts; `website/cue/reference` in vectordotdev/vector):
 * - global `data_dir` (must exist and be writable; the file source keeps its checkpoints in a
 *   `<data_dir>/<source id>/` subdirectory it creates)
 * - `api.enabled`, `api.address`; `api.graphql` and `api.playground` (Vector < 0.55 only:
 *   0.55 moved the observability API from GraphQL to gRPC and rejects both keys; `GET /health`
 *   is served in both)
 * - file source `include`, `exclude`, `read_from`, `fingerprint.strategy`
 * - remap transform `inputs`, `source` (VRL `get_env_var!`)
 * - sinks: common `type`, `inputs`, `encoding.codec`;
 *   console `target`;
 *   http `uri`, `method`, `framing.method`, `auth.{strategy,user,password}`, `request.headers`,
 *   `tls.{verify_certificate,verify_hostname}` (0.55 removed the top-level `headers`);
 *   loki `endpoint`, `labels`, `tenant_id`, `auth`, `tls`;
 *   elasticsearch `endpoints`, `mode`, `api_version`, `bulk.index`, `auth`, `tls`
 * - sinks' `acknowledgements.enabled` (end-to-end acknowledgements, every sink config at v0.54.0)
 * - `${NAME}` environment interpolation for secrets (the values never enter the ConfigMap)
 *
 * Vector has no Fluent forward sink: `LogOutput.forward()` is refused by the agent.
 */
import { Json } from '../engine/spec';
import { LogOutputConfig } from '../log-output';
import { ShutdownModel, shutdownModel } from './shutdown-model';
import { agentYaml } from '../private/values';

/** The component ids of the rendered topology. */
export const VECTOR_COMPONENTS = {
  source: 'app_logs',
  transform: 'pod_metadata',
  sink: 'output',
} as const;

export interface VectorConfigOptions {
  /** Directory the app writes its log files into (also Vector's data_dir: see below). */
  readonly logDirectory: string;
  /** Glob of the files to tail inside logDirectory. */
  readonly filePattern: string;
  /** Port of the API that serves `GET /health` on 0.0.0.0 for the kubelet probes. */
  readonly apiPort: number;
  /**
   * Vector < 0.55: also set `api.graphql: false` and `api.playground: false`, so that the
   * pod IP serves `/health` only. From 0.55 both keys are rejected (the API is gRPC).
   */
  readonly legacyGraphqlApi: boolean;
  readonly output: LogOutputConfig;
  /** secret id -> env var name (see outputSecretEnv) */
  readonly secretVars: Record<string, string>;
}

/** The rendered config: as an object (for tests) and as the YAML file. */
export interface VectorConfig {
  readonly config: Json;
  readonly yaml: string;
}

const env = (name: string) => `\${${name}}`;

/**
 * A user-supplied string as a literal: Vector interpolates `$NAME` and `${NAME}` anywhere in
 * the file, and `$$` is a literal `$`.
 */
const lit = (s: string) => s.replace(/\$/g, '$$$$');

/** An output Vector cannot ship to, with what to use instead. */
export class VectorUnsupportedOutputError extends Error {}

function tls(on: boolean): Json {
  return on ? { tls: { verify_certificate: true, verify_hostname: true } } : {};
}

function url(tlsOn: boolean, host: string, port: number, path = ''): string {
  return lit(`${tlsOn ? 'https' : 'http'}://${host}:${port}${path}`);
}

function basicAuth(vars: Record<string, string>): Json {
  return vars.username ? { auth: { strategy: 'basic', user: env(vars.username), password: env(vars.password) } } : {};
}

function sink(o: LogOutputConfig, vars: Record<string, string>): Json {
  const inputs = [VECTOR_COMPONENTS.transform];
  const json = { encoding: { codec: 'json' } };
  switch (o.type) {
    case 'stdout':
      return { type: 'console', inputs, target: 'stdout', ...json };
    case 'forward':
      throw new VectorUnsupportedOutputError(
        'Vector has no Fluent forward sink, so LogAgent.vector() cannot use LogOutput.forward(); ' +
        'ship with LogOutput.http(), loki(), elasticsearch(), opensearch() or stdout(), ' +
        'or keep the forward output with LogAgent.fluentBit() or LogAgent.fluentd()',
      );
    case 'http': {
      // `uri` is a template in 0.54 (vector src/sinks/http/config.rs `uri: Template`): `%` starts
      // a strftime item (src/template.rs), so a percent-encoded path would not be sent as given.
      if (o.uri.includes('%')) {
        throw new VectorUnsupportedOutputError(
          `Vector reads the http output's uri ${JSON.stringify(o.uri)} as a template, where '%' starts a strftime time format ` +
          '(vector src/template.rs, v0.54.0), so a percent-encoded path is not sent as given; use a uri without \'%\', ' +
          'or LogAgent.fluentBit() or LogAgent.fluentd()',
        );
      }
      const headers: Record<string, string> = {};
      for (const h of Object.keys(o.headers)) headers[lit(h)] = env(vars[`header_${h}`]);
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
        bulk: { index: lit(o.index) },
        ...basicAuth(vars),
        ...tls(o.tls),
      };
  }
}

/** Vector's `vector.yaml`. Throws VectorUnsupportedOutputError for the forward output. */
export function renderVectorConfig(o: VectorConfigOptions): VectorConfig {
  const { source, transform, sink: sinkId } = VECTOR_COMPONENTS;
  const config: Json = {
    // The shared log volume: checkpoints survive restarts of the agent container. Vector
    // creates `<logDirectory>/app_logs/` for them; it is excluded from the tailed files.
    data_dir: lit(o.logDirectory),
    api: {
      enabled: true,
      address: `0.0.0.0:${o.apiPort}`,
      ...(o.legacyGraphqlApi ? { graphql: false, playground: false } : {}),
    },
    sources: {
      [source]: {
        type: 'file',
        include: [lit(`${o.logDirectory}/${o.filePattern}`)],
        exclude: [lit(`${o.logDirectory}/${source}`), lit(`${o.logDirectory}/${source}/*`)],
        read_from: 'beginning',
        // The default `checksum` fingerprint skips a file until its first line is complete and
        // takes files whose first lines are equal for one file (vectordotdev/vector
        // src/sources/file.rs `FingerprintConfig`, lib/file-source-common/src/fingerprinter.rs,
        // v0.54.0). Device and inode tell every file on the log volume apart from its first byte.
        fingerprint: { strategy: 'device_and_inode' },
      },
    },
    transforms: {
      [transform]: {
        type: 'remap',
        inputs: [source],
        source: [
          '.pod = get_env_var!("POD_NAME")',
          '.namespace = get_env_var!("POD_NAMESPACE")',
          '.node = get_env_var!("NODE_NAME")',
        ].join('\n') + '\n',
      },
    },
    sinks: {
      // End-to-end acknowledgements: the file source moves its checkpoint only past what the
      // sink has delivered (src/sources/file.rs, v0.54.0: with acknowledgements the checkpoint
      // is updated on `BatchStatus::Delivered`, otherwise when read). The log files on the
      // shared volume are then the durable buffer: a restarted agent resumes from the last
      // delivered line instead of losing what sat in its memory buffer. No disk buffer: it
      // needs a `max_size` of at least ~256 MB (lib/vector-buffers/src/config.rs), more than
      // the log volume has to spare.
      [sinkId]: { ...sink(o.output, o.secretVars), acknowledgements: { enabled: true } },
    },
  };
  // Every string double-quoted and escaped (src/private/values.ts): a label, tenant or index
  // `0o17` stays a string for Vector's YAML 1.2 reader (written plain, it read 15). Vector's
  // pinned line interpolates `${NAME}` in the text, before parsing it: a literal block scalar
  // keeps any secret (quotes, `: `, ` #`, backslashes) one YAML string; values with newlines are
  // refused by Vector itself.
  const yaml = agentYaml(config, { literal: s => /^\$\{[A-Z0-9_]+\}$/.test(s) });
  return { config, yaml };
}

// ---------------------------------------------------------------------------
// Shutdown model (vectordotdev/vector v0.54.0)
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
 * Vector's shutdown (v0.54.0):
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
  );
}
