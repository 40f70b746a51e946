/**
 * A reader of Fluent Bit's classic config format that follows Fluent Bit's own, for tests
 * (fluent/fluent-bit v5.1.1, unchanged since v3.2.10: src/config_format/flb_cf_fluentbit.c `read_config`,
 * src/config_format/flb_config_format.c `flb_cf_section_property_add`, src/flb_env.c, and the
 * list types of src/flb_config_map.c / src/flb_slist.c). What the library must never emit
 * (`@INCLUDE`, `@SET` and other meta lines, groups, indentation changes, a key without a value)
 * is an error here, so a test cannot pass on a config Fluent Bit would read differently.
 */
import { parseDocument } from 'yaml';

export interface FluentBitSection {
  /** As written between the brackets, e.g. `OUTPUT`. */
  readonly name: string;
  /** key (lower case: Fluent Bit compares keys without case) -> values in order. */
  readonly props: Record<string, string[]>;
  readonly line: number;
}

function fail(line: number, msg: string): never {
  throw new Error(`fluent-bit.conf line ${line}: ${msg}`);
}

/** `flb_sds_trim`: white space off both ends. */
const trim = (s: string) => s.replace(/^[ \t\r\n\v\f]+|[ \t\r\n\v\f]+$/g, '');

/** Parses the text into sections, the values as the file gives them (variables not yet replaced). */
export function parseFluentBitConf(text: string): FluentBitSection[] {
  const sections: Array<{ name: string; props: Record<string, string[]>; line: number }> = [];
  let indent: string | undefined;
  text.split('\n').forEach((raw, idx) => {
    const line = idx + 1;
    const buf = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (buf === '') return;
    if (buf[0] === '#') return;
    if (/^@INCLUDE /i.test(buf)) fail(line, `@INCLUDE: ${buf}`);
    if (buf[0] === '@' && buf.length > 3) fail(line, `meta command: ${buf}`);
    if (buf[0] === '[') {
      const end = buf.indexOf(']');
      if (end < 0) fail(line, `bad header definition ${buf}`);
      sections.push({ name: buf.slice(1, end), props: {}, line });
      return;
    }
    if (indent === undefined) {
      let i = 0;
      do { i++; } while (i < buf.length && (buf[i] === ' ' || buf[i] === '\t'));
      indent = buf.slice(0, i);
      if (i === buf.length) return;
    }
    if (!buf.startsWith(indent)) fail(line, `invalid indentation level: ${JSON.stringify(buf)}`);
    const rest = buf.slice(indent.length);
    if (rest[0] === ' ' || rest[0] === '\t') fail(line, `extra indentation level: ${JSON.stringify(buf)}`);
    if (rest === '' || rest[0] === '#') return;
    const sp = rest.indexOf(' ');
    if (sp < 0) fail(line, `undefined value: ${JSON.stringify(buf)}`);
    const key = trim(rest.slice(0, sp));
    if (key[0] === '[') fail(line, `group: ${JSON.stringify(buf)}`);
    const val = rest.slice(sp + 1);
    if (val.length === 0) fail(line, `key has an empty value: ${JSON.stringify(buf)}`);
    const current = sections[sections.length - 1];
    if (!current) fail(line, `property outside a section: ${JSON.stringify(buf)}`);
    (current.props[key.toLowerCase()] ??= []).push(trim(val));
  });
  return sections;
}

/** `${NAME}` replaced from the environment, as Fluent Bit does with every value (src/flb_env.c). */
export function fluentBitEnv(value: string, env: Record<string, string>): string {
  return value.replace(/\$\{([^}]*)\}/g, (_, name: string) => {
    if (!(name in env)) throw new Error(`Fluent Bit would find no environment variable ${name} for ${JSON.stringify(value)}`);
    return env[name];
  });
}

/** A `FLB_CONFIG_MAP_CLIST` value: split on `,`, each entry without surrounding spaces, empty ones dropped. */
export function fluentBitClist(value: string): string[] {
  return value.split(',').map(s => s.replace(/^ +| +$/g, '')).filter(s => s !== '');
}

/** A `FLB_CONFIG_MAP_SLIST_1` value: the first space-separated token, then the rest. */
export function fluentBitSlist1(value: string): [string, string] {
  const m = /^(\S+)\s+(.*)$/.exec(value);
  if (!m) throw new Error(`not two tokens: ${JSON.stringify(value)}`);
  return [m[1], m[2]];
}

