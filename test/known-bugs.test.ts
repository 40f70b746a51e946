/**
 * Known bugs of Kubernetes patch releases (issue 14 point 4): the table, which versions have
 * which bug, which emitted pods each one hits, and how the warning reaches the user.
 *
 * The expected versions are the CHANGELOG entries, written out here as data (not computed from
 * the table): kubernetes#125880 fixed in v1.29.8 (#126332), v1.30.4 (#126331), v1.31.0
 * (#125935), and absent from 1.28, which has no ordered termination (kubernetes#120620 came
 * with 1.29); kubernetes#132826 fixed in v1.33.6 (#134801), v1.34.2 (#134800), v1.35.0
 * (#133072), no patch for 1.28-1.32.
 */
import { Chart, Duration, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { Mesh, SidecarMode, SidecarWarnings, WithLogAgent, WithMeshProxy, WithTracer } from '../src';
import { APP_CONTAINER, kplusWorkload, manifestOf, newChart, podSpecOf, rawWorkload, withEnv } from './util/fixtures';
import { KNOWN_KUBERNETES_BUGS, KnownKubernetesBug, findKnownBugs, hasBug } from '../src/facts/known-bugs';
import { parseKubernetesVersion } from '../src/target/capabilities';

const ENV = 'CDK8S_SIDECARS_KUBERNETES_VERSION';
const v = (raw: string) => parseKubernetesVersion(raw)!;
const bug = (issue: string) => KNOWN_KUBERNETES_BUGS.find(b => b.issue === issue)!;
/** The table with one bug only: what a test of another bug's check must not see. */
const only = (issue: string) => [bug(issue)];
const issueOf = (warning: string) => /has (kubernetes#\d+) /.exec(warning)?.[1];
const ENDPOINT = 'otel-gateway.observability:4317';

describe('which releases have which bug', () => {
  // [version, has kubernetes#125880, has kubernetes#132826]; undefined = the patch is needed to tell.
  test.each([
    ['1.27.16', false, false],
    ['1.28.0', false, true], ['1.28.15', false, true], ['1.28', false, true],
    ['1.29.0', true, true], ['1.29.7', true, true], ['1.29.8', false, true], ['1.29.15', false, true], ['1.29', undefined, true],
    ['1.30.3', true, true], ['1.30.4', false, true], ['1.30', undefined, true],
    ['1.31.0', false, true], ['1.31', false, true], ['1.32.9', false, true],
    ['1.33.0', false, true], ['1.33.5', false, true], ['1.33.6', false, false], ['1.33', false, undefined],
    ['1.34.1', false, true], ['1.34.2', false, false], ['1.34', false, undefined],
    ['1.35.0', false, false], ['1.35', false, false], ['1.40.1', false, false],
  ])('%s', (raw, b125880, b132826) => {
    expect(hasBug(bug('kubernetes#125880'), v(raw as string))).toBe(b125880);
    expect(hasBug(bug('kubernetes#132826'), v(raw as string))).toBe(b132826);
  });

  // kubernetes#123323, from the release notes: v1.28.8 (#123710), v1.29.3 (#123709), v1.30.0 (#123323).
  // kubernetes#126543: v1.29.9 (#127214), v1.30.5 (#127213), v1.31.1 (#127212), v1.32.0 (#126543); "a regression in
  // default 1.29 configurations with the SidecarContainers feature enabled": the feature's code path, which 1.28 runs
  // with the gate on (no 1.28 cherry-pick).
  test.each([
    ['1.27.16', false, false],
    ['1.28.7', true, true], ['1.28.8', false, true], ['1.28', undefined, true],
    ['1.29.2', true, true], ['1.29.3', false, true], ['1.29.8', false, true], ['1.29.9', false, false], ['1.29', undefined, undefined],
    ['1.30.0', false, true], ['1.30.4', false, true], ['1.30.5', false, false],
    ['1.31.0', false, true], ['1.31.1', false, false], ['1.31', false, undefined],
    ['1.32.0', false, false], ['1.32', false, false], ['1.35.1', false, false],
  ])('%s (kubernetes#123323, kubernetes#126543)', (raw, b123323, b126543) => {
    expect(hasBug(bug('kubernetes#123323'), v(raw as string))).toBe(b123323);
    expect(hasBug(bug('kubernetes#126543'), v(raw as string))).toBe(b126543);
  });

  // Issue 28, from the CHANGELOG files (written out here as data):
  // kubernetes#127868: CHANGELOG-1.32.md v1.32.0-alpha.2 (#127878), no cherry-pick to 1.28-1.31.
  // kubernetes#119447, kubernetes#120715: CHANGELOG-1.29.md v1.29.0 (changelog since v1.28.0), none in CHANGELOG-1.28.md.
  // kubernetes#137146: CHANGELOG-1.35.md v1.35.4 (#137885), CHANGELOG-1.36.md v1.36.0-beta.0; "a 1.35 regression".
  test.each([
    // [version, #127868, #119447 and #120715, #137146]
    ['1.27.16', false, false, false],
    ['1.28.0', true, true, false], ['1.28.15', true, true, false], ['1.28', true, true, false],
    ['1.29.0', true, false, false], ['1.29.15', true, false, false],
    ['1.31.14', true, false, false], ['1.31', true, false, false],
    ['1.32.0', false, false, false], ['1.34.9', false, false, false],
    ['1.35.0', false, false, true], ['1.35.3', false, false, true], ['1.35.4', false, false, false], ['1.35', false, false, undefined],
    ['1.36.0', false, false, false], ['1.37.2', false, false, false],
  ])('%s (kubernetes#127868, kubernetes#119447/#120715, kubernetes#137146)', (raw, b127868, bManagers, b137146) => {
    expect(hasBug(bug('kubernetes#127868'), v(raw as string))).toBe(b127868);
    expect(hasBug(bug('kubernetes#119447'), v(raw as string))).toBe(bManagers);
    expect(hasBug(bug('kubernetes#120715'), v(raw as string))).toBe(bManagers);
    expect(hasBug(bug('kubernetes#137146'), v(raw as string))).toBe(b137146);
  });

  test('every entry names its issue, the fix, the fixed versions and where they were read', () => {
    for (const b of KNOWN_KUBERNETES_BUGS) {
      expect(b.issue).toMatch(/^kubernetes#\d+$/);
      expect(b.fixedBy).toMatch(/^kubernetes#\d+$/);
      // an open bug: no fixed release, every release from its first affected one
      if (b.open) expect(b.fixedIn).toEqual([]);
      else expect(b.fixedIn[b.fixedIn.length - 1]).toMatch(/^1\.\d+\.0$/);
      expect(b.sources.length).toBeGreaterThanOrEqual(b.fixedIn.length);
    }
  });
});

describe('which emitted pods a bug hits', () => {
  const sidecar = (name: string, extra: object = {}) => ({ name, image: 'x', restartPolicy: 'Always', startupProbe: { httpGet: { port: 2020 } }, ...extra });

  test('kubernetes#125880: only a native sidecar with another native sidecar after it', () => {
    const at = v('1.30.1');
    expect(findKnownBugs('w', { initContainers: [sidecar('log-agent')], containers: [{ name: 'app' }] }, at, only('kubernetes#125880'))).toEqual([]);
    // An ordinary init container after the only native sidecar: nobody waits for it
    // (kuberuntime_termination_order.go: a sidecar waits for the main containers and the NEXT
    // restartable init container only), so the old check's warning was wrong.
    expect(findKnownBugs('w', { initContainers: [sidecar('log-agent'), { name: 'migrate' }], containers: [{ name: 'app' }] }, at, only('kubernetes#125880'))).toEqual([]);
    const hit = findKnownBugs('w', { initContainers: [sidecar('log-agent'), { name: 'migrate' }, sidecar('tracer')], containers: [], terminationGracePeriodSeconds: 47 }, at, only('kubernetes#125880'));
    expect(hit).toHaveLength(1);
    expect(hit[0].message).toBe(
      "w: Kubernetes 1.30.1 has kubernetes#125880 (fixed in 1.29.8, 1.30.4, 1.31.0 by kubernetes#125935): native sidecar 'log-agent' " +
      "has another native sidecar after it ('tracer'); when the pod is deleted before that one is running (a rollout or scale-down while the pod " +
      "initializes, a sidecar whose startupProbe fails), 'log-agent' gets no SIGTERM until terminationGracePeriodSeconds (47s) is over, so the " +
      'pod stays Terminating that long and the sidecars are then killed without a graceful stop. To avoid it, upgrade the cluster to 1.30.4 or later, ' +
      "or give at most one sidecar of the pod the native layout (mode: SidecarMode.LEGACY on the library's others).",
    );
    // A regular init container BEFORE the only native sidecar does not count.
    expect(findKnownBugs('w', { initContainers: [{ name: 'tools' }, sidecar('log-agent')] }, at, only('kubernetes#125880'))).toEqual([]);
  });

  test('kubernetes#132826: only restartPolicy Never with a native sidecar that has a startupProbe', () => {
    const at = v('1.33.5');
    const pod = (restartPolicy: string | undefined, init: object[]) => ({ restartPolicy, initContainers: init, containers: [{ name: 'app' }] });
    expect(findKnownBugs('w', pod('Never', [sidecar('log-agent')]), at).map(f => f.issue)).toEqual(['kubernetes#132826']);
    expect(findKnownBugs('w', pod('OnFailure', [sidecar('log-agent')]), at)).toEqual([]);
    expect(findKnownBugs('w', pod(undefined, [sidecar('log-agent')]), at)).toEqual([]);
    expect(findKnownBugs('w', pod('Never', [sidecar('log-agent', { startupProbe: undefined })]), at)).toEqual([]);
    expect(findKnownBugs('w', pod('Never', [{ name: 'plain-init', startupProbe: undefined }]), at)).toEqual([]);
  });

  test('kubernetes#123323: a native sidecar in a pod with restartPolicy Never or OnFailure (not Always, not a legacy sidecar)', () => {
    const at = v('1.29.2');
    const pod = (restartPolicy: string | undefined, init: object[]) => ({ restartPolicy, initContainers: init, containers: [{ name: 'app' }] });
    const t = only('kubernetes#123323');
    expect(findKnownBugs('w', pod('Never', [sidecar('log-agent')]), at, t).map(f => f.issue)).toEqual(['kubernetes#123323']);
    const [f] = findKnownBugs('w', pod('OnFailure', [{ name: 'tools' }, sidecar('log-agent'), sidecar('tracer')]), at, t);
    expect(f.message).toBe(
      'w: Kubernetes 1.29.2 has kubernetes#123323 (fixed in 1.28.8, 1.29.3, 1.30.0 by kubernetes#123323): the pod has restartPolicy OnFailure and ' +
      "native sidecar(s) 'log-agent', 'tracer'; once one of them exits (a crash, an OOM kill), the kubelet restarts it but its status stays at the " +
      'first termination (the status update is refused), so kubectl, controllers and probes see it terminated while it runs. To avoid it, upgrade ' +
      'the cluster to 1.29.3 or later, or use restartPolicy: Always where the workload allows it (a Job does not).',
    );
    expect(findKnownBugs('w', pod('Always', [sidecar('log-agent')]), at, t)).toEqual([]);
    expect(findKnownBugs('w', pod(undefined, [sidecar('log-agent')]), at, t)).toEqual([]);
    expect(findKnownBugs('w', pod('Never', [{ name: 'plain-init' }]), at, t)).toEqual([]);
  });

  test('kubernetes#126543: any native sidecar; a plain init container alone is not this bug', () => {
    const t = only('kubernetes#126543');
    const pod = (init: object[]) => ({ initContainers: init, containers: [{ name: 'app' }] });
    const [f] = findKnownBugs('w', pod([{ name: 'tools' }, sidecar('log-agent')]), v('1.31.0'), t);
    expect(f.message).toBe(
      'w: Kubernetes 1.31.0 has kubernetes#126543 (fixed in 1.29.9, 1.30.5, 1.31.1, 1.32.0 by kubernetes#126543): if the container runtime fails ' +
      "to start native sidecar(s) 'log-agent' once (a transient runtime or image error), the kubelet never tries again: the container stays in " +
      'Created and the pod stays in Init until it is deleted. To avoid it, upgrade the cluster to 1.31.1 or later, or use the legacy layout ' +
      '(mode: SidecarMode.LEGACY), whose sidecars are ordinary containers.',
    );
    expect(findKnownBugs('w', pod([{ name: 'tools' }]), v('1.31.0'), t)).toEqual([]);
    expect(findKnownBugs('w', { containers: [{ name: 'app' }, { name: 'log-agent' }] }, v('1.31.0'), t)).toEqual([]);
  });

  const res = (cpu: string, memory: string, limits = false) => ({
    resources: { requests: { cpu, memory }, ...(limits ? { limits: { cpu, memory } } : {}) },
  });

  test('kubernetes#127868: only where the scoring sees at most half of the pod (sidecars as large as the app)', () => {
    const t = only('kubernetes#127868');
    const at = v('1.30.2');
    // the scoring's sum, as the scheduler's NodeInfo wrote it before #127878: max(2 x 250m, 500m) = 500m where the pod holds
    // 500m + 500m = 1000m (memory: max(2 x 128Mi, 256Mi) = 256Mi of 512Mi)
    const big = { initContainers: [sidecar('proxy', res('500m', '256Mi'))], containers: [{ name: 'a', ...res('250m', '128Mi') }, { name: 'b', ...res('250m', '128Mi') }] };
    const [f] = findKnownBugs('w', big, at, t);
    expect(f.message).toBe(
      'w: Kubernetes 1.30.2 has kubernetes#127868 (fixed in 1.32.0 by kubernetes#127878): the scheduler\'s scoring counts this pod as 500m CPU and ' +
      "256Mi memory where it holds 1000m CPU and 512Mi memory: the requests of native sidecar(s) 'proxy' are left out of how full a node looks, so " +
      'nodes running these pods look emptier than they are and get more pods (LeastAllocated) or fewer (MostAllocated) than intended; whether a pod ' +
      'fits is still checked right. No 1.30 patch has the fix. To avoid it, upgrade the cluster to 1.32.0 or later, or give the app container(s) the larger share of the requests.',
    );
    // the library's own small sidecars beside an app of 1 CPU / 512Mi (cdk8s-plus' defaults): 1000m seen of 1070m
    expect(findKnownBugs('w', { initContainers: [sidecar('log-agent', res('20m', '32Mi')), sidecar('tracer', res('50m', '64Mi'))], containers: [{ name: 'app', ...res('1', '512Mi') }] }, at, t)).toEqual([]);
    // an app without requests counts 100m / 200Mi in the scoring: 100m seen of 170m, 200Mi of 296Mi
    expect(findKnownBugs('w', { initContainers: [sidecar('log-agent', res('20m', '32Mi')), sidecar('tracer', res('50m', '64Mi'))], containers: [{ name: 'app' }] }, at, t)).toEqual([]);
    // a legacy sidecar is counted in spec.containers: no bug
    expect(findKnownBugs('w', { containers: [{ name: 'app', ...res('250m', '128Mi') }, { name: 'proxy', ...res('500m', '256Mi') }] }, at, t)).toEqual([]);
    // CPU alone: 100m + 900m held, 100m... seen max(100m, 900m) = 900m: not half; 100m app + 2 x 500m sidecars: max(100m, 500m) = 500m of 1100m
    expect(findKnownBugs('w', { initContainers: [sidecar('s', res('900m', '1Mi'))], containers: [{ name: 'app', ...res('100m', '512Mi') }] }, at, t)).toEqual([]);
    expect(findKnownBugs('w', { initContainers: [sidecar('s1', res('500m', '1Mi')), sidecar('s2', res('500m', '1Mi'))], containers: [{ name: 'app', ...res('100m', '512Mi') }] }, at, t)[0].message)
      .toContain("counts this pod as 500m CPU where it holds 1100m CPU: the requests of native sidecar(s) 's1', 's2'");
  });

  test('kubernetes#119447: a Guaranteed pod whose native sidecar requests whole CPUs; kubernetes#120715: any Guaranteed pod with a native sidecar', () => {
    const at = v('1.28.9');
    const cpu = only('kubernetes#119447');
    const mem = only('kubernetes#120715');
    // Guaranteed (kubernetes.io "Pod Quality of Service Classes": every container, init containers too, has CPU and memory limits equal to its requests)
    const guaranteed = (sidecarCpu: string) => ({
      initContainers: [sidecar('proxy', { resources: { limits: { cpu: sidecarCpu, memory: '256Mi' } } })],
      containers: [{ name: 'app', ...res('2', '1Gi', true) }],
    });
    const [f] = findKnownBugs('w', guaranteed('1'), at, cpu);
    expect(f.message).toBe(
      'w: Kubernetes 1.28.9 has kubernetes#119447 (fixed in 1.29.0 by kubernetes#119447): the pod is Guaranteed (every container\'s requests equal ' +
      "its limits) and native sidecar(s) 'proxy' request whole CPUs: on a node with the static CPU manager policy the kubelet gives their exclusive " +
      'CPUs to the app containers as well, so the app and the sidecars share CPUs that each was meant to have alone. No 1.28 patch has the fix. To avoid ' +
      'it, upgrade the cluster to 1.29.0 or later, or give the native sidecars a fractional CPU request (e.g. 500m: they then run on the shared pool).',
    );
    expect(findKnownBugs('w', guaranteed('2000m'), at, cpu)).toHaveLength(1);
    // a fractional CPU runs on the shared pool: not the CPU manager's bug, still the memory manager's
    expect(findKnownBugs('w', guaranteed('500m'), at, cpu)).toEqual([]);
    expect(findKnownBugs('w', guaranteed('500m'), at, mem).map(x => x.issue)).toEqual(['kubernetes#120715']);
    // Burstable: the app's request below its limit, or a container without limits
    const burstable = { initContainers: guaranteed('1').initContainers, containers: [{ name: 'app', resources: { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '2', memory: '1Gi' } } }] };
    expect(findKnownBugs('w', burstable, at, [...cpu, ...mem])).toEqual([]);
    expect(findKnownBugs('w', { ...guaranteed('1'), containers: [{ name: 'app', ...res('2', '1Gi') }] }, at, [...cpu, ...mem])).toEqual([]);
    // a plain init container with whole CPUs is not a sidecar
    expect(findKnownBugs('w', { initContainers: [{ name: 'init', ...res('1', '1Gi', true) }], containers: [{ name: 'app', ...res('2', '1Gi', true) }] }, at, [...cpu, ...mem])).toEqual([]);
  });

  test('kubernetes#137146: a native sidecar with a startupProbe, unless the pod never restarts its containers', () => {
    const at = v('1.35.2');
    const t = only('kubernetes#137146');
    const pod = (restartPolicy: string | undefined, init: object[]) => ({ restartPolicy, initContainers: init, containers: [{ name: 'app' }] });
    const [f] = findKnownBugs('w', pod(undefined, [sidecar('log-agent')]), at, t);
    expect(f.message).toBe(
      'w: Kubernetes 1.35.2 has kubernetes#137146 (fixed in 1.35.4, 1.36.0 by kubernetes#137146): native sidecar(s) \'log-agent\' have a startupProbe; ' +
      'after the kubelet of the node restarts (an upgrade, a crash), an app container of a pod that was already running and then crashes is never ' +
      'restarted: it stays terminated with RestartCount 0 and the pod NotReady until the pod is deleted. To avoid it, upgrade the cluster to 1.35.4 or ' +
      'later, or delete (or roll) the pods of a node after its kubelet restarts.',
    );
    expect(findKnownBugs('w', pod('OnFailure', [sidecar('log-agent')]), at, t)).toHaveLength(1);
    expect(findKnownBugs('w', pod('Never', [sidecar('log-agent')]), at, t)).toEqual([]);
    expect(findKnownBugs('w', pod(undefined, [sidecar('log-agent', { startupProbe: undefined })]), at, t)).toEqual([]);
  });

  test('for a release line that never got the fix, the advice names the next line', () => {
    const [f] = findKnownBugs('w', { restartPolicy: 'Never', initContainers: [sidecar('log-agent')] }, v('1.32.4'));
    expect(f.message).toContain('No 1.32 patch has the fix. To avoid it, upgrade the cluster to 1.33.6 or later, or use restartPolicy: OnFailure');
  });

  test('without a patch version nothing is checked', () => {
    expect(findKnownBugs('w', { restartPolicy: 'Never', initContainers: [sidecar('a'), sidecar('b')] }, v('1.29'))).toEqual([]);
  });

  test('a bug whose pod cannot work is reported at error level', () => {
    const table: KnownKubernetesBug[] = [{
      issue: 'kubernetes#1',
      fixedBy: 'kubernetes#2',
      summary: 's',
      fixedIn: ['1.30.0'],
      firstAffectedMinor: 29,
      sources: ['x'],
      check: () => ({ level: 'error', what: 'it breaks', avoid: 'or not' }),
    }];
    expect(findKnownBugs('w', {}, v('1.29.1'), table)).toEqual([{
      issue: 'kubernetes#1',
      level: 'error',
      message: 'w: Kubernetes 1.29.1 has kubernetes#1 (fixed in 1.30.0 by kubernetes#2): it breaks. No 1.29 patch has the fix. To avoid it, upgrade the cluster to 1.30.0 or later, or not.',
    }]);
  });
});

describe('issue 37: the bugs of 1.35-1.37 and the open ones', () => {
  // From the CHANGELOG files, written out here as data: kubernetes#141155 (#141342) and kubernetes#141473 (#141487):
  // CHANGELOG-1.38.md v1.38.0-alpha.1 only, regressions of 1.35 (ChangeContainerStatusOnKubeletRestart off);
  // kubernetes#136598: CHANGELOG-1.36.md v1.36.0-alpha.1 only; kubernetes#137710 and #140309: open.
  test.each([
    // [version, #141155 and #141473, #136598, the open ones]
    ['1.27.3', false, true, true], ['1.34.9', false, true, true], ['1.35.0', true, true, true], ['1.35.9', true, true, true],
    ['1.35', true, true, true], ['1.36.0', true, false, true], ['1.37.2', true, false, true], ['1.38.0', false, false, true], ['1.40.1', false, false, true],
  ])('%s', (raw, b14115x, b136598, open) => {
    expect(hasBug(bug('kubernetes#141155'), v(raw as string))).toBe(b14115x);
    expect(hasBug(bug('kubernetes#141473'), v(raw as string))).toBe(b14115x);
    expect(hasBug(bug('kubernetes#136598'), v(raw as string))).toBe(b136598);
    expect(hasBug(bug('kubernetes#137710'), v(raw as string))).toBe(open);
    expect(hasBug(bug('kubernetes#140309'), v(raw as string))).toBe(open);
  });

  const probes = { startupProbe: { httpGet: { port: 1 } }, livenessProbe: { httpGet: { port: 1 } } };
  test('kubernetes#141155: a container (native sidecar or app) with both a startupProbe and a livenessProbe', () => {
    const at = v('1.36.4');
    const hit = findKnownBugs('w', { initContainers: [{ name: 'log-agent', restartPolicy: 'Always', ...probes }], containers: [{ name: 'app' }] }, at, only('kubernetes#141155'));
    expect(hit.map(h => h.message)).toEqual([
      "w: Kubernetes 1.36.4 has kubernetes#141155 (fixed in 1.38.0 by kubernetes#141342): 'log-agent' has a startupProbe and a livenessProbe; after a " +
      'liveness restart the new container counts as started at once, so its liveness probe runs before its startup probe has passed and can kill it ' +
      'again while it starts (a restart loop for an agent that starts slowly), and a native sidecar counts as started before it is ready. No 1.36 ' +
      'patch has the fix. To avoid it, upgrade the cluster to 1.38.0 or later, or give the liveness probe an initialDelaySeconds that covers the start (livenessCheck on the constructs).',
    ]);
    expect(findKnownBugs('w', { initContainers: [{ name: 'log-agent', restartPolicy: 'Always', startupProbe: probes.startupProbe }], containers: [{ name: 'app' }] }, at, only('kubernetes#141155'))).toEqual([]);
    // an ordinary init container's probes are refused by the API server anyway: not counted
    expect(findKnownBugs('w', { initContainers: [{ name: 'x', ...probes }], containers: [{ name: 'app' }] }, at, only('kubernetes#141155'))).toEqual([]);
  });

  test('kubernetes#141473: a readinessProbe; kubernetes#136598: a preStop hook', () => {
    const at = v('1.35.1');
    expect(findKnownBugs('w', { containers: [{ name: 'envoy', readinessProbe: {} }] }, at, only('kubernetes#141473'))[0].message)
      .toMatch(/has kubernetes#141473 \(fixed in 1\.38\.0 by kubernetes#141487\): 'envoy' has a readinessProbe; .* reported Ready after the kubelet restarts, before its own readiness probe has run/);
    expect(findKnownBugs('w', { containers: [{ name: 'app' }] }, at, only('kubernetes#141473'))).toEqual([]);
    expect(findKnownBugs('w', { containers: [{ name: 'app', lifecycle: { preStop: { sleep: { seconds: 5 } } } }] }, at, only('kubernetes#136598'))[0].message)
      .toMatch(/has kubernetes#136598 \(fixed in 1\.36\.0 by kubernetes#136598\): 'app' has a preStop hook; .*; unverified range: .* do not say since which release, so this warns from 1\.27\)\. No 1\.35 patch has the fix\. To avoid it, upgrade the cluster to 1\.36\.0 or later/);
    expect(findKnownBugs('w', { containers: [{ name: 'app', lifecycle: { preStop: {} } }] }, v('1.36.0'), only('kubernetes#136598'))).toEqual([]);
  });

  test('the open form: kubernetes#137710 and #140309 warn on every patch of every release, with no upgrade advice, for two or more init containers', () => {
    const pod = { initContainers: [{ name: 'sidecar-tools' }, { name: 'log-agent', restartPolicy: 'Always' }], containers: [{ name: 'app' }] };
    for (const raw of ['1.27.1', '1.33.0', '1.37.2', '1.39.0']) {
      const hits = findKnownBugs('w', pod, v(raw), [bug('kubernetes#137710'), bug('kubernetes#140309')]);
      expect(hits.map(h => h.issue)).toEqual(['kubernetes#137710', 'kubernetes#140309']);
      expect(hits[0].message).toBe(
        `w: Kubernetes ${raw} has kubernetes#137710 (open upstream: no fix released; kubernetes#137730 proposes one): the pod has 2 init containers; ` +
        'after a node restart, when the kubelet fails to remove an old init container while restarting the pod, the kubelet can run only the first ' +
        "again and start the app without 'log-agent': the app then runs without native sidecar(s) 'log-agent', until the pod is deleted. No release " +
        'has a fix yet (warned on every release until one does): delete (or roll) the pods of a node after it restarts.',
      );
    }
    expect(findKnownBugs('w', { initContainers: [{ name: 'log-agent', restartPolicy: 'Always' }], containers: [] }, v('1.37.2'), [bug('kubernetes#140309')])).toEqual([]);
    // a bare minor checks nothing, open bugs included (the patch names the nodes' release)
    expect(findKnownBugs('w', pod, v('1.37'), [bug('kubernetes#140309')])).toEqual([]);
  });
});

describe('warnings on synthesized apps', () => {
  let stderr: jest.SpyInstance;
  beforeEach(() => {
    stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
  });
  afterEach(() => stderr.mockRestore());
  const printed = () => stderr.mock.calls.map(c => String(c[0])).filter(s => s.startsWith('[cdk8s-sidecars] WARNING: '));
  const OPEN = ['kubernetes#137710', 'kubernetes#140309'];
  /**
   * What a synthesis prints of one workload's warnings (issue 48): each with its rule id, the bugs
   * open upstream (every pod with two init containers has them) in one line per synthesis.
   */
  const asPrinted = (warnings: string[]) => {
    const own = warnings.filter(w => !OPEN.includes(issueOf(w)!)).map(w => `[cdk8s-sidecars] WARNING: ${w} [CS021 known-kubernetes-bug]\n`);
    const open = warnings.filter(w => OPEN.includes(issueOf(w)!));
    return open.length === 0 ? own : [...own, expect.stringMatching(new RegExp(
      '^\\[cdk8s-sidecars\\] WARNING: 1 workload of this synthesis \\(.*\\) runs into bugs open upstream \\(no fix released\\).*' +
      `${OPEN.join('.*')}.* \\[CS021 known-kubernetes-bug\\]\n$`))];
  };

  function deploymentWithTwo(kubernetesVersion: string) {
    const { app, chart } = newChart();
    const workload = kplusWorkload(chart, 'Deployment');
    new WithLogAgent(chart, 'logs', { workload, kubernetesVersion });
    new WithTracer(chart, 'tracer', { workload, exporterEndpoint: ENDPOINT, kubernetesVersion });
    return { app, chart };
  }

  test('1.29.3, two native sidecars: kubernetes#125880 is printed once per synthesis and readable with SidecarWarnings.of', () => withEnv(ENV, undefined, () => {
    const { app, chart } = deploymentWithTwo('1.29.3');
    expect(SidecarWarnings.of(app)).toEqual([]);
    const manifest = manifestOf(Testing.synth(chart), 'Deployment');
    // the native sidecars, in order (a plain init container such as sidecar-tools is not one)
    const init = podSpecOf(manifest).initContainers.filter((c: any) => c.restartPolicy === 'Always').map((c: any) => c.name);
    const warnings = SidecarWarnings.of(app);
    // 1.29.3 also has kubernetes#126543 (any native sidecar; fixed in 1.29.9), after it in the table, and the open
    // kubernetes#137710 and #140309 (two init containers: every release)
    expect(warnings.map(issueOf)).toEqual(['kubernetes#125880', 'kubernetes#126543', 'kubernetes#137710', 'kubernetes#140309']);
    expect(warnings[0]).toMatch(new RegExp(
      `^'test/web/Resource' \\(Deployment '${manifest.metadata.name}'\\): Kubernetes 1\\.29\\.3 has kubernetes#125880 .*native sidecar '${init[0]}' ` +
      `has another native sidecar after it \\('${init[1]}'\\).*upgrade the cluster to 1\\.29\\.8 or later`,
    ));
    expect(printed()).toEqual(asPrinted(warnings));
    Testing.synth(chart);
    // once per synthesis: again for the second one (test/warnings-print.test.ts), not per render
    expect(printed()).toEqual([...asPrinted(warnings), ...asPrinted(warnings)]);
    expect(SidecarWarnings.of(chart)).toEqual(warnings);
  }));

  test('App.synthYaml() with several charts prints each warning once (cdk8s validates the app once, then again per chart)', () => withEnv(ENV, undefined, () => {
    const { app, chart } = deploymentWithTwo('1.29.3');
    new Chart(app, 'second');
    new Chart(app, 'third');
    app.synthYaml();
    expect(SidecarWarnings.of(app)).toHaveLength(4);
    expect(printed()).toEqual(asPrinted(SidecarWarnings.of(chart)));
  }));

  test('the fixed patch (1.29.8; 1.29.9 for kubernetes#126543), the bare minor (1.29) and the legacy layout give no warning of the fixed bugs', () => withEnv(ENV, undefined, () => {
    // the open kubernetes#137710 and #140309 stay on every patch (two init containers), never on a bare minor
    for (const [version, issues] of [['1.29.8', ['kubernetes#126543', 'kubernetes#137710', 'kubernetes#140309']], ['1.29.9', ['kubernetes#137710', 'kubernetes#140309']], ['1.29', []]] as const) {
      const { app, chart } = deploymentWithTwo(version);
      Testing.synth(chart);
      expect(SidecarWarnings.of(app).map(issueOf)).toEqual(issues);
    }
    const { app, chart } = newChart();
    const workload = kplusWorkload(chart, 'Deployment');
    new WithLogAgent(chart, 'logs', { workload, kubernetesVersion: '1.29.3', mode: SidecarMode.LEGACY });
    new WithTracer(chart, 'tracer', { workload, exporterEndpoint: ENDPOINT, kubernetesVersion: '1.29.3', mode: SidecarMode.LEGACY });
    Testing.synth(chart);
    // the legacy sidecars' preStop hooks: kubernetes#136598 (fixed in 1.36.0) only
    expect(SidecarWarnings.of(app).map(issueOf)).toEqual(['kubernetes#136598']);
    // (the open bugs: one line per synthesis, which names both)
    expect(printed().map(issueOf)).toEqual(['kubernetes#126543', 'kubernetes#137710', 'kubernetes#137710', 'kubernetes#136598']);
  }));

  test('a Job (restartPolicy Never) on 1.33.5 gets kubernetes#132826; on 1.33.6 or with OnFailure it does not', () => withEnv(ENV, undefined, () => {
    const job = (version: string, restartPolicy?: kplus.RestartPolicy) => {
      const { app, chart } = newChart();
      const workload = new kplus.Job(chart, 'job', { containers: [APP_CONTAINER], ...(restartPolicy ? { restartPolicy } : {}) });
      new WithLogAgent(chart, 'logs', { workload, kubernetesVersion: version });
      Testing.synth(chart);
      return SidecarWarnings.of(app);
    };
    const [w] = job('1.33.5');
    expect(w).toMatch(/^'test\/job\/Resource' \(Job '.*'\): Kubernetes 1\.33\.5 has kubernetes#132826 \(fixed in 1\.33\.6, 1\.34\.2, 1\.35\.0 by kubernetes#133072\): the pod has restartPolicy Never and native sidecar\(s\) 'log-agent' with a startupProbe;.*upgrade the cluster to 1\.33\.6 or later, or use restartPolicy: OnFailure/);
    // (the two open node-restart bugs of a pod with 2 init containers, sidecar-tools and log-agent, stay: OPEN)
    expect(job('1.33.6').map(issueOf)).toEqual(OPEN);
    expect(job('1.33.5', kplus.RestartPolicy.ON_FAILURE).map(issueOf)).toEqual(OPEN);
  }));

  test('1.28.9 with the gate: a Job gets kubernetes#132826 and #126543 (the feature\'s code path), each advice naming the first fixed line', () => withEnv(ENV, undefined, () => {
    const { app, chart } = newChart();
    const workload = kplusWorkload(chart, 'Job');
    new WithLogAgent(chart, 'logs', { workload, kubernetesVersion: '1.28.9', sidecarContainersGate: true });
    new WithTracer(chart, 'tracer', { workload, exporterEndpoint: ENDPOINT, kubernetesVersion: '1.28.9', sidecarContainersGate: true });
    Testing.synth(chart);
    const warnings = SidecarWarnings.of(app);
    expect(warnings.map(issueOf)).toEqual(['kubernetes#132826', 'kubernetes#126543', 'kubernetes#136598', 'kubernetes#137710', 'kubernetes#140309']);
    expect(warnings[0]).toContain('Kubernetes 1.28.9 has kubernetes#132826');
    expect(warnings[0]).toContain('No 1.28 patch has the fix. To avoid it, upgrade the cluster to 1.33.6 or later, or use restartPolicy: OnFailure');
    expect(warnings[1]).toContain('Kubernetes 1.28.9 has kubernetes#126543');
    expect(warnings[1]).toContain('No 1.28 patch has the fix. To avoid it, upgrade the cluster to 1.29.9 or later, or use the legacy layout');
  }));

  test('1.35.2: every Deployment with one of our native sidecars gets kubernetes#137146 (all have a startupProbe); 1.35.4 and a Job do not', () => withEnv(ENV, undefined, () => {
    const run = (version: string, kind: 'Deployment' | 'Job') => {
      const { app, chart } = newChart();
      new WithLogAgent(chart, 'logs', { workload: kplusWorkload(chart, kind), kubernetesVersion: version });
      Testing.synth(chart);
      return SidecarWarnings.of(app);
    };
    const [w, ...rest] = run('1.35.2', 'Deployment');
    // and kubernetes#141155 (startup + liveness probes, 1.35-1.37: fixed in 1.38.0), and the open
    // node-restart bugs of a pod with 2 init containers (sidecar-tools, log-agent)
    expect(rest.map(issueOf)).toEqual(['kubernetes#141155', ...OPEN]);
    expect(w).toMatch(/^'test\/web\/Resource' \(Deployment '.*'\): Kubernetes 1\.35\.2 has kubernetes#137146 .*native sidecar\(s\) 'log-agent' have a startupProbe/);
    expect(run('1.35.4', 'Deployment').map(issueOf)).toEqual(['kubernetes#141155', ...OPEN]);
    expect(run('1.34.1', 'Deployment').map(issueOf)).not.toContain('kubernetes#137146');
    expect(run('1.35.2', 'Job').map(issueOf)).not.toContain('kubernetes#137146'); // restartPolicy Never
  }));

  test('1.28.9 with the gate: our sidecars keep a pod Burstable (requests below limits), so a user\'s whole-CPU native sidecar beside them gets neither kubernetes#119447 nor kubernetes#120715', () => withEnv(ENV, undefined, () => {
    const { app, chart } = newChart();
    const workload = rawWorkload(chart, 'raw', {
      initContainers: [{ name: 'proxy', image: 'ghcr.io/example/proxy:1', restartPolicy: 'Always', resources: { limits: { cpu: '1', memory: '128Mi' } } }],
      containers: [{ name: 'app', image: 'ghcr.io/example/app:1', resources: { limits: { cpu: '2', memory: '1Gi' }, requests: { cpu: '2', memory: '1Gi' } } }],
    });
    new WithTracer(chart, 'tracer', { workload, exporterEndpoint: ENDPOINT, kubernetesVersion: '1.28.9', sidecarContainersGate: true, userSidecarStopTime: Duration.seconds(3) });
    const spec = podSpecOf(manifestOf(Testing.synth(chart), 'Deployment'));
    const issues = SidecarWarnings.of(app).map(issueOf);
    // the tracer's own requests are below its limits (src/with-tracer.ts): the pod is Burstable, so neither bug
    expect(spec.initContainers.find((c: any) => c.name !== 'proxy' && c.restartPolicy === 'Always').resources.requests.cpu).toBe('50m');
    expect(issues).not.toContain('kubernetes#119447');
    expect(issues).not.toContain('kubernetes#120715');
  }));

  test('the lowest patch named on a workload counts; the environment variable can name it', () => {
    withEnv(ENV, '1.30.2', () => {
      const { app, chart } = newChart();
      const workload = kplusWorkload(chart, 'Deployment');
      new WithLogAgent(chart, 'logs', { workload });
      new WithTracer(chart, 'tracer', { workload, exporterEndpoint: ENDPOINT });
      app.synth();
      expect(SidecarWarnings.of(app).map(w => /has (kubernetes#\d+)/.exec(w)![1])).toEqual(['kubernetes#125880', 'kubernetes#126543', 'kubernetes#137710', 'kubernetes#140309']);
    });
    withEnv(ENV, undefined, () => {
      const { app, chart } = newChart();
      const workload = kplusWorkload(chart, 'Deployment');
      new WithLogAgent(chart, 'logs', { workload, kubernetesVersion: '1.30.9' });
      new WithTracer(chart, 'tracer', { workload, exporterEndpoint: ENDPOINT, kubernetesVersion: '1.30.1' });
      Testing.synth(chart);
      expect(SidecarWarnings.of(app)[0]).toContain('Kubernetes 1.30.1 has kubernetes#125880');
    });
  });

  const rawWithInit = (chart: any, initContainers: object[], kind = 'Deployment') => rawWorkload(chart, 'raw', {
    ...(kind === 'Job' ? { restartPolicy: 'OnFailure' } : {}),
    initContainers,
    containers: [{ name: 'app', image: 'ghcr.io/example/app:1' }],
  }, kind);

  test('a Job with an ordinary init container after our only native sidecar: no kubernetes#125880 warning', () => withEnv(ENV, undefined, () => {
    const { app, chart } = newChart();
    new WithLogAgent(chart, 'logs', { workload: rawWithInit(chart, [{ name: 'migrate', image: 'ghcr.io/example/migrate:1' }], 'Job'), kubernetesVersion: 'v1.29.1' });
    const spec = podSpecOf(manifestOf(Testing.synth(chart), 'Job'));
    expect(spec.initContainers.map((c: any) => c.name)).toEqual(['sidecar-tools', 'log-agent', 'migrate']);
    // (1.29.1 with OnFailure has kubernetes#123323 and kubernetes#126543: their own tests are above)
    expect(SidecarWarnings.of(app).map(issueOf)).toEqual(['kubernetes#123323', 'kubernetes#126543', 'kubernetes#137710', 'kubernetes#140309']);
  }));

  test('a mesh proxy declared with WithMeshProxy counts (issue 27 point 6): istio-proxy, then log-agent, on 1.29.3', () => withEnv(ENV, undefined, () => {
    // GIVEN one native sidecar of ours and Istio's native proxy, which the mesh injects at admission
    const { app, chart } = newChart();
    const workload = kplusWorkload(chart, 'Deployment');
    new WithLogAgent(chart, 'logs', { workload, kubernetesVersion: '1.29.3' });
    new WithMeshProxy(chart, 'mesh', { workload, mesh: Mesh.ISTIO, kubernetesVersion: '1.29.3' });
    // WHEN
    const manifest = manifestOf(Testing.synth(chart), 'Deployment');
    // THEN the marker lists both, and Istio puts its proxy before ours (SIDECARS.md §5): ours is the one after it
    expect(manifest.spec.template.metadata.annotations['sidecars.cdk8s.io/native-sidecars']).toBe('istio-proxy,log-agent');
    // (1.29.3 also has kubernetes#126543, which any native sidecar gets: its own test is above)
    expect(SidecarWarnings.of(app).filter(w => issueOf(w) === 'kubernetes#125880')).toEqual([expect.stringContaining(
      "Kubernetes 1.29.3 has kubernetes#125880 (fixed in 1.29.8, 1.30.4, 1.31.0 by kubernetes#125935): native sidecar 'istio-proxy' has another native sidecar after it ('log-agent')",
    )]);
    // and with the fix (1.29.8), no kubernetes#125880
    const fixed = newChart();
    const w2 = kplusWorkload(fixed.chart, 'Deployment');
    new WithLogAgent(fixed.chart, 'logs', { workload: w2, kubernetesVersion: '1.29.8' });
    new WithMeshProxy(fixed.chart, 'mesh', { workload: w2, mesh: Mesh.ISTIO, kubernetesVersion: '1.29.8' });
    Testing.synth(fixed.chart);
    expect(SidecarWarnings.of(fixed.app).map(issueOf)).toEqual(['kubernetes#126543', 'kubernetes#137710', 'kubernetes#140309']);
  }));

  test('two native sidecars (ours, then the user\'s): kubernetes#125880 names ours', () => withEnv(ENV, undefined, () => {
    const { app, chart } = newChart();
    const mesh = { name: 'mesh', image: 'ghcr.io/example/mesh:1', restartPolicy: 'Always', startupProbe: { tcpSocket: { port: 15000 } } };
    new WithLogAgent(chart, 'logs', {
      workload: rawWithInit(chart, [{ name: 'migrate', image: 'ghcr.io/example/migrate:1' }, mesh]), kubernetesVersion: 'v1.29.1', userSidecarStopTime: Duration.seconds(3),
    });
    Testing.synth(chart);
    expect(SidecarWarnings.of(app).filter(w => issueOf(w) === 'kubernetes#125880')).toEqual([expect.stringContaining("native sidecar 'log-agent' has another native sidecar after it ('mesh')")]);
  }));
});
