/**
 * Strict validation of Envoy v3 `Bootstrap` configs against Envoy's own API
 * definitions.
 *
 * The `.proto` files come from `@grpc/grpc-js-xds`, which vendors the Envoy,
 * xDS (udpa / xds), googleapis and protoc-gen-validate protos under
 * `node_modules/@grpc/grpc-js-xds/deps/`. Imports inside them are relative to
 * these include directories:
 *
 *   deps/envoy-api             envoy/...
 *   deps/xds                   udpa/..., xds/...
 *   deps/googleapis            google/api/..., google/rpc/...
 *   deps/protoc-gen-validate   validate/validate.proto
 *   protobufjs                 google/protobuf/descriptor.proto (the other
 *                              google/protobuf well-known types are bundled
 *                              inside protobufjs itself)
 *
 * The config is a plain JS object, as it would be written to envoy.yaml /
 * envoy.json, and is walked field by field against the protobuf reflection
 * types (loaded with `keepCase: true`, so field names are the snake_case proto
 * names; the lowerCamel JSON names are accepted as well, like Envoy's JSON
 * parser does). `google.protobuf.Any` values (`typed_config`, ...) are resolved
 * from their `@type`: the protos in {@link ENVOY_EAGER_PROTOS} are loaded up
 * front, any other message declared somewhere under `deps/` is loaded lazily
 * the first time its type URL is seen, and an `@type` naming no message at all
 * is reported as an error.
 *
 * Besides the JSON mapping rules (unknown fields, types, enum names, Duration
 * syntax, oneofs, ...) the walker reports the use of `deprecated = true`
 * fields / enum values and, by default, the protoc-gen-validate constraints
 * (`(validate.rules)` / `(validate.required)`) that Envoy enforces when it
 * loads a config (required fields and oneofs, string lengths, numeric ranges,
 * duration bounds, ...).
 */
import * as fs from 'fs';
import * as path from 'path';
import * as protobuf from 'protobufjs';

/** Where `@grpc/grpc-js-xds` keeps the vendored proto trees. */
export const XDS_PROTO_DEPS_DIR = path.join(path.dirname(require.resolve('@grpc/grpc-js-xds')), '..', '..', 'deps');

/** Include directories, in lookup order, that the Envoy protos' imports are relative to. */
export const ENVOY_PROTO_INCLUDE_DIRS: readonly string[] = [
  path.join(XDS_PROTO_DEPS_DIR, 'envoy-api'),
  path.join(XDS_PROTO_DEPS_DIR, 'xds'),
  path.join(XDS_PROTO_DEPS_DIR, 'googleapis'),
  path.join(XDS_PROTO_DEPS_DIR, 'protoc-gen-validate'),
  // google/protobuf/descriptor.proto (imported by the annotation protos).
  path.dirname(require.resolve('protobufjs')),
];

/** Sub-trees of the include directories that are indexed for lazy `@type` resolution. */
const INDEXED_TREES: ReadonlyArray<readonly [string, string]> = [
  [ENVOY_PROTO_INCLUDE_DIRS[0], 'envoy'],
  [ENVOY_PROTO_INCLUDE_DIRS[1], 'xds'],
  [ENVOY_PROTO_INCLUDE_DIRS[1], 'udpa'],
  [ENVOY_PROTO_INCLUDE_DIRS[2], 'google'],
  [ENVOY_PROTO_INCLUDE_DIRS[3], 'validate'],
  [ENVOY_PROTO_INCLUDE_DIRS[4], 'google/protobuf'],
];

/** Well-known types bundled inside protobufjs (no file on disk). */
const BUNDLED_WKT_PROTOS = [
  'google/protobuf/any.proto',
  'google/protobuf/duration.proto',
  'google/protobuf/empty.proto',
  'google/protobuf/field_mask.proto',
  'google/protobuf/struct.proto',
  'google/protobuf/timestamp.proto',
  'google/protobuf/wrappers.proto',
];

/**
 * Loaded when the registry is first used: the bootstrap and the extensions a
 * sidecar config typically references through `typed_config`. Anything else
 * is loaded on demand from its type URL.
 */
export const ENVOY_EAGER_PROTOS: readonly string[] = [
  'envoy/config/bootstrap/v3/bootstrap.proto',
  'envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.proto',
  'envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy.proto',
  'envoy/extensions/filters/http/router/v3/router.proto',
  'envoy/extensions/filters/http/health_check/v3/health_check.proto',
  'envoy/extensions/filters/listener/tls_inspector/v3/tls_inspector.proto',
  'envoy/extensions/transport_sockets/tls/v3/tls.proto',
  'envoy/extensions/transport_sockets/raw_buffer/v3/raw_buffer.proto',
  'envoy/extensions/upstreams/http/v3/http_protocol_options.proto',
  'envoy/extensions/access_loggers/stream/v3/stream.proto',
  'envoy/extensions/access_loggers/file/v3/file.proto',
  ...BUNDLED_WKT_PROTOS,
];

export interface EnvoyProtoOptions {
  /** Report fields / enum values / messages marked `deprecated = true` as errors. Default: true. */
  readonly deprecated?: boolean;
  /** Enforce the protoc-gen-validate constraints Envoy applies at load time. Default: true. */
  readonly validateRules?: boolean;
}

