import { spawnSync } from 'child_process';
import { createHash } from 'crypto';
import * as fs from 'fs';
import { tmpdir } from 'os';
import { ApiObject, Duration, JsonPatch, Size, Testing, Yaml } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { parse as parseYaml } from 'yaml';
import { LogAgent, LogOutput, SidecarMode, SidecarWarnings, WithLogAgent } from '../src';
import {
  WORKLOAD_KINDS, containerOf, kplusWorkload, layoutOf, manifestOf, newChart, podMetadataOf, podSpecOf,
} from './util/fixtures';
import { expectValidManifests } from './util/k8s-schema';
import { sigtermHoldOf } from './util/sigterm-hold';

function synthLogAgent(kind: typeof WORKLOAD_KINDS[number], version: string, extra: Partial<ConstructorParameters<typeof WithLogAgent>[2]> = {}) {
  const { chart } = newChart();
  const workload = kplusWorkload(chart, kind);
  const agent = new WithLogAgent(chart, 'logs', { workload, kubernetesVersion: version, ...extra });
  const manifests = Testing.synth(chart);
  return { chart, workload, agent, manifests, workloadManifest: manifestOf(manifests, kind) };
}

const jobKinds = new Set(['Job', 'CronJob']);

describe('WithLogAgent snapshots: both layouts for every workload kind', () => {
  for (const kind of WORKLOAD_KINDS) {
    test(`${kind}, Kubernetes 1.27 (legacy)`, () => {
      const { manifests, agent } = synthLogAgent(kind, '1.27', jobKinds.has(kind) ? { allowLegacyOnJob: true } : {});
      expect(agent.layout).toBe('LEGACY');
      expectValidManifests(manifests, '1.27');
      expect(manifests).toMatchSnapshot();
    });
    test(`${kind}, Kubernetes 1.29 (native)`, () => {
      const { manifests, agent } = synthLogAgent(kind, '1.29');
      expect(agent.layout).toBe('NATIVE');
      expectValidManifests(manifests, '1.29');
      expect(manifests).toMatchSnapshot();
    });
  }
});

describe('native layout', () => {
  test('the agent is initContainers[0] with restartPolicy Always, a startupProbe on its health endpoint and no readinessProbe', () => {
    const { workloadManifest } = synthLogAgent('Deployment', '1.30');
    const spec = podSpecOf(workloadManifest);
    // the tools first: the agent runs under the wrapper that holds its SIGTERM (issue 51)
    expect(layoutOf(workloadManifest)).toEqual({ init: ['sidecar-tools', 'log-agent'], containers: ['app'] });
    const agent = spec.initContainers[1];
    expect(agent.restartPolicy).toBe('Always');
    expect(agent.startupProbe.httpGet).toEqual({ path: '/api/v1/health', port: 2020 });
    // not in the request path: a log backend outage must not make the pod NotReady
    expect(agent.readinessProbe).toBeUndefined();
    // No preStop: it would start with the pod's termination, not after the app, and only delay the
    // agent's SIGTERM (and a Job's completion); the kubelet stops it after the app anyway (issue 26)
    expect(agent.lifecycle).toBeUndefined();
    // the wrapper keeps its SIGTERM back 2 s after the kubelet's, while it reads (issue 51)
    expect(sigtermHoldOf(agent)).toBe(2);
  });

  test('the agent goes before the user\'s own init containers, which keep their order', () => {
    const { chart } = newChart();
    const dep = kplusWorkload(chart, 'Deployment') as kplus.Deployment;
    dep.addInitContainer({ name: 'migrate', image: 'ghcr.io/example/migrate:1' });
    new WithLogAgent(chart, 'logs', { workload: dep, kubernetesVersion: '1.31' });
    dep.addInitContainer({ name: 'warmup', image: 'ghcr.io/example/warmup:1' });
    const m = manifestOf(Testing.synth(chart), 'Deployment');
    expect(layoutOf(m).init).toEqual(['sidecar-tools', 'log-agent', 'migrate', 'warmup']);
  });

  test('1.28 is native only with the SidecarContainers gate', () => {
    expect(synthLogAgent('Deployment', '1.28').agent.layout).toBe('LEGACY');
    const gated = synthLogAgent('Deployment', '1.28', { sidecarContainersGate: true });
    expect(gated.agent.layout).toBe('NATIVE');
    expectValidManifests(gated.manifests, '1.28');
  });

  test('a Job with a native agent is fine (the agent does not block completion)', () => {
    const { workloadManifest, manifests } = synthLogAgent('Job', '1.29');
    // no preStop delay (issue 26); the tools for the SIGTERM hold (issue 51)
    expect(layoutOf(workloadManifest)).toEqual({ init: ['sidecar-tools', 'log-agent'], containers: ['app'] });
    expect(podSpecOf(workloadManifest).restartPolicy).toBe('Never');
    expectValidManifests(manifests, '1.29');
  });
});

