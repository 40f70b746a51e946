/**
 * Kubernetes around the sidecar (issue 28, second slice): a native sidecar's preStop that stops its
 * own process, a readiness probe on a sidecar no Service sends traffic to, a VerticalPodAutoscaler
 * of a pod with native sidecars, and SidecarValidation.addTo recording a workload's own warnings.
 *
 * Oracles: the preStop hooks are run for real (test/util/self-stop-oracle.ts: a fake program as PID 1
 * of its own PID namespace, busybox's tools, a loopback quit endpoint); the rest are hand-written
 * cases whose expected outcome is read from the upstream sources named at each test.
 */
import * as fs from 'fs';
import { ApiObject, Testing } from 'cdk8s';
import { AdoptSidecar, SidecarCheck, SidecarValidation, SidecarWarnings, WithLogAgent, WithSidecar } from '../src';
import { newChart, rawDeployment, withEnv } from './util/fixtures';
import { runHook, unavailable } from './util/self-stop-oracle';
import { noteSkipped } from './util/skips';
import { selfStopOf } from '../src/engine/around';
import { checkManifestSet } from '../src/engine/manifests-check';

const ENV = 'CDK8S_SIDECARS_KUBERNETES_VERSION';
const onCi = process.env.CI === 'true' || process.env.CI === '1';
const whyNot = unavailable();
const withOracle = whyNot ? test.skip : test;

