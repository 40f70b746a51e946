/**
 * Strict, per-release Kubernetes JSON-schema validation for synthesized manifests.
 *
 * The schemas are the openapi2jsonschema `definitions` files that cdk8s keeps
 * (`<repo>/../shared/k8s-schemas/vX.Y.0.json`, or `$K8S_SCHEMAS_DIR`). They are
 * not strict on their own, so every schema node with `properties` gets
 * `additionalProperties: false` (unless it is marked
 * `x-kubernetes-preserve-unknown-fields`). That mirrors the API server's
 * `Strict` field validation (kubectl's default): an unknown field, such as
 * `restartPolicy` on a container before 1.28, is an error.
 *
 * Only the shape is checked. The API server's semantic rules (e.g. which
 * containers may set `restartPolicy`) are not part of the schemas.
 *
 * Each release file is read and transformed at most once per module instance
 * (jest gives every test file its own), and one validator per (release, kind)
 * is compiled on first use and cached.
 */
import * as fs from 'fs';
import * as path from 'path';
import Ajv, { ErrorObject, ValidateFunction } from 'ajv';

/** A Kubernetes release, e.g. '1.29', 'v1.29' or '1.29.3' (the patch is ignored). */
export type K8sVersion = string;

const SCHEMA_FILE = /^v(\d+)\.(\d+)\.0\.json$/;

function schemaDir(): string {
  const dir = process.env.K8S_SCHEMAS_DIR ?? path.resolve(__dirname, '../../../shared/k8s-schemas');
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) {
    throw new Error(
      `Kubernetes JSON schemas not found: directory ${dir} does not exist. `
      + 'Expected shared/k8s-schemas/ next to the repository checkout (holding vX.Y.0.json files), '
      + 'or set K8S_SCHEMAS_DIR to a directory that holds them.',
    );
  }
  return dir;
}

const SCHEMA_DIR = schemaDir();

/** The releases with a schema file, sorted by version: ['1.27', '1.28', ...]. */
export const SCHEMA_RELEASES: string[] = fs.readdirSync(SCHEMA_DIR)
  .map((f) => SCHEMA_FILE.exec(f))
  .filter((m): m is RegExpExecArray => m !== null)
  .map((m) => [Number(m[1]), Number(m[2])])
  .sort((a, b) => a[0] - b[0] || a[1] - b[1])
  .map(([major, minor]) => `${major}.${minor}`);

if (SCHEMA_RELEASES.length === 0) {
  throw new Error(`Kubernetes JSON schemas not found: ${SCHEMA_DIR} holds no vX.Y.0.json files.`);
}

/** '1.29' | 'v1.29' | '1.29.3' | 'v1.29.0' -> '1.29'; throws when there is no schema for it. */
function normalizeRelease(version: K8sVersion): string {
  const m = /^v?(\d+)\.(\d+)(?:\.\d+)?$/.exec(String(version).trim());
  if (!m) {
    throw new Error(`Invalid Kubernetes version '${version}': expected e.g. '1.29', 'v1.29' or '1.29.3'.`);
  }
  const release = `${Number(m[1])}.${Number(m[2])}`;
  if (!SCHEMA_RELEASES.includes(release)) {
    throw new Error(
      `No Kubernetes schema for release ${release} (from '${version}') in ${SCHEMA_DIR}; `
      + `available: ${SCHEMA_RELEASES.join(', ')}.`,
    );
  }
  return release;
}

// ---------------------------------------------------------------------------
// Loading and making the schemas strict
// ---------------------------------------------------------------------------

/** Keywords whose value is a map of name -> schema. */
const SCHEMA_MAP_KEYWORDS = ['properties', 'patternProperties', 'definitions', '$defs'];
/** Keywords whose value is a schema or an array of schemas. */
const SCHEMA_KEYWORDS = ['additionalProperties', 'items', 'additionalItems', 'not', 'oneOf', 'anyOf', 'allOf'];

function isObject(x: unknown): x is Record<string, any> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/**
 * Makes a schema node (in place) strict, and strips what Ajv does not need.
 * Walks keyword positions only, so property *names* such as
 * JSONSchemaProps' `x-kubernetes-preserve-unknown-fields` are left alone.
 */
