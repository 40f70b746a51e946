/**
 * kubeconform's schemas for one Kubernetes release, generated from the release's own OpenAPI v2
 * document (`api/openapi-spec/swagger.json` of the k8s.io/kubernetes module at the release's tag,
 * which scripts/build-linters.sh copies into the cache) the way yannh/kubernetes-json-schema makes
 * the `<version>-standalone-strict` directories kubeconform reads by default: openapi2jsonschema
 * with `--expanded --kubernetes --stand-alone --strict` (instrumenta/openapi2jsonschema
 * `openapi2jsonschema/command.py` and `util.py`, master d697cbf). Step by step, as there:
 *
 * - the shared definitions: `IntOrString` becomes string or integer, `Quantity` string or number;
 *   each kind's `apiVersion` and `kind` get an enum from `x-kubernetes-group-version-kind`; every
 *   object with `properties` gets `additionalProperties: false` (`additional_properties`: into
 *   objects only, not into lists);
 * - each kind's schema: `$schema`, `type: object`, `additionalProperties: false`, every `$ref`
 *   replaced by the definition it names (stand-alone), `additional_properties` again on its
 *   `properties`, then `replace_int_or_string` (a `format: int-or-string` schema becomes the
 *   oneOf) and `allow_null_optional_fields` (a `type` of a property its object does not require
 *   also takes `null`);
 * - the file name kubeconform asks for: `<kind>-<version>.json` for the core group,
 *   `<kind>-<first label of the group>-<version>.json` otherwise (`schemaPath` of kubeconform's
 *   pkg/registry/registry.go, v0.8.0, is the reader's side).
 *
 * Differences, none of which changes a verdict: only the definitions that are a kind of the API
 * (`x-kubernetes-group-version-kind`) get a file (kubeconform never asks for another), and the
 * kinds openapi2jsonschema skips in stand-alone mode (the CustomResourceDefinition types, whose
 * JSONSchemaProps is recursive) are skipped here too.
 */
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as path from 'path';

type Json = any;

/** The kinds openapi2jsonschema does not write in stand-alone mode (command.py, the `kind in [...]` list). */
const UNSUPPORTED_STANDALONE = new Set([
  'jsonschemaprops', 'jsonschemapropsorarray', 'customresourcevalidation', 'customresourcedefinition',
  'customresourcedefinitionspec', 'customresourcedefinitionlist', 'jsonschemapropsorstringarray', 'jsonschemapropsorbool',
]);

/** util.py `additional_properties`: in place, into objects (not lists). */
function additionalProperties(data: Json): Json {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return data;
  for (const v of Object.values(data)) {
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      if ('properties' in v && !('additionalProperties' in v)) (v as Json).additionalProperties = false;
      additionalProperties(v);
    }
  }
  return data;
}

const isObject = (v: unknown): v is Record<string, Json> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** util.py `replace_int_or_string`. */
function replaceIntOrString(data: Json): Json {
  if (!isObject(data)) return data;
  const out: Json = {};
  for (const [k, v] of Object.entries(data)) {
    if (isObject(v)) {
      out[k] = v.format === 'int-or-string' ? { oneOf: [{ type: 'string' }, { type: 'integer' }] } : replaceIntOrString(v);
    } else if (Array.isArray(v)) {
      out[k] = v.map(replaceIntOrString);
    } else {
      out[k] = v;
    }
  }
  return out;
}

/** util.py `allow_null_optional_fields` (data, parent, grand_parent, key), argument for argument. */
function allowNullOptionalFields(data: Json, parent?: Json, grandParent?: Json, key?: string): Json {
  if (!isObject(data)) return data;
  const out: Json = {};
  for (const [k, v] of Object.entries(data)) {
    if (isObject(v)) {
      out[k] = allowNullOptionalFields(v, data, parent, k);
    } else if (Array.isArray(v)) {
      out[k] = v.map(x => allowNullOptionalFields(x, v, parent, k));
    } else if (typeof v === 'string') {
      const isNonNullType = k === 'type' && v !== 'null';
      const required = isObject(grandParent) ? grandParent.required : Array.isArray(grandParent) && grandParent.includes('required') ? [] : undefined;
      const isRequiredField = Array.isArray(required) && key !== undefined && required.includes(key);
      out[k] = isNonNullType && !isRequiredField ? [v, 'null'] : v;
    } else {
      out[k] = v;
    }
  }
  return out;
}

