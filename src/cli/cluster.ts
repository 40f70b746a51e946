/**
 * `cdk8s-sidecars target`: reads the target from a cluster with the user's own `kubectl` (no
 * client library): the API server's version, every node's kubelet version (the lowest wins:
 * native sidecars need the API server AND every kubelet, SIDECARS.md §2), the SidecarContainers
 * gate where the API server's metrics are readable, and the mutating webhooks that rewrite pods.
 *
 * The JSON shapes read (kubectl 1.28+, as documented by the Kubernetes API reference):
 * - `kubectl version -o json`: `{ clientVersion, serverVersion: { major, minor, gitVersion } }`
 *   (`gitVersion` like `v1.29.3-eks-adc7111`, `v1.30.2-gke.1587003`, `v1.28.5+k3s1`; `minor`
 *   can carry a `+`, so gitVersion is what is parsed);
 * - `kubectl get nodes -o json`: `{ kind: List, items: [{ metadata: { name }, status: { nodeInfo:
 *   { kubeletVersion } } }] }` (NodeSystemInfo.kubeletVersion);
 * - `kubectl get --raw /metrics`: Prometheus text, `kubernetes_feature_enabled{name="SidecarContainers",
 *   stage="BETA"} 1` (from Kubernetes 1.26: kubernetes/kubernetes#112690, whose description shows
 *   the API server's output in this shape);
 * - `kubectl get mutatingwebhookconfigurations -o json`: `{ items: [{ metadata: { name },
 *   webhooks: [{ name, rules: [{ operations, resources, apiGroups }] }] }] }`.
 */
import { spawnSync } from 'child_process';
import { CommandError, firstLine } from './io';
import { escapeForMessage } from './reader';
import { OLDEST_SUPPORTED_MINOR, parseReleasePrefix } from '../target/capabilities';
import { KUBERNETES_VERSION_ENV, SIDECAR_CONTAINERS_GATE_ENV } from '../target/resolver';

export interface ClusterOptions {
  readonly context?: string;
  /** Print `1.NN.P` (the lowest patch of the lowest minor) instead of `1.NN`. */
  readonly withPatch?: boolean;
  /** Use the API server's version when the nodes cannot be listed. */
  readonly apiServerOnly?: boolean;
}

export interface ClusterReport {
  /** What goes to stdout: `NAME=value` lines, for `export $(...)` or `$GITHUB_ENV`. */
  readonly env: string[];
  /** What goes to stderr: the versions read and the risks. */
  readonly notes: string[];
}

interface Version { readonly minor: number; readonly patch: number; readonly raw: string }

/** `v1.29.3-eks-adc7111` -> 1.29.3: the leading `v1.NN.P`, vendor suffixes (`-...`, `+...`) dropped. */
export function parseVendorVersion(raw: unknown): Version | undefined {
  if (typeof raw !== 'string') return undefined;
  const v = parseReleasePrefix(raw.trim());
  if (!v || v.major !== 1 || v.minor > 999 || (v.patch ?? 0) > 9999) return undefined;
  // a Kubernetes version: no leading zeros (1.029 is not 1.29), minors and patches of sane size
  if (v.text.replace(/^v/, '') !== `1.${v.minor}${v.patch === undefined ? '' : `.${v.patch}`}`) return undefined;
  if (!/^(?:[-+][0-9A-Za-z.+-]{0,200})?$/.test(v.rest)) return undefined;
  return { minor: v.minor, patch: v.patch ?? 0, raw };
}

const lower = (a: Version, b: Version) => (a.minor !== b.minor ? a.minor - b.minor : a.patch - b.patch);

interface Run { readonly ok: boolean; readonly stdout: string; readonly error: string }

/**
 * The bounds of one kubectl call: how long it may take, how much it may print (tests lower them).
 * 15 s: each call is one small GET (a version, the nodes, a metric, the webhook configurations) that
 * a reachable API server answers within a second or two; four calls that hang then hold `target` a
 * minute at most (docs/cli.md, "Limits").
 */
export const kubectlBounds = { timeoutMs: 15_000, maxOutput: 256 * 1024 * 1024 };

/**
 * The SidecarContainers gate from the API server's metrics (Prometheus text), in linear time:
 * the value of the first `kubernetes_feature_enabled{...name="SidecarContainers"...}` line, only
 * `0` or `1`; anything else is unreadable (undefined with `bad` set).
 */