function strictify(node: unknown, formats: Set<string>): void {
  if (Array.isArray(node)) {
    node.forEach((n) => strictify(n, formats));
    return;
  }
  if (!isObject(node)) {
    return;
  }
  const preserveUnknown = node['x-kubernetes-preserve-unknown-fields'] === true;
  if (node['x-kubernetes-int-or-string'] === true) {
    // Not used by the built-in definitions (they use oneOf), but CRD-style schemas do.
    delete node.type;
    node.anyOf = [{ type: 'integer' }, { type: 'string' }];
  }
  for (const key of Object.keys(node)) {
    if (key.startsWith('x-kubernetes-') || key === 'description') {
      delete node[key];
    }
  }
  if (typeof node.format === 'string') {
    formats.add(node.format);
  }
  if (isObject(node.properties) && node.additionalProperties === undefined && !preserveUnknown) {
    node.additionalProperties = false;
  }
  for (const key of SCHEMA_MAP_KEYWORDS) {
    if (isObject(node[key])) {
      for (const child of Object.values(node[key])) {
        strictify(child, formats);
      }
    }
  }
  for (const key of SCHEMA_KEYWORDS) {
    if (node[key] !== undefined) {
      strictify(node[key], formats);
    }
  }
}

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/;

/** The formats the definitions use; any other format is accepted as is. */
const KNOWN_FORMATS = {
  'int32': { type: 'number' as const, validate: (n: number) => n >= INT32_MIN && n <= INT32_MAX },
  'int64': true as const,
  'double': true as const,
  'byte': BASE64,
  'date-time': RFC3339,
};

interface Release {
  readonly release: string;
  readonly schemaId: string;
  readonly ajv: Ajv;
  /** 'group/version/Kind' (group '' for core) -> definition name. */
  readonly byGvk: Map<string, string>;
  /** Kind -> the apiVersions it has in this release (for error hints). */
  readonly apiVersionsByKind: Map<string, string[]>;
  readonly validators: Map<string, ValidateFunction>;
}

const releases = new Map<string, Release>();

function gvkKey(group: string, version: string, kind: string): string {
  return `${group}/${version}/${kind}`;
}

function loadRelease(release: string): Release {
  const cached = releases.get(release);
  if (cached) {
    return cached;
  }
  const file = path.join(SCHEMA_DIR, `v${release}.0.json`);
  const doc = JSON.parse(fs.readFileSync(file, 'utf-8'));
  if (!isObject(doc) || !isObject(doc.definitions)) {
    throw new Error(`${file}: expected an object with "definitions"`);
  }
  const definitions: Record<string, any> = doc.definitions;

  const byGvk = new Map<string, string>();
  const apiVersionsByKind = new Map<string, string[]>();
  for (const [name, def] of Object.entries(definitions)) {
    for (const gvk of def['x-kubernetes-group-version-kind'] ?? []) {
      byGvk.set(gvkKey(gvk.group, gvk.version, gvk.kind), name);
      const apiVersion = gvk.group ? `${gvk.group}/${gvk.version}` : gvk.version;
      apiVersionsByKind.set(gvk.kind, [...(apiVersionsByKind.get(gvk.kind) ?? []), apiVersion]);
    }
  }

  const formats = new Set<string>();
  for (const def of Object.values(definitions)) {
    strictify(def, formats);
  }

  const ajv = new Ajv({ strict: false, allErrors: true });
  for (const format of formats) {
    ajv.addFormat(format, (KNOWN_FORMATS as Record<string, any>)[format] ?? true);
  }
  const schemaId = `k8s-v${release}.0.json`;
  ajv.addSchema({ $id: schemaId, definitions }, schemaId);

  const loaded: Release = { release, schemaId, ajv, byGvk, apiVersionsByKind, validators: new Map() };
  releases.set(release, loaded);
  return loaded;
}

function validatorFor(rel: Release, definition: string): ValidateFunction {
  let validate = rel.validators.get(definition);
  if (!validate) {
    validate = rel.ajv.compile({ $ref: `${rel.schemaId}#/definitions/${definition}` });
    rel.validators.set(definition, validate);
  }
  return validate;
}

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