describe('legacy layout', () => {
  test('the agent is the last container, no restartPolicy anywhere, with a preStop delay', () => {
    const { workloadManifest } = synthLogAgent('Deployment', '1.27');
    const spec = podSpecOf(workloadManifest);
    expect(layoutOf(workloadManifest)).toEqual({ init: ['sidecar-tools'], containers: ['app', 'log-agent'] });
    for (const c of [...spec.initContainers, ...spec.containers]) expect(c.restartPolicy).toBeUndefined();
    const agent = containerOf(workloadManifest, 'log-agent');
    // no sleep action before 1.30: busybox from the tools init container, without a shell;
    // the app's 10 s and Fluent Bit's 2 s to read the app's last line
    expect(agent.lifecycle.preStop.exec.command).toEqual(['/sidecar-tools/busybox', 'sleep', '12']);
    expect(agent.volumeMounts).toContainEqual({ mountPath: '/sidecar-tools', name: 'sidecar-tools', readOnly: true });
  });

  test('from 1.30 the delay is the sleep action and no tools container is needed', () => {
    const { workloadManifest, manifests } = synthLogAgent('Deployment', '1.30', { mode: SidecarMode.LEGACY });
    const agent = containerOf(workloadManifest, 'log-agent');
    expect(agent.lifecycle).toEqual({ preStop: { sleep: { seconds: 12 } } });
    expect(layoutOf(workloadManifest).init).toEqual([]);
    expectValidManifests(manifests, '1.30');
  });

  test('appShutdownTime sets the delay and counts toward the grace period', () => {
    const { workloadManifest } = synthLogAgent('Deployment', '1.30', { mode: SidecarMode.LEGACY, appShutdownTime: Duration.seconds(40) });
    expect(containerOf(workloadManifest, 'log-agent').lifecycle.preStop.sleep.seconds).toBe(42);
    // 40 s app + 2 s to read its last line + Grace 5 s + 1 s to exit (stdout: no network)
    expect(podSpecOf(workloadManifest).terminationGracePeriodSeconds).toBe(48);
  });

  test('a legacy agent on a Job or CronJob (cdk8s-plus: restartPolicy Never) exits with the app; with OnFailure it is refused unless allowLegacyOnJob', () => {
    for (const kind of ['Job', 'CronJob'] as const) {
      const { chart } = newChart();
      const workload = kplusWorkload(chart, kind);
      new WithLogAgent(chart, 'logs', { workload, kubernetesVersion: '1.27' });
      const m = manifestOf(Testing.synth(chart), kind);
      expect(podSpecOf(m).restartPolicy).toBe('Never');
      expect(podSpecOf(m).shareProcessNamespace).toBe(true);
      expect(containerOf(m, 'log-agent').command.slice(0, 3)).toEqual(['/sidecar-tools/busybox', 'sh', '-c']);
      const other = newChart();
      const failing = kplusWorkload(other.chart, kind) as kplus.Job;
      if (kind === 'Job') {
        // (cdk8s-plus has no setter: the pod template's restartPolicy by an escape hatch)
        ApiObject.of(failing).addJsonPatch(JsonPatch.replace('/spec/template/spec/restartPolicy', 'OnFailure'));
      } else {
        ApiObject.of(failing).addJsonPatch(JsonPatch.replace('/spec/jobTemplate/spec/template/spec/restartPolicy', 'OnFailure'));
      }
      new WithLogAgent(other.chart, 'logs', { workload: failing, kubernetesVersion: '1.27' });
      expect(() => Testing.synth(other.chart)).toThrow(
        /\[test\/web\/Resource\] WithLogAgent 'test\/logs': a legacy sidecar on (Job|CronJob) 'test-web-c8\w+' never exits, so the Job never completes; with restartPolicy OnFailure .* Target Kubernetes 1\.29\+ .* or set `allowLegacyOnJob: true`/,
      );
    }
  });
});