export interface EnvoyProtoStats {
  /** Milliseconds spent loading {@link ENVOY_EAGER_PROTOS} (once per process / jest module registry). */
  readonly eagerLoadMs: number;
  /** Milliseconds spent scanning `deps/` for `package` + `message` declarations (0 until first needed). */
  readonly indexMs: number;
  /** Milliseconds spent loading protos on demand for type URLs. */
  readonly lazyLoadMs: number;
  /** .proto files currently loaded into the root. */
  readonly loadedFiles: number;
  /** Proto files loaded on demand, by type URL. */
  readonly lazyLoaded: Readonly<Record<string, string>>;
}

// ---------------------------------------------------------------------------
// Proto loading
// ---------------------------------------------------------------------------

interface ProtoFileInfo {
  readonly rel: string;
  readonly abs: string;
  readonly imports: readonly string[];
}

type Resolution = { readonly type: protobuf.Type } | { readonly error: string };

class EnvoyProtoRegistry {
  public readonly root: protobuf.Root;
  public readonly eagerLoadMs: number;
  public indexMs = 0;
  public lazyLoadMs = 0;
  public readonly lazyLoaded: Record<string, string> = {};
  private messageIndex?: Map<string, string>;
  private readonly fileInfo = new Map<string, ProtoFileInfo | null>();
  private readonly failedFiles = new Map<string, string>();

  constructor() {
    if (!fs.existsSync(ENVOY_PROTO_INCLUDE_DIRS[0])) {
      throw new Error(`Envoy protos not found: ${ENVOY_PROTO_INCLUDE_DIRS[0]} does not exist (is @grpc/grpc-js-xds installed?)`);
    }
    const started = performance.now();
    this.root = newRoot();
    this.root.loadSync([...ENVOY_EAGER_PROTOS], { keepCase: true });
    this.root.resolveAll();
    this.eagerLoadMs = performance.now() - started;
  }

  /** Resolves the message type named by an `Any`'s type URL, loading its .proto on demand. */
  public resolveTypeUrl(typeUrl: string): Resolution {
    const slash = typeUrl.lastIndexOf('/');
    const name = typeUrl.slice(slash + 1);
    if (slash < 0 || !/^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)+$/.test(name)) {
      return { error: `invalid type URL ${JSON.stringify(typeUrl)} (expected "type.googleapis.com/<package>.<Message>")` };
    }
    const loaded = this.lookupMessage(name);
    if (loaded) return { type: loaded };

    const file = this.fileDeclaring(name);
    if (!file) {
      return { error: `unknown @type ${typeUrl}: no message ${name} is declared in any .proto under ${XDS_PROTO_DEPS_DIR}` };
    }
    const failure = this.failedFiles.get(file) ?? this.loadLazily(file);
    if (failure) {
      this.failedFiles.set(file, failure);
      return { error: `cannot resolve @type ${typeUrl}: ${file} ${failure}` };
    }
    this.lazyLoaded[typeUrl] = file;
    const type = this.lookupMessage(name);
    return type ? { type } : { error: `unknown @type ${typeUrl}: ${file} was loaded but does not define message ${name}` };
  }

  private lookupMessage(name: string): protobuf.Type | undefined {
    const found = this.root.lookup(name, [protobuf.Type]);
    return found instanceof protobuf.Type ? found : undefined;
  }

  /** Finds the file declaring `name` (or, for nested messages, its outermost enclosing message). */
  private fileDeclaring(name: string): string | undefined {
    const index = this.index();
    const parts = name.split('.');
    for (let n = parts.length; n > 1; n--) {
      const file = index.get(parts.slice(0, n).join('.'));
      if (file) return file;
    }
    return undefined;
  }

  private index(): Map<string, string> {
    if (this.messageIndex) return this.messageIndex;
    const started = performance.now();
    const index = new Map<string, string>();
    for (const [dir, tree] of INDEXED_TREES) {
      for (const rel of listProtos(dir, tree)) {
        const text = fs.readFileSync(path.join(dir, rel), 'utf8');
        const pkg = /^\s*package\s+([\w.]+)\s*;/m.exec(text)?.[1];
        // Top-level messages start at column 0 in these trees; nested ones are
        // found through their enclosing message (see fileDeclaring).
        for (const m of text.matchAll(/^message\s+(\w+)/gm)) {
          const full = pkg ? `${pkg}.${m[1]}` : m[1];
          if (!index.has(full)) index.set(full, rel);
        }
      }
    }
    this.messageIndex = index;
    this.indexMs = performance.now() - started;
    return index;
  }

  /** Loads `rel` into the root; returns an error message instead if it (or an import) cannot be loaded. */
  private loadLazily(rel: string): string | undefined {
    // Check the whole import closure first: a half-loaded file would leave
    // unresolvable references behind in the shared root.
    const missing: string[] = [];
    const seen = new Set<string>();
    const visit = (file: string, importer?: string): void => {
      if (seen.has(file)) return;
      seen.add(file);
      if (isBundled(file)) return;
      const info = this.protoFile(file);
      if (!info) {
        missing.push(importer ? `${file} (imported by ${importer})` : file);
        return;
      }
      for (const imp of info.imports) visit(imp, file);
    };
    visit(rel);
    if (missing.length > 0) {
      return `cannot be loaded: ${missing.join(', ')} not found in the include dirs`;
    }
    const started = performance.now();
    try {
      this.root.loadSync(rel, { keepCase: true });
      this.root.resolveAll();
    } catch (e) {
      // The root may now hold unresolvable types; start from scratch next time.
      registry = undefined;
      return `failed to load: ${(e as Error).message}`;
    } finally {
      this.lazyLoadMs += performance.now() - started;
    }
    return undefined;
  }

  private protoFile(rel: string): ProtoFileInfo | null {
    let info = this.fileInfo.get(rel);
    if (info !== undefined) return info;
    const abs = findInclude(rel);
    if (abs) {
      const text = fs.readFileSync(abs, 'utf8');
      const imports = [...text.matchAll(/^\s*import\s+(?:public\s+|weak\s+)?"([^"]+)"\s*;/gm)].map((m) => m[1]);
      info = { rel, abs, imports };
    } else {
      info = null;
    }
    this.fileInfo.set(rel, info);
    return info;
  }
}

