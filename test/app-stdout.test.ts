/**
 * Issue 51: what the app writes to stdout reaches the agent, by `captureStdout` (the app's command
 * under the capture wrapper, src/engine/capture.ts) or `podLogs` (the kubelet's log files of the
 * app container, read-only hostPath). The wrapper itself runs under a real busybox in
 * test/capture-wrapper.test.ts; here: the manifests in both layouts, the agents' configs and the
 * refusals.
 */
import { ApiObject, Chart, Duration, Size, Testing } from 'cdk8s';
import { parseAllDocuments } from 'yaml';
import { LogAgent, SidecarTimeline, WithLogAgent, WithLogAgentProps, WithSidecar } from '../src';
import { expectValidManifests } from './util/k8s-schema';
import { render } from '../src/cli/render';
import { readRenderConfig } from '../src/cli/render-config';
import { APP_BUSYBOX, captureScript } from '../src/engine/capture';

function deployment(chart: Chart, containers: any[], kind = 'Deployment', restartPolicy?: string): ApiObject {
  const template = { metadata: { labels: { app: 'shop' } }, spec: { containers, ...(restartPolicy ? { restartPolicy } : {}) } };
  return new ApiObject(chart, 'shop', {
    apiVersion: kind === 'Job' ? 'batch/v1' : 'apps/v1',
    kind,
    metadata: { name: 'shop' },
    spec: kind === 'Job' ? { template } : { selector: { matchLabels: { app: 'shop' } }, template },
  });
}

const APP = { name: 'web', image: 'ghcr.io/example/shop:1.0.0', command: ['/app/server', '--port=$(PORT)'], args: ['--verbose'] };

function synth(version: string, props: Partial<WithLogAgentProps>, containers: any[] = [APP], kind = 'Deployment', restartPolicy?: string) {
  const chart = new Chart(Testing.app(), 'test');
  const workload = deployment(chart, containers, kind, restartPolicy);
  new WithLogAgent(chart, 'logs', { workload, kubernetesVersion: version, ...props } as WithLogAgentProps);
  const manifests = Testing.synth(chart);
  const w = manifests.find((o: any) => o.kind === kind);
  return { manifests, spec: w.spec.template.spec, config: manifests.find((o: any) => o.kind === 'ConfigMap').data };
}

const all = (spec: any) => [...spec.initContainers ?? [], ...spec.containers];