describe('the shared log directory and the agent config', () => {
  test('an emptyDir is mounted into every app container (also ones added later) and the agent', () => {
    const { chart } = newChart();
    const dep = kplusWorkload(chart, 'Deployment') as kplus.Deployment;
    new WithLogAgent(chart, 'logs', { workload: dep, kubernetesVersion: '1.29', logDirectory: '/logs' });
    dep.addContainer({ name: 'worker', image: 'ghcr.io/example/worker:1', securityContext: { user: 1000 } });
    const m = manifestOf(Testing.synth(chart), 'Deployment');
    const mount = { mountPath: '/logs', name: 'log-agent-logs' };
    expect(containerOf(m, 'app').volumeMounts).toContainEqual(mount);
    expect(containerOf(m, 'worker').volumeMounts).toContainEqual(mount);
    expect(containerOf(m, 'log-agent').volumeMounts).toContainEqual(mount);
    expect(podSpecOf(m).volumes).toContainEqual({ emptyDir: { sizeLimit: '1Gi' }, name: 'log-agent-logs' });
  });

  test('Fluent Bit tails the directory, keeps offsets on the shared volume, sets Grace and the health check', () => {
    const { manifests } = synthLogAgent('Deployment', '1.29', { logDirectory: '/logs', agent: LogAgent.fluentBit({ grace: Duration.seconds(7) }) });
    const conf = manifestOf(manifests, 'ConfigMap').data['fluent-bit.conf'];
    expect(conf).toMatch(/^\s+Path\s+\/logs\/\*\.log$/m);
    expect(conf).toMatch(/^\s+DB\s+\/logs\/\.fluent-bit\/offsets\.db$/m);
    expect(conf).toMatch(/^\s+Grace\s+7$/m);
    expect(conf).toMatch(/^\s+HTTP_Server\s+On$/m);
    expect(conf).toMatch(/^\s+Health_Check\s+On$/m);
    expect(conf).toMatch(/^\s+HTTP_Port\s+2020$/m);
    // new files (e.g. a short Job's) are picked up within a second
    expect(conf).toMatch(/^\s+Refresh_Interval\s+1$/m);
  });

  test('the agent mounts the ConfigMap it owns, and a checksum of it rolls the pods', () => {
    const { manifests, workloadManifest } = synthLogAgent('Deployment', '1.29');
    const cm = manifestOf(manifests, 'ConfigMap');
    const volume = podSpecOf(workloadManifest).volumes.find((v: any) => v.name === 'log-agent-config');
    expect(volume.configMap.name).toBe(cm.metadata.name);
    const expected = createHash('sha256').update(JSON.stringify(cm.data)).digest('hex');
    expect(podMetadataOf(workloadManifest).annotations['checksum.sidecars.cdk8s.io/log-agent']).toBe(expected);

    const other = synthLogAgent('Deployment', '1.29', { output: LogOutput.forward({ host: 'fluentd.logging' }) });
    expect(podMetadataOf(other.workloadManifest).annotations['checksum.sidecars.cdk8s.io/log-agent']).not.toBe(expected);
  });

  test('the ConfigMap lives in the workload\'s namespace', () => {
    const { chart } = newChart();
    const dep = new kplus.Deployment(chart, 'web', { containers: [{ image: 'nginx', portNumber: 8080 }], metadata: { namespace: 'shop' } });
    new WithLogAgent(chart, 'logs', { workload: dep, kubernetesVersion: '1.29' });
    expect(manifestOf(Testing.synth(chart), 'ConfigMap').metadata.namespace).toBe('shop');
  });
});