function newRoot(): protobuf.Root {
  const root = new protobuf.Root();
  root.resolvePath = (_origin: string, target: string): string | null => {
    if (isBundled(target)) return target;
    if (path.isAbsolute(target)) return target;
    const found = findInclude(target);
    if (!found) throw new Error(`${target} not found in the Envoy proto include dirs: ${ENVOY_PROTO_INCLUDE_DIRS.join(', ')}`);
    return found;
  };
  return root;
}

function isBundled(rel: string): boolean {
  return (BUNDLED_WKT_PROTOS as readonly string[]).includes(rel);
}

function findInclude(rel: string): string | undefined {
  for (const dir of ENVOY_PROTO_INCLUDE_DIRS) {
    const candidate = path.join(dir, rel);
    if (fs.existsSync(candidate)) return candidate;
  }
  return undefined;
}

function listProtos(dir: string, tree: string): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    const abs = path.join(dir, rel);
    if (!fs.existsSync(abs)) return;
    for (const entry of fs.readdirSync(abs, { withFileTypes: true })) {
      const child = `${rel}/${entry.name}`;
      if (entry.isDirectory()) walk(child);
      else if (entry.name.endsWith('.proto')) out.push(child);
    }
  };
  walk(tree);
  return out.sort();
}

let registry: EnvoyProtoRegistry | undefined;

function getRegistry(): EnvoyProtoRegistry {
  registry ??= new EnvoyProtoRegistry();
  return registry;
}

/** The shared protobufjs root holding the Envoy v3 API (loaded once, then grown lazily). */
export function envoyProtoRoot(): protobuf.Root {
  return getRegistry().root;
}

/** Load timings and what has been loaded so far. */
export function envoyProtoStats(): EnvoyProtoStats {
  const reg = getRegistry();
  return {
    eagerLoadMs: reg.eagerLoadMs,
    indexMs: reg.indexMs,
    lazyLoadMs: reg.lazyLoadMs,
    loadedFiles: reg.root.files.length,
    lazyLoaded: { ...reg.lazyLoaded },
  };
}

/** Type URLs of every message currently loaded (the eager set plus whatever was resolved lazily). */
export function loadedEnvoyTypeUrls(): string[] {
  const out: string[] = [];
  const visit = (ns: protobuf.NamespaceBase): void => {
    for (const child of ns.nestedArray) {
      if (child instanceof protobuf.Type) out.push(`type.googleapis.com/${child.fullName.slice(1)}`);
      if (child instanceof protobuf.Namespace || child instanceof protobuf.Type) visit(child);
    }
  };
  visit(getRegistry().root);
  return out.sort();
}

// ---------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------

/** Errors found validating `bootstrap` as an `envoy.config.bootstrap.v3.Bootstrap`; empty when valid. */
export function envoyBootstrapErrors(bootstrap: unknown, options: EnvoyProtoOptions = {}): string[] {
  return envoyMessageErrors('envoy.config.bootstrap.v3.Bootstrap', bootstrap, options);
}

/** Throws an Error listing every problem found in `bootstrap`. */
export function expectValidEnvoyBootstrap(bootstrap: unknown, options: EnvoyProtoOptions = {}): void {
  const errors = envoyBootstrapErrors(bootstrap, options);
  if (errors.length > 0) {
    throw new Error(`Invalid Envoy v3 bootstrap (${errors.length} error${errors.length === 1 ? '' : 's'}):\n${errors.map((e) => `  - ${e}`).join('\n')}`);
  }
}

/**
 * Errors found validating `value` as the JSON form of message `messageType`
 * (e.g. `envoy.config.cluster.v3.Cluster`, with or without the
 * `type.googleapis.com/` prefix); empty when valid.
 */
export function envoyMessageErrors(messageType: string, value: unknown, options: EnvoyProtoOptions = {}): string[] {
  const reg = getRegistry();
  const resolved = reg.resolveTypeUrl(messageType.includes('/') ? messageType : `type.googleapis.com/${messageType}`);
  if ('error' in resolved) throw new Error(resolved.error);
  const walker = new Walker(reg, {
    deprecated: options.deprecated ?? true,
    validateRules: options.validateRules ?? true,
  });
  walker.message(resolved.type, value, '');
  return walker.errors;
}

const WRAPPERS: Readonly<Record<string, string>> = {
  '.google.protobuf.DoubleValue': 'double',
  '.google.protobuf.FloatValue': 'float',
  '.google.protobuf.Int64Value': 'int64',
  '.google.protobuf.UInt64Value': 'uint64',
  '.google.protobuf.Int32Value': 'int32',
  '.google.protobuf.UInt32Value': 'uint32',
  '.google.protobuf.BoolValue': 'bool',
  '.google.protobuf.StringValue': 'string',
  '.google.protobuf.BytesValue': 'bytes',
};

