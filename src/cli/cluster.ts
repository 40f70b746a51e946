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
import { KUBERNETES_VERSION_ENV, SIDECAR_CONTAINERS_GATE_ENV } from '../settings';
import { CommandError, firstLine } from './io';
import { OLDEST_SUPPORTED_MINOR } from '../target/capabilities';

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
  const m = /^v?1\.(\d+)(?:\.(\d+))?(?:[-+].*)?$/.exec(raw.trim());
  if (!m) return undefined;
  return { minor: Number(m[1]), patch: m[2] === undefined ? 0 : Number(m[2]), raw };
}

const lower = (a: Version, b: Version) => (a.minor !== b.minor ? a.minor - b.minor : a.patch - b.patch);

interface Run { readonly ok: boolean; readonly stdout: string; readonly error: string }

function kubectl(args: string[], context: string | undefined): Run {
  const bin = process.env.KUBECTL && process.env.KUBECTL !== '' ? process.env.KUBECTL : 'kubectl';
  const full = [...(context !== undefined ? ['--context', context] : []), ...args];
  const r = spawnSync(bin, full, { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  if (r.error) {
    const why = (r.error as NodeJS.ErrnoException).code === 'ENOENT'
      ? `${bin} not found: install kubectl or set KUBECTL to its path`
      : `${bin} ${full.join(' ')}: ${r.error.message}`;
    throw new CommandError(why);
  }
  const error = `${bin} ${full.join(' ')} exited with ${r.status ?? r.signal}: ${firstLine(r.stderr || r.stdout || '(no output)')}`;
  return { ok: r.status === 0, stdout: r.stdout, error };
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

  // 1. The API server. An unreachable cluster fails here, with kubectl's own error.
  const versionRun = kubectl(['version', '-o', 'json'], options.context);
  if (!versionRun.ok) throw new CommandError(`cannot read the API server's version: ${versionRun.error}`);
  const serverRaw = json(versionRun, 'kubectl version -o json').serverVersion?.gitVersion;
  const server = parseVendorVersion(serverRaw);
  if (!server) throw new CommandError(`kubectl version -o json: serverVersion.gitVersion ${JSON.stringify(serverRaw)} is not a Kubernetes 1.x version`);
  notes.push(`API server: ${server.raw}`);

  // 2. Every kubelet.
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
    for (const item of json(nodesRun, 'kubectl get nodes -o json').items ?? []) {
      const name = item?.metadata?.name ?? '?';
      const raw = item?.status?.nodeInfo?.kubeletVersion;
      const v = parseVendorVersion(raw);
      if (!v) throw new CommandError(`node '${name}': kubeletVersion ${JSON.stringify(raw)} is not a Kubernetes 1.x version`);
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
  const lowest = [server, ...kubelets.map(k => k.version)].reduce((a, b) => (lower(b, a) < 0 ? b : a));
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

  // 3. The SidecarContainers gate, from the API server's metrics (needs the /metrics permission).
  let gate: boolean | undefined;
  const metricsRun = kubectl(['get', '--raw', '/metrics'], options.context);
  if (!metricsRun.ok) {
    notes.push(`SidecarContainers gate: not readable (${metricsRun.error})`);
  } else {
    const m = /^kubernetes_feature_enabled\{[^}]*\bname="SidecarContainers"[^}]*\}\s+(\S+)/m.exec(metricsRun.stdout);
    if (!m) {
      notes.push('SidecarContainers gate: the API server\'s metrics have no kubernetes_feature_enabled{name="SidecarContainers"}');
    } else {
      gate = Number(m[1]) === 1;
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

  // 4. Mutating webhooks that rewrite pods at CREATE: an injector that rebuilds initContainers
  //    from an older API version drops restartPolicy (SIDECARS.md §5: AWS App Mesh strips the field).
  const hooksRun = kubectl(['get', 'mutatingwebhookconfigurations', '-o', 'json'], options.context);
  if (!hooksRun.ok) {
    notes.push(`mutating webhooks: not readable (${hooksRun.error})`);
  } else {
    const podHooks: string[] = [];
    for (const config of json(hooksRun, 'kubectl get mutatingwebhookconfigurations -o json').items ?? []) {
      for (const hook of config?.webhooks ?? []) {
        const rules: any[] = hook?.rules ?? [];
        const onPods = rules.some(r =>
          (r?.resources ?? []).some((res: string) => res === 'pods' || res === '*' || res === '*/*') &&
          (r?.operations ?? []).some((op: string) => op === 'CREATE' || op === '*') &&
          (r?.apiGroups ?? ['']).some((g: string) => g === '' || g === '*'));
        if (onPods) podHooks.push(`${config?.metadata?.name ?? '?'}/${hook?.name ?? '?'}`);
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

  const version = options.withPatch ? `1.${lowest.minor}.${lowest.patch}` : `1.${lowest.minor}`;
  const env = [`${KUBERNETES_VERSION_ENV}=${version}`];
  if (gate !== undefined) env.push(`${SIDECAR_CONTAINERS_GATE_ENV}=${gate}`);
  return { env, notes: [...notes, ...risks.map(r => `risk: ${r}`)] };
}