describe('outputs', () => {
  const secret = (name: string, key: string) => ({ secret: kplus.Secret.fromSecretName(newChart().chart, `${name}-${key}`, name), key });

  function outputConfig(output: LogOutput) {
    const { manifests, workloadManifest } = synthLogAgent('Deployment', '1.29', { output });
    const conf: string = manifestOf(manifests, 'ConfigMap').data['fluent-bit.conf'];
    return { conf, out: conf.slice(conf.indexOf('[OUTPUT]')), agent: containerOf(workloadManifest, 'log-agent'), manifests };
  }

  test('stdout by default', () => {
    expect(outputConfig(LogOutput.stdout()).out).toMatch(/Name\s+stdout\n\s+Match\s+\*\n\s+Format\s+json_lines/);
  });

  test('forward', () => {
    const { out } = outputConfig(LogOutput.forward({ host: 'fluentd.logging', port: 24225 }));
    expect(out).toMatch(/Name\s+forward/);
    expect(out).toMatch(/Host\s+fluentd\.logging/);
    expect(out).toMatch(/Port\s+24225/);
    expect(out).toMatch(/tls\s+Off/);
  });

  test('HTTP with secret headers and basic auth: values come from Secrets via env, never the ConfigMap', () => {
    const { out, agent, manifests } = outputConfig(LogOutput.http({
      host: 'logs.example.com',
      uri: '/ingest',
      secretHeaders: { 'X-Api-Key': secret('log-token', 'header') },
      basicAuth: { username: secret('log-basic', 'user'), password: secret('log-basic', 'pass') },
    }));
    expect(out).toMatch(/Port\s+443/);
    expect(out).toMatch(/URI\s+\/ingest/);
    expect(out).toMatch(/tls\s+On\n\s+tls\.verify\s+On/);
    expect(out).toMatch(/Header\s+X-Api-Key \$\{LOG_OUTPUT_HEADER_X_API_KEY\}/);
    expect(out).toMatch(/HTTP_User\s+\$\{LOG_OUTPUT_USERNAME\}/);
    expect(out).toMatch(/HTTP_Passwd\s+\$\{LOG_OUTPUT_PASSWORD\}/);
    expect(agent.env).toContainEqual({ name: 'LOG_OUTPUT_HEADER_X_API_KEY', valueFrom: { secretKeyRef: { key: 'header', name: 'log-token' } } });
    expect(agent.env).toContainEqual({ name: 'LOG_OUTPUT_PASSWORD', valueFrom: { secretKeyRef: { key: 'pass', name: 'log-basic' } } });
    const cmText = Yaml.stringify(manifestOf(manifests, 'ConfigMap'));
    expect(cmText).not.toMatch(/log-basic|log-token/);
  });

  test('Loki with labels and tenant', () => {
    const { out } = outputConfig(LogOutput.loki({ host: 'loki.monitoring', labels: { team: 'shop', app: 'web' }, tenantId: 'shop' }));
    expect(out).toMatch(/Name\s+loki/);
    expect(out).toMatch(/Port\s+3100/);
    expect(out).toMatch(/Labels\s+team=shop, app=web/);
    expect(out).toMatch(/Tenant_ID\s+shop/);
  });

  test('Elasticsearch and OpenSearch', () => {
    const es = outputConfig(LogOutput.elasticsearch({ host: 'es.logging', index: 'web' })).out;
    expect(es).toMatch(/Name\s+es\n/);
    expect(es).toMatch(/Index\s+web/);
    expect(es).toMatch(/Suppress_Type_Name\s+On/);
    const os = outputConfig(LogOutput.opensearch({ host: 'os.logging', tls: false })).out;
    expect(os).toMatch(/Name\s+opensearch\n/);
    expect(os).toMatch(/Port\s+9200/);
    expect(os).toMatch(/tls\s+Off/);
  });
});

