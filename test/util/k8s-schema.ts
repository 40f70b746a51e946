/**
 * Strict, per-release Kubernetes schema validation for synthesized manifests.
 *
 * The schemas are built at test time from npm packages that `npm ci` installs (dev
 * dependencies): the jsii assembly (`.jsii`, JSON) of `cdk8s-plus-XX` describes every API object
 * of Kubernetes 1.XX, as `cdk8s import k8s@1.XX` generated it from that release's OpenAPI
 * definitions. Each `k8s.*` struct becomes one JSON-schema definition:
 *
 * - its name and every property's JSON name come from the assembly's `@schema` doc tags
 *   (`io.k8s.api.core.v1.Container#restartPolicy`, `...JSONSchemaProps#x-kubernetes-preserve-unknown-fields`),
 *   never from re-deriving them from the camelCase jsii names;
 * - non-optional properties are required; anything else is an unknown field (`additionalProperties:
 *   false`), which mirrors the API server's `Strict` field validation (kubectl's default): an
 *   unknown field, such as `restartPolicy` on a container before 1.28, is an error;
 * - types: string, boolean, number, arrays, maps, `k8s.IntOrString` (string or integer),
 *   `k8s.Quantity` (string or number), `date` (an RFC 3339 string), structs by reference;
 *   `any` (RawExtension, JSON) takes anything;
 * - the top-level objects (`KubeDeployment`, ...) take `apiVersion` and `kind` from the
 *   package's compiled `KubeX.GVK` constants, as an enum of the one value each.
 *
 * Numbers: jsii has one `number` type; every one of them in the API types is an int32 or int64
 * field, so they are checked as integers (found by the strict k8s.io/api decoders of
 * test/k8s-api/decode.real-test.ts, which reject a fractional number there; issue 30). What the
 * assemblies do not carry, and so is not checked: the int32/int64 range, the `byte` (base64) format, and the enum
 * values of string fields (not in the OpenAPI v2 definitions cdk8s imports either). `status` is
 * not part of the cdk8s props either, so a manifest with `status` is rejected.
 *
 * Releases: each `cdk8s-plus-XX` in package.json's devDependencies gives 1.XX. A release the
 * tests target past the newest published package (1.35 to 1.37: there is no cdk8s-plus-35) is
 * checked against the newest assembly (`schemaSource()` says which): fields new in that release
 * are then rejected, so a test that needs one fails instead of passing unchecked. The pod fields
 * of 1.35-1.37 the library checks (container `restartPolicyRules` and `lifecycle.stopSignal`,
 * pod-level `resources`, the `podCertificate` and `clusterTrustBundle` projections) are all in
 * k8s.io/api v0.34's core/v1 types, so in the 1.34 assembly: compared field by field with
 * k8s.io/api v0.35.10, v0.36.6 and v0.37.2, the pod-template fields those releases add are
 * scheduling ones (`workloadRef`, `schedulingGroup`) and the projections' `userAnnotations`
 * (1.35) and `user` (1.37), which the library does not write. Whether a field is ON at a release
 * is the API server's rules' business (src/engine/rules.ts), not the schema's.
 *
 * Only the shape is checked. The API server's semantic rules (e.g. which containers may set
 * `restartPolicy`) are not part of the schemas.
 *
 * Each assembly is read and translated at most once per jest worker (see `workerCache()`), and one
 * validator per (assembly, kind) is compiled on first use and cached with it.
 */
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import Ajv, { ErrorObject, ValidateFunction } from 'ajv';

/** A Kubernetes release, e.g. '1.29', 'v1.29' or '1.29.3' (the patch is ignored). */
export type K8sVersion = string;

/** The newest release the tests target (test/util/arbitraries.ts MINORS); see "Releases" above. */
const NEWEST_TARGET_MINOR = 37;

const REPO_ROOT = path.resolve(__dirname, '../..');

/** minor -> the package whose assembly types that release, from package.json's devDependencies. */
function assemblyPackages(): Map<number, string> {
  const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf-8'));
  const found = new Map<number, string>();
  for (const name of Object.keys(pkg.devDependencies ?? {})) {
    const m = /^cdk8s-plus-(\d+)$/.exec(name);
    if (m) {
      found.set(Number(m[1]), name);
    }
  }
  if (found.size === 0) {
    throw new Error('Kubernetes schemas: package.json has no cdk8s-plus-XX devDependency to build them from.');
  }
  return found;
}

const PACKAGES = assemblyPackages();
const NEWEST_PACKAGE_MINOR = Math.max(...PACKAGES.keys());

