import { SecretValue } from 'cdk8s-plus-27';

/**
 * Basic authentication, from a Secret only.
 */
export interface BasicAuth {
  /** The user name. */
  readonly username: SecretValue;
  /** The password. */
  readonly password: SecretValue;
}

/** Options of a network destination. */
export interface LogDestinationOptions {
  /** Host name or IP address of the destination. */
  readonly host: string;
  /**
   * TCP port.
   * @default - the output's usual port (forward 24224, HTTP 443 with TLS or 80, Loki 3100,
   * Elasticsearch/OpenSearch 9200)
   */
  readonly port?: number;
  /**
   * Use TLS (with certificate verification).
   * @default - true for HTTP, Elasticsearch and OpenSearch; false for forward and Loki
   */
  readonly tls?: boolean;
}

/** Options of `LogOutput.forward()`. */
export interface ForwardOutputOptions extends LogDestinationOptions {}

/** Options of `LogOutput.http()`. */
export interface HttpOutputOptions extends LogDestinationOptions {
  /**
   * The request path.
   * @default '/'
   */
  readonly uri?: string;
  /**
   * Headers whose values come from Secrets (e.g. `Authorization`).
   * @default - none
   */
  readonly secretHeaders?: { [name: string]: SecretValue };
  /**
   * Basic authentication.
   * @default - none
   */
  readonly basicAuth?: BasicAuth;
}

/** Options of `LogOutput.loki()`. */
export interface LokiOutputOptions extends LogDestinationOptions {
  /**
   * Stream labels.
   * @default { job: 'cdk8s-sidecars' }
   */
  readonly labels?: { [key: string]: string };
  /**
   * Tenant ID (multi-tenant Loki; sent as `X-Scope-OrgID`).
   * @default - single tenant
   */
  readonly tenantId?: string;
  /**
   * Basic authentication.
   * @default - none
   */
  readonly basicAuth?: BasicAuth;
}

/** Options of `LogOutput.elasticsearch()` and `LogOutput.opensearch()`. */
export interface SearchOutputOptions extends LogDestinationOptions {
  /**
   * The index to write to.
   * @default 'app-logs'
   */
  readonly index?: string;
  /**
   * Basic authentication.
   * @default - none
   */
  readonly basicAuth?: BasicAuth;
}

/** A secret-backed value, as the agents see it. @internal */
export interface SecretRef {
  readonly secretName: string;
  readonly key: string;
}

/** The output as data, for the agents' renderers. @internal */
export type LogOutputConfig =
  | { readonly type: 'stdout' }
  | { readonly type: 'forward'; readonly host: string; readonly port: number; readonly tls: boolean }
  | {
    readonly type: 'http';
    readonly host: string;
    readonly port: number;
    readonly tls: boolean;
    readonly uri: string;
    readonly headers: Record<string, SecretRef>;
    readonly basicAuth?: { username: SecretRef; password: SecretRef };
  }
  | {
    readonly type: 'loki';
    readonly host: string;
    readonly port: number;
    readonly tls: boolean;
    readonly labels: Record<string, string>;
    readonly tenantId?: string;
    readonly basicAuth?: { username: SecretRef; password: SecretRef };
  }
  | {
    readonly type: 'elasticsearch' | 'opensearch';
    readonly host: string;
    readonly port: number;
    readonly tls: boolean;
    readonly index: string;
    readonly basicAuth?: { username: SecretRef; password: SecretRef };
  };

function ref(v: SecretValue): SecretRef {
  return { secretName: v.secret.name, key: v.key };
}

function auth(a?: BasicAuth) {
  return a ? { username: ref(a.username), password: ref(a.password) } : undefined;
}

/**
 * Where the log agent ships the logs. Credentials come only from Secrets: they reach the agent
 * as environment variables (`secretKeyRef`), never through its ConfigMap.
 */
export class LogOutput {
  /** Print every record on the agent's stdout (`kubectl logs <pod> -c log-agent`). */
  public static stdout(): LogOutput {
    return new LogOutput({ type: 'stdout' });
  }

  /** The Fluent forward protocol (Fluentd, Fluent Bit, Vector's fluent source). */
  public static forward(options: ForwardOutputOptions): LogOutput {
    return new LogOutput({ type: 'forward', host: options.host, port: options.port ?? 24224, tls: options.tls ?? false });
  }

  /** JSON lines over HTTP(S) POST. */
  public static http(options: HttpOutputOptions): LogOutput {
    const tls = options.tls ?? true;
    const headers: Record<string, SecretRef> = {};
    for (const name of Object.keys(options.secretHeaders ?? {}).sort()) headers[name] = ref(options.secretHeaders![name]);
    return new LogOutput({
      type: 'http',
      host: options.host,
      port: options.port ?? (tls ? 443 : 80),
      tls,
      uri: options.uri ?? '/',
      headers,
      basicAuth: auth(options.basicAuth),
    });
  }

  /** Grafana Loki. */
  public static loki(options: LokiOutputOptions): LogOutput {
    return new LogOutput({
      type: 'loki',
      host: options.host,
      port: options.port ?? 3100,
      tls: options.tls ?? false,
      labels: options.labels ?? { job: 'cdk8s-sidecars' },
      tenantId: options.tenantId,
      basicAuth: auth(options.basicAuth),
    });
  }

  /** Elasticsearch (bulk API). */
  public static elasticsearch(options: SearchOutputOptions): LogOutput {
    return LogOutput.search('elasticsearch', options);
  }

  /** OpenSearch (bulk API). */
  public static opensearch(options: SearchOutputOptions): LogOutput {
    return LogOutput.search('opensearch', options);
  }

  private static search(type: 'elasticsearch' | 'opensearch', options: SearchOutputOptions): LogOutput {
    return new LogOutput({
      type,
      host: options.host,
      port: options.port ?? 9200,
      tls: options.tls ?? true,
      index: options.index ?? 'app-logs',
      basicAuth: auth(options.basicAuth),
    });
  }

  /** The output as data. @internal */
  public readonly _config: LogOutputConfig;

  /** The kind of output: `stdout`, `forward`, `http`, `loki`, `elasticsearch` or `opensearch`. */
  public readonly type: string;

  private constructor(config: LogOutputConfig) {
    this._config = config;
    this.type = config.type;
  }
}

/**
 * The environment variables that carry an output's secrets into the agent, and the name each
 * secret is known by in the agent's config. Shared by every log agent.
 * @internal
 */
export function outputSecretEnv(config: LogOutputConfig): { env: Array<{ name: string; valueFrom: any }>; vars: Record<string, string> } {
  const env: Array<{ name: string; valueFrom: any }> = [];
  const vars: Record<string, string> = {};
  const add = (id: string, r: SecretRef) => {
    const name = `LOG_OUTPUT_${id.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
    env.push({ name, valueFrom: { secretKeyRef: { key: r.key, name: r.secretName } } });
    vars[id] = name;
  };
  if ('basicAuth' in config && config.basicAuth) {
    add('username', config.basicAuth.username);
    add('password', config.basicAuth.password);
  }
  if (config.type === 'http') {
    for (const [header, r] of Object.entries(config.headers)) add(`header_${header}`, r);
  }
  return { env, vars };
}