/** Well-known types whose JSON form is not an object of fields (inside an Any they go under "value"). */
const SPECIAL_JSON_TYPES = new Set([
  ...Object.keys(WRAPPERS),
  '.google.protobuf.Any',
  '.google.protobuf.Duration',
  '.google.protobuf.Timestamp',
  '.google.protobuf.FieldMask',
  '.google.protobuf.Struct',
  '.google.protobuf.Value',
  '.google.protobuf.ListValue',
]);

const TYPED_STRUCTS = new Set(['.xds.type.v3.TypedStruct', '.udpa.type.v1.TypedStruct']);

const INT_RANGES: Readonly<Record<string, readonly [bigint, bigint]>> = {
  int32: [-(2n ** 31n), 2n ** 31n - 1n],
  sint32: [-(2n ** 31n), 2n ** 31n - 1n],
  sfixed32: [-(2n ** 31n), 2n ** 31n - 1n],
  uint32: [0n, 2n ** 32n - 1n],
  fixed32: [0n, 2n ** 32n - 1n],
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
  sint64: [-(2n ** 63n), 2n ** 63n - 1n],
  sfixed64: [-(2n ** 63n), 2n ** 63n - 1n],
  uint64: [0n, 2n ** 64n - 1n],
  fixed64: [0n, 2n ** 64n - 1n],
};

const NUMERIC_STRING = /^-?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const DURATION = /^(-?)(\d+)(?:\.(\d{1,9}))?s$/;
const MAX_DURATION_SECONDS = 315576000000n;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

interface WalkOptions {
  readonly deprecated: boolean;
  readonly validateRules: boolean;
}

type Json = Record<string, unknown>;

class Walker {
  public readonly errors: string[] = [];

  constructor(private readonly reg: EnvoyProtoRegistry, private readonly opts: WalkOptions) {}

  /** Any message-typed value, including the well-known types with special JSON forms. */
  public message(type: protobuf.Type, value: unknown, at: string): void {
    const name = type.fullName;
    const wrapped = WRAPPERS[name];
    if (wrapped) {
      this.scalar(wrapped, value, at);
      return;
    }
    switch (name) {
      case '.google.protobuf.Any':
        this.any(value, at);
        return;
      case '.google.protobuf.Duration':
        if (typeof value !== 'string' || parseDuration(value) === undefined) {
          this.error(at, `invalid google.protobuf.Duration ${show(value)} (expected a string like "5s" or "0.25s")`);
        }
        return;
      case '.google.protobuf.Timestamp':
        if (typeof value !== 'string' || !TIMESTAMP.test(value)) {
          this.error(at, `invalid google.protobuf.Timestamp ${show(value)} (expected an RFC 3339 string like "2024-01-01T00:00:00Z")`);
        }
        return;
      case '.google.protobuf.FieldMask':
        if (typeof value !== 'string') this.error(at, `expected a comma-separated string for google.protobuf.FieldMask, got ${show(value)}`);
        return;
      case '.google.protobuf.Struct':
        if (!isObject(value)) this.error(at, `expected an object for google.protobuf.Struct, got ${show(value)}`);
        return;
      case '.google.protobuf.ListValue':
        if (!Array.isArray(value)) this.error(at, `expected an array for google.protobuf.ListValue, got ${show(value)}`);
        return;
      case '.google.protobuf.Value':
        return; // any JSON value
      case '.google.protobuf.Empty':
        if (!isObject(value) || Object.keys(value).length > 0) this.error(at, `expected {} for google.protobuf.Empty, got ${show(value)}`);
        return;
      default:
        this.fields(type, value, at, false);
    }
  }

  private any(value: unknown, at: string): void {
    if (!isObject(value)) {
      this.error(at, `expected an object with "@type" for google.protobuf.Any, got ${show(value)}`);
      return;
    }
    const typeUrl = value['@type'];
    if (typeUrl === undefined) {
      this.error(at, 'google.protobuf.Any without "@type"');
      return;
    }
    if (typeof typeUrl !== 'string') {
      this.error(join(at, '@type'), `expected a type URL string, got ${show(typeUrl)}`);
      return;
    }
    const resolved = this.reg.resolveTypeUrl(typeUrl);
    if ('error' in resolved) {
      this.error(join(at, '@type'), resolved.error);
      return;
    }
    const type = resolved.type;
    if (this.opts.deprecated && type.options?.deprecated === true) {
      this.error(join(at, '@type'), `${typeName(type)} is deprecated`);
    }
    if (SPECIAL_JSON_TYPES.has(type.fullName)) {
      for (const key of Object.keys(value)) {
        if (key !== '@type' && key !== 'value') this.error(join(at, key), `unknown field of google.protobuf.Any holding ${typeName(type)} (only "value" is allowed)`);
      }
      if (!('value' in value)) this.error(at, `google.protobuf.Any holding ${typeName(type)} needs a "value"`);
      else this.message(type, value.value, join(at, 'value'));
      return;
    }
    this.fields(type, value, at, true);
    if (TYPED_STRUCTS.has(type.fullName)) this.typedStruct(value, at);
  }