describe('captureStdout', () => {
  for (const version of ['1.27', '1.30']) {
    test(`${version}: snapshot; the app's own command and args run under the wrapper, the tools mounted, the agent tails the capture files`, () => {
      const { manifests, spec, config } = synth(version, { captureStdout: {} });
      expectValidManifests(manifests, version);
      expect(manifests).toMatchSnapshot();
      const web = spec.containers.find((c: any) => c.name === 'web');
      expect(web.command).toEqual([APP_BUSYBOX, 'sh', '-c', captureScript(), 'sh', '/var/log/app/.stdout-web', String(10 * 1024 * 1024), '5',
        '/app/server', '--port=$(PORT)', '--verbose']);
      expect(web.args).toBeUndefined();
      expect(web.volumeMounts).toEqual(expect.arrayContaining([
        { mountPath: '/sidecar-tools', name: 'sidecar-tools', readOnly: true },
        { mountPath: '/var/log/app', name: 'log-agent-logs' },
      ]));
      expect(spec.initContainers.map((c: any) => c.name)).toContain('sidecar-tools');
      expect(config['fluent-bit.conf']).toMatch(/\[INPUT\]\n {4}Name +tail\n {4}Tag +stdout\.\*\n {4}Path +\/var\/log\/app\/\.stdout-\*\/\*\.log\n/);
    });
  }

  test('an image entrypoint: captureStdout.command is the program, its $ kept from the kubelet\'s expansion, the args after it', () => {
    const { spec } = synth('1.30', { captureStdout: { command: ['/docker-entrypoint.sh', 'price=$(X)'] } },
      [{ name: 'web', image: 'ghcr.io/example/shop:1.0.0', args: ['serve'] }]);
    expect(spec.containers[0].command.slice(-3)).toEqual(['/docker-entrypoint.sh', 'price=$$(X)', 'serve']);
  });

  test('a container without a command and no captureStdout.command is refused, naming the prop; nothing is guessed', () => {
    expect(() => synth('1.30', { captureStdout: {} }, [{ name: 'web', image: 'ghcr.io/example/shop:1.0.0' }]))
      .toThrow(/captureStdout runs the app's command under a wrapper, but container 'web' of Deployment 'shop' has no command .*Set captureStdout\.command/);
  });

  test('only the containers named are wrapped; an unknown name is refused', () => {
    const two = [APP, { name: 'worker', image: 'ghcr.io/example/worker:1', command: ['/worker'] }];
    const { spec } = synth('1.30', { captureStdout: { containers: ['worker'] } }, two);
    expect(spec.containers.find((c: any) => c.name === 'web').command).toEqual(APP.command);
    expect(spec.containers.find((c: any) => c.name === 'worker').command[0]).toBe(APP_BUSYBOX);
    expect(() => synth('1.30', { captureStdout: { containers: ['nope'] } }, two)).toThrow(/captureStdout\.containers names 'nope'/);
  });

  test('rotation bounded against the log volume: files too large for it are refused', () => {
    expect(() => synth('1.30', { captureStdout: { maxFileSize: Size.mebibytes(100), maxFiles: 5 }, logVolumeSizeLimit: Size.mebibytes(512) }))
      .toThrow(/captureStdout keeps up to 2 x 5 files of 100 MiB per container .*lower captureStdout\.maxFileSize or maxFiles/);
    const { spec } = synth('1.30', { captureStdout: { maxFileSize: Size.mebibytes(1), maxFiles: 3 } });
    expect(spec.containers[0].command.slice(5, 8)).toEqual(['/var/log/app/.stdout-web', String(1024 * 1024), '3']);
  });

  test('a legacy Job: the agent exits with the app; the wrapper\'s busybox is spelled apart so the capture counts as the app', () => {
    const { spec } = synth('1.27', { captureStdout: {} }, [APP], 'Job', 'Never');
    const agent = spec.containers.find((c: any) => c.name === 'log-agent');
    const wrapper: string = agent.command[3];
    expect(wrapper).toContain('/sidecar-tools/busybox');
    // the exit-with-app wrapper takes processes whose argv[0] is one of these for the sidecars'
    expect(wrapper).not.toContain(APP_BUSYBOX);
    expect(spec.containers.find((c: any) => c.name === 'web').command[0]).toBe(APP_BUSYBOX);
    expect(spec.shareProcessNamespace).toBe(true);
  });

  test('the shutdown model and the timeline count the capture\'s drain after the app\'s exit (2 s), once per workload', () => {
    const chart = new Chart(Testing.app(), 'test');
    const workload = deployment(chart, [APP]);
    new WithLogAgent(chart, 'logs', { workload, kubernetesVersion: '1.27', captureStdout: {} });
    new WithSidecar(chart, 'cache', {
      workload,
      kubernetesVersion: '1.27',
      containerName: 'cache',
      image: 'ghcr.io/example/cache:1',
      command: ['/cache'],
      appShutdownTime: Duration.seconds(20),
    });
    const spec = Testing.synth(chart).find((o: any) => o.kind === 'Deployment').spec.template.spec;
    // legacy: the agent's preStop waits for the app container's end (20 s + the drain) and its read delay (2 s)
    expect(spec.containers.find((c: any) => c.name === 'log-agent').lifecycle.preStop).toEqual({ exec: { command: ['/sidecar-tools/busybox', 'sleep', '24'] } });
    const t = SidecarTimeline.of(workload);
    expect(t.toTable()).toMatch(/app budget: 22 s from SIGTERM to exit; appShutdownTime 20s \+ captureStdout's drain 2s/);
    // without the capture: 20 s
    const other = new Chart(Testing.app(), 'test');
    const plain = deployment(other, [APP]);
    new WithLogAgent(other, 'logs', { workload: plain, kubernetesVersion: '1.27' });
    new WithSidecar(other, 'cache', {
      workload: plain,
      kubernetesVersion: '1.27',
      containerName: 'cache',
      image: 'ghcr.io/example/cache:1',
      command: ['/cache'],
      appShutdownTime: Duration.seconds(20),
    });
    const plainSpec = Testing.synth(other).find((o: any) => o.kind === 'Deployment').spec.template.spec;
    expect(plainSpec.containers.find((c: any) => c.name === 'log-agent').lifecycle.preStop).toEqual({ exec: { command: ['/sidecar-tools/busybox', 'sleep', '22'] } });
  });

  test('every agent tails the capture files', () => {
    const v = synth('1.30', { captureStdout: {}, agent: LogAgent.vector() }).config['vector.yaml'];
    expect(v).toMatch(/"stdout_capture":\n\s+"type": "file"\n\s+"include":\n\s+- "\/var\/log\/app\/\.stdout-\*\/\*\.log"/);
    expect(v).toMatch(/"inputs":\n\s+- "app_logs"\n\s+- "stdout_capture"/);
    const f = synth('1.30', { captureStdout: {}, agent: LogAgent.fluentd() }).config['fluent.conf'];
    expect(f).toMatch(/@id in_tail_stdout\n\s+path \/var\/log\/app\/\.stdout-\*\/\*\.log/);
  });
});

describe('podLogs', () => {
  for (const version of ['1.27', '1.30']) {
    test(`${version}: snapshot; a read-only hostPath of /var/log/pods, this pod's path from the downward API, the cri parser`, () => {
      const { manifests, spec, config } = synth(version, { podLogs: {} });
      expectValidManifests(manifests, version);
      expect(manifests).toMatchSnapshot();
      const agent = all(spec).find((c: any) => c.name === 'log-agent');
      expect(spec.volumes).toContainEqual({ hostPath: { path: '/var/log/pods', type: 'Directory' }, name: 'log-agent-pod-logs' });
      expect(agent.volumeMounts).toContainEqual({ mountPath: '/var/log/pods', name: 'log-agent-pod-logs', readOnly: true });
      // only the agent mounts it
      for (const c of all(spec).filter((x: any) => x.name !== 'log-agent')) {
        expect((c.volumeMounts ?? []).map((m: any) => m.name)).not.toContain('log-agent-pod-logs');
      }
      const names = agent.env.map((e: any) => e.name);
      expect(agent.env).toContainEqual({ name: 'POD_UID', valueFrom: { fieldRef: { fieldPath: 'metadata.uid' } } });
      const path = agent.env.find((e: any) => e.name === 'POD_LOG_PATH');
      expect(path.value).toBe('/var/log/pods/$(POD_NAMESPACE)_$(POD_NAME)_$(POD_UID)/web/*.log');
      // the kubelet expands $(VAR) only from variables defined before it
      for (const v of ['POD_NAMESPACE', 'POD_NAME', 'POD_UID']) expect(names.indexOf(v)).toBeLessThan(names.indexOf('POD_LOG_PATH'));
      expect(agent.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 65532, runAsGroup: 0, readOnlyRootFilesystem: true });
      expect(config['fluent-bit.conf']).toMatch(/Path +\$\{POD_LOG_PATH\}\n(.*\n)* {4}multiline\.parser +cri\n/);
    });
  }

  test('several app containers: podLogs.container names the one; without it, an error asks for it', () => {
    const two = [APP, { name: 'worker', image: 'ghcr.io/example/worker:1', command: ['/worker'] }];
    expect(() => synth('1.30', { podLogs: {} }, two)).toThrow(/has 2 \('web', 'worker'\); set podLogs\.container/);
    const { spec } = synth('1.30', { podLogs: { container: 'worker' } }, two);
    expect(spec.initContainers.find((c: any) => c.name === 'log-agent').env.find((e: any) => e.name === 'POD_LOG_PATH').value).toMatch(/\/worker\/\*\.log$/);
  });

  test('a namespace of the app that enforces baseline or restricted: refused, unless exemptFromPodSecurity', () => {
    for (const level of ['baseline', 'restricted']) {
      const chart = new Chart(Testing.app(), 'test', { namespace: 'shop' });
      new ApiObject(chart, 'ns', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop', labels: { 'pod-security.kubernetes.io/enforce': level } } });
      new WithLogAgent(chart, 'logs', { workload: deployment(chart, [APP]), kubernetesVersion: '1.30', podLogs: {} });
      expect(() => Testing.synth(chart)).toThrow(new RegExp(`namespace 'shop' .*enforces the Pod Security '${level}' profile.*podLogs\\.exemptFromPodSecurity`));
    }
    const chart = new Chart(Testing.app(), 'test', { namespace: 'shop' });
    new ApiObject(chart, 'ns', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop', labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } } });
    new WithLogAgent(chart, 'logs', { workload: deployment(chart, [APP]), kubernetesVersion: '1.30', podLogs: { exemptFromPodSecurity: true } });
    expect(() => Testing.synth(chart)).not.toThrow();
  });

  test('Vector: a file source with the CRI partial lines joined and env interpolation on; Fluentd: needs fluent-plugin-concat', () => {
    const { spec, config } = synth('1.30', { podLogs: {}, agent: LogAgent.vector() });
    const v = config['vector.yaml'];
    expect(v).toMatch(/"pod_logs":\n\s+"type": "file"\n\s+"include":\n\s+- \|-?\n\s+\$\{POD_LOG_PATH\}/);
    expect(v).toMatch(/"mode": "continue_past"/);
    expect(v).toMatch(/"inputs":\n\s+- "app_logs"\n\s+- "pod_logs_cri"/);
    expect(spec.initContainers.find((c: any) => c.name === 'log-agent').env)
      .toContainEqual({ name: 'VECTOR_DANGEROUSLY_ALLOW_ENV_VAR_INTERPOLATION', value: 'true' });
    expect(() => synth('1.30', { podLogs: {}, agent: LogAgent.fluentd() })).toThrow(/fluent-plugin-concat/);
    const f = synth('1.30', { podLogs: {}, agent: LogAgent.fluentd({ image: 'registry.example.com/fluentd-concat:1.19.3' }) }).config['fluent.conf'];
    expect(f).toMatch(/path "#\{ENV\['POD_LOG_PATH'\]\}"/);
    expect(f).toMatch(/@type concat\n(.*\n)*\s+use_partial_cri_logtag true\n\s+partial_cri_logtag_key logtag\n\s+partial_cri_stream_key stream\n/);
  });
});

test('the render command (a plain manifest, the config file) does the same: captureStdout and podLogs as config keys', () => {
  const manifest = [
    'apiVersion: apps/v1', 'kind: Deployment', 'metadata: { name: shop, namespace: shop }',
    'spec:', '  selector: { matchLabels: { app: shop } }', '  template:', '    metadata: { labels: { app: shop } }', '    spec:',
    '      containers:', '        - name: web', '          image: ghcr.io/example/shop:1.0.0', '          command: [/app/server]', '',
  ].join('\n');
  const config = readRenderConfig({
    kubernetesVersion: '1.30',
    workloads: [{ select: { kind: 'Deployment', name: 'shop' }, logAgent: { captureStdout: { maxFiles: 3 }, podLogs: { container: 'web' } } }],
  });
  const out = parseAllDocuments(render(manifest, config, 'sidecars.yaml')).map(d => d.toJS());
  const spec = out.find((o: any) => o.kind === 'Deployment').spec.template.spec;
  expect(spec.containers[0].command.slice(0, 1)).toEqual([APP_BUSYBOX]);
  expect(spec.containers[0].command.slice(5)).toEqual(['/var/log/app/.stdout-web', String(10 * 1024 * 1024), '3', '/app/server']);
  expect(spec.volumes).toContainEqual({ hostPath: { path: '/var/log/pods', type: 'Directory' }, name: 'log-agent-pod-logs' });
  expect(() => readRenderConfig({ workloads: [{ select: { kind: 'Deployment' }, logAgent: { captureStdout: { entrypoint: ['/x'] } } }] }))
    .toThrow(/workloads\[0\]\.logAgent\.captureStdout\.entrypoint: unknown key; known keys here: containers, command, maxFileSize, maxFiles/);
});

test('without the options nothing changes: the app keeps its command, no hostPath', () => {
  const { spec } = synth('1.30', {});
  expect(spec.containers[0].command).toEqual(APP.command);
  expect(spec.containers[0].args).toEqual(APP.args);
  expect(JSON.stringify(spec)).not.toContain('hostPath');
});
