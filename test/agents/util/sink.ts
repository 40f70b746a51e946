/**
 * A log backend on loopback for `npm run test:agents`, shared by every agent's module: it answers
 * as Loki (`POST /loki/api/v1/push`, JSON or snappy-compressed protobuf), Elasticsearch and OpenSearch (`POST /_bulk`, NDJSON),
 * an HTTP endpoint (JSON lines), Loki's OTLP endpoint (`POST /otlp/v1/logs`, protobuf, gzip) or a
 * Fluent forward server (msgpack over TCP), and keeps every
 * record it accepted with the request's path, headers and labels. It can go down (the port
 * refuses connections) and come back on the same port, or refuse every request with a status
 * (`rejectWith`). 127.0.0.1 only.
 */
import * as http from 'http';
import * as https from 'https';
import * as net from 'net';
import * as zlib from 'zlib';
import { decodeLokiPush } from './loki-proto';
import { decodeMsgpackStream } from './msgpack';
import { decodeOtlpLogs } from './otlp-proto';

export type SinkKind = 'http' | 'loki' | 'elasticsearch' | 'opensearch' | 'forward' | 'otlp';

export interface Received {
  /** The record as the backend got it (the Loki line parsed as JSON, the bulk document, ...). */
  readonly record: Record<string, any>;
  readonly path?: string;
  readonly headers?: http.IncomingHttpHeaders;
  /** Loki stream labels; the bulk action line for Elasticsearch/OpenSearch. */
  readonly meta?: Record<string, any>;
  /** The forward tag. */
  readonly tag?: string;
}

export interface SinkOptions {
  /** Serve TLS with this key and certificate (PEM). */
  readonly tls?: { key: string; cert: string };
}

export class Sink {
  public readonly received: Received[] = [];
  /**
   * Requests without a body (GET, HEAD): what an agent asks before it sends (Vector's healthchecks:
   * HEAD on the http sink's uri, Loki's `GET /ready`, Elasticsearch's `GET /_cluster/health`, and
   * `GET /` for the version when `api_version: auto`), answered as the backend would and kept here.
   */
  public readonly queries: Array<{ method: string; path?: string; headers: http.IncomingHttpHeaders }> = [];
  /** Raw problems (a body the backend could not parse), for the test to assert on. */
  public readonly problems: string[] = [];
  public port = 0;
  /**
   * Answer every HTTP request with this status and keep nothing: a backend that is up but refuses
   * the records (expired credentials: 401, 403). Unset: accept.
   */
  public rejectWith?: number;
  private server?: net.Server;
  private readonly sockets = new Set<net.Socket>();

  constructor(public readonly kind: SinkKind, private readonly options: SinkOptions = {}) {}

