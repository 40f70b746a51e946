import { LogOutputConfig, SecretRef } from './agents/log-output-config';
import { LogAgent } from './agents/registry';
import { describeValue, hostReading, inetAtonAddress, isHost, isLoopbackHost, isSecretKey, isSecretName, ownEntries, readAsIpv4, snapshot } from './bind/checks';
import { manifestStringProblem } from './bind/manifest-values';
import { SidecarErrorSeparator, Where } from './private/errors';
import { sortedKeys } from './private/order';
import { characterProblem, showValue } from './private/values';
import { SecretKeyReference } from './secret-ref';

/**
 * Basic authentication, from a Secret only.
 */
export interface BasicAuth {
  /** The user name. */
  readonly username: SecretKeyReference;
  /** The password. */
  readonly password: SecretKeyReference;
}

/** Options of a network destination. */
export interface LogDestinationOptions {
  /** DNS name or IPv4 address of the destination (RFC 1123; no scheme, port or path). */
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
   * The request path, with an optional query: only the characters RFC 3986 allows (percent-encode
   * others). No `%`: an agent whose `uri` is a template refuses it.
   * @default '/'
   */
  readonly uri?: string;
  /**
   * Headers whose values come from Secrets (e.g. `Authorization`). Names are HTTP tokens.
   * @default - none
   */
  readonly secretHeaders?: { [name: string]: SecretKeyReference };
  /**
   * Basic authentication.
   * @default - none
   */
  readonly basicAuth?: BasicAuth;
}

/** Options of `LogOutput.loki()`. */
export interface LokiOutputOptions extends LogDestinationOptions {
  /**
   * Stream labels: at least one; names `[a-zA-Z_][a-zA-Z0-9_]*`; static values that every agent
   * reads as given (not empty, no control characters, no white space at either end, no `,`, `"`,
   * leading `$`, `${`, `{{` or `%`).
   * @default { job: 'cdk8s-sidecars' }
   */
  readonly labels?: { [key: string]: string };
  /**
   * Tenant ID (multi-tenant Loki; sent as `X-Scope-OrgID`): letters, digits and `!-_.*'()`, at
   * most 150 characters.
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
   * The index to write to: lower-case letters, digits, `.`, `_` and `-`, starting with a letter
   * or digit (no templates; for daily indices see `indexDateFormat`).
   * @default 'app-logs'
   */
  readonly index?: string;

  /**
   * Write each record to a dated index, `<index>-<date>`, the date the record's own time (UTC) in
   * this strftime format: `%Y`, `%m`, `%d` and `%H`, separated by `.`, `_` or `-` (e.g.
   * `'%Y.%m.%d'` for daily indices, as Logstash names them). Each agent writes it in its own
   * form (its Logstash options, or an index template) to the same index names (docs/log-agents.md).
   * @default - one index, `index`, without a date
   */
  readonly indexDateFormat?: string;
  /**
   * Basic authentication.
   * @default - none
   */
  readonly basicAuth?: BasicAuth;
}

// ---------------------------------------------------------------------------------------------
// What each factory accepts. A value reaches the agents' config files, so it is refused here when
// the destination itself would refuse it or when one of the agents' config formats cannot hold it
// (the renderers then only have to quote). Each rule names where it comes from.

/** A value as shown in messages: quoted, every character outside printable ASCII as \uXXXX. */
/** A value as shown in messages: `showValue` for a string; a JavaScript caller's value of another type by its type. */
const show = (v: unknown): string => (typeof v === 'string' ? showValue(v) : describeValue(v));

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

function refuse(factory: string, what: string, value: string, rule: string, fix: string, sep?: SidecarErrorSeparator): never {
  throw new Where(`LogOutput.${factory}()`).error(`${what} ${show(value)} ${rule}`, value, fix, sep);
}