describe('resources and security', () => {
  test('small requests and limits of its own, not cdk8s-plus defaults', () => {
    const agent = containerOf(synthLogAgent('Deployment', '1.29').workloadManifest, 'log-agent');
    // disk: the filesystem buffer (256M of the 1 GiB volume) and 4 MiB for the offsets DB and one chunk; no limit
    expect(agent.resources).toEqual({ limits: { cpu: '200m', memory: '128Mi' }, requests: { 'cpu': '20m', 'ephemeral-storage': '260Mi', 'memory': '32Mi' } });
    expect(agent.imagePullPolicy).toBe('IfNotPresent');
  });

  test('the ephemeral-storage request follows the disk buffer, for every agent; never a limit; the tools request their volume', () => {
    const request = (agent: LogAgent, logVolumeSizeLimit?: Size) => {
      const { workloadManifest } = synthLogAgent('Deployment', '1.27', { agent, logVolumeSizeLimit });
      const spec = workloadManifest.spec.template.spec;
      const c = containerOf(workloadManifest, 'log-agent');
      expect(c.resources.limits['ephemeral-storage']).toBeUndefined();
      const tools = spec.initContainers.find((x: any) => x.name === 'sidecar-tools');
      expect(tools.resources).toEqual({ limits: { cpu: '50m', memory: '16Mi' }, requests: { 'cpu': '10m', 'ephemeral-storage': '8Mi', 'memory': '16Mi' } });
      return c.resources.requests['ephemeral-storage'];
    };
    expect(request(LogAgent.fluentBit())).toBe('260Mi');
    expect(request(LogAgent.fluentBit(), Size.mebibytes(200))).toBe('54Mi'); // storage.total_limit_size 50M
    expect(request(LogAgent.fluentBit(), Size.mebibytes(2))).toBe('5Mi'); // at least 1M
    expect(request(LogAgent.fluentd(), Size.gibibytes(4))).toBe('4Mi'); // stdout: no file buffer
    const forward = LogOutput.forward({ host: 'fluentd.logging' });
    const fluentd = (logVolumeSizeLimit: Size) => containerOf(
      synthLogAgent('Deployment', '1.29', { agent: LogAgent.fluentd(), output: forward, logVolumeSizeLimit }).workloadManifest, 'log-agent').resources.requests['ephemeral-storage'];
    expect(fluentd(Size.gibibytes(4))).toBe('1028Mi'); // total_limit_size 1024m
    expect(request(LogAgent.vector(), Size.gibibytes(4))).toBe('4Mi'); // no disk buffer
    // the rendered buffers are the ones the requests were sized from
    const conf = (agent: LogAgent) => Object.values<string>(
      synthLogAgent('Deployment', '1.29', { agent, logVolumeSizeLimit: Size.mebibytes(200) }).manifests.find((m: any) => m.kind === 'ConfigMap').data)[0];
    expect(conf(LogAgent.fluentBit())).toMatch(/storage\.total_limit_size\s+50M\n/);
    expect(Object.values<string>(synthLogAgent('Deployment', '1.29', { agent: LogAgent.fluentd(), output: forward, logVolumeSizeLimit: Size.mebibytes(200) })
      .manifests.find((m: any) => m.kind === 'ConfigMap').data)[0]).toMatch(/total_limit_size 50m\n/);
  });

  test('an ephemeral-storage request or limit of the user\'s replaces the default; a limit below the default request is refused', () => {
    const given = (ephemeralStorage: any) => containerOf(synthLogAgent('Deployment', '1.29', { resources: { ephemeralStorage } }).workloadManifest, 'log-agent').resources;
    expect(given({ request: Size.mebibytes(100) }).requests['ephemeral-storage']).toBe('100Mi');
    const both = given({ request: Size.mebibytes(300), limit: Size.gibibytes(1) });
    expect([both.requests['ephemeral-storage'], both.limits['ephemeral-storage']]).toEqual(['300Mi', '1024Mi']);
    expect(() => given({ limit: Size.mebibytes(100) })).toThrow(
      /resources\.ephemeralStorage request 260Mi \(the default\) is above the limit 100Mi, which the API server rejects; set resources\.ephemeralStorage\.limit to at least 260Mi/,
    );
  });

  test('resources can be overridden', () => {
    const resources = {
      cpu: { request: kplus.Cpu.millis(50), limit: kplus.Cpu.millis(500) },
      memory: { request: Size.mebibytes(64), limit: Size.mebibytes(256) },
    };
    const agent = containerOf(synthLogAgent('Deployment', '1.29', { resources }).workloadManifest, 'log-agent');
    expect(agent.resources).toEqual({ limits: { cpu: '500m', memory: '256Mi' }, requests: { 'cpu': '50m', 'ephemeral-storage': '260Mi', 'memory': '64Mi' } });
  });

  test('restricted security context', () => {
    const agent = containerOf(synthLogAgent('Deployment', '1.29').workloadManifest, 'log-agent');
    expect(agent.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      privileged: false,
      readOnlyRootFilesystem: true,
      runAsGroup: 65532,
      runAsNonRoot: true,
      runAsUser: 65532,
      seccompProfile: { type: 'RuntimeDefault' },
    });
  });

  test('the image is pinned and overridable', () => {
    expect(containerOf(synthLogAgent('Deployment', '1.29').workloadManifest, 'log-agent').image).toMatch(/^fluent\/fluent-bit:\d+\.\d+\.\d+$/);
    const custom = synthLogAgent('Deployment', '1.29', { agent: LogAgent.fluentBit({ image: 'registry.local/fluent-bit:3.2.10' }) });
    expect(containerOf(custom.workloadManifest, 'log-agent').image).toBe('registry.local/fluent-bit:3.2.10');
  });

  test('containerName renames the container and its volumes', () => {
    const { workloadManifest } = synthLogAgent('Deployment', '1.30', { containerName: 'shipper' });
    expect(layoutOf(workloadManifest).init).toEqual(['sidecar-tools', 'shipper']);
    expect(podSpecOf(workloadManifest).volumes.map((v: any) => v.name)).toEqual(['shipper-logs', 'shipper-config', 'sidecar-tools']);
  });
});

