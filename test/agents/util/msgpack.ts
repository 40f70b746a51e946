/**
 * A streaming MessagePack decoder (the format of the Fluent forward protocol), written from the
 * spec (github.com/msgpack/msgpack spec.md), for the forward sink of `npm run test:agents`.
 * `decodeMsgpackStream()` returns a function that takes the next bytes and returns the values
 * that are complete; the rest waits for more bytes. Fluent Bit's EventTime (ext type 0) becomes
 * seconds as a number.
 */

class Incomplete extends Error {}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

function decodeAt(buf: Buffer, pos: number): [any, number] {
  const need = (n: number) => {
    if (pos + n > buf.length) throw new Incomplete();
  };
  need(1);
  const b = buf[pos++];
  // A str that is not UTF-8 (Fluent Bit may send PackedForward entries as str) stays bytes.
  const str = (n: number): [string | Buffer, number] => {
    need(n);
    const bytes = buf.subarray(pos, pos + n);
    try {
      return [UTF8.decode(bytes), pos + n];
    } catch {
      return [Buffer.from(bytes), pos + n];
    }
  };
  const bin = (n: number): [Buffer, number] => {
    need(n);
    return [buf.subarray(pos, pos + n), pos + n];
  };
  const arr = (n: number): [any[], number] => {
    const out: any[] = [];
    for (let i = 0; i < n; i++) {
      const [v, p] = decodeAt(buf, pos);
      out.push(v);
      pos = p;
    }
    return [out, pos];
  };
  const map = (n: number): [Record<string, any>, number] => {
    const out: Record<string, any> = {};
    for (let i = 0; i < n; i++) {
      const [k, p1] = decodeAt(buf, pos);
      const [v, p2] = decodeAt(buf, p1);
      out[String(k)] = v;
      pos = p2;
    }
    return [out, pos];
  };
  const ext = (n: number): [any, number] => {
    need(1 + n);
    const type = buf.readInt8(pos);
    const data = buf.subarray(pos + 1, pos + 1 + n);
    // EventTime: 32-bit seconds, 32-bit nanoseconds
    const v = type === 0 && n === 8 ? data.readUInt32BE(0) + data.readUInt32BE(4) / 1e9 : { ext: type, data };
    return [v, pos + 1 + n];
  };
  const u = (n: number) => {
    need(n);
    const v = n === 1 ? buf.readUInt8(pos) : n === 2 ? buf.readUInt16BE(pos) : n === 4 ? buf.readUInt32BE(pos) : Number(buf.readBigUInt64BE(pos));
    pos += n;
    return v;
  };
  if (b <= 0x7f) return [b, pos];
  if (b >= 0x80 && b <= 0x8f) return map(b - 0x80);
  if (b >= 0x90 && b <= 0x9f) return arr(b - 0x90);
  if (b >= 0xa0 && b <= 0xbf) return str(b - 0xa0);
  if (b >= 0xe0) return [b - 0x100, pos];
  switch (b) {
    case 0xc0: return [null, pos];
    case 0xc2: return [false, pos];
    case 0xc3: return [true, pos];
    case 0xc4: return bin(u(1));
    case 0xc5: return bin(u(2));
    case 0xc6: return bin(u(4));
    case 0xc7: return ext(u(1));
    case 0xc8: return ext(u(2));
    case 0xc9: return ext(u(4));
    case 0xca: need(4); return [buf.readFloatBE(pos), pos + 4];
    case 0xcb: need(8); return [buf.readDoubleBE(pos), pos + 8];
    case 0xcc: return [u(1), pos];
    case 0xcd: return [u(2), pos];
    case 0xce: return [u(4), pos];
    case 0xcf: return [u(8), pos];
    case 0xd0: need(1); return [buf.readInt8(pos), pos + 1];
    case 0xd1: need(2); return [buf.readInt16BE(pos), pos + 2];
    case 0xd2: need(4); return [buf.readInt32BE(pos), pos + 4];
    case 0xd3: need(8); return [Number(buf.readBigInt64BE(pos)), pos + 8];
    case 0xd4: return ext(1);
    case 0xd5: return ext(2);
    case 0xd6: return ext(4);
    case 0xd7: return ext(8);
    case 0xd8: return ext(16);
    case 0xd9: return str(u(1));
    case 0xda: return str(u(2));
    case 0xdb: return str(u(4));
    case 0xdc: return arr(u(2));
    case 0xdd: return arr(u(4));
    case 0xde: return map(u(2));
    case 0xdf: return map(u(4));
    default: throw new Error(`msgpack: byte 0x${b.toString(16)} is not a type`);
  }
}

export function decodeMsgpackStream(): (data: Buffer) => any[] {
  let pending: Buffer = Buffer.alloc(0);
  return (data: Buffer) => {
    pending = pending.length === 0 ? data : Buffer.concat([pending, data]);
    const out: any[] = [];
    let pos = 0;
    for (;;) {
      if (pos >= pending.length) break;
      try {
        const [v, next] = decodeAt(pending, pos);
        out.push(v);
        pos = next;
      } catch (e) {
        if (e instanceof Incomplete) break;
        throw e;
      }
    }
    pending = pending.subarray(pos);
    return out;
  };
}