function checkHost(factory: string, host: string): void {
  // An empty host is reported by WithLogAgent, with the construct's path.
  if (host === '') return;
  // RFC 1123 host names (also IPv4 addresses), a trailing '.' allowed: what every agent and the URLs they build accept.
  const bare = typeof host === 'string' && host.endsWith('.') ? host.slice(0, -1) : host;
  if (typeof host === 'string' && readAsIpv4(bare)) {
    const v4 = inetAtonAddress(bare);
    const reads = v4 === undefined ? "'012' is 0.0.0.10, '10.1' is 10.0.0.1" : `'${bare}' is ${v4}${isLoopbackHost(v4) ? ", this pod's loopback" : ''}`;
    refuse(factory, 'host', host, "is ambiguous: not an IPv4 address in dotted-quad form, but the agents' C resolver reads it as an IPv4 address " +
      `(inet_aton: ${reads})`, "give the address as four decimal numbers, e.g. '10.0.0.1', or a DNS name");
  }
  const ipv6 = typeof host === 'string' ? hostReading(host) : undefined;
  if (ipv6 !== undefined) {
    refuse(factory, 'host', host, `is not accepted: ${ipv6}, and a log output takes a DNS name or an IPv4 address (the agents' ` +
      'configs and URLs are written from the host as given)', "give a DNS name, e.g. 'logs.example.com'");
  }
  if (!isHost(host, { allowTrailingDot: true })) {
    refuse(factory, 'host', host, "is not a DNS name or IPv4 address (RFC 1123: letters, digits, '-' and '.', at most 253 characters)",
      "give the host alone, without scheme, port or path, e.g. 'logs.example.com'");
  }
}

/** RFC 3986 path-absolute with an optional query: no space, quote, `#`, `{`, control character. */
const URI_PATH = /^\/(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/]|%[0-9A-Fa-f]{2})*(?:\?(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9A-Fa-f]{2})*)?$/;

/** RFC 9110 field-name (`token`). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Loki label names: `[a-zA-Z_][a-zA-Z0-9_]*` (Loki's label grammar, which an agent checks at its
 * start and refuses to start otherwise); `__` names are reserved.
 */
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

function checkLabels(labels: Record<string, string>): void {
  const names = ownEntries(new Where('LogOutput.loki()'), 'labels', labels, "{ app: 'web' }").map(([name]) => name);
  if (names.length === 0) {
    throw new Where('LogOutput.loki()').error('labels is empty; Loki needs at least one stream label (an agent refuses to start without one)',
      labels, "Leave labels out for the default { job: 'cdk8s-sidecars' } or give one, e.g. { app: 'web' }", '. ');
  }
  for (const name of names) {
    if (!LABEL_NAME.test(name) || name.startsWith('__')) {
      refuse('loki', 'label name', name, "is not a Loki label name: it must match [a-zA-Z_][a-zA-Z0-9_]* and not start with '__' " +
        '(an agent refuses any other name at start)', "e.g. 'app' or 'team_name'", ', ');
    }
    const v = labels[name];
    if (typeof v !== 'string') {
      throw new Where('LogOutput.loki()').error(`label ${name} value ${describeValue(v)} is not a string`, v, "give the label's value, e.g. 'shop-web'");
    }
    // In every agent's config file, which reaches the agent through a ConfigMap: a character the
    // manifest cannot carry (U+0085, U+2028, ... : src/private/values.ts) would change the file.
    const chars = characterProblem(v);
    const rules: Array<[boolean, string]> = [
      [chars !== undefined, `${chars} (the label is written into the agent's config file, in a ConfigMap)`],
      [CONTROL.test(v), 'has a newline or another control character, which no agent config can hold'],
    ];
    // and what each registered agent cannot carry (the output is made before its agent is chosen)
    const bad = rules.find(([broken]) => broken)?.[1] ??
      LogAgent._registered.map(a => a.lokiLabelValueProblem?.(v)).find(why => why !== undefined);
    if (bad) refuse('loki', `label ${name} value`, v, bad, "use a plain value, e.g. 'shop-web'");
  }
}

/**
 * Loki tenant IDs: letters, digits and `!-_.*'()`, at most 150 characters, not `.` or `..`
 * (grafana/dskit tenant/tenant.go `ValidTenantID`, which Loki uses).
 */