/** release ('1.29') -> the package whose assembly is used for it. */
const PACKAGE_FOR = new Map<string, string>();
for (let minor = Math.min(...PACKAGES.keys()); minor <= Math.max(NEWEST_TARGET_MINOR, NEWEST_PACKAGE_MINOR); minor++) {
  const own = PACKAGES.get(minor);
  if (own) {
    PACKAGE_FOR.set(`1.${minor}`, own);
  } else if (minor > NEWEST_PACKAGE_MINOR) {
    PACKAGE_FOR.set(`1.${minor}`, PACKAGES.get(NEWEST_PACKAGE_MINOR)!);
  }
}

/** The releases with a schema, sorted by version: ['1.27', '1.28', ...]. */
export const SCHEMA_RELEASES: string[] = [...PACKAGE_FOR.keys()];

/** '1.29' | 'v1.29' | '1.29.3' | 'v1.29.0' -> '1.29'; throws when there is no schema for it. */
function normalizeRelease(version: K8sVersion): string {
  const m = /^v?(\d+)\.(\d+)(?:\.\d+)?$/.exec(String(version).trim());
  if (!m) {
    throw new Error(`Invalid Kubernetes version '${version}': expected e.g. '1.29', 'v1.29' or '1.29.3'.`);
  }
  const release = `${Number(m[1])}.${Number(m[2])}`;
  if (!PACKAGE_FOR.has(release)) {
    throw new Error(
      `No Kubernetes schema for release ${release} (from '${version}'): no cdk8s-plus-XX assembly covers it; `
      + `available: ${SCHEMA_RELEASES.join(', ')}.`,
    );
  }
  return release;
}

function packageDir(name: string): string {
  const dir = path.join(REPO_ROOT, 'node_modules', name);
  if (!fs.existsSync(path.join(dir, '.jsii'))) {
    throw new Error(`Kubernetes schemas: ${dir}/.jsii not found; run \`npm ci\` (${name} is a dev dependency).`);
  }
  return dir;
}

/**
 * Where the schema of a release comes from: '<package>@<version>', plus a note when the
 * release is newer than the package's own.
 */
export function schemaSource(version: K8sVersion): string {
  const release = normalizeRelease(version);
  const name = PACKAGE_FOR.get(release)!;
  const { version: pkgVersion } = JSON.parse(fs.readFileSync(path.join(packageDir(name), 'package.json'), 'utf-8'));
  const own = `1.${name.replace('cdk8s-plus-', '')}`;
  return own === release
    ? `${name}@${pkgVersion}`
    : `${name}@${pkgVersion} (Kubernetes ${own}: no newer assembly is published)`;
}

// ---------------------------------------------------------------------------
// From a jsii assembly to JSON-schema definitions
// ---------------------------------------------------------------------------

function isObject(x: unknown): x is Record<string, any> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/** A jsii type reference (spec: TypeReference). */
interface TypeRef {
  readonly primitive?: string;
  readonly fqn?: string;
  readonly collection?: { readonly kind: 'array' | 'map'; readonly elementtype: TypeRef };
  readonly union?: { readonly types: TypeRef[] };
}

/** The `@schema` doc tag: 'io.k8s.api.core.v1.Container' (a type), 'io.k8s.api.core.v1.Container#restartPolicy' (a property: its JSON name after '#'). */
function schemaTag(docs: any, what: string): string {
  const tag = docs?.custom?.schema;
  if (typeof tag !== 'string') {
    throw new Error(`Kubernetes schemas: ${what} has no @schema doc tag; cannot map it to its JSON name.`);
  }
  return tag;
}

interface Built {
  readonly definitions: Record<string, any>;
  /** 'group/version/Kind' (group '' for core) -> definition name. */
  readonly byGvk: Map<string, string>;
  /** Kind -> the apiVersions it has in this release (for error hints). */
  readonly apiVersionsByKind: Map<string, string[]>;
}

function gvkKey(apiVersion: string, kind: string): string {
  return `${apiVersion.includes('/') ? '' : '/'}${apiVersion}/${kind}`;
}

