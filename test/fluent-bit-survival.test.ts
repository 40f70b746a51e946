/**
 * Fluent Bit's logs that survive (issue 25): retries past an outage, a filesystem buffer on the log
 * volume that fits inside it, long lines, multiline, the agent's own files out of the tail, the
 * value checks of the real program's findings, and the warning for an image outside the release
 * range. Expectations come from Fluent Bit's own rules (each function below cites the file at
 * v5.1.1), read back from the rendered config with its grammar (test/util/fluent-bit-conf.ts);
 * `npm run test:agents` runs the same configs with the real binary.
 */
import { Size, Testing } from 'cdk8s';
import * as fc from 'fast-check';
import { Images, FluentBitMultilineParser, LogAgent, LogOutput, SidecarWarnings, WithLogAgent } from '../src';
import { kplusWorkload, manifestOf, newChart, podSpecOf } from './util/fixtures';
import { FluentBitSection, fluentBitClist, parseFluentBitConf } from './util/fluent-bit-conf';

const WHO = "WithLogAgent 'test/logs'";

function synth(props: { agent?: LogAgent; output?: LogOutput; logDirectory?: string; filePattern?: string; logVolumeSizeLimit?: Size } = {}) {
  const { app, chart } = newChart();
  new WithLogAgent(chart, 'logs', { workload: kplusWorkload(chart, 'Deployment'), kubernetesVersion: '1.29', ...props });
  const manifests = Testing.synth(chart);
  const conf = manifestOf(manifests, 'ConfigMap').data['fluent-bit.conf'];
  const sections = parseFluentBitConf(conf);
  const one = (name: string) => sections.find(s => s.name === name)!;
  const volume = podSpecOf(manifestOf(manifests, 'Deployment')).volumes.find((v: any) => v.name === 'log-agent-logs');
  return { app, chart, conf, service: one('SERVICE'), input: one('INPUT'), output: one('OUTPUT'), volume };
}

const value = (s: FluentBitSection, key: string): string | undefined => s.props[key.toLowerCase()]?.[0];

/** `flb_utils_size_to_bytes` (src/flb_utils.c, v5.1.1): K, M, G are powers of 1000; a bare number is bytes. */
function sizeToBytes(v: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([KMG]?)B?$/i.exec(v);
  if (!m) throw new Error(`not a Fluent Bit size: ${v}`);
  return Number(m[1]) * ({ '': 1, 'K': 1e3, 'M': 1e6, 'G': 1e9 } as Record<string, number>)[m[2].toUpperCase()];
}

/** `retry_limit` as src/flb_output.c (v5.1.1) reads it: no_limits/false/off are unlimited, else atoi, <= 0 is 1; unset is 1. */
function retryLimit(v: string | undefined): number {
  if (v === undefined) return 1;
  if (['no_limits', 'false', 'off'].includes(v.toLowerCase())) return Infinity;
  if (v.toLowerCase() === 'no_retries') return 0;
  const n = parseInt(v, 10);
  return Number.isNaN(n) || n <= 0 ? 1 : n;
}

/** A Kubernetes quantity of the emptyDir's sizeLimit ('1Gi', '300Mi') in bytes. */
function quantityBytes(q: string): number {
  const m = /^(\d+)(Mi|Gi)$/.exec(q)!;
  return Number(m[1]) * (m[2] === 'Gi' ? 2 ** 30 : 2 ** 20);
}

/**
 * glob(3) of `Path` as in_tail runs it (plugins/in_tail/tail_scan_glob.c: `glob` with GLOB_TILDE,
 * then only regular files): `*` and `?` never match `/`, and a leading `.` only explicitly.
 */
function globMatches(pattern: string, file: string): boolean {
  const dir = pattern.slice(0, pattern.lastIndexOf('/'));
  const name = pattern.slice(pattern.lastIndexOf('/') + 1);
  if (!file.startsWith(`${dir}/`)) return false;
  const rest = file.slice(dir.length + 1);
  if (rest.includes('/')) return false;
  if (rest.startsWith('.') && !name.startsWith('.')) return false;
  const re = new RegExp(`^${name.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]')}$`);
  return re.test(rest);
}