  /** `xds.type.v3.TypedStruct` / `udpa.type.v1.TypedStruct`: Envoy converts `value` to the message named by `type_url`. */
  private typedStruct(value: Json, at: string): void {
    const typeUrl = value.type_url ?? value.typeUrl;
    if (typeof typeUrl !== 'string') return;
    const resolved = this.reg.resolveTypeUrl(typeUrl);
    if ('error' in resolved) {
      this.error(join(at, 'type_url' in value ? 'type_url' : 'typeUrl'), resolved.error);
    } else if (isObject(value.value)) {
      this.message(resolved.type, value.value, join(at, 'value'));
    }
  }

  /** A regular message: a JSON object whose keys are its fields. */
  private fields(type: protobuf.Type, value: unknown, at: string, inAny: boolean): void {
    if (!isObject(value)) {
      this.error(at, `expected an object for ${typeName(type)}, got ${show(value)}`);
      return;
    }
    const byName = fieldNames(type);
    const present = new Map<protobuf.Field, unknown>();
    const keyOf = new Map<protobuf.Field, string>();
    for (const [key, child] of Object.entries(value)) {
      if (inAny && key === '@type') continue;
      const field = byName.get(key);
      if (!field) {
        const reserved = type.reserved?.some((r) => r === key);
        this.error(join(at, key), `unknown field of ${typeName(type)}${reserved ? ' (removed from the v3 API; the name is reserved)' : ''}`);
        continue;
      }
      const first = keyOf.get(field);
      if (first !== undefined) {
        this.error(join(at, key), `duplicate field: ${typeName(type)}.${field.name} is also given as "${first}"`);
        continue;
      }
      keyOf.set(field, key);
      const isValue = field.resolvedType?.fullName === '.google.protobuf.Value';
      if (child === null && !isValue) continue; // JSON null = field not set
      present.set(field, child);
      if (this.opts.deprecated && field.options?.deprecated === true) {
        const since = field.options['(envoy.annotations.deprecated_at_minor_version)'];
        this.error(join(at, key), `field ${typeName(type)}.${field.name} is deprecated${since ? ` (since v${since})` : ''}`);
      }
      this.fieldValue(field, child, join(at, key));
    }

    for (const oneof of type.oneofsArray) {
      const synthetic = oneof.fieldsArray.length === 1 && oneof.name === `_${oneof.fieldsArray[0].name}`;
      if (synthetic) continue;
      const set = oneof.fieldsArray.filter((f) => present.has(f)).map((f) => keyOf.get(f));
      if (set.length > 1) {
        this.error(at || '(root)', `more than one member of oneof ${oneof.name} of ${typeName(type)} is set: ${set.join(', ')}`);
      } else if (set.length === 0 && this.opts.validateRules && oneofRequired(oneof)) {
        this.error(at || '(root)', `one of ${oneof.fieldsArray.map((f) => f.name).join(', ')} is required (oneof ${oneof.name} of ${typeName(type)})`);
      }
    }

    if (this.opts.validateRules) {
      for (const field of type.fieldsArray) {
        const rules = fieldRules(field);
        if (!rules) continue;
        const key = keyOf.get(field) ?? field.name;
        this.rules(type, field, rules, present.has(field), present.get(field), join(at, key));
      }
    }
  }

  private fieldValue(field: protobuf.Field, value: unknown, at: string): void {
    if (field.map) {
      if (!isObject(value)) {
        this.error(at, `expected an object for map field ${field.name}, got ${show(value)}`);
        return;
      }
      const keyType = (field as unknown as protobuf.MapField).keyType;
      for (const [key, entry] of Object.entries(value)) {
        const entryAt = `${at}[${JSON.stringify(key)}]`;
        this.mapKey(keyType, key, entryAt);
        this.element(field, entry, entryAt);
      }
    } else if (field.repeated) {
      if (!Array.isArray(value)) {
        this.error(at, `expected an array for repeated field ${field.name}, got ${show(value)}`);
        return;
      }
      value.forEach((entry, i) => this.element(field, entry, `${at}[${i}]`));
    } else {
      this.element(field, value, at);
    }
  }

  private element(field: protobuf.Field, value: unknown, at: string): void {
    const resolved = field.resolve().resolvedType;
    if (value === null && resolved?.fullName !== '.google.protobuf.Value' && (field.repeated || field.map)) {
      this.error(at, 'null is not allowed in a repeated or map field');
    } else if (resolved instanceof protobuf.Type) {
      this.message(resolved, value, at);
    } else if (resolved instanceof protobuf.Enum) {
      this.enumValue(resolved, value, at);
    } else {
      this.scalar(field.type, value, at);
    }
  }

  private enumValue(enm: protobuf.Enum, value: unknown, at: string): void {
    if (enm.fullName === '.google.protobuf.NullValue' && value === null) return;
    let name: string | undefined;
    if (typeof value === 'string') {
      if (value in enm.values) name = value;
    } else if (typeof value === 'number' && Number.isInteger(value)) {
      name = Object.keys(enm.values).find((k) => enm.values[k] === value);
    } else {
      this.error(at, `expected an enum value name of ${typeName(enm)}, got ${show(value)}`);
      return;
    }
    if (name === undefined) {
      this.error(at, `invalid enum value ${show(value)} for ${typeName(enm)} (expected one of ${Object.keys(enm.values).join(', ')})`);
      return;
    }
    const valueOptions = enm.valuesOptions?.[name];
    if (this.opts.deprecated && valueOptions?.deprecated === true) {
      this.error(at, `enum value ${name} of ${typeName(enm)} is deprecated`);
    }
  }