describe('a preStop hook that stops the sidecar\'s own process', () => {
  test('the oracle can run here (busybox and unprivileged PID namespaces; required under CI=true)', () => {
    if (whyNot && onCi) throw new Error(`the self-stop oracle cannot run: ${whyNot}`);
    if (whyNot) noteSkipped(`the self-stop oracle: ${whyNot}`);
  });

  const PORT = 20000 + Math.floor(Math.random() * 20000);
  const QUIT = ['/quitquitquit', '/shutdown'];
  const envoy = { name: 'proxy', image: 'envoyproxy/envoy:v1.37.11', command: ['/usr/local/bin/envoy'] };
  const noCommand = { name: 'proxy', image: 'docker.io/envoyproxy/envoy:v1.37.11' };
  const fluentBit = { name: 'logs', image: 'fluent/fluent-bit:5.1.1' };
  const hook = (c: any, command: string[]) => ({ ...c, restartPolicy: 'Always', lifecycle: { preStop: { exec: { command } } } });
  const url = (p: string) => `http://127.0.0.1:${PORT}${p}`;

  // [what, container, hook command, the program's name in the oracle]
  const cases: Array<[string, any, string[], string]> = [
    ['kill 1 (exec)', envoy, ['kill', '1'], 'envoy'],
    ['sh -c kill -TERM 1', envoy, ['/bin/sh', '-c', 'kill -TERM 1'], 'envoy'],
    ['sh -c kill -s QUIT 1', envoy, ['sh', '-c', 'kill -s QUIT 1'], 'envoy'],
    ['sh -c kill -INT 1, after a sleep', envoy, ['sh', '-c', 'sleep 1 && kill -INT 1'], 'envoy'],
    ['kill -9 1: the kernel drops it for the namespace\'s init', envoy, ['sh', '-c', 'kill -9 1'], 'envoy'],
    ['kill -0 1: a probe', envoy, ['sh', '-c', 'kill -0 1'], 'envoy'],
    ['kill -HUP 1: no handler, ignored by init', envoy, ['sh', '-c', 'kill -HUP 1'], 'envoy'],
    ['pkill of its own program', envoy, ['sh', '-c', 'pkill envoy'], 'envoy'],
    ['pkill of its own program, named by the image', noCommand, ['pkill', 'envoy'], 'envoy'],
    ['pkill of another program', envoy, ['pkill', 'fluent-bit'], 'envoy'],
    ['killall of its own program', fluentBit, ['sh', '-c', 'killall fluent-bit'], 'fluent-bit'],
    ['kill $(pidof its own program)', envoy, ['sh', '-c', 'kill $(pidof envoy)'], 'envoy'],
    ['kill -9 $(pgrep its own program): PID 1 again', envoy, ['sh', '-c', 'kill -9 $(pgrep envoy)'], 'envoy'],
    ['wget --post-data to /quitquitquit', envoy, ['sh', '-c', `wget -q -O- --post-data '' ${url('/quitquitquit')}`], 'envoy'],
    ['wget GET of /quitquitquit', envoy, ['sh', '-c', `wget -q -O- ${url('/quitquitquit')}`], 'envoy'],
    ['wget --post-data to a drain endpoint (the library\'s Envoy hook)', envoy, ['sh', '-c', `wget -q -O- --post-data '' '${url('/drain_listeners?inboundonly&graceful')}'`], 'envoy'],
    ['a sleep', envoy, ['sh', '-c', 'sleep 1'], 'envoy'],
  ];
  if (fs.existsSync('/usr/bin/curl')) {
    cases.push(
      ['curl -X POST to /shutdown (Linkerd\'s)', envoy, ['curl', '-s', '-X', 'POST', url('/shutdown')], 'envoy'],
      ['curl -d to /quitquitquit', envoy, ['sh', '-c', `curl -fsS -d '' ${url('/quitquitquit')} || true`], 'envoy'],
      ['curl GET of /quitquitquit', envoy, ['curl', '-s', url('/quitquitquit')], 'envoy'],
    );
  }

  withOracle.each(cases)('%s: found exactly when running the hook stops the program', async (_what, container, command, program) => {
    const { stopped } = await runHook(command, program, PORT, QUIT);
    expect({ found: selfStopOf(hook(container, command)) !== undefined }).toEqual({ found: stopped });
  }, 20000);

  test('the oracle sees both outcomes among the cases (it can fail)', async () => {
    if (whyNot) return;
    const a = await runHook(['kill', '1'], 'envoy', PORT, QUIT);
    const b = await runHook(['sh', '-c', 'kill -9 1'], 'envoy', PORT, QUIT);
    expect([a.stopped, b.stopped]).toEqual([true, false]);
  }, 20000);

  const adopted = (chart: any, kind: 'Deployment' | 'Job', command: string[]) => {
    const podSpec = {
      ...(kind === 'Job' ? { restartPolicy: 'Never' } : {}),
      containers: [
        { name: 'app', image: 'ghcr.io/example/app:1.0.0' },
        { name: 'proxy', image: 'envoyproxy/envoy:v1.37.11', command: ['/usr/local/bin/envoy'], lifecycle: { preStop: { exec: { command } } } },
      ],
    };
    const workload = kind === 'Job'
      ? new ApiObject(chart, 'raw', { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'raw' }, spec: { template: { spec: podSpec } } })
      : rawDeployment(chart, 'raw', podSpec);
    new AdoptSidecar(chart, 'adopt', { workload, kubernetesVersion: '1.30', containerName: 'proxy', startupCheck: SidecarCheck.tcp(9901) });
  };

  test('AdoptSidecar keeps the container\'s own preStop in the native layout: on a Deployment synthesis fails, naming the hook, KEP-753 and the fix', () => withEnv(ENV, undefined, () => {
    const { chart } = newChart();
    adopted(chart, 'Deployment', ['sh', '-c', 'kill -TERM 1']);
    expect(() => Testing.synth(chart)).toThrow(new RegExp(
      "'test/raw' \\(Deployment 'raw'\\): native sidecar 'proxy' has a preStop hook that stops its own process \\('kill -TERM 1'\\); .*" +
      'KEP-753 "Failure modes".*Remove the preStop hook',
    ));
    // a hook that does not stop it is kept and passes
    const ok = newChart();
    adopted(ok.chart, 'Deployment', ['sh', '-c', 'sleep 2']);
    expect(() => Testing.synth(ok.chart)).not.toThrow();
  }));

  test('on a Job it is a warning (the sidecars normally stop after the app), readable with SidecarWarnings.of', () => withEnv(ENV, undefined, () => {
    const { app, chart } = newChart();
    adopted(chart, 'Job', ['pkill', 'envoy']);
    Testing.synth(chart);
    expect(SidecarWarnings.of(app).filter(w => w.includes('preStop hook that stops its own process'))).toEqual([expect.stringMatching(
      /^'test\/raw' \(Job 'raw'\): native sidecar 'proxy' has a preStop hook that stops its own process \('pkill envoy'\);.* On a Job the sidecars are normally stopped after the app/,
    )]);
  }));

  test('a manifest\'s own native sidecar: SidecarValidation.checkManifest and checkManifestSet (the CLI) report it', () => {
    const manifest = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: { template: { spec: { initContainers: [hook(envoy, ['kill', '1'])], containers: [{ name: 'app', image: 'x' }] } } },
    };
    expect(SidecarValidation.checkManifest(manifest, '1.31')).toEqual([expect.stringMatching(/^Deployment 'web': native sidecar 'proxy' has a preStop hook that stops its own process \('kill 1'\)/)]);
    expect(checkManifestSet([{ path: 'web.yaml', manifest }], 31, false).map(f => [f.level, f.source])).toEqual([['error', 'object']]);
  });
});