describe('a backend outage: retries bounded by the buffer, not by a count of 1', () => {
  test.each(['stdout', 'http', 'loki', 'elasticsearch'] as const)('%s: Retry_Limit is unlimited as Fluent Bit reads it', (type) => {
    const output = type === 'stdout' ? LogOutput.stdout() : type === 'http' ? LogOutput.http({ host: 'logs.example.com' })
      : type === 'loki' ? LogOutput.loki({ host: 'loki' }) : LogOutput.elasticsearch({ host: 'es' });
    const { output: out, service } = synth({ output });
    expect(retryLimit(value(out, 'Retry_Limit'))).toBe(Infinity);
    // and bounded by a buffer size
    expect(sizeToBytes(value(out, 'storage.total_limit_size')!)).toBeGreaterThan(0);
    // a backend that is back is retried within the cap (default 2000 s, src/flb_scheduler.c FLB_SCHED_CAP)
    expect(Number(value(service, 'scheduler.cap'))).toBeLessThanOrEqual(60);
  });
});

describe('a restart: the records not yet delivered are in files on the log volume', () => {
  test('storage.path below the log directory, the tail input buffers in it', () => {
    const { service, input } = synth({ logDirectory: '/logs' });
    expect(value(service, 'storage.path')!.startsWith('/logs/')).toBe(true);
    expect(value(input, 'storage.type')).toBe('filesystem');
    expect(value(input, 'DB')!.startsWith('/logs/')).toBe(true);
  });

  test('the buffer, one chunk over it and a 1 MiB line buffer per file fit in half the log volume (property)', () => {
    // FLB_INPUT_CHUNK_FS_MAX_SIZE 2048000 (include/fluent-bit/flb_input_chunk.h): the limit can be passed by a chunk
    const chunk = 2048000;
    fc.assert(fc.property(fc.integer({ min: 16, max: 64 * 1024 }), (mib) => {
      const { output, volume } = synth({ logVolumeSizeLimit: Size.mebibytes(mib) });
      const limit = quantityBytes(volume.emptyDir.sizeLimit);
      return sizeToBytes(value(output, 'storage.total_limit_size')!) + chunk <= limit / 2;
    }), { numRuns: 25 });
  });
});

describe('long lines and stack traces', () => {
  test('lines up to at least 1 MiB are read whole; longer ones are cut, not dropped', () => {
    const { input } = synth();
    expect(sizeToBytes(value(input, 'Buffer_Max_Size')!)).toBeGreaterThanOrEqual(2 ** 20);
    expect(value(input, 'Truncate_Long_Lines')).toBe('On');
  });

  test('multilineParsers: off by default, the built-in parsers in order when given', () => {
    expect(value(synth().input, 'multiline.parser')).toBeUndefined();
    const { input } = synth({ agent: LogAgent.fluentBit({ multilineParsers: [FluentBitMultilineParser.JAVA, FluentBitMultilineParser.PYTHON] }) });
    expect(fluentBitClist(value(input, 'multiline.parser')!)).toEqual(['java', 'python']);
  });
});

describe("the agent's own files are never tailed, whatever filePattern", () => {
  test('the offsets DB, its -wal and -shm files and the buffer chunks match no pattern (property)', () => {
    fc.assert(fc.property(fc.stringMatching(/^[A-Za-z0-9._*?-]{1,12}$/), (filePattern) => {
      const { input, service } = synth({ filePattern });
      const db = value(input, 'DB')!;
      const own = [db, `${db}-wal`, `${db}-shm`, `${value(service, 'storage.path')}/tail.0/1-1700000000.123.flb`];
      return own.every(f => !globMatches(value(input, 'Path')!, f));
    }), { numRuns: 60, examples: [['.*'], ['*'], ['.*.db*'], ['*.db']] });
  });
});