  private scalar(type: string, value: unknown, at: string): void {
    const range = INT_RANGES[type];
    if (range) {
      const n = toBigInt(value);
      if (n === undefined) {
        this.error(at, `expected ${type} (an integer number or numeric string), got ${show(value)}`);
      } else if (n < range[0] || n > range[1]) {
        this.error(at, `${show(value)} is out of range for ${type} (${range[0]}..${range[1]})`);
      }
      return;
    }
    switch (type) {
      case 'double':
      case 'float': {
        const ok = (typeof value === 'number' && Number.isFinite(value))
          || (typeof value === 'string' && (NUMERIC_STRING.test(value) || ['NaN', 'Infinity', '-Infinity'].includes(value)));
        if (!ok) this.error(at, `expected ${type} (a number), got ${show(value)}`);
        else if (type === 'float' && Math.abs(Number(value)) > 3.4028234663852886e38) this.error(at, `${show(value)} is out of range for float`);
        return;
      }
      case 'bool':
        if (typeof value !== 'boolean') this.error(at, `expected bool (true or false), got ${show(value)}`);
        return;
      case 'string':
        if (typeof value !== 'string') this.error(at, `expected string, got ${show(value)}`);
        return;
      case 'bytes':
        if (typeof value !== 'string' || !BASE64.test(value)) this.error(at, `expected bytes (a base64 string), got ${show(value)}`);
        return;
      default:
        this.error(at, `cannot check scalar type ${type}`);
    }
  }

  private mapKey(keyType: string, key: string, at: string): void {
    if (keyType === 'string') return;
    if (keyType === 'bool') {
      if (key !== 'true' && key !== 'false') this.error(at, `map key must be "true" or "false" for bool keys, got ${JSON.stringify(key)}`);
      return;
    }
    const range = INT_RANGES[keyType];
    const n = /^-?\d+$/.test(key) ? BigInt(key) : undefined;
    if (!range || n === undefined || n < range[0] || n > range[1]) this.error(at, `map key ${JSON.stringify(key)} is not a valid ${keyType}`);
  }

  // -- protoc-gen-validate -------------------------------------------------

  private rules(type: protobuf.Type, field: protobuf.Field, rules: Json, present: boolean, value: unknown, at: string): void {
    const where = `${typeName(type)}.${field.name}`;
    const oneofMember = field.partOf !== null && field.partOf !== undefined;
    const messageField = field.resolvedType instanceof protobuf.Type;
    if (!present && !oneofMember) {
      // For a oneof member, PGV only checks `required` when that member is the one set.
      for (const kind of ['message', 'duration', 'timestamp', 'any']) {
        if (isObject(rules[kind]) && rules[kind].required === true) {
          this.error(at, `required field ${where} is missing ((validate.rules).${kind}.required)`);
        }
      }
    }
    if (field.map) {
      const entries = present && isObject(value) ? Object.entries(value) : [];
      const map = isObject(rules.map) ? rules.map : undefined;
      if (!map) return;
      this.countRule(map, 'min_pairs', 'max_pairs', entries.length, '(validate.rules).map', at);
      for (const [k, v] of entries) {
        if (isObject(map.keys)) this.valueRules(map.keys, k, `${at}[${JSON.stringify(k)}]`, '(validate.rules).map.keys', field);
        if (isObject(map.values)) this.valueRules(map.values, v, `${at}[${JSON.stringify(k)}]`, '(validate.rules).map.values', field);
      }
      return;
    }
    if (field.repeated) {
      const items = present && Array.isArray(value) ? value : [];
      const repeated = isObject(rules.repeated) ? rules.repeated : undefined;
      if (!repeated) return;
      this.countRule(repeated, 'min_items', 'max_items', items.length, '(validate.rules).repeated', at);
      if (repeated.unique === true && new Set(items.map((i) => JSON.stringify(i))).size !== items.length) {
        this.error(at, 'violates (validate.rules).repeated.unique: items must be unique');
      }
      if (isObject(repeated.items)) {
        items.forEach((item, i) => this.valueRules(repeated.items as Json, item, `${at}[${i}]`, '(validate.rules).repeated.items', field));
      }
      return;
    }
    if (!present) {
      // PGV checks unset proto3 scalars against their default value; unset
      // messages and oneof members are only checked for `required`.
      if (messageField || oneofMember) return;
      value = defaultValue(field);
    }
    this.valueRules(rules, value, at, '(validate.rules)', field);
  }