const TENANT = /^[A-Za-z0-9!\-_.*'()]{1,150}$/;

/**
 * An index name every agent writes as given: lower-case letters, digits, `.`, `_` and `-`, not
 * starting with `-`, `_` or `.` (a subset of Elasticsearch's rules, without the characters that
 * the agents read as templates: `{{ }}`, `%` and `${}` placeholders).
 */
const INDEX = /^[a-z0-9][a-z0-9._-]{0,254}$/;

/**
 * The date formats of `indexDateFormat`: the strftime conversions that glibc, Ruby and Rust's
 * chrono (the agents' date writers) write alike, as digits (an index name must be lower case), and
 * separators an index name may hold.
 */
const INDEX_DATE = /^(?:%[YmdH]|[._-]){1,32}$/;


function ref(factory: string, what: string, v: SecretKeyReference): SecretRef {
  const secretName = v?.secret?.name ?? '';
  const key = v?.key ?? '';
  if (!isSecretName(secretName)) {
    refuse(factory, `${what}: Secret name`, secretName, 'is not the name of a Secret (a DNS subdomain: lower-case letters, digits, ' +
      "'-' and '.'); the API server rejects such a reference", "Give the Secret's name, e.g. { name: 'log-creds' } or kplus.Secret.fromSecretName(scope, 'id', 'log-creds')", '. ');
  }
  if (!isSecretKey(key)) {
    refuse(factory, `${what}: key`, key, "is not a key of a Secret's data (letters, digits, '-', '_' and '.'); the API server rejects " +
      'such a reference', `Give the key that holds the value in Secret '${secretName}', e.g. 'password'`, '. ');
  }
  // both go into the agent's env (secretKeyRef) or its Secret volume, in the manifest
  for (const [prop, value] of [['Secret name', secretName], ['key', key]]) {
    const why = manifestStringProblem(value);
    if (why !== undefined) refuse(factory, `${what}: ${prop}`, value, why, `use another ${prop}`);
  }
  return { secretName, key };
}

function auth(factory: string, a?: BasicAuth) {
  return a ? { username: ref(factory, 'basicAuth.username', a.username), password: ref(factory, 'basicAuth.password', a.password) } : undefined;
}

/**
 * Where the log agent ships the logs. Credentials come only from Secrets, never through the
 * agent's ConfigMap: they reach the agent as environment variables (`secretKeyRef`), or as files of
 * a read-only Secret volume for an agent that reads its secrets from files (docs/log-agents.md).
 */
export class LogOutput {
  /** Print every record on the agent's stdout (`kubectl logs <pod> -c log-agent`). */
  public static stdout(): LogOutput {
    return new LogOutput({ type: 'stdout' });
  }

  /** The Fluent forward protocol (a forward server, e.g. an aggregating log agent). */
  public static forward(options: ForwardOutputOptions): LogOutput {
    options = snapshot(options); // each option read once: checked and used, the same value
    checkHost('forward', options.host);
    return new LogOutput({ type: 'forward', host: options.host, port: options.port ?? 24224, tls: options.tls ?? false });
  }

  /** JSON lines over HTTP(S) POST. */
  public static http(options: HttpOutputOptions): LogOutput {
    options = snapshot(options); // each option read once: checked and used, the same value
    const tls = options.tls ?? true;
    checkHost('http', options.host);
    const uri = options.uri ?? '/';
    if (!URI_PATH.test(uri)) {
      refuse('http', 'uri', uri, "is not a request path: it must start with '/' and hold only the characters RFC 3986 allows " +
        "(percent-encode others; no spaces, quotes, '#' or '{')", "e.g. '/ingest?source=k8s'", ', ');
    }
    const headers: Record<string, SecretRef> = {};
    // Each header reaches the agent as an environment variable (or a file) named after it (see outputSecretEnv).
    const envNames = new Map<string, string>();
    ownEntries(new Where('LogOutput.http()'), 'secretHeaders', options.secretHeaders, "{ Authorization: { secret, key: 'token' } }");
    for (const name of sortedKeys(options.secretHeaders ?? {})) {
      if (!HEADER_NAME.test(name)) {
        refuse('http', 'secretHeaders name', name, "is not an HTTP header name (RFC 9110 token: letters, digits and !#$%&'*+.^_`|~-)", "e.g. 'Authorization'", ', ');
      }
      const env = secretEnvName(`header_${name}`);
      const other = envNames.get(env);
      if (other !== undefined) {
        refuse('http', 'secretHeaders name', name, `and ${show(other)} are the same header to the agent (both become ${env})`, 'give each header once');
      }
      envNames.set(env, name);
      headers[name] = ref('http', `secretHeaders[${show(name)}]`, options.secretHeaders![name]);
    }
    const authorization = Object.keys(headers).find(h => h.toLowerCase() === 'authorization');
    if (authorization !== undefined && options.basicAuth !== undefined) {
      // One agent sends both headers, another drops the secret header without a word (each agent's
      // config.ts, http output).
      refuse('http', 'secretHeaders name', authorization, 'comes with basicAuth, which sends an Authorization header of its own ' +
        '(one agent would send both, another only one)', 'give basicAuth or the Authorization header, not both');
    }
    return new LogOutput({
      type: 'http',
      host: options.host,
      port: options.port ?? (tls ? 443 : 80),
      tls,
      uri,
      headers,
      basicAuth: auth('http', options.basicAuth),
    });
  }

  /** Grafana Loki. */
  public static loki(options: LokiOutputOptions): LogOutput {
    options = snapshot(options); // each option read once: checked and used, the same value
    checkHost('loki', options.host);
    const labels = { ...(options.labels ?? { job: 'cdk8s-sidecars' }) };
    checkLabels(labels);
    if (options.tenantId !== undefined && (!TENANT.test(options.tenantId) || options.tenantId === '.' || options.tenantId === '..')) {
      refuse('loki', 'tenantId', options.tenantId, "is not a Loki tenant ID (letters, digits and !-_.*'(), at most 150 characters, " +
        "not '.' or '..': grafana/dskit tenant.ValidTenantID)", "e.g. 'team-a'", ', ');
    }
    return new LogOutput({
      type: 'loki',
      host: options.host,
      port: options.port ?? 3100,
      tls: options.tls ?? false,
      labels,
      tenantId: options.tenantId,
      basicAuth: auth('loki', options.basicAuth),
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
    options = snapshot(options); // each option read once: checked and used, the same value
    checkHost(type, options.host);
    const index = options.index ?? 'app-logs';
    if (!INDEX.test(index)) {
      refuse(type, 'index', index, "is not an index name every agent writes as given: lower-case letters, digits, '.', '_' and '-', " +
        'starting with a letter or digit, at most 255 characters (no templates or date patterns)', "e.g. 'shop-web'", ', ');
    }
    const dateFormat = options.indexDateFormat;
    if (dateFormat !== undefined && (typeof dateFormat !== 'string' || !INDEX_DATE.test(dateFormat) || !dateFormat.includes('%'))) {
      refuse(type, 'indexDateFormat', dateFormat, 'is not a date format every agent writes the same way', 'give %Y, %m, %d and %H, separated by ' +
        "'.', '_' or '-' (the conversions strftime and chrono write alike), e.g. '%Y.%m.%d'", ': ');
    }
    return new LogOutput({
      type,
      host: options.host,
      port: options.port ?? 9200,
      tls: options.tls ?? true,
      index,
      ...(dateFormat !== undefined ? { indexDateFormat: dateFormat } : {}),
      basicAuth: auth(type, options.basicAuth),
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
export function outputSecretEnv(config: LogOutputConfig): {
  env: Array<{ name: string; valueFrom: any }>;
  vars: Record<string, string>;
  /** name -> the Secret's key, for an agent that reads them as files of that name. */
  refs: Record<string, SecretRef>;
} {
  const env: Array<{ name: string; valueFrom: any }> = [];
  const vars: Record<string, string> = {};
  const refs: Record<string, SecretRef> = {};
  const add = (id: string, r: SecretRef) => {
    const name = secretEnvName(id);
    env.push({ name, valueFrom: { secretKeyRef: { key: r.key, name: r.secretName } } });
    vars[id] = name;
    refs[name] = r;
  };
  if ('basicAuth' in config && config.basicAuth) {
    add('username', config.basicAuth.username);
    add('password', config.basicAuth.password);
  }
  if (config.type === 'http') {
    for (const [header, r] of Object.entries(config.headers)) add(`header_${header}`, r);
  }
  return { env, vars, refs };
}

/** The environment variable that carries the secret with this id. @internal */
export function secretEnvName(id: string): string {
  return `LOG_OUTPUT_${id.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}