/** JsonRef.replace_refs: every `{ $ref: '#/definitions/X' }` replaced by a copy of X, recursively. */
function inline(node: Json, definitions: Record<string, Json>, stack: string[]): Json {
  if (Array.isArray(node)) return node.map(n => inline(n, definitions, stack));
  if (!isObject(node)) return node;
  if (typeof node.$ref === 'string') {
    const name = node.$ref.replace(/^#\/definitions\//, '');
    if (stack.includes(name)) throw new Error(`recursive definition ${[...stack, name].join(' -> ')}`);
    const target = definitions[name];
    if (target === undefined) throw new Error(`no definition ${name}`);
    return inline(target, definitions, [...stack, name]);
  }
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) out[k] = inline(v, definitions, stack);
  return out;
}

/** The file kubeconform reads for a definition (command.py `full_name`). */
export function schemaFileName(title: string): string {
  const parts = title.split('.');
  const kind = parts[parts.length - 1].toLowerCase();
  const group = parts[parts.length - 3].toLowerCase();
  const version = parts[parts.length - 2].toLowerCase();
  return ['core', 'api'].includes(group) ? `${kind}-${version}.json` : `${kind}-${group}-${version}.json`;
}

/** Bump when the generation changes: the cached directory is then made again. */
const GENERATOR_REVISION = '1';

/**
 * Writes the schemas of `swaggerPath` into `outDir` (`.../v1.29.15-standalone-strict`) unless a
 * stamp says they were made from the same document by the same generator. Returns the number of
 * schema files.
 */
export function generateKubeconformSchemas(swaggerPath: string, outDir: string): number {
  const text = fs.readFileSync(swaggerPath, 'utf8');
  const stamp = crypto.createHash('sha256').update(GENERATOR_REVISION).update(text).digest('hex');
  const stampFile = path.join(outDir, '.stamp');
  if (fs.existsSync(stampFile) && fs.readFileSync(stampFile, 'utf8') === stamp) {
    return fs.readdirSync(outDir).filter(f => f.endsWith('.json')).length;
  }
  const data = JSON.parse(text);
  const definitions: Record<string, Json> = data.definitions;
  definitions['io.k8s.apimachinery.pkg.util.intstr.IntOrString'] = { oneOf: [{ type: 'string' }, { type: 'integer' }] };
  definitions['io.k8s.apimachinery.pkg.api.resource.Quantity'] = { oneOf: [{ type: 'string' }, { type: 'number' }] };
  for (const def of Object.values(definitions)) {
    for (const gvk of def['x-kubernetes-group-version-kind'] ?? []) {
      const props = def.properties ?? {};
      if (props.apiVersion) {
        const apiVersion = gvk.group ? `${gvk.group}/${gvk.version}` : gvk.version;
        props.apiVersion.enum = [...new Set([...(props.apiVersion.enum ?? []), apiVersion])];
      }
      if (props.kind) props.kind.enum = [...new Set([...(props.kind.enum ?? []), gvk.kind])];
    }
  }
  additionalProperties(definitions);

  const tmp = `${outDir}.tmp-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { recursive: true });
  let written = 0;
  for (const [title, def] of Object.entries(definitions)) {
    if (!def['x-kubernetes-group-version-kind']) continue;
    const parts = title.split('.');
    if (parts[2] === 'kubernetes' && parts[3] === 'pkg') continue;
    if (UNSUPPORTED_STANDALONE.has(parts[parts.length - 1].toLowerCase())) continue;
    let spec: Json = { ...def, $schema: 'http://json-schema.org/schema#' };
    spec.type ??= 'object';
    spec.additionalProperties = false;
    spec = inline(spec, definitions, [title]);
    if (spec.properties) {
      additionalProperties(spec.properties);
      spec.properties = allowNullOptionalFields(replaceIntOrString(spec.properties));
    }
    fs.writeFileSync(path.join(tmp, schemaFileName(title)), JSON.stringify(spec));
    written++;
  }
  fs.writeFileSync(path.join(tmp, '.stamp'), stamp);
  fs.rmSync(outDir, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(outDir), { recursive: true });
  fs.renameSync(tmp, outDir);
  return written;
}