describe('grace period', () => {
  test('unset: raised to cover the sidecars (never below the Kubernetes default of 30)', () => {
    const m = synthLogAgent('Deployment', '1.29', { appShutdownTime: Duration.seconds(50) }).workloadManifest;
    // native: the app's 50 s, then log-agent's turn (its SIGTERM held 2 s, Grace 5 + 1)
    expect(podSpecOf(m).terminationGracePeriodSeconds).toBe(58);
    // cdk8s-plus-27 writes 30; nothing needs more, so it stays
    expect(podSpecOf(synthLogAgent('Deployment', '1.29').workloadManifest).terminationGracePeriodSeconds).toBe(30);
  });

  test('set too low by the user, without appShutdownTime: the app\'s budget, raised with a warning', () => {
    const { chart } = newChart();
    const dep = new kplus.Deployment(chart, 'web', {
      containers: [{ image: 'nginx', portNumber: 8080 }], terminationGracePeriod: Duration.seconds(10),
    });
    new WithLogAgent(chart, 'logs', { workload: dep, kubernetesVersion: '1.29' });
    // the vendor's 10 s for the app, then (native, 1.29: stopped after the app) Fluent Bit's 8 s stop (docs/shutdown.md)
    expect(podSpecOf(manifestOf(Testing.synth(chart), 'Deployment')).terminationGracePeriodSeconds).toBe(18);
    expect(SidecarWarnings.of(chart)).toEqual([expect.stringContaining("terminationGracePeriodSeconds 10s is taken as the app's own budget; the sidecars' time is added on top: terminationGracePeriodSeconds 18")]);
  });

  test('set too low by the user, with appShutdownTime: an error that says how much is needed', () => {
    const { chart } = newChart();
    const dep = new kplus.Deployment(chart, 'web', {
      containers: [{ image: 'nginx', portNumber: 8080 }], terminationGracePeriod: Duration.seconds(10),
    });
    new WithLogAgent(chart, 'logs', { workload: dep, kubernetesVersion: '1.29', appShutdownTime: Duration.seconds(10) });
    expect(() => Testing.synth(chart)).toThrow(
      "Deployment 'test-web-c8ba1bf5': terminationGracePeriodSeconds is 10, but its sidecars need 18 (native: app 10s + log-agent 8s). " +
      'Raise terminationGracePeriodSeconds to at least 18',
    );
  });

  test('set high enough by the user: kept', () => {
    const { chart } = newChart();
    const dep = new kplus.Deployment(chart, 'web', {
      containers: [{ image: 'nginx', portNumber: 8080 }], terminationGracePeriod: Duration.seconds(20),
    });
    new WithLogAgent(chart, 'logs', { workload: dep, kubernetesVersion: '1.29' });
    expect(podSpecOf(manifestOf(Testing.synth(chart), 'Deployment')).terminationGracePeriodSeconds).toBe(20);
  });
});