  /** Listens on 127.0.0.1 (an ephemeral port the first time, the same port afterwards). */
  public async up(): Promise<void> {
    if (this.server) return;
    const server = this.kind === 'forward' ? this.forwardServer() : this.httpServer();
    server.on('connection', (s: net.Socket) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  /** Stops listening and drops every open connection: the backend is down. */
  public async down(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    await new Promise<void>(resolve => server.close(() => resolve()));
  }

  /** The `log` fields received, in order of arrival. */
  public lines(): string[] {
    return this.received.map(r => r.record.log).filter((l): l is string => typeof l === 'string');
  }

  private httpServer(): net.Server {
    const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
      if (this.rejectWith !== undefined) {
        const status = this.rejectWith;
        req.resume();
        req.on('end', () => res.writeHead(status).end());
        return;
      }
      if (req.method === 'GET' || req.method === 'HEAD') {
        req.resume();
        this.queries.push({ method: req.method, path: req.url, headers: req.headers });
        // an Elasticsearch or OpenSearch root answers with its version (vector src/sinks/elasticsearch/common.rs `get_version`)
        const search = (this.kind === 'elasticsearch' || this.kind === 'opensearch') && req.url === '/';
        const body = search ? JSON.stringify({ version: { number: this.kind === 'elasticsearch' ? '8.15.0' : '2.17.0' } }) : '{}';
        req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(req.method === 'HEAD' ? undefined : body));
        return;
      }
      const chunks: Buffer[] = [];
      req.on('data', c => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        const body = raw.toString('utf8');
        try {
          this.accept(req, body, raw);
        } catch (e) {
          this.problems.push(`${req.method} ${req.url}: ${(e as Error).message}`);
          res.writeHead(400).end();
          return;
        }
        if (this.kind === 'otlp') {
          // an empty ExportLogsServiceResponse: everything accepted
          res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
        } else if (this.kind === 'elasticsearch' || this.kind === 'opensearch') {
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ took: 1, errors: false, items: [] }));
        } else {
          res.writeHead(this.kind === 'loki' ? 204 : 200).end();
        }
      });
    };
    return this.options.tls ? https.createServer({ key: this.options.tls.key, cert: this.options.tls.cert }, handler) : http.createServer(handler);
  }

  private accept(req: http.IncomingMessage, body: string, raw: Buffer): void {
    const base = { path: req.url, headers: req.headers };
    switch (this.kind) {
      case 'loki': {
        if (req.url !== '/loki/api/v1/push') throw new Error('not the Loki push path');
        if (req.headers['content-type'] === 'application/x-protobuf') {
          // Vector's default: snappy-compressed protobuf (./loki-proto.ts)
          for (const stream of decodeLokiPush(raw)) {
            for (const line of stream.lines) this.received.push({ ...base, record: JSON.parse(line), meta: stream.labels });
          }
          return;
        }
        const push = JSON.parse(body);
        for (const stream of push.streams) {
          for (const [, line] of stream.values) this.received.push({ ...base, record: JSON.parse(line), meta: stream.stream });
        }
        return;
      }
      case 'elasticsearch':
      case 'opensearch': {
        if (!req.url?.startsWith('/_bulk')) throw new Error('not the bulk path');
        // The bulk body: an action line, then the document, each ending in a newline.
        if (body.includes('\u0000')) throw new Error('a NUL in the bulk body');
        const lines = body.split('\n');
        if (lines[lines.length - 1] !== '') throw new Error('the bulk body does not end in a newline');
        lines.pop();
        if (lines.length % 2 !== 0) throw new Error(`${lines.length} lines in the bulk body: not action and document pairs`);
        for (let i = 0; i < lines.length; i += 2) {
          this.received.push({ ...base, meta: JSON.parse(lines[i]), record: JSON.parse(lines[i + 1]) });
        }
        return;
      }
      case 'otlp': {
        if (req.url !== '/otlp/v1/logs') throw new Error('not the OTLP logs path of Loki');
        if (req.headers['content-type'] !== 'application/x-protobuf') throw new Error(`content-type ${req.headers['content-type']}`);
        const proto = req.headers['content-encoding'] === 'gzip' ? zlib.gunzipSync(raw) : raw;
        // record: the body and the record's attributes; meta: the resource's attributes (Loki's labels)
        for (const r of decodeOtlpLogs(proto)) this.received.push({ ...base, record: { body: r.body, ...r.attributes }, meta: r.resource });
        return;
      }
      case 'http':
        for (const line of body.split('\n')) if (line !== '') this.received.push({ ...base, record: JSON.parse(line) });
        return;
      default:
        throw new Error(`unexpected HTTP request for a ${this.kind} sink`);
    }
  }

  /** Fluent forward: [tag, entries, option?] messages, in Forward, PackedForward or Message mode. */
  private forwardServer(): net.Server {
    const make = (socket: net.Socket) => {
      const decoder = decodeMsgpackStream();
      socket.on('data', (data: Buffer) => {
        try {
          for (const msg of decoder(data)) this.acceptForward(socket, msg);
        } catch (e) {
          this.problems.push(`forward: ${(e as Error).message}`);
          socket.destroy();
        }
      });
      socket.on('error', () => undefined);
    };
    return this.options.tls
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      ? (require('tls') as typeof import('tls')).createServer({ key: this.options.tls.key, cert: this.options.tls.cert }, make)
      : net.createServer(make);
  }

  private acceptForward(socket: net.Socket, msg: any): void {
    if (!Array.isArray(msg) || typeof msg[0] !== 'string') throw new Error('not a forward message');
    const [tag, entries, option] = msg;
    const add = (record: any) => this.received.push({ tag, record });
    // An entry is [time, record], or [[time, metadata], record] (Fluent Bit's event format): the record is second.
    if (Array.isArray(entries)) {
      for (const e of entries) add(e[1]);
    } else if (Buffer.isBuffer(entries) || entries instanceof Uint8Array) {
      // PackedForward: a msgpack stream of [time, record] entries
      const inner = decodeMsgpackStream();
      for (const e of inner(Buffer.from(entries))) add((e as any[])[1]);
    } else {
      add(msg[2]);
      return;
    }
    if (option && typeof option === 'object' && option.chunk) {
      // require_ack_response: answer with the chunk id
      socket.write(Buffer.concat([Buffer.from([0x81, 0xa3]), Buffer.from('ack'), Buffer.from([0xd9, option.chunk.length]), Buffer.from(option.chunk)]));
    }
  }
}