describe('a readiness probe on a native sidecar that is not in the request path', () => {
  // pkg/kubelet/status/generate.go GeneratePodReadyCondition (as kubernetes#142145 cites it): the pod is
  // Ready only when every container is, restartable init containers included. A Service's traffic goes to
  // the port its targetPort resolves to: a sidecar serves it when that is one of the sidecar's ports.
  const sidecar = (extra: any = {}) => ({
    name: 'agent',
    image: 'ghcr.io/example/agent:1',
    restartPolicy: 'Always',
    ports: [{ containerPort: 9090, name: 'agent' }],
    readinessProbe: { httpGet: { path: '/ready', port: 9090 } },
    ...extra,
  });
  const workload = (init: any[]) => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web' },
    spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { initContainers: init, containers: [{ name: 'app', image: 'x', ports: [{ containerPort: 8080, name: 'http' }] }] } } },
  });
  const service = (targetPort: any, selector: any = { app: 'web' }) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { selector, ports: [{ port: 80, targetPort }] } });
  const readiness = (objects: any[]) => checkManifestSet(objects.map((manifest, i) => ({ path: `o${i}`, manifest })), 31, false)
    .filter(f => f.source === 'readiness').map(f => [f.index, f.level]);

  test.each([
    ['no Service at all (the one that selects the pods is not in the set: nothing to judge)', [workload([sidecar()])], []],
    ['the Service targets the app (number)', [workload([sidecar()]), service(8080)], [[0, 'warning']]],
    ['the Service targets the app (name)', [workload([sidecar()]), service('http')], [[0, 'warning']]],
    ['the Service targets the sidecar by name', [workload([sidecar()]), service('agent')], []],
    ['the Service targets the sidecar by number', [workload([sidecar()]), service(9090)], []],
    ['the Service targets the probed port the sidecar does not declare', [workload([sidecar({ ports: undefined })]), service(9090)], []],
    ['only a Service of other pods (it targets the sidecar\'s port): nothing selects these pods here', [workload([sidecar()]), service(9090, { app: 'other' })], []],
    ['a Service of other pods targets the sidecar\'s port, one of these pods the app', [workload([sidecar()]), service(9090, { app: 'other' }), { ...service(8080), metadata: { name: 'web-app' } }], [[0, 'warning']]],
    ['no readiness probe', [workload([sidecar({ readinessProbe: undefined })])], []],
    ['an ordinary init container with the same port', [workload([{ name: 'init', image: 'x' }])], []],
  ])('%s', (_what, objects, expected) => {
    expect(readiness(objects as any[])).toEqual(expected);
  });

  test('the message names the sidecar, why the pod goes NotReady, kubernetes#142145 and the fix', () => {
    const [f] = checkManifestSet([{ path: 'w', manifest: workload([sidecar()]) }, { path: 's', manifest: service(8080) }], 31, false).filter(x => x.source === 'readiness');
    expect(f.message).toBe(
      "Deployment 'web': native sidecar 'agent' has a readinessProbe, but it is not in the request path (the Service(s) 'web' that select these pods " +
      "target none of its ports); the kubelet counts a native sidecar's readiness in the pod's Ready condition (pkg/kubelet/status/generate.go; KEP-753; " +
      'kubernetes#142145, open), so when this probe fails the whole pod goes NotReady: it leaves every Service\'s endpoints and counts as unavailable in ' +
      'rollouts, although the app could still serve. Drop the readiness probe (WithSidecar: readinessCheck; a startup check still holds the app until ' +
      "the sidecar is up), or keep it only on a sidecar that serves the Service's targetPort.",
    );
  });

  test('WithSidecar readinessCheck: SidecarValidation.addTo warns on the workload when a Service of the app selects it and targets another port', () => withEnv(ENV, undefined, () => {
    const run = (targetPort: number | undefined) => {
      const { app, chart } = newChart();
      const w = rawDeployment(chart, 'web');
      new WithSidecar(chart, 'agent', {
        workload: w,
        kubernetesVersion: '1.30',
        containerName: 'agent',
        image: 'ghcr.io/example/agent:1.0.0',
        ports: [{ number: 9090, name: 'agent' }],
        readinessCheck: SidecarCheck.http(9090, { path: '/ready' }),
      });
      if (targetPort !== undefined) new ApiObject(chart, 'svc', service(targetPort));
      SidecarValidation.addTo(app, { kubernetesVersion: '1.30' });
      const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
      try {
        app.synthYaml();
      } finally {
        stderr.mockRestore();
      }
      return SidecarWarnings.of(app).filter(x => x.includes('readinessProbe'));
    };
    // no Service of the app selects the pods: the one that does is elsewhere, nothing to judge
    expect(run(undefined)).toEqual([]);
    expect(run(8080)).toEqual([expect.stringMatching(/^test\/web: Deployment 'web': native sidecar 'agent' has a readinessProbe, but it is not in the request path \(the Service\(s\) 'web' that select these pods target none of its ports\)/)]);
    expect(run(9090)).toEqual([]);
  }));

  test('AdoptSidecar: the adopted container keeps its own readinessProbe; addTo warns where the Service targets the app', () => withEnv(ENV, undefined, () => {
    const { app, chart } = newChart();
    const w = rawDeployment(chart, 'web', {
      containers: [
        { name: 'app', image: 'ghcr.io/example/app:1.0.0', ports: [{ containerPort: 8080, name: 'http' }] },
        { name: 'agent', image: 'ghcr.io/example/agent:1.0.0', ports: [{ containerPort: 9090 }], readinessProbe: { httpGet: { path: '/ready', port: 9090 } } },
      ],
    });
    new AdoptSidecar(chart, 'adopt', { workload: w, kubernetesVersion: '1.30', containerName: 'agent', startupCheck: SidecarCheck.tcp(9090) });
    new ApiObject(chart, 'svc', service('http'));
    SidecarValidation.addTo(app, { kubernetesVersion: '1.30' });
    const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      app.synthYaml();
    } finally {
      stderr.mockRestore();
    }
    expect(SidecarWarnings.of(app).filter(x => x.includes('readinessProbe'))).toEqual([
      expect.stringMatching(/^test\/web: Deployment 'web': native sidecar 'agent' has a readinessProbe, but it is not in the request path \(the Service\(s\) 'web' that select these pods target none of its ports\)/),
    ]);
  }));
});