/** Builds the definitions of one assembly (package directory). */
function buildDefinitions(dir: string): Built {
  const assembly = JSON.parse(fs.readFileSync(path.join(dir, '.jsii'), 'utf-8'));
  const prefix = `${assembly.name}.k8s.`;
  const types: any[] = Object.values(assembly.types).filter((t: any) => t.fqn.startsWith(prefix));
  const byFqn = new Map(types.map((t) => [t.fqn, t]));

  // The GVK of each KubeX class, from the compiled module: `KubeDeployment.GVK = { apiVersion:
  // 'apps/v1', kind: 'Deployment' }` after the class, or `static GVK = {...}` inside it (newer tsc).
  const js = fs.readFileSync(path.join(dir, 'lib/imports/k8s.js'), 'utf-8');
  const gvkOf = new Map<string, { apiVersion: string; kind: string }>();
  let inClass = '';
  for (const m of js.matchAll(/^class (Kube\w+) |^(?:(Kube\w+)\.|\s+static )GVK = \{\s*apiVersion: '([^']+)',\s*kind: '([^']+)',?\s*\}/gm)) {
    if (m[1]) {
      inClass = m[1];
    } else {
      gvkOf.set(m[2] ?? inClass, { apiVersion: m[3], kind: m[4] });
    }
  }

  const schemaOf = (ref: TypeRef, where: string): any => {
    if (ref.primitive) {
      switch (ref.primitive) {
        case 'string': return { type: 'string' };
        // Every jsii `number` of the API types is an int32 or int64 field (the API conventions
        // rule out floats; the strict decoders of test/k8s-api, k8s.io/api of each release, reject
        // 8080.5 where the assemblies say `number`): checked as an integer. (Quantity, below, is
        // the one field that takes a fractional number.)
        case 'number': return { type: 'integer' };
        case 'boolean': return { type: 'boolean' };
        case 'date': return { type: 'string', format: 'date-time' };
        case 'any':
        case 'json': return {};
        default: throw new Error(`Kubernetes schemas: ${where}: unknown jsii primitive '${ref.primitive}'`);
      }
    }
    if (ref.collection) {
      const element = schemaOf(ref.collection.elementtype, where);
      return ref.collection.kind === 'array'
        ? { type: 'array', items: element }
        : { type: 'object', additionalProperties: element };
    }
    if (ref.union) {
      return { anyOf: ref.union.types.map((t) => schemaOf(t, where)) };
    }
    const fqn = ref.fqn!;
    if (fqn === `${prefix}IntOrString`) {
      return { oneOf: [{ type: 'string' }, { type: 'integer' }] };
    }
    if (fqn === `${prefix}Quantity`) {
      return { oneOf: [{ type: 'string' }, { type: 'number' }] };
    }
    const target = byFqn.get(fqn);
    if (target?.kind === 'enum') {
      // jsii keeps the member names, not their values (only DeleteOptions' kind is one).
      return { type: 'string' };
    }
    if (target?.kind === 'interface') {
      return { $ref: `#/definitions/${schemaTag(target.docs, fqn)}` };
    }
    throw new Error(`Kubernetes schemas: ${where}: unsupported type ${fqn}`);
  };

  const definitions: Record<string, any> = {};
  for (const t of types) {
    if (t.kind !== 'interface') {
      continue;
    }
    const name = schemaTag(t.docs, t.fqn);
    const properties: Record<string, any> = {};
    const required: string[] = [];
    // In name order, as in the API's definitions: Ajv reports errors in this order.
    const props = [...(t.properties ?? [])].sort((a, b) => (schemaTag(a.docs, a.name) < schemaTag(b.docs, b.name) ? -1 : 1));
    for (const p of props) {
      const where = `${t.fqn}.${p.name}`;
      const tag = schemaTag(p.docs, where);
      const hash = tag.indexOf('#');
      if (hash < 0 || tag.slice(0, hash) !== name) {
        throw new Error(`Kubernetes schemas: ${where}: @schema '${tag}' is not a property of ${name}`);
      }
      const jsonName = tag.slice(hash + 1);
      properties[jsonName] = schemaOf(p.type, where);
      if (!p.optional) {
        required.push(jsonName);
      }
    }
    if (definitions[name]) {
      throw new Error(`Kubernetes schemas: ${t.fqn}: definition ${name} is defined twice`);
    }
    definitions[name] = {
      type: 'object',
      properties,
      ...(required.length > 0 ? { required } : {}),
      additionalProperties: false,
    };
  }

  const byGvk = new Map<string, string>();
  const apiVersionsByKind = new Map<string, string[]>();
  for (const t of types) {
    if (t.kind !== 'class' || !t.name.startsWith('Kube')) {
      continue;
    }
    const gvk = gvkOf.get(t.name);
    if (!gvk) {
      throw new Error(`Kubernetes schemas: ${t.fqn}: no ${t.name}.GVK in ${dir}/lib/imports/k8s.js`);
    }
    const name = schemaTag(t.docs, t.fqn);
    const def = definitions[name];
    // io.k8s.api.apps.v1.Deployment is apps/v1 Deployment: version and kind end the name.
    if (!name.endsWith(`.${gvk.apiVersion.split('/').pop()}.${gvk.kind}`)) {
      throw new Error(`Kubernetes schemas: ${t.fqn}: GVK ${gvk.apiVersion} ${gvk.kind} does not match its schema ${name}`);
    }
    if (!def) {
      throw new Error(`Kubernetes schemas: ${t.fqn}: no definition ${name}`);
    }
    // cdk8s leaves apiVersion and kind out of the props (it writes them itself).
    def.properties.apiVersion = { type: 'string', enum: [gvk.apiVersion] };
    def.properties.kind = { type: 'string', enum: [gvk.kind] };
    byGvk.set(gvkKey(gvk.apiVersion, gvk.kind), name);
    apiVersionsByKind.set(gvk.kind, [...(apiVersionsByKind.get(gvk.kind) ?? []), gvk.apiVersion]);
  }
  return { definitions, byGvk, apiVersionsByKind };
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/;

interface Release extends Built {
  readonly schemaId: string;
  readonly ajv: Ajv;
  readonly validators: Map<string, ValidateFunction>;
}

/**
 * The built releases of this jest worker. Jest evaluates this module again for every test file
 * (each has its own module registry), but Node's core modules are one object per worker: the
 * cache hangs on `os` under a registered symbol, so an assembly is translated and a kind
 * compiled (Ajv, the costly part: about 0.5 s for the first pod-bearing kind of a release) once
 * per worker instead of once per test file. The key holds the package version and a hash of
 * this file, so an edited builder (jest --watch keeps its workers) starts afresh.
 */
function workerCache(): Map<string, Release> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const holder = require('os') as Record<symbol, Map<string, Release> | undefined>;
  const key = Symbol.for('cdk8s-sidecars:test/util/k8s-schema');
  return (holder[key] ??= new Map());
}

