/**
 * The OTLP/HTTP logs body, as the collector's otlp_http exporter sends it by default (protobuf,
 * gzip): an `ExportLogsServiceRequest` (opentelemetry-proto collector/logs/v1/logs_service.proto:
 * resource_logs = 1; ResourceLogs resource = 1, scope_logs = 2; Resource attributes = 1;
 * ScopeLogs log_records = 2; LogRecord body = 5, attributes = 6; KeyValue key = 1, value = 2;
 * AnyValue string_value = 1, bool_value = 2, int_value = 3).
 */
import { fields } from './loki-proto';

export interface OtlpLogRecord {
  /** The record's body (a string body; another kind as its JSON). */
  readonly body: string;
  readonly attributes: Record<string, string>;
  readonly resource: Record<string, string>;
}

const first = (m: Map<number, Array<number | Buffer>>, n: number) => m.get(n)?.[0];

function anyValue(buf: Buffer | undefined): string {
  if (buf === undefined) return '';
  const v = fields(buf);
  const s = first(v, 1);
  if (Buffer.isBuffer(s)) return s.toString('utf8');
  if (v.has(2)) return String(first(v, 2) === 1);
  if (v.has(3)) return String(first(v, 3));
  return JSON.stringify([...v.keys()]);
}

function attributes(list: Array<number | Buffer> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const kv of list ?? []) {
    const f = fields(kv as Buffer);
    out[(first(f, 1) as Buffer).toString('utf8')] = anyValue(first(f, 2) as Buffer | undefined);
  }
  return out;
}

/** Every log record of a (decompressed) `ExportLogsServiceRequest`, with its resource's attributes. */
export function decodeOtlpLogs(body: Buffer): OtlpLogRecord[] {
  const out: OtlpLogRecord[] = [];
  for (const rl of fields(body).get(1) ?? []) {
    const r = fields(rl as Buffer);
    const resourceMsg = first(r, 1) as Buffer | undefined;
    const resource = attributes(resourceMsg ? fields(resourceMsg).get(1) : undefined);
    for (const sl of r.get(2) ?? []) {
      for (const lr of fields(sl as Buffer).get(2) ?? []) {
        const l = fields(lr as Buffer);
        out.push({ body: anyValue(first(l, 5) as Buffer | undefined), attributes: attributes(l.get(6)), resource });
      }
    }
  }
  return out;
}