describe('bad input', () => {
  function build(props: Partial<ConstructorParameters<typeof WithLogAgent>[2]>, kind: typeof WORKLOAD_KINDS[number] = 'Deployment') {
    const { chart } = newChart();
    const workload = kplusWorkload(chart, kind);
    return () => Testing.synth((new WithLogAgent(chart, 'logs', { workload, kubernetesVersion: '1.29', ...props }), chart));
  }

  test.each([
    [{ logDirectory: 'logs' }, "WithLogAgent 'test/logs': logDirectory 'logs' must be an absolute, normalized directory of its own"],
    [{ logDirectory: '/var/log/app/' }, "logDirectory '/var/log/app/' must be an absolute, normalized directory"],
    [{ logDirectory: '/var' }, "logDirectory '/var' must be an absolute"],
    [{ filePattern: 'a/*.log' }, "WithLogAgent 'test/logs': filePattern 'a/*.log' must be a file-name glob without '/'"],
    [{ containerName: 'Log_Agent' }, "WithLogAgent 'test/logs': containerName 'Log_Agent' is not a valid DNS-1123 label"],
    [{ containerName: 'app' }, "WithLogAgent 'test/logs': container name 'app' is already used by a container of Deployment 'test-web-c8ba1bf5'; choose another containerName."],
    [{ output: LogOutput.loki({ host: '' }) }, "WithLogAgent 'test/logs': the loki output needs a host; got an empty string."],
    [{ output: LogOutput.forward({ host: 'fluentd', port: 70000 }) }, "WithLogAgent 'test/logs': forward output port 70000 is not a valid port; use an integer from 1 to 65535."],
    [{ agent: LogAgent.fluentBit({ httpPort: 8080 }) }, "WithLogAgent 'test/logs': port 8080 of sidecar 'log-agent' is also a port of container 'app' on Deployment 'test-web-c8ba1bf5'; choose another port for one of them."],
    [{ appShutdownTime: Duration.millis(1500) }, "WithLogAgent 'test/logs': appShutdownTime 1.5s is not a whole, non-negative number of seconds"],
    [{ kubernetesVersion: '1.29.x' }, "test/logs: kubernetesVersion '1.29.x' is not a Kubernetes version. Use the lowest minor version of the cluster's API server and nodes, e.g. '1.29', 'v1.29', '1.29.3' or 'v1.29.3'."],
    [{ kubernetesVersion: '2.0' }, "kubernetesVersion '2.0' is not a Kubernetes version"],
    [{ kubernetesVersion: '1.27', mode: SidecarMode.NATIVE }, "WithLogAgent 'test/logs': mode NATIVE on Kubernetes 1.27: native sidecars need 1.29"],
    [{ kubernetesVersion: '1.28', mode: SidecarMode.NATIVE }, "WithLogAgent 'test/logs': mode NATIVE on Kubernetes 1.28 without the SidecarContainers feature gate"],
  ])('%j', (props, message) => {
    expect(build(props as any)).toThrow(message);
  });

  test('the same construct twice on one workload', () => {
    const { chart } = newChart();
    const workload = kplusWorkload(chart, 'Deployment');
    new WithLogAgent(chart, 'logs', { workload, kubernetesVersion: '1.29' });
    new WithLogAgent(chart, 'logs2', { workload, kubernetesVersion: '1.29', containerName: 'log-agent-2' });
    expect(() => Testing.synth(chart)).toThrow(
      "WithLogAgent 'test/logs2': Deployment 'test-web-c8ba1bf5' already has one: WithLogAgent 'test/logs'; attach one WithLogAgent per workload.",
    );
  });

  test('the log directory is already a mount of the app', () => {
    const { chart } = newChart();
    const dep = kplusWorkload(chart, 'Deployment') as kplus.Deployment;
    dep.containers[0].mount('/var/log/app', kplus.Volume.fromEmptyDir(chart, 'v', 'own-logs'));
    new WithLogAgent(chart, 'logs', { workload: dep, kubernetesVersion: '1.29' });
    expect(() => Testing.synth(chart)).toThrow(
      "WithLogAgent 'test/logs': container 'app' of Deployment 'test-web-c8ba1bf5' already mounts volume 'own-logs' at /var/log/app; choose another directory for the sidecar.",
    );
  });

  test('a workload that is not a workload', () => {
    const { chart } = newChart();
    const cm = new kplus.ConfigMap(chart, 'cm');
    expect(() => new WithLogAgent(chart, 'logs', { workload: cm })).toThrow(
      "WithLogAgent 'test/logs': workload 'test/cm' is a v1 ConfigMap, which has no pod template. Attach sidecars to a Pod, Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob, ReplicationController.",
    );
    const raw = new ApiObject(chart, 'svc', { apiVersion: 'v1', kind: 'Service' });
    expect(() => new WithLogAgent(chart, 'logs2', { workload: raw })).toThrow("workload 'test/svc' is a v1 Service, which has no pod template");
  });

  test('nothing is written when synthesis fails', () => {
    const { app, chart } = newChart();
    const workload = kplusWorkload(chart, 'Job');
    // a legacy agent on a Job whose failed app is restarted in place: refused (test/exit-with-app.test.ts)
    ApiObject.of(workload).addJsonPatch(JsonPatch.replace('/spec/template/spec/restartPolicy', 'OnFailure'));
    new WithLogAgent(chart, 'logs', { workload, kubernetesVersion: '1.27' });
    expect(() => app.synth()).toThrow(/never completes/);
    expect(fs.existsSync(app.outdir) ? fs.readdirSync(app.outdir) : []).toEqual([]);
  });
});