const BUILDER_HASH = crypto.createHash('sha256').update(fs.readFileSync(__filename)).digest('hex').slice(0, 12);

/** release -> its Release, for this module instance (spares the cache key's file read). */
const loadedHere = new Map<string, Release>();

function loadRelease(release: string): Release {
  const here = loadedHere.get(release);
  if (here) {
    return here;
  }
  const dir = packageDir(PACKAGE_FOR.get(release)!);
  const { name, version } = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf-8'));
  const cacheKey = `${name}@${version}#${BUILDER_HASH}`;
  const cache = workerCache();
  let loaded = cache.get(cacheKey);
  if (!loaded) {
    const built = buildDefinitions(dir);
    const ajv = new Ajv({ strict: false, allErrors: true });
    ajv.addFormat('date-time', RFC3339);
    const schemaId = `k8s-${name}.json`;
    ajv.addSchema({ $id: schemaId, definitions: built.definitions }, schemaId);
    loaded = { ...built, schemaId, ajv, validators: new Map() };
    cache.set(cacheKey, loaded);
  }
  loadedHere.set(release, loaded);
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
 * @throws when `version` is malformed or no assembly covers it.
 */
export function schemaErrors(manifest: any, version: K8sVersion): string[] {
  const release = normalizeRelease(version);
  const rel = loadRelease(release);
  const label = describe(manifest);
  if (!isObject(manifest)) {
    return [`${label} /: manifest must be an object, got ${JSON.stringify(manifest)}`];
  }
  const { apiVersion, kind } = manifest;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') {
    return [`${label} /: apiVersion and kind must be strings (apiVersion: ${JSON.stringify(apiVersion)}, kind: ${JSON.stringify(kind)})`];
  }
  const definition = rel.byGvk.get(gvkKey(apiVersion, kind));
  if (!definition) {
    const known = rel.apiVersionsByKind.get(kind);
    const hint = known
      ? `; Kubernetes ${release} serves ${kind} as ${known.join(', ')}`
      : ` (not a built-in kind of Kubernetes ${release}: a custom resource cannot be validated here)`;
    return [`${label} /: no schema for apiVersion "${apiVersion}" kind "${kind}" in Kubernetes ${release}${hint}`];
  }
  const validate = validatorFor(rel, definition);
  if (validate(manifest)) {
    recordAccepted(manifest, release);
    return [];
  }
  return [...new Set(foldOneOf(validate.errors ?? []))].map((line) => `${label} ${line}`);
}

/**
 * With K8S_API_DUMP=<dir> (set by `npm run test:k8s-api`, scripts/k8s-api-test.sh), every
 * manifest this check accepts is appended, with its release, to `<dir>/<pid>.jsonl`: the strict
 * decoders of test/k8s-api/decode.real-test.ts then read each one with the k8s.io/api types of that
 * release, the reference this schema check must agree with.
 */
function recordAccepted(manifest: any, release: string): void {
  const dir = process.env.K8S_API_DUMP;
  if (!dir) return;
  fs.appendFileSync(path.join(dir, `${process.pid}.jsonl`), JSON.stringify({ release, manifest }) + '\n');
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