  /** Rules that apply to one value: string/bytes/numbers/bool/enum/duration/any. */
  private valueRules(rules: Json, value: unknown, at: string, prefix: string, field: protobuf.Field): void {
    for (const [kind, spec] of Object.entries(rules)) {
      if (!isObject(spec)) continue;
      const rule = `${prefix}.${kind}`;
      if (kind === 'string') {
        if (typeof value === 'string') this.stringRules(spec, value, at, rule);
      } else if (kind === 'bytes') {
        if (typeof value === 'string' && BASE64.test(value)) {
          this.countRule(spec, 'min_len', 'max_len', Buffer.from(value, 'base64').length, rule, at);
        }
      } else if (INT_RANGES[kind] || kind === 'double' || kind === 'float') {
        const n = INT_RANGES[kind] ? toBigInt(value) : toNumber(value);
        if (n !== undefined) this.rangeRules(spec, n, show(value), at, rule);
      } else if (kind === 'bool') {
        if (typeof value === 'boolean' && typeof spec.const === 'boolean' && value !== spec.const) {
          this.error(at, `violates ${rule}.const = ${spec.const} (got ${value})`);
        }
      } else if (kind === 'enum') {
        const enm = field.resolvedType;
        if (enm instanceof protobuf.Enum) {
          const n = typeof value === 'string' ? enm.values[value] : value;
          if (typeof n === 'number') this.inRules(spec, n, show(value), at, rule);
        }
      } else if (kind === 'duration') {
        const nanos = typeof value === 'string' ? parseDuration(value) : undefined;
        if (nanos !== undefined) {
          const bounds: Json = {};
          for (const op of ['const', 'lt', 'lte', 'gt', 'gte']) {
            if (isObject(spec[op])) bounds[op] = durationRuleNanos(spec[op] as Json);
          }
          this.rangeRules(bounds, nanos, show(value), at, rule, formatNanos);
        }
      } else if (kind === 'any') {
        const url = isObject(value) ? value['@type'] : undefined;
        if (typeof url === 'string') this.inRules(spec, url, JSON.stringify(url), at, rule);
      }
    }
  }

  private stringRules(spec: Json, value: string, at: string, rule: string): void {
    if (spec.ignore_empty === true && value === '') return;
    const chars = [...value].length;
    const bytes = Buffer.byteLength(value, 'utf8');
    if (typeof spec.len === 'number' && chars !== spec.len) this.error(at, `violates ${rule}.len = ${spec.len} (got length ${chars})`);
    this.countRule(spec, 'min_len', 'max_len', chars, rule, at);
    this.countRule(spec, 'min_bytes', 'max_bytes', bytes, rule, at);
    if (typeof spec.const === 'string' && value !== spec.const) this.error(at, `violates ${rule}.const = ${JSON.stringify(spec.const)} (got ${JSON.stringify(value)})`);
    if (typeof spec.prefix === 'string' && !value.startsWith(spec.prefix)) this.error(at, `violates ${rule}.prefix = ${JSON.stringify(spec.prefix)}`);
    if (typeof spec.suffix === 'string' && !value.endsWith(spec.suffix)) this.error(at, `violates ${rule}.suffix = ${JSON.stringify(spec.suffix)}`);
    if (typeof spec.contains === 'string' && !value.includes(spec.contains)) this.error(at, `violates ${rule}.contains = ${JSON.stringify(spec.contains)}`);
    if (typeof spec.not_contains === 'string' && value.includes(spec.not_contains)) this.error(at, `violates ${rule}.not_contains = ${JSON.stringify(spec.not_contains)}`);
    this.inRules(spec, value, JSON.stringify(value), at, rule);
    if (typeof spec.pattern === 'string') {
      let re: RegExp | undefined;
      try {
        re = new RegExp(spec.pattern, 'u');
      } catch {
        re = undefined; // RE2 syntax JS cannot compile: skip
      }
      if (re && !re.test(value)) this.error(at, `violates ${rule}.pattern = ${JSON.stringify(spec.pattern)} (got ${JSON.stringify(value)})`);
    }
    if (typeof spec.well_known_regex === 'string') {
      const strict = spec.strict !== false;
      const re = spec.well_known_regex === 'HTTP_HEADER_NAME' && strict ? /^:?[0-9a-zA-Z!#$%&'*+\-.^_|~`]+$/
        : spec.well_known_regex === 'HTTP_HEADER_VALUE' && strict ? /^[^\u0000-\u0008\u000A-\u001F\u007F]*$/
          : /^[^\u0000\u000A\u000D]*$/;
      if (!re.test(value)) this.error(at, `violates ${rule}.well_known_regex = ${spec.well_known_regex} (got ${JSON.stringify(value)})`);
    }
  }

  private countRule(spec: Json, min: string, max: string, count: number, rule: string, at: string): void {
    const lo = toNumber(spec[min]);
    const hi = toNumber(spec[max]);
    if (lo !== undefined && count < lo) this.error(at, `violates ${rule}.${min} = ${lo} (got ${count})`);
    if (hi !== undefined && count > hi) this.error(at, `violates ${rule}.${max} = ${hi} (got ${count})`);
  }

  private rangeRules(spec: Json, n: number | bigint, shown: string, at: string, rule: string, fmt: (v: number | bigint) => string = String): void {
    const num = (v: unknown): number | bigint | undefined => (typeof n === 'bigint' ? toBigInt(v) : toNumber(v));
    const [lt, lte, gt, gte, eq] = [num(spec.lt), num(spec.lte), num(spec.gt), num(spec.gte), num(spec.const)];
    if (eq !== undefined && n !== eq) this.error(at, `violates ${rule}.const = ${fmt(eq)} (got ${shown})`);
    const lower = gt ?? gte;
    const upper = lt ?? lte;
    const lowerOk = gt !== undefined ? n > gt : gte !== undefined ? n >= gte : true;
    const upperOk = lt !== undefined ? n < lt : lte !== undefined ? n <= lte : true;
    const describe = ([['gt', gt], ['gte', gte], ['lt', lt], ['lte', lte]] as const)
      .filter(([, v]) => v !== undefined).map(([op, v]) => `${rule}.${op} = ${fmt(v!)}`).join(', ');
    // PGV: an upper bound below the lower bound means "outside the range".
    const exclusive = lower !== undefined && upper !== undefined && upper < lower;
    if (exclusive ? !(lowerOk || upperOk) : !(lowerOk && upperOk)) this.error(at, `violates ${describe} (got ${shown})`);
    this.inRules(spec, n, shown, at, rule);
  }

  private inRules(spec: Json, value: string | number | bigint, shown: string, at: string, rule: string): void {
    const norm = (v: unknown): unknown => (typeof value === 'bigint' ? toBigInt(v) : v);
    const inList = spec.in === undefined ? undefined : ([] as unknown[]).concat(spec.in).map(norm);
    const notIn = spec.not_in === undefined ? undefined : ([] as unknown[]).concat(spec.not_in).map(norm);
    if (inList && !inList.includes(value)) this.error(at, `violates ${rule}.in = [${inList.join(', ')}] (got ${shown})`);
    if (notIn?.includes(value)) this.error(at, `violates ${rule}.not_in = [${notIn.join(', ')}] (got ${shown})`);
  }

  private error(at: string, message: string): void {
    this.errors.push(`${at || '(root)'}: ${message}`);
  }
}

const fieldNameCache = new WeakMap<protobuf.Type, Map<string, protobuf.Field>>();

/** Field lookup by proto (snake_case) name and by JSON (lowerCamel or json_name) name. */
function fieldNames(type: protobuf.Type): Map<string, protobuf.Field> {
  let names = fieldNameCache.get(type);
  if (!names) {
    names = new Map();
    for (const field of type.fieldsArray) {
      names.set(field.name, field);
      const jsonName = typeof field.options?.json_name === 'string' ? field.options.json_name : toJsonName(field.name);
      if (!names.has(jsonName)) names.set(jsonName, field);
    }
    fieldNameCache.set(type, names);
  }
  return names;
}

/** protoc's ToJsonName: drop underscores, upper-casing the character that follows each. */
function toJsonName(name: string): string {
  return name.replace(/_+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''));
}