/**
 * out_loki `labels` as the plugin reads them (plugins/out_loki/loki.c `parse_kv`, v5.1.1 as v3.2.10):
 * `key=value` entries of a CLIST; a leading `$` makes a record accessor, which the library
 * never means to write.
 */
export function fluentBitLokiLabels(value: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of fluentBitClist(value)) {
    if (entry.startsWith('$')) throw new Error(`record accessor label ${entry}`);
    const eq = entry.indexOf('=');
    if (eq < 0) throw new Error(`invalid key value pair on '${entry}'`);
    const v = entry.slice(eq + 1);
    if (v === '') throw new Error(`invalid key value pair on '${entry}'`);
    if (v.startsWith('$')) throw new Error(`record accessor value on '${entry}'`);
    out[entry.slice(0, eq)] = v;
  }
  return out;
}

/**
 * A reader of Fluent Bit's YAML config format for what the library writes, following Fluent Bit's
 * own (fluent/fluent-bit v5.1.1: src/config_format/flb_cf_yaml.c, and src/flb_config.c
 * `configure_plugins_type`), into the sections the classic reader gives: `service` (a map of
 * scalars) is `SERVICE`; each map of `pipeline.inputs`, `.filters` and `.outputs` is an `INPUT`,
 * `FILTER` or `OUTPUT`. A value is the text of its scalar whatever its YAML type (the reader
 * takes `event->data.scalar.value`), so the YAML 1.2 failsafe schema reads it; a list of scalars is
 * one property per entry, in order. What the library must never write (another top-level key,
 * includes, env, parsers, processors, nested maps, a key twice, anchors or tags) is an error.
 */
export function parseFluentBitYaml(text: string): FluentBitSection[] {
  const doc = parseDocument(text, { schema: 'failsafe', uniqueKeys: true, strict: true });
  if (doc.errors.length > 0) throw new Error(`fluent-bit.yaml: ${doc.errors[0].message}`);
  if (/(^|\s)[&*!]/m.test(text.replace(/"(?:[^"\\]|\\.)*"/g, '""'))) throw new Error('fluent-bit.yaml: an anchor, alias or tag');
  const top = doc.toJS() as Record<string, unknown>;
  const sections: FluentBitSection[] = [];
  const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  const props = (where: string, map: unknown, lists: boolean): Record<string, string[]> => {
    if (!isMap(map)) throw new Error(`fluent-bit.yaml: ${where} is not a map`);
    const out: Record<string, string[]> = {};
    for (const [k, v] of Object.entries(map)) {
      const key = k.toLowerCase();
      if (key in out) throw new Error(`fluent-bit.yaml: ${where}.${k} given twice (without regard to case)`);
      if (typeof v === 'string') out[key] = [v];
      else if (lists && Array.isArray(v) && v.length > 0 && v.every(e => typeof e === 'string')) out[key] = [...v];
      else throw new Error(`fluent-bit.yaml: ${where}.${k} is not a scalar${lists ? ' or a list of scalars' : ''}`);
    }
    return out;
  };
  for (const key of Object.keys(top)) {
    if (key !== 'service' && key !== 'pipeline') throw new Error(`fluent-bit.yaml: top-level key ${key}`);
  }
  if (top.service !== undefined) sections.push({ name: 'SERVICE', props: props('service', top.service, false), line: 0 });
  const pipeline = top.pipeline;
  if (!isMap(pipeline)) throw new Error('fluent-bit.yaml: no pipeline map');
  const kinds: Record<string, string> = { inputs: 'INPUT', filters: 'FILTER', outputs: 'OUTPUT' };
  for (const key of Object.keys(pipeline)) {
    if (!(key in kinds)) throw new Error(`fluent-bit.yaml: pipeline.${key}`);
  }
  for (const [list, name] of Object.entries(kinds)) {
    const entries = pipeline[list];
    if (entries === undefined) continue;
    if (!Array.isArray(entries)) throw new Error(`fluent-bit.yaml: pipeline.${list} is not a list`);
    entries.forEach((e, i) => {
      const p = props(`pipeline.${list}[${i}]`, e, true);
      if (p.name?.length !== 1) throw new Error(`fluent-bit.yaml: pipeline.${list}[${i}] has no name`);
      sections.push({ name, props: p, line: 0 });
    });
  }
  return sections;
}