test('deterministic: the same app synthesizes to byte-identical YAML', () => {
  const once = () => Yaml.stringify(...synthLogAgent('StatefulSet', '1.29').manifests);
  const a = once();
  expect(once()).toBe(a);
  expect(parseYaml(a.split('---')[0])).toBeTruthy();
});

// ---------------------------------------------------------------------------
// The app's declared log files against filePattern (issue 39)
// ---------------------------------------------------------------------------

/**
 * How many files glibc's glob(3) finds for `pattern` in a directory holding `file`: what Fluent
 * Bit's tail input does with its `Path` (plugins/in_tail/tail_scan_glob.c, v5.1.1), run through
 * python3's ctypes (glob_t's first field is gl_pathc). Undefined without python3.
 */
function glibcGlobCount(pattern: string, file: string): number | undefined {
  const dir = fs.mkdtempSync(`${tmpdir()}/sidecars-glob-`);
  try {
    fs.writeFileSync(`${dir}/${file}`, 'x\n');
    const script = 'import ctypes,sys\nlibc=ctypes.CDLL("libc.so.6")\nb=ctypes.create_string_buffer(512)\n' +
      'r=libc.glob(sys.argv[1].encode(),0,None,b)\nprint(ctypes.c_size_t.from_buffer(b).value if r==0 else 0)';
    const out = spawnSync('python3', ['-c', script, `${dir}/${pattern}`], { encoding: 'utf8' });
    return out.status === 0 ? Number(out.stdout.trim()) : undefined;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('an app that says it writes a log file filePattern cannot match: a warning with the fix', () => {
  const warningsFor = (filePattern: string | undefined, env: Record<string, string>, args: string[] = []) => {
    const { chart } = newChart();
    const dep = new kplus.Deployment(chart, 'web', {
      containers: [{
        name: 'app',
        image: 'ghcr.io/example/app:1.0.0',
        args,
        securityContext: { user: 1000, group: 1000 },
        envVariables: Object.fromEntries(Object.entries(env).map(([k, v]) => [k, kplus.EnvValue.fromValue(v)])),
      }],
    });
    new WithLogAgent(chart, 'logs', { workload: dep, kubernetesVersion: '1.29', ...(filePattern ? { filePattern } : {}) });
    Testing.synth(chart);
    return SidecarWarnings.of(chart).filter(w => w.includes('filePattern'));
  };

  test('a *.json file with the default *.log: warned, naming the container, where it says so, and the pattern to set', () => {
    expect(warningsFor(undefined, { LOG_FILE: '/var/log/app/app.json' })).toEqual([
      "WithLogAgent 'test/logs': container 'app' writes '/var/log/app/app.json' (its env LOG_FILE), which filePattern '*.log' does not match, " +
      "so the agent never ships it; set filePattern to match it, e.g. '*.json'.",
    ]);
    expect(warningsFor(undefined, {}, ['--log-file=/var/log/app/out.json'])).toEqual([expect.stringContaining("(its args), which filePattern '*.log'")]);
    expect(warningsFor('*.json', { LOG_FILE: '/var/log/app/app.json' })).toEqual([]);
    // not a file of the directory itself: a deeper path, another directory, a $(VAR)
    expect(warningsFor(undefined, { A: '/var/log/app/sub/x.json', B: '/var/log/other/x.json', C: '/var/log/app/$(NAME)' })).toEqual([]);
  });

  test.each<[string | undefined, string]>([
    [undefined, 'app.log'], [undefined, 'app.json'], [undefined, 'app.log.1'], [undefined, '.hidden.log'],
    ['*', 'app.json'], ['*', '.hidden'], ['app-?.log', 'app-1.log'], ['app-?.log', 'app-12.log'], ['.*.log', '.hidden.log'],
  ])('filePattern %s, file %s: warned exactly when glibc\'s glob(3) (Fluent Bit\'s Path) finds nothing', (pattern, file) => {
    const found = glibcGlobCount(pattern ?? '*.log', file);
    if (found === undefined) return; // no python3: the other cases still hold
    expect(warningsFor(pattern, { LOG_FILE: `/var/log/app/${file}` }).length).toBe(found === 0 ? 1 : 0);
  });
});