describe('values the real Fluent Bit got wrong are refused or handled', () => {
  test('Elasticsearch: 139 characters are written, 140 refused (bulk header of ES_BULK_HEADER 165 bytes, flb_sds_snprintf)', () => {
    expect(value(synth({ output: LogOutput.elasticsearch({ host: 'es', index: 'a'.repeat(139) }) }).output, 'Index')).toBe('a'.repeat(139));
    expect(() => synth({ output: LogOutput.elasticsearch({ host: 'es', index: 'a'.repeat(140) }) }))
      .toThrow(`${WHO}: Fluent Bit's es output cannot write the index "${'a'.repeat(140)}" (140 characters)`);
  });

  test('OpenSearch: 254 characters are written, 255 refused (strftime into char[256] with sizeof - 1)', () => {
    expect(value(synth({ output: LogOutput.opensearch({ host: 'os', index: 'a'.repeat(254) }) }).output, 'Index')).toBe('a'.repeat(254));
    expect(() => synth({ output: LogOutput.opensearch({ host: 'os', index: 'a'.repeat(255) }) })).toThrow('give an index of at most 254 characters');
  });

  test('an Authorization secret header with basicAuth is refused, in any case; another header with basicAuth is fine', () => {
    const secret = (n: string, k: string) => ({ secret: { name: n } as any, key: k });
    const basicAuth = { username: secret('b', 'u'), password: secret('b', 'p') };
    for (const name of ['Authorization', 'authorization', 'AUTHORIZATION']) {
      expect(() => LogOutput.http({ host: 'h', secretHeaders: { [name]: secret('t', 'k') }, basicAuth }))
        .toThrow(`LogOutput.http(): secretHeaders name "${name}" comes with basicAuth`);
    }
    expect(() => LogOutput.http({ host: 'h', secretHeaders: { 'X-Api-Key': secret('t', 'k') }, basicAuth })).not.toThrow();
    expect(() => LogOutput.http({ host: 'h', secretHeaders: { Authorization: secret('t', 'k') } })).not.toThrow();
  });

  test('an IPv4 host with TLS: the pinned release checks it against the certificate\'s IP addresses (from 5.0.6, src/tls/openssl.c)', () => {
    const [major, minor, patch] = /:(\d+)\.(\d+)\.(\d+)$/.exec(Images.FLUENT_BIT)!.slice(1).map(Number);
    expect(major * 1e6 + minor * 1e3 + patch).toBeGreaterThanOrEqual(5e6 + 0 + 6);
    const { output } = synth({ output: LogOutput.http({ host: '10.0.0.7' }) });
    expect([value(output, 'Host'), value(output, 'tls.verify'), value(output, 'tls.verify_hostname')]).toEqual(['10.0.0.7', 'On', 'On']);
  });
});

describe('a user\'s own image: a warning when it is outside the release range the config is written for', () => {
  const warnings = (image?: string) => {
    const s = synth({ agent: LogAgent.fluentBit(image === undefined ? {} : { image }) });
    const write = process.stderr.write;
    process.stderr.write = (() => true) as any;
    try {
      s.app.synth();
    } finally {
      process.stderr.write = write;
    }
    return SidecarWarnings.of(s.app);
  };
  test.each([undefined, 'fluent/fluent-bit:5.1.0', 'fluent/fluent-bit:5.1.9-debug', 'registry.local/fluent-bit:5.1.1@sha256:' + 'a'.repeat(64)])(
    '%s: none', (image) => {
      expect(warnings(image)).toEqual([]);
    });
  test.each([
    ['fluent/fluent-bit:3.2.10', 'is Fluent Bit 3.2.10, outside'],
    ['fluent/fluent-bit:5.2.0', 'is Fluent Bit 5.2.0, outside'],
    ['fluent/fluent-bit:5.0.9', 'is Fluent Bit 5.0.9, outside'],
    ['fluent/fluent-bit:latest', 'names no Fluent Bit release in its tag'],
    ['fluent/fluent-bit', 'names no Fluent Bit release in its tag'],
    ['registry.local/fluent-bit@sha256:' + 'b'.repeat(64), 'names no Fluent Bit release in its tag'],
  ])('%s: a warning naming the range', (image, what) => {
    const w = warnings(image);
    expect(w).toHaveLength(1);
    expect(w[0]).toContain(`${WHO}: image '${image}' ${what}`);
    expect(w[0]).toContain('Fluent Bit 5.1.0 up to, not including, 5.2.0');
    expect(w[0]).toContain(`use ${Images.FLUENT_BIT}`);
  });
});
