/**
 * How the programs that get a host read it, for test/host-spellings.test.ts:
 * - Go (the tracer's collector): test/go-host-reader/main.go, net.SplitHostPort and
 *   netip.ParseAddr, built once per machine with the installed Go (standard library only;
 *   api-server-yaml.ts buildGoProgram);
 * - glibc (the resolver of the agents' C code: Fluent Bit, Envoy's getaddrinfo): Python's
 *   socket.inet_aton and socket.inet_pton, which call the C library's.
 * Where Go or python3 is missing, `resolversAvailable()` says how to get them and the tests skip,
 * except under CI=true, where they fail (`.ci/run` installs both).
 */
import { spawnSync } from 'child_process';
import * as path from 'path';
import { buildGoProgram } from './api-server-yaml';
import { noteSkipped } from './skips';

const SOURCE = path.join(__dirname, '..', 'go-host-reader', 'main.go');
const HOWTO = 'the host-spelling oracles need Go and python3: `apt-get install -y --no-install-recommends golang-go python3-minimal`';

/** What Go makes of one host:port (test/go-host-reader/main.go). */
export interface GoReading {
  readonly in: string;
  readonly splitError?: string;
  readonly host: string;
  readonly port: string;
  /** The address netip.ParseAddr reads in the host, '' for a name (looked up in DNS). */
  readonly addr: string;
  /** IsLoopback or IsUnspecified. */
  readonly loopback: boolean;
}

let built: { binary?: string; why?: string } | undefined;

function goReader(): { binary?: string; why?: string } {
  return built ??= buildGoProgram(SOURCE, 'cdk8s-sidecars-go-host-reader', HOWTO);
}

function python(): string | undefined {
  const res = spawnSync('python3', ['-c', 'import socket'], { encoding: 'utf8' });
  return res.status === 0 ? 'python3' : undefined;
}

/** Whether both oracles can run here; under CI=true their absence is an error. */
export function resolversAvailable(): boolean {
  const why = goReader().why ?? (python() ? undefined : `no python3 found; ${HOWTO}`);
  if (why === undefined) return true;
  if (process.env.CI === 'true' || process.env.CI === '1') throw new Error(`CI=true: ${why}`);
  noteSkipped(`the host-spelling tests: ${why}`);
  return false;
}

/** Go's reading of each host:port. */
export function readAsGo(endpoints: readonly string[]): GoReading[] {
  const { binary, why } = goReader();
  if (!binary) throw new Error(why);
  const res = spawnSync(binary, [], { input: endpoints.join('\n') + '\n', encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`go-host-reader failed: ${res.error?.message ?? res.stderr}`);
  return res.stdout.split('\n').filter(l => l !== '').map(l => JSON.parse(l));
}

/** What glibc reads in each host: the IPv4 address of inet_aton, the IPv6 one of inet_pton, or null. */
export function readAsGlibc(hosts: readonly string[]): Array<{ ipv4: string | null; ipv6: string | null }> {
  const program = [
    'import json, socket, sys',
    'def v4(h):',
    '    try: return socket.inet_ntoa(socket.inet_aton(h))',
    '    except (OSError, ValueError): return None',
    'def v6(h):',
    '    try: return socket.inet_ntop(socket.AF_INET6, socket.inet_pton(socket.AF_INET6, h))',
    '    except (OSError, ValueError): return None',
    'for h in json.load(sys.stdin): print(json.dumps({"ipv4": v4(h), "ipv6": v6(h)}))',
  ].join('\n');
  const res = spawnSync('python3', ['-c', program], { input: JSON.stringify(hosts), encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`python3 (glibc inet_aton) failed: ${res.error?.message ?? res.stderr}`);
  return res.stdout.split('\n').filter(l => l !== '').map(l => JSON.parse(l));
}