export function gateFromMetrics(text: string): { gate?: boolean; found: boolean; bad?: string } {
  const NAME = 'kubernetes_feature_enabled{';
  for (let at = text.startsWith(NAME) ? 0 : text.indexOf('\n' + NAME); at >= 0; at = text.indexOf('\n' + NAME, at + 1)) {
    const start = text[at] === '\n' ? at + 1 : at;
    const end = text.indexOf('\n', start);
    const line = text.slice(start, end < 0 ? text.length : end);
    const close = line.indexOf('}');
    if (close < 0) continue;
    const labels = line.slice(NAME.length, close).split(',').map(l => l.trim());
    if (!labels.includes('name="SidecarContainers"')) continue;
    const value = line.slice(close + 1).trim().split(/[ \t]+/)[0] ?? '';
    if (value === '1') return { gate: true, found: true };
    if (value === '0') return { gate: false, found: true };
    return { found: true, bad: JSON.stringify(value.length > 40 ? value.slice(0, 40) + '...' : value) };
  }
  return { found: false };
}

function kubectl(args: string[], context: string | undefined): Run {
  // eslint-disable-next-line no-restricted-properties -- which kubectl to run is the CLI's, not the target's
  const bin = process.env.KUBECTL && process.env.KUBECTL !== '' ? process.env.KUBECTL : 'kubectl';
  const full = [...(context !== undefined ? ['--context', context] : []), ...args];
  // bounded: a kubectl that hangs (or leaves a child holding its output) is stopped after
  // 15 s, one that prints without end after 256 MiB
  // eslint-disable-next-line no-restricted-properties -- kubectl gets the user's whole environment (KUBECONFIG, proxies)
  const options: any = { env: process.env, encoding: 'utf8', maxBuffer: kubectlBounds.maxOutput, timeout: kubectlBounds.timeoutMs, killSignal: 'SIGKILL', detached: true, stdio: ['ignore', 'pipe', 'pipe'] };
  type Result = { pid?: number; error?: Error; status: number | null; signal: string | null; stdout: string; stderr: string };
  const r = spawnSync(bin, full, options) as unknown as Result;
  if (r.error && typeof r.pid === 'number' && r.pid > 0) { // pid 0: it never started (kill(-0) would be our own group)
    try {
      process.kill(-r.pid, 'SIGKILL'); // the process group of the kubectl this command started
    } catch {
      // already gone
    }
  }
  if (r.error) {
    const code = (r.error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? `${bin} not found: install kubectl or set KUBECTL to its path`
      : code === 'ETIMEDOUT' ? `${bin} ${full.join(' ')}: no answer within ${kubectlBounds.timeoutMs / 1000} s (stopped: the bound of each kubectl call, ` +
        "docs/cli.md); check the cluster's address and your network"
        : code === 'ENOBUFS' ? `${bin} ${full.join(' ')}: printed more than ${kubectlBounds.maxOutput / 1024 / 1024} MiB (stopped)`
          : `${bin} ${full.join(' ')}: ${r.error.message}`;
    throw new CommandError(why);
  }
  const error = `${bin} ${full.join(' ')} exited with ${r.status ?? r.signal}: ${firstLine(r.stderr || r.stdout || '(no output)')}`;
  return { ok: r.status === 0, stdout: r.stdout, error };
}

/** A JSON list's items (kubectl prints `{ items: [...] }`); anything else is an error naming the call. */
function listOf(doc: any, what: string): any[] {
  const items = doc?.items;
  if (items === undefined || items === null) return [];
  if (!Array.isArray(items)) throw new CommandError(`${what}: items is ${JSON.stringify(items).slice(0, 40)}, not a list; is KUBECTL a kubectl?`);
  return items;
}

/** A value from kubectl for a message: JSON, cut to 80 characters. */
const cut = (x: unknown): string => {
  const t = JSON.stringify(x) ?? String(x);
  return t.length > 80 ? `${t.slice(0, 80)}...` : t;
};

/**
 * What kubectl printed, read strictly: a value of another JSON type than the API serves
 * (admissionregistration.k8s.io/v1) is an error naming the call and the path, never a silent
 * skip (a `target` that counted 0 webhooks where it could not read them would say the cluster is safe).
 */
function unreadable(call: string, at: string, value: unknown, what: string): CommandError {
  return new CommandError(`${call}: ${at} is ${cut(value)}, not ${what}: the API server never serves that ` +
    '(admissionregistration.k8s.io/v1), so the webhooks cannot be counted; is KUBECTL a kubectl?');
}

function objectAt(call: string, at: string, value: unknown, what: string): asserts value is any {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw unreadable(call, at, value, `an object (${what})`);
}

/** A list (null or absent: empty). */
function listAt(call: string, at: string, value: unknown): any[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw unreadable(call, at, value, 'a list');
  return value;
}

function stringsAt(call: string, at: string, value: unknown): string[] {
  const list = listAt(call, at, value);
  list.forEach((x, i) => {
    if (typeof x !== 'string') throw unreadable(call, `${at}[${i}]`, x, 'a string');
  });
  return list as string[];
}

/** A name from kubectl for a note: a string (escaped, cut), else '?'. */
function nameOf(x: unknown): string {
  return typeof x === 'string' ? escapeForMessage(x, 100) : '?';
}

function json(run: Run, what: string): any {
  try {
    return JSON.parse(run.stdout);
  } catch {
    throw new CommandError(`${what}: kubectl did not print JSON (${firstLine(run.stdout || '(nothing)')})`);
  }
}

export function readCluster(options: ClusterOptions): ClusterReport {
  const notes: string[] = [];
  const risks: string[] = [];
  const server = readServer(options, notes);
  const kubelets = readKubelets(options, notes, risks);
  const lowest = [server, ...kubelets.map(k => k.version)].reduce((a, b) => (lower(b, a) < 0 ? b : a));
  skewRisks(server, kubelets, lowest, risks);
  const gate = readGate(options, lowest, notes, risks);
  readPodWebhooks(options, notes, risks);
  const version = options.withPatch ? `1.${lowest.minor}.${lowest.patch}` : `1.${lowest.minor}`;
  const env = [`${KUBERNETES_VERSION_ENV}=${version}`];
  if (gate !== undefined) env.push(`${SIDECAR_CONTAINERS_GATE_ENV}=${gate}`);
  return { env, notes: [...notes, ...risks.map(r => `risk: ${r}`)] };
}

/** 1. The API server. An unreachable cluster fails here, with kubectl's own error. */
function readServer(options: ClusterOptions, notes: string[]): Version {
  const versionRun = kubectl(['version', '-o', 'json'], options.context);
  if (!versionRun.ok) throw new CommandError(`cannot read the API server's version: ${versionRun.error}`);
  const serverRaw = json(versionRun, 'kubectl version -o json').serverVersion?.gitVersion;
  const server = parseVendorVersion(serverRaw);
  if (!server) throw new CommandError(`kubectl version -o json: serverVersion.gitVersion ${cut(serverRaw)} is not a Kubernetes 1.x version`);
  notes.push(`API server: ${server.raw}`);
  return server;
}

/** 2. Every kubelet (none where the nodes cannot be listed and --api-server-only says to go on). */
function readKubelets(options: ClusterOptions, notes: string[], risks: string[]): Array<{ node: string; version: Version }> {
  const kubelets: Array<{ node: string; version: Version }> = [];
  const nodesRun = kubectl(['get', 'nodes', '-o', 'json'], options.context);
  if (!nodesRun.ok) {
    if (!options.apiServerOnly) {
      throw new CommandError(
        `cannot list the nodes (${nodesRun.error}); a kubelet older than the API server would make the API server's version wrong. ` +
        'Give the command a context that may list nodes, or pass --api-server-only to use the API server\'s version alone.',
      );
    }
    risks.push(`the nodes could not be listed (${nodesRun.error}): the API server's version is used; a kubelet older than it would make this target too new`);
  } else {
    for (const item of listOf(json(nodesRun, 'kubectl get nodes -o json'), 'kubectl get nodes -o json')) {
      const name = nameOf(item?.metadata?.name);
      const raw = item?.status?.nodeInfo?.kubeletVersion;
      const v = parseVendorVersion(raw);
      if (!v) throw new CommandError(`node '${name}': kubeletVersion ${cut(raw)} is not a Kubernetes 1.x version`);
      kubelets.push({ node: name, version: v });
    }
    if (kubelets.length === 0) notes.push('nodes: none listed (virtual nodes or an empty cluster): the API server\'s version is used');
    const byVersion = new Map<string, string[]>();
    for (const k of [...kubelets].sort((a, b) => lower(a.version, b.version))) {
      const key = `1.${k.version.minor}.${k.version.patch}`;
      byVersion.set(key, [...(byVersion.get(key) ?? []), k.node]);
    }
    for (const [v, nodes] of byVersion) notes.push(`kubelet ${v}: ${nodes.length} node(s) (${nodes.join(', ')})`);
  }
  return kubelets;
}

/** The version skew between the API server and the kubelets, and a target older than the library emits for. */
function skewRisks(server: Version, kubelets: Array<{ node: string; version: Version }>, lowest: Version, risks: string[]): void {
  const minors = new Set([server.minor, ...kubelets.map(k => k.version.minor)]);
  if (minors.size > 1) {
    const older = kubelets.filter(k => k.version.minor < server.minor).map(k => k.node);
    risks.push(
      `version skew: the API server is 1.${server.minor}, the kubelets ${[...new Set(kubelets.map(k => k.version.minor))].sort((a, b) => a - b).map(m => `1.${m}`).join(', ')}` +
      `${older.length > 0 ? ` (older: ${older.join(', ')})` : ''}; the target is the lowest, 1.${lowest.minor}: native sidecars need every kubelet`,
    );
  }
  if (lowest.minor < OLDEST_SUPPORTED_MINOR) {
    risks.push(`1.${lowest.minor} is older than 1.${OLDEST_SUPPORTED_MINOR}, the oldest release the library emits for: the constructs will refuse this target`);
  }
}

/** 3. The SidecarContainers gate, from the API server's metrics (needs the /metrics permission). */
function readGate(options: ClusterOptions, lowest: Version, notes: string[], risks: string[]): boolean | undefined {
  let gate: boolean | undefined;
  const metricsRun = kubectl(['get', '--raw', '/metrics'], options.context);
  if (!metricsRun.ok) {
    notes.push(`SidecarContainers gate: not readable (${metricsRun.error})`);
  } else {
    const read = gateFromMetrics(metricsRun.stdout);
    if (!read.found) {
      notes.push('SidecarContainers gate: the API server\'s metrics have no kubernetes_feature_enabled{name="SidecarContainers"}');
    } else if (read.gate === undefined) {
      notes.push(`SidecarContainers gate: not readable (the metric's value is ${read.bad}, not 0 or 1)`);
    } else {
      gate = read.gate;
      notes.push(`SidecarContainers gate on the API server: ${gate ? 'on' : 'off'}`);
    }
  }
  if (lowest.minor === 28) {
    risks.push(
      gate
        ? '1.28 with the SidecarContainers gate on in the API server: it must be on in every kubelet too (not readable here), and 1.28 does not order the sidecars\' termination'
        : '1.28 without the SidecarContainers gate: the constructs emit the legacy layout (AUTO); a native sidecar of your own would be dropped',
    );
  }
  if (gate === false && lowest.minor >= 29 && lowest.minor <= 32) {
    risks.push(
      `the SidecarContainers gate is turned off on this 1.${lowest.minor} API server: it drops initContainers[].restartPolicy, so native sidecars ` +
      'become blocking init containers; use mode: LEGACY (SidecarMode.LEGACY) until the gate is back on',
    );
  }
  return gate;
}

/**
 * 4. Mutating webhooks that rewrite pods at CREATE: an injector that rebuilds initContainers
 *    from an older API version drops restartPolicy (SIDECARS.md §5: AWS App Mesh strips the field).
 */
function readPodWebhooks(options: ClusterOptions, notes: string[], risks: string[]): void {
  const hooksRun = kubectl(['get', 'mutatingwebhookconfigurations', '-o', 'json'], options.context);
  if (!hooksRun.ok) {
    notes.push(`mutating webhooks: not readable (${hooksRun.error})`);
  } else {
    const podHooks: string[] = [];
    const call = 'kubectl get mutatingwebhookconfigurations -o json';
    for (const [i, config] of listOf(json(hooksRun, call), call).entries()) {
      const at = `items[${i}]`;
      objectAt(call, at, config, 'a MutatingWebhookConfiguration');
      for (const [j, hook] of listAt(call, `${at}.webhooks`, config.webhooks).entries()) {
        objectAt(call, `${at}.webhooks[${j}]`, hook, 'a webhook');
        const rules = listAt(call, `${at}.webhooks[${j}].rules`, hook.rules).map((r, k) => {
          const ruleAt = `${at}.webhooks[${j}].rules[${k}]`;
          objectAt(call, ruleAt, r, 'a rule');
          return {
            resources: stringsAt(call, `${ruleAt}.resources`, r.resources),
            operations: stringsAt(call, `${ruleAt}.operations`, r.operations),
            apiGroups: r.apiGroups === undefined ? [''] : stringsAt(call, `${ruleAt}.apiGroups`, r.apiGroups),
          };
        });
        const onPods = rules.some(r =>
          r.resources.some(res => res === 'pods' || res === '*' || res === '*/*') &&
          r.operations.some(op => op === 'CREATE' || op === '*') &&
          r.apiGroups.some(g => g === '' || g === '*'));
        if (onPods) podHooks.push(`${nameOf(config.metadata?.name)}/${nameOf(hook.name)}`);
      }
    }
    notes.push(`mutating webhooks on pod CREATE: ${podHooks.length}`);
    for (const h of podHooks.sort()) {
      risks.push(
        `mutating webhook ${h} rewrites pods at CREATE: if it rebuilds initContainers without restartPolicy, native sidecars become ` +
        'blocking init containers (the pod hangs in Init); check that it keeps the field (NativeSidecarGuard rejects such pods)',
      );
    }
  }
}