describe('a VerticalPodAutoscaler of a workload with native sidecars', () => {
  // kubernetes/autoscaler: the recommender ignores init containers (#7229, cluster_feeder.go); native sidecar
  // support is #8498 (open) behind AEP-8905's NativeSidecar gate (alpha, off by default).
  const workload = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web' },
    spec: { template: { spec: { initContainers: [{ name: 'log-agent', image: 'x', restartPolicy: 'Always' }, { name: 'migrate', image: 'x' }], containers: [{ name: 'app', image: 'x' }] } } },
  };
  const vpa = (extra: any = {}, ref: any = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }) => ({
    apiVersion: 'autoscaling.k8s.io/v1', kind: 'VerticalPodAutoscaler', metadata: { name: 'web' }, spec: { targetRef: ref, ...extra },
  });
  const found = (v: any, w: any = workload) => checkManifestSet([{ path: 'w', manifest: w }, { path: 'v', manifest: v }], 31, false)
    .filter(f => f.source === 'autoscaler').map(f => [f.index, f.level]);

  test.each([
    ['no policies', vpa(), [[1, 'warning']]],
    ['updateMode Off, no policies', vpa({ updatePolicy: { updateMode: 'Off' } }), [[1, 'warning']]],
    ['a policy for the app only', vpa({ resourcePolicy: { containerPolicies: [{ containerName: 'app', maxAllowed: { cpu: '1' } }] } }), [[1, 'warning']]],
    ['the sidecar pinned with mode Off', vpa({ resourcePolicy: { containerPolicies: [{ containerName: 'log-agent', mode: 'Off' }] } }), []],
    ['the sidecar with a policy of its own (controlledResources)', vpa({ resourcePolicy: { containerPolicies: [{ containerName: 'log-agent', controlledResources: ['cpu'] }] } }), []],
    ['a default policy with mode Off', vpa({ resourcePolicy: { containerPolicies: [{ containerName: '*', mode: 'Off' }] } }), []],
    ['another workload', vpa({}, { apiVersion: 'apps/v1', kind: 'Deployment', name: 'other' }), []],
    ['another kind of the same name', vpa({}, { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web' }), []],
  ])('%s', (_what, v, expected) => {
    expect(found(v)).toEqual(expected);
  });

  test('no native sidecar (an ordinary init container only): nothing to say', () => {
    const plain = { ...workload, spec: { template: { spec: { initContainers: [{ name: 'migrate', image: 'x' }], containers: [{ name: 'app', image: 'x' }] } } } };
    expect(found(vpa(), plain)).toEqual([]);
  });

  test('SidecarValidation.addTo lists it under the VPA\'s path, naming #8498 and the containerPolicy to add', () => withEnv(ENV, undefined, () => {
    const { app, chart } = newChart();
    const w = rawDeployment(chart, 'web');
    new WithLogAgent(chart, 'logs', { workload: w, kubernetesVersion: '1.30' });
    new ApiObject(chart, 'vpa', vpa());
    SidecarValidation.addTo(app, { kubernetesVersion: '1.30' });
    const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      app.synthYaml();
    } finally {
      stderr.mockRestore();
    }
    expect(SidecarWarnings.of(app).filter(x => x.includes('VerticalPodAutoscaler'))).toEqual([expect.stringMatching(
      /^test\/vpa: VerticalPodAutoscaler 'web' \(updateMode Auto\) targets 'test\/web', whose pod has native sidecar\(s\) 'log-agent' .*kubernetes\/autoscaler#8498, open.*\{ containerName: 'log-agent', mode: 'Off' \}/,
    )]);
  }));
});