/** The merged `(validate.rules)` option of a field. */
function fieldRules(field: protobuf.Field): Json | undefined {
  let merged: Json | undefined;
  for (const entry of (field.parsedOptions ?? []) as Json[]) {
    const rules = entry['(validate.rules)'];
    if (isObject(rules)) merged = deepMerge(merged ?? {}, rules);
  }
  return merged;
}

function oneofRequired(oneof: protobuf.OneOf): boolean {
  if (oneof.options?.['(validate.required)'] === true) return true;
  return ((oneof as unknown as { parsedOptions?: Json[] }).parsedOptions ?? []).some((o) => o['(validate.required)'] === true);
}

function deepMerge(a: Json, b: Json): Json {
  const out: Json = { ...a };
  for (const [k, v] of Object.entries(b)) {
    out[k] = isObject(v) && isObject(out[k]) ? deepMerge(out[k] as Json, v) : v;
  }
  return out;
}

function defaultValue(field: protobuf.Field): unknown {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Enum) return Object.keys(resolved.values).find((k) => resolved.values[k] === 0) ?? 0;
  if (field.type === 'string') return '';
  if (field.type === 'bytes') return '';
  if (field.type === 'bool') return false;
  return 0;
}

/** Duration string -> nanoseconds, or undefined if it is not a valid JSON Duration. */
function parseDuration(value: string): bigint | undefined {
  const m = DURATION.exec(value);
  if (!m) return undefined;
  const seconds = BigInt(m[2]);
  if (seconds > MAX_DURATION_SECONDS) return undefined;
  const nanos = BigInt((m[3] ?? '').padEnd(9, '0'));
  const total = seconds * 1000000000n + nanos;
  return m[1] ? -total : total;
}

function formatNanos(v: number | bigint): string {
  const n = BigInt(v);
  const sign = n < 0n ? '-' : '';
  const abs = n < 0n ? -n : n;
  const frac = (abs % 1000000000n).toString().padStart(9, '0').replace(/0+$/, '');
  return `${sign}${abs / 1000000000n}${frac ? `.${frac}` : ''}s`;
}

function durationRuleNanos(spec: Json): bigint {
  return (toBigInt(spec.seconds ?? 0) ?? 0n) * 1000000000n + (toBigInt(spec.nanos ?? 0) ?? 0n);
}

function toBigInt(value: unknown): bigint | undefined {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number') return Number.isInteger(value) ? BigInt(value) : undefined;
  if (typeof value === 'string' && NUMERIC_STRING.test(value)) {
    if (/^-?\d+$/.test(value)) return BigInt(value);
    const n = Number(value);
    return Number.isInteger(n) ? BigInt(n) : undefined;
  }
  return undefined;
}

function toNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'string' && value.trim() !== '' && !Number.isNaN(Number(value))) return Number(value);
  return undefined;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function typeName(t: protobuf.ReflectionObject): string {
  return t.fullName.replace(/^\./, '');
}

function join(at: string, key: string): string {
  return at ? `${at}.${key}` : key;
}

function show(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (Array.isArray(value)) return 'an array';
  if (isObject(value)) return 'an object';
  if (typeof value === 'bigint') return `number ${value}`;
  return `${typeof value} ${JSON.stringify(value)}`;
}
