/**
 * Loopback and other hosts that are not what they look like ('127.1', '::1', '[::1]', 'localhost',
 * '0:0:0:0:0:0:0:1', ...), for every prop that takes a host: the expectations come from the
 * programs that read them (test/util/resolvers.ts): Go's net.SplitHostPort and netip.ParseAddr
 * for the tracer's exporterEndpoint (the collector is Go), glibc's inet_aton / inet_pton (through
 * Python) for what a C resolver reads in a LogOutput or Envoy upstream host.
 */
import { LogOutput } from '../src/log-output';
import { WithEnvoy } from '../src/with-envoy';
import { WithTracer } from '../src/with-tracer';
import { kplusWorkload, newChart } from './util/fixtures';
import { readAsGlibc, readAsGo, resolversAvailable } from './util/resolvers';

const HOSTS = [
  '127.0.0.1', '127.0.0.2', '127.1', '127.0.1', '0x7f000001', '2130706433', '017700000001', '0.0.0.0', '0',
  '::1', '[::1]', '0:0:0:0:0:0:0:1', '[0:0:0:0:0:0:0:1]', '::ffff:127.0.0.1', '[::ffff:127.0.0.1]', '::', '[::]',
  'fe80::1', '[fe80::1]', 'localhost', 'LOCALHOST', 'collector.observability', '10.0.0.1', '10.1', '0x0a000001',
];
const RECEIVER_PORTS = [4317, 4318];
const PORTS = [...RECEIVER_PORTS, 9999];

/** The message of what `fn` throws, or undefined when it does not. */
function refusal(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

function tracer(exporterEndpoint: string): string | undefined {
  const { chart } = newChart();
  return refusal(() => new WithTracer(chart, 'tracer', { workload: kplusWorkload(chart, 'Deployment'), exporterEndpoint, kubernetesVersion: '1.29' }));
}

(resolversAvailable() ? describe : describe.skip)('hosts as their readers read them', () => {
  const endpoints = HOSTS.flatMap(h => PORTS.map(p => `${h}:${p}`));
  const go = new Map(readAsGo(endpoints).map(r => [r.in, r]));
  const glibc = new Map(readAsGlibc(HOSTS).map((r, i) => [HOSTS[i], r]));
  // whether an IPv4 address glibc reads is this host's: Go's netip again, on the dotted quad
  const loopbackV4 = new Map(readAsGo([...glibc.values()].flatMap(r => (r.ipv4 ? [`${r.ipv4}:1`] : [])))
    .map(r => [r.host, r.loopback]));

  test.each(endpoints)('WithTracer exporterEndpoint %s', (endpoint) => {
    const r = go.get(endpoint)!;
    const message = tracer(endpoint);
    const receiver = RECEIVER_PORTS.includes(Number(endpoint.slice(endpoint.lastIndexOf(':') + 1)));
    if (r.splitError) {
      // Go cannot split it: refused, with the bracketed form where the host is an IPv6 address
      expect(message).toBeDefined();
      const host = endpoint.slice(0, endpoint.lastIndexOf(':'));
      if (glibc.get(host)?.ipv6) expect(message).toContain(`write '[${host}]:`);
      return;
    }
    const asC = glibc.get(r.host)?.ipv4 ?? null;
    if (r.addr !== '') {
      // an address to Go: refused exactly when it is this pod's and the port one of the receiver's
      if (r.loopback && receiver) expect(message).toContain("the agent's own receiver");
      else expect(message).toBeUndefined();
    } else if (asC !== null) {
      // a DNS name to Go, an address to a C resolver: refused, naming both readings
      expect(message).toContain('looks up as a DNS name');
      expect(message).toContain(`reads it as ${asC}`);
      if (loopbackV4.get(asC) && receiver) expect(message).toContain("the agent's own receiver");
      else expect(message).not.toContain('own receiver');
    } else if (r.host.toLowerCase() === 'localhost') {
      // a name, but the one every resolver gives the loopback (RFC 6761)
      if (receiver) expect(message).toContain("the agent's own receiver");
      else expect(message).toBeUndefined();
    } else {
      expect(message).toBeUndefined();
    }
  });

  test.each(HOSTS)('LogOutput.http host %s', (host) => {
    const message = refusal(() => LogOutput.http({ host, port: 8080 }));
    const c = glibc.get(host)!;
    const bracketed = /^\[(.*)\]$/.exec(host);
    const v6 = c.ipv6 ?? (bracketed ? glibc.get(bracketed[1])?.ipv6 ?? readAsGlibc([bracketed[1]])[0].ipv6 : null);
    const dottedQuad = go.get(`${host}:4317`)?.addr !== '' && !host.includes(':');
    if (v6 !== null) {
      expect(message).toContain('is not accepted');
      expect(message).toContain('is an IPv6 address');
      expect(message).toContain("give a DNS name, e.g. 'logs.example.com'");
    } else if (c.ipv4 !== null && !dottedQuad) {
      expect(message).toContain('is ambiguous');
      expect(message).toContain(`'${host}' is ${c.ipv4}`);
      expect(message!.includes("this pod's loopback")).toBe(loopbackV4.get(c.ipv4));
    } else {
      expect(message).toBeUndefined();
    }
  });

  test.each(HOSTS)('WithEnvoy upstream host %s: refused at a port Envoy listens on when it is loopback', (host) => {
    const { chart } = newChart();
    const upstream = (port: number) => refusal(() => new WithEnvoy(chart, `envoy-${port}`, {
      workload: kplusWorkload(chart, 'Deployment', `web-${port}`),
      appPort: 8080,
      kubernetesVersion: '1.29',
      upstreams: [{ name: 'payments', host, port, localPort: 15001 }, { name: 'other', host: 'other.shop', localPort: 15002 }],
    }));
    const c = glibc.get(host)!;
    const r = go.get(`${host}:4317`)!;
    const ipv6 = host.includes(':');
    const dottedQuad = !ipv6 && r.addr !== '';
    if (ipv6 || (c.ipv4 !== null && !dottedQuad)) {
      // an IPv6 address or an inet_aton short form: refused with how it reads, at any port
      const message = upstream(8443);
      expect(message).toContain(`host '${host}' is not accepted`);
      if (c.ipv4 !== null && !ipv6) expect(message).toContain(`reads '${host}' as ${c.ipv4}`);
      return;
    }
    const loopback = dottedQuad ? r.loopback : host.toLowerCase() === 'localhost';
    for (const port of [15001, 15002, 9901]) {
      const message = upstream(port);
      if (loopback) expect(message).toContain("this pod's loopback at Envoy's own");
      else expect(message).toBeUndefined();
    }
    expect(upstream(8443)).toBeUndefined();
  });
});