function describe(manifest: any): string {
  const kind = typeof manifest?.kind === 'string' ? manifest.kind : '<no kind>';
  const name = typeof manifest?.metadata?.name === 'string' ? manifest.metadata.name : '<no name>';
  return `${kind}/${name}`;
}

function formatError(e: ErrorObject): string {
  switch (e.keyword) {
    case 'additionalProperties':
      return `${e.message} ("${e.params.additionalProperty}")`;
    case 'enum':
      return `${e.message}: ${(e.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    default:
      return e.message ?? e.keyword;
  }
}

/**
 * Ajv reports a failed `oneOf` of plain types (IntOrString, Quantity) as one
 * `type` error per branch plus the `oneOf` error; fold them into one line
 * ("must be string or integer").
 */
function foldOneOf(errors: ErrorObject[]): string[] {
  const folded = new Set<ErrorObject>();
  const messages = new Map<ErrorObject, string>();
  for (const e of errors) {
    if (e.keyword !== 'oneOf') {
      continue;
    }
    const branches = errors.filter((b) => b !== e
      && b.instancePath === e.instancePath
      && b.schemaPath.startsWith(`${e.schemaPath}/`));
    if (branches.length > 0 && branches.every((b) => b.keyword === 'type')) {
      branches.forEach((b) => folded.add(b));
      messages.set(e, `must be ${branches.map((b) => b.params.type).join(' or ')}`);
    }
  }
  return errors
    .filter((e) => !folded.has(e))
    .map((e) => `${e.instancePath || '/'}: ${messages.get(e) ?? formatError(e)}`);
}

/**
 * The strict schema errors of one manifest against a Kubernetes release, one
 * line each: `<kind>/<metadata.name> <instancePath>: <message>`. Empty when
 * the manifest is valid.
 *
 * A manifest whose apiVersion/kind has no schema in that release (a custom
 * resource, or an API version that the release does not serve) yields one
 * "no schema" error rather than passing.
 *
 * @throws when `version` is malformed or has no schema file.
 */
export function schemaErrors(manifest: any, version: K8sVersion): string[] {
  const rel = loadRelease(normalizeRelease(version));
  const label = describe(manifest);
  if (!isObject(manifest)) {
    return [`${label} /: manifest must be an object, got ${JSON.stringify(manifest)}`];
  }
  const { apiVersion, kind } = manifest;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') {
    return [`${label} /: apiVersion and kind must be strings (apiVersion: ${JSON.stringify(apiVersion)}, kind: ${JSON.stringify(kind)})`];
  }
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const groupVersion = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
  const definition = rel.byGvk.get(gvkKey(group, groupVersion, kind));
  if (!definition) {
    const known = rel.apiVersionsByKind.get(kind);
    const hint = known
      ? `; Kubernetes ${rel.release} serves ${kind} as ${known.join(', ')}`
      : ` (not a built-in kind of Kubernetes ${rel.release}: a custom resource cannot be validated here)`;
    return [`${label} /: no schema for apiVersion "${apiVersion}" kind "${kind}" in Kubernetes ${rel.release}${hint}`];
  }
  const validate = validatorFor(rel, definition);
  if (validate(manifest)) {
    return [];
  }
  return [...new Set(foldOneOf(validate.errors ?? []))].map((line) => `${label} ${line}`);
}

/**
 * Throws one Error listing every schema error of every manifest against the
 * release (strict: unknown fields are errors). Plain `throw`, so it works
 * outside jest as well.
 */
export function expectValidManifests(manifests: any[], version: K8sVersion): void {
  if (!Array.isArray(manifests)) {
    throw new Error(`expectValidManifests: expected an array of manifests, got ${typeof manifests}`);
  }
  const release = normalizeRelease(version);
  const errors = manifests.flatMap((m) => schemaErrors(m, release));
  if (errors.length > 0) {
    throw new Error(
      `${errors.length} schema error(s) in ${manifests.length} manifest(s) against Kubernetes ${release} (strict):\n`
      + errors.map((e) => `  ${e}`).join('\n'),
    );
  }
}