describe('SidecarValidation.addTo records a workload\'s own warnings (the Job podFailurePolicy one), once', () => {
  const job = (chart: any) => new ApiObject(chart, 'batch', {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'batch' },
    spec: {
      podFailurePolicy: { rules: [{ action: 'FailJob', onExitCodes: { operator: 'In', values: [1, 2] } }] },
      template: { spec: { restartPolicy: 'Never', initContainers: [{ name: 'mesh', image: 'ghcr.io/example/mesh:1', restartPolicy: 'Always' }], containers: [{ name: 'app', image: 'ghcr.io/example/app:1' }] } },
    },
  });
  const synth = (app: any) => {
    const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      app.synthYaml();
      return stderr.mock.calls.map(c => String(c[0])).filter(s => s.includes('podFailurePolicy'));
    } finally {
      stderr.mockRestore();
    }
  };

  test('a Job without sidecar constructs: the warning the CLI gives is in SidecarWarnings.of and printed once', () => withEnv(ENV, undefined, () => {
    const { app, chart } = newChart();
    job(chart);
    SidecarValidation.addTo(app, { kubernetesVersion: '1.30' });
    const printed = synth(app);
    const cli = checkManifestSet([{ path: 'test/batch', manifest: (chart.node.findChild('batch') as ApiObject).toJson() }], 30, false)
      .filter(f => f.level === 'warning').map(f => `test/batch: ${f.message}`);
    expect(cli).toHaveLength(1);
    expect(SidecarWarnings.of(app)).toEqual(cli);
    // printed with the rule id `check` gives it (issue 48)
    expect(printed).toEqual(cli.map(w => `[cdk8s-sidecars] WARNING: ${w} [CS015 job-failure-policy-matches-sidecars]\n`));
  }));

  test('a Job with a sidecar construct: the construct\'s warning only (not a second one from addTo)', () => withEnv(ENV, undefined, () => {
    const { app, chart } = newChart();
    new WithLogAgent(chart, 'logs', { workload: job(chart), kubernetesVersion: '1.30' });
    SidecarValidation.addTo(app, { kubernetesVersion: '1.30' });
    synth(app);
    expect(SidecarWarnings.of(app).filter(w => w.includes('podFailurePolicy'))).toEqual([expect.stringMatching(/^'test\/batch' \(Job 'batch'\): spec\.podFailurePolicy\.rules\[0\]/)]);
  }));
});
