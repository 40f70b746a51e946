/* eslint-disable no-bitwise */ // two binary formats: their tags and varints are bit fields
/**
 * Loki's protobuf push body, as Vector's loki sink sends it by default (`compression: snappy`
 * "implies sending push requests as Protocol Buffers": vectordotdev/vector src/sinks/loki/config.rs
 * and sink.rs, v0.57.0): a raw (unframed) Snappy block (`snap::raw::Encoder`, src/sinks/util/snappy.rs)
 * of a `logproto.PushRequest` (lib/loki-logproto/proto/push.proto: streams = 1; StreamAdapter
 * labels = 1, entries = 2; EntryAdapter timestamp = 1, line = 2), the labels one string
 * `{k="v", k2="v2"}` (lib/loki-logproto/src/lib.rs `encode_labels_map_to_string`).
 */

/** Snappy's raw block format (google/snappy format_description.txt). */
export function snappyUncompress(input: Buffer): Buffer {
  let pos = 0;
  const varint = () => {
    let v = 0;
    for (let shift = 0; ; shift += 7) {
      const b = input[pos++];
      v += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return v;
    }
  };
  const length = varint();
  const out = Buffer.alloc(length);
  let o = 0;
  while (pos < input.length) {
    const tag = input[pos++];
    const kind = tag & 3;
    if (kind === 0) {
      let len = tag >> 2;
      if (len >= 60) {
        const bytes = len - 59;
        len = 0;
        for (let i = 0; i < bytes; i++) len += input[pos++] * 2 ** (8 * i);
      }
      len += 1;
      input.copy(out, o, pos, pos + len);
      pos += len;
      o += len;
      continue;
    }
    let len: number;
    let offset: number;
    if (kind === 1) {
      len = ((tag >> 2) & 7) + 4;
      offset = ((tag >> 5) << 8) | input[pos++];
    } else if (kind === 2) {
      len = (tag >> 2) + 1;
      offset = input.readUInt16LE(pos);
      pos += 2;
    } else {
      len = (tag >> 2) + 1;
      offset = input.readUInt32LE(pos);
      pos += 4;
    }
    if (offset === 0 || offset > o) throw new Error('snappy: bad copy offset');
    for (let i = 0; i < len; i++, o++) out[o] = out[o - offset];
  }
  if (o !== length) throw new Error(`snappy: ${o} bytes, the header said ${length}`);
  return out;
}

/** The fields of one protobuf message: field number -> raw values (varints as numbers, length-delimited as Buffers). */
export function fields(buf: Buffer): Map<number, Array<number | Buffer>> {
  const out = new Map<number, Array<number | Buffer>>();
  let pos = 0;
  const varint = () => {
    let v = 0;
    for (let shift = 0; ; shift += 7) {
      const b = buf[pos++];
      v += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return v;
    }
  };
  while (pos < buf.length) {
    const key = varint();
    const field = Math.floor(key / 8);
    const wire = key & 7;
    let value: number | Buffer;
    if (wire === 0) {
      value = varint();
    } else if (wire === 2) {
      const len = varint();
      value = buf.subarray(pos, pos + len);
      pos += len;
    } else if (wire === 1) {
      value = buf.subarray(pos, pos + 8);
      pos += 8;
    } else if (wire === 5) {
      value = buf.subarray(pos, pos + 4);
      pos += 4;
    } else {
      throw new Error(`protobuf: wire type ${wire}`);
    }
    out.set(field, [...(out.get(field) ?? []), value]);
  }
  return out;
}

/** `{app="web", team="shop"}` -> { app: 'web', team: 'shop' } (values without quotes or commas, as the tests use). */
function parseLabels(text: string): Record<string, string> {
  const m = /^\{(.*)\}$/.exec(text);
  if (!m) throw new Error(`labels ${text}`);
  const out: Record<string, string> = {};
  for (const pair of m[1] === '' ? [] : m[1].split(', ')) {
    const p = /^([A-Za-z_][A-Za-z0-9_]*)="(.*)"$/.exec(pair);
    if (!p) throw new Error(`label ${pair}`);
    out[p[1]] = p[2];
  }
  return out;
}

/** The streams of a snappy-compressed protobuf push body: labels and lines. */
export function decodeLokiPush(body: Buffer): Array<{ labels: Record<string, string>; lines: string[] }> {
  const push = fields(snappyUncompress(body));
  return (push.get(1) ?? []).map(s => {
    const stream = fields(s as Buffer);
    const labels = parseLabels((stream.get(1)?.[0] as Buffer | undefined)?.toString('utf8') ?? '{}');
    const lines = (stream.get(2) ?? []).map(e => (fields(e as Buffer).get(2)?.[0] as Buffer | undefined)?.toString('utf8') ?? '');
    return { labels, lines };
  });
}
