/**
 * The proto fields a JSON Envoy config sets, as `<message>.<field>` (proto names), found by
 * walking the JSON through the vendored protos (test/util/envoy-proto.ts): message fields,
 * repeated and map values, and `Any` payloads by their `@type`. Well-known types (Duration,
 * Struct, wrappers, Any's own keys) are leaves. A key the protos do not define is reported as
 * `<message>.<key> (not in the vendored protos)`.
 */
import * as protobuf from 'protobufjs';
import { envoyProtos } from './envoy-proto';

const LEAF = /^google\.protobuf\.(Duration|Timestamp|Struct|Value|ListValue|FieldMask|Empty|(Bool|U?Int(32|64)|Double|Float|String|Bytes)Value)$/;

export function envoyFieldPaths(typeName: string, json: unknown): Set<string> {
  const root = envoyProtos().root;
  const out = new Set<string>();
  const walk = (type: protobuf.Type, value: unknown): void => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return;
    const name = type.fullName.slice(1);
    if (name === 'google.protobuf.Any') {
      const url = (value as Record<string, unknown>)['@type'];
      if (typeof url !== 'string') return;
      const inner = root.lookupType(url.slice(url.lastIndexOf('/') + 1));
      const innerName = inner.fullName.slice(1);
      walk(inner, LEAF.test(innerName) ? {} : Object.fromEntries(Object.entries(value).filter(([k]) => k !== '@type')));
      return;
    }
    if (LEAF.test(name)) return;
    for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
      const field = type.fields[key] ?? Object.values(type.fields).find(f => f.name === key || camel(f.name) === key);
      if (!field) {
        out.add(`${name}.${key} (not in the vendored protos)`);
        continue;
      }
      out.add(`${name}.${field.name}`);
      field.resolve();
      if (!(field.resolvedType instanceof protobuf.Type)) continue;
      const t = field.resolvedType;
      if (field.map) Object.values(v as object).forEach(x => walk(t, x));
      else if (field.repeated && Array.isArray(v)) v.forEach(x => walk(t, x));
      else walk(t, v);
    }
  };
  walk(root.lookupType(typeName), json);
  return out;
}

const camel = (s: string) => s.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
