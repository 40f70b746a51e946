import { Duration, Testing, Yaml } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { parse as parseYaml } from 'yaml';
import { Images, LogAgent, LogOutput, SidecarMode, WithLogAgent } from '../src';
import {
  WORKLOAD_KINDS, containerOf, kplusWorkload, layoutOf, manifestOf, newChart, podSpecOf,
} from './util/fixtures';
import { FluentDirective, fluentTagMatches, fluentValue, inTailTag, parseFluentConf } from './util/fluentd-conf';
import { expectValidManifests } from './util/k8s-schema';
import { agentArgvOf, sigtermHoldOf } from './util/sigterm-hold';
import { VECTOR_ENV_REFERENCE, secretVolumeFiles, vectorLoad } from './util/vector-config';

type Props = Partial<ConstructorParameters<typeof WithLogAgent>[2]>;

function synth(agent: LogAgent, extra: Props = {}, kind: typeof WORKLOAD_KINDS[number] = 'Deployment', version = '1.29') {
  const { chart } = newChart();
  const workload = kplusWorkload(chart, kind);
  const construct = new WithLogAgent(chart, 'logs', { workload, kubernetesVersion: version, agent, ...extra });
  const manifests = Testing.synth(chart);
  const workloadManifest = manifestOf(manifests, kind);
  const configMap = manifestOf(manifests, 'ConfigMap');
  return { construct, manifests, workloadManifest, configMap, sidecar: containerOf(workloadManifest, extra.containerName ?? 'log-agent') };
}

const secret = (name: string, key: string) => ({ secret: kplus.Secret.fromSecretName(newChart().chart, `${name}-${key}`, name), key });
const basicAuth = { username: secret('log-basic', 'user'), password: secret('log-basic', 'pass') };

/** One output of every kind, with credentials where the output takes them. */
const OUTPUTS = {
  stdout: () => LogOutput.stdout(),
  forward: () => LogOutput.forward({ host: 'fluentd.logging', tls: true }),
  http: () => LogOutput.http({ host: 'logs.example.com', uri: '/ingest', secretHeaders: { 'X-Api-Key': secret('log-token', 'header') }, basicAuth }),
  loki: () => LogOutput.loki({ host: 'loki.monitoring', labels: { team: 'shop' }, tenantId: 'shop', basicAuth }),
  elasticsearch: () => LogOutput.elasticsearch({ host: 'es.logging', index: 'web', basicAuth }),
  opensearch: () => LogOutput.opensearch({ host: 'os.logging', tls: false }),
};
type OutputName = keyof typeof OUTPUTS;
const OUTPUT_NAMES = Object.keys(OUTPUTS) as OutputName[];

/** The Secrets' values in the cluster: what a careless config would break on (quotes, a backslash, `: `, ` #`, a trailing line break). */
const SECRET_VALUES: Record<string, Record<string, string>> = {
  'log-basic': { user: 'shipper', pass: 'p@ss: "w\\ord" #1 $HOME ${X}' },
  'log-token': { header: 'key a"b\n' },
};

/** What the pod's env gives the agent at run time (secrets included), for evaluating configs. */
const RUNTIME_ENV: Record<string, string> = {
  POD_NAME: 'web-1',
  POD_NAMESPACE: 'shop',
  NODE_NAME: 'node-a',
  LOG_OUTPUT_USERNAME: 'shipper',
  // what a careless config would break on: quotes, a backslash, `: ` and ` #`
  LOG_OUTPUT_PASSWORD: 'p@ss: "w\\ord" #1',
  LOG_OUTPUT_HEADER_X_API_KEY: 'key a"b\n',
};

// ---------------------------------------------------------------------------------------------
// Vector: the rendered vector.yaml as Vector reads it

function vectorConfig(extra: Props = {}, agent = LogAgent.vector()) {
  const r = synth(agent, extra);
  const text: string = r.configMap.data['vector.yaml'];
  return { ...r, text, config: parseYaml(text) };
}

/** Every transform/sink input names a defined source or transform, and every one of those is read. */
function expectVectorGraph(config: any) {
  const producers = new Set([...Object.keys(config.sources ?? {}), ...Object.keys(config.transforms ?? {})]);
  const consumed = new Set<string>();
  const consumers = { ...config.transforms, ...config.sinks };
  // the output, and the blackhole that the probes' source feeds
  expect(Object.keys(config.sinks ?? {})).toEqual(['output', 'health_discard']);
  for (const [id, c] of Object.entries<any>(consumers)) {
    expect({ id, inputs: c.inputs }).toEqual({ id, inputs: expect.any(Array) });
    for (const input of c.inputs) {
      expect({ id, input, defined: producers.has(input) }).toEqual({ id, input, defined: true });
      consumed.add(input);
    }
  }
  for (const p of producers) expect({ producer: p, consumed: consumed.has(p) }).toEqual({ producer: p, consumed: true });
}

/**
 * The answer of Vector's `http_server` source to a request without a body, transcribed from
 * vectordotdev/vector src/sources/util/http/prelude.rs `HttpSource::run` (v0.57.0; the same routes
 * at v0.54.0): a warp filter on `method` (default POST; another method is rejected, 405), then one
 * `warp::path` per segment of `path` (default `/`; a mismatch 404), then with `strict_path`
 * (default true) a non-empty rest is 404; `or` the built-in `GET /ping`. An accepted empty body
 * decodes to no event and is answered `response_code` (default 200).
 */
function vectorHttpServerAnswer(src: any, method: string, path: string): number {
  const segments = (p: string) => p.split('/').filter(x => x !== '');
  const route = (): number => {
    if (method !== (src.method ?? 'POST')) return 405;
    const want = segments(src.path ?? '/');
    const got = segments(path);
    if (want.some((w, i) => got[i] !== w)) return 404;
    if ((src.strict_path ?? true) && got.length > want.length) return 404;
    return src.response_code ?? 200;
  };
  const answer = route();
  if (answer !== 200 && method === 'GET' && segments(path)[0] === 'ping') return 200;
  return answer;
}

/** vector.yaml as Vector 0.57 loads it, with the pod's Secret volume in place (test/util/vector-config.ts). */
function vectorLoadInPod(r: ReturnType<typeof vectorConfig>): any {
  expect(r.text).not.toMatch(VECTOR_ENV_REFERENCE);
  const volume = podSpecOf(r.workloadManifest).volumes.find((v: any) => v.name === 'log-agent-secrets');
  const mount = (r.sidecar.volumeMounts ?? []).find((m: any) => m.name === 'log-agent-secrets');
  const files = volume === undefined ? {} : secretVolumeFiles(volume, mount.mountPath, SECRET_VALUES);
  return vectorLoad(r.text, files);
}

// ---------------------------------------------------------------------------------------------
// Fluentd: the rendered fluent.conf as Fluentd reads it

function fluentdConfig(extra: Props = {}, agent = LogAgent.fluentd()) {
  const r = synth(agent, extra);
  const text: string = r.configMap.data['fluent.conf'];
  return { ...r, text, conf: parseFluentConf(text) };
}

const only = (conf: FluentDirective[], name: string, type?: string) => {
  const found = conf.filter(d => d.name === name && (type === undefined || d.params['@type']?.raw === type));
  expect(found).toHaveLength(1);
  return found[0];
};
const child = (d: FluentDirective, name: string) => {
  const found = d.children.filter(c => c.name === name);
  expect(found).toHaveLength(1);
  return found[0];
};
const v = (d: FluentDirective, key: string, env: Record<string, string> = RUNTIME_ENV) => {
  expect(Object.keys(d.params)).toContain(key);
  return fluentValue(d.params[key], env);
};

/**
 * Routing as Fluentd does it: each source with a tag emits events for a log file; every event
 * must reach exactly the first <match> whose pattern matches, through the <filter>s before it;
 * every <filter> and <match> pattern must match something a source emits.
 */
function expectFluentdRouting(conf: FluentDirective[], logFile: string) {
  const emitted = conf.filter(d => d.name === 'source' && d.params.tag).map(d => inTailTag(fluentValue(d.params.tag), logFile));
  expect(emitted.length).toBeGreaterThan(0);
  const routed = conf.filter(d => d.name === 'filter' || d.name === 'match');
  for (const r of routed) {
    expect({ directive: `<${r.name} ${r.arg}>`, matchesASource: emitted.some(t => fluentTagMatches(r.arg, t)) })
      .toEqual({ directive: `<${r.name} ${r.arg}>`, matchesASource: true });
  }
  for (const tag of emitted) {
    const matchIndex = routed.findIndex(r => r.name === 'match' && fluentTagMatches(r.arg, tag));
    expect({ tag, matched: matchIndex >= 0 }).toEqual({ tag, matched: true });
    const filters = routed.slice(0, matchIndex).filter(r => r.name === 'filter' && fluentTagMatches(r.arg, tag));
    expect(filters.map(f => f.params['@type'].raw)).toEqual(['record_transformer']);
  }
}

// ---------------------------------------------------------------------------------------------

const AGENTS = {
  vector: () => LogAgent.vector(),
  fluentd: () => LogAgent.fluentd(),
};
const HEALTH = {
  vector: { path: '/health', port: 8686, name: 'vector-health' },
  fluentd: { path: '/api/plugins.json', port: 24220, name: 'fluentd-mon' },
};

describe('snapshots: both layouts per agent, valid for the target release', () => {
  for (const [name, agent] of Object.entries(AGENTS)) {
    test(`${name}, Deployment, Kubernetes 1.27 (legacy)`, () => {
      const { manifests, construct } = synth(agent(), {}, 'Deployment', '1.27');
      expect(construct.layout).toBe('LEGACY');
      expectValidManifests(manifests, '1.27');
      expect(manifests).toMatchSnapshot();
    });
    test(`${name}, Deployment, Kubernetes 1.29 (native)`, () => {
      const { manifests, construct } = synth(agent(), {}, 'Deployment', '1.29');
      expect(construct.layout).toBe('NATIVE');
      expectValidManifests(manifests, '1.29');
      expect(manifests).toMatchSnapshot();
    });
  }

  test.each(WORKLOAD_KINDS.flatMap(kind => (Object.keys(AGENTS) as Array<keyof typeof AGENTS>).map(agent => [agent, kind] as const)))(
    '%s on a %s: valid on 1.27 (legacy) and 1.33 (native)', (agent, kind) => {
      const jobLike = kind === 'Job' || kind === 'CronJob';
      expectValidManifests(synth(AGENTS[agent](), jobLike ? { allowLegacyOnJob: true } : {}, kind, '1.27').manifests, '1.27');
      expectValidManifests(synth(AGENTS[agent](), {}, kind, '1.33').manifests, '1.33');
    });
});

describe.each(Object.keys(AGENTS) as Array<keyof typeof AGENTS>)('%s: the same guarantees as Fluent Bit', (name) => {
  const agent = AGENTS[name];
  const health = HEALTH[name];

  // The delay each agent needs after the app's exit before SIGTERM where it is stopped with the app (legacy): Vector
  // polls idle files every 2048 ms and stops reading at SIGTERM; Fluentd reads to the end.
  const readDelay = name === 'vector' ? 3 : 0;

  test('native: initContainers[0], restartPolicy Always, a startup probe on the health endpoint, no readiness probe', () => {
    const { workloadManifest } = synth(agent(), {}, 'Deployment', '1.30');
    // Vector: after the tools' init container, whose busybox runs its SIGTERM hold (issue 39)
    expect(layoutOf(workloadManifest)).toEqual({ init: [...name === 'vector' ? ['sidecar-tools'] : [], 'log-agent'], containers: ['app'] });
    const c = podSpecOf(workloadManifest).initContainers.find((x: any) => x.name === 'log-agent');
    expect(c.restartPolicy).toBe('Always');
    expect(c.startupProbe.httpGet).toEqual({ path: health.path, port: health.port });
    expect(c.readinessProbe).toBeUndefined();
    expect(c.ports).toEqual([{ containerPort: health.port, name: health.name, protocol: 'TCP' }]);
    // no preStop: it would run from the pod's termination and only delay SIGTERM (issue 26)
    expect(c.lifecycle).toBeUndefined();
  });

  test('legacy: the last container, without restartPolicy, kept alive by a preStop delay', () => {
    const { workloadManifest, sidecar } = synth(agent(), { mode: SidecarMode.LEGACY }, 'Deployment', '1.30');
    expect(layoutOf(workloadManifest)).toEqual({ init: [], containers: ['app', 'log-agent'] });
    expect(sidecar.restartPolicy).toBeUndefined();
    expect(sidecar.lifecycle).toEqual({ preStop: { sleep: { seconds: 10 + readDelay } } });
  });

  test('the log directory is one emptyDir shared by the app and the agent', () => {
    const { workloadManifest, sidecar } = synth(agent(), { logDirectory: '/logs' });
    const mount = { mountPath: '/logs', name: 'log-agent-logs' };
    expect(containerOf(workloadManifest, 'app').volumeMounts).toContainEqual(mount);
    expect(sidecar.volumeMounts).toContainEqual(mount);
    expect(podSpecOf(workloadManifest).volumes).toContainEqual({ emptyDir: { sizeLimit: '1Gi' }, name: 'log-agent-logs' });
  });

  test('small resources of its own, restricted security context with a read-only root filesystem', () => {
    const { sidecar } = synth(agent());
    // ephemeral storage: Vector has no disk buffer (its checkpoints only); Fluentd's file buffer is a
    // quarter of the 1 GiB log volume, but stdout (the output here) is not buffered (docs/log-agents.md "Disk")
    const expected = name === 'vector'
      ? { limits: { cpu: '250m', memory: '256Mi' }, requests: { 'cpu': '20m', 'ephemeral-storage': '4Mi', 'memory': '64Mi' } }
      : { limits: { cpu: '500m', memory: '256Mi' }, requests: { 'cpu': '50m', 'ephemeral-storage': '4Mi', 'memory': '128Mi' } };
    expect(sidecar.resources).toEqual(expected);
    expect(sidecar.imagePullPolicy).toBe('IfNotPresent');
    expect(sidecar.securityContext).toMatchObject({
      readOnlyRootFilesystem: true, runAsNonRoot: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] },
    });
  });

  test('the pod identity reaches the agent from the downward API', () => {
    const { sidecar } = synth(agent());
    expect(sidecar.env.slice(0, 3)).toEqual([
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
      { name: 'NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
    ]);
  });

  test('secrets reach the agent from their Secrets (Vector: files of a read-only volume; the others: secretKeyRef env), never through its ConfigMap', () => {
    const { sidecar, configMap, workloadManifest } = synth(agent(), { output: OUTPUTS.http() });
    if (name === 'vector') {
      // Vector 0.57 does not interpolate ${NAME}: its directory secret backend reads the files (test/vector-secrets.test.ts)
      expect((sidecar.env ?? []).filter((e: any) => e.valueFrom?.secretKeyRef)).toEqual([]);
      expect(sidecar.volumeMounts).toContainEqual({ mountPath: '/etc/log-agent-secrets', name: 'log-agent-secrets', readOnly: true });
      expect(podSpecOf(workloadManifest).volumes).toContainEqual({
        name: 'log-agent-secrets',
        projected: {
          sources: [
            { secret: { items: [{ key: 'pass', path: 'LOG_OUTPUT_PASSWORD' }, { key: 'user', path: 'LOG_OUTPUT_USERNAME' }], name: 'log-basic' } },
            { secret: { items: [{ key: 'header', path: 'LOG_OUTPUT_HEADER_X_API_KEY' }], name: 'log-token' } },
          ],
        },
      });
    } else {
      expect(sidecar.env).toContainEqual({ name: 'LOG_OUTPUT_PASSWORD', valueFrom: { secretKeyRef: { key: 'pass', name: 'log-basic' } } });
      expect(sidecar.env).toContainEqual({ name: 'LOG_OUTPUT_HEADER_X_API_KEY', valueFrom: { secretKeyRef: { key: 'header', name: 'log-token' } } });
    }
    expect(Yaml.stringify(configMap)).not.toMatch(/log-basic|log-token/);
  });

  test('the health port may not collide with the app', () => {
    const port = name === 'vector' ? { agent: LogAgent.vector({ apiPort: 8080 }) } : { agent: LogAgent.fluentd({ monitorPort: 8080 }) };
    expect(() => synth(port.agent)).toThrow(
      "WithLogAgent 'test/logs': port 8080 of sidecar 'log-agent' is also a port of container 'app' on Deployment 'test-web-c8ba1bf5'; choose another port for one of them.",
    );
  });
});

describe('Vector', () => {
  test('pinned image, overridable; vector binary, config file, graceful shutdown limit', () => {
    const { sidecar } = vectorConfig();
    expect(Images.VECTOR).toMatch(/^timberio\/vector:\d+\.\d+\.\d+-distroless-libc$/);
    expect(sidecar.image).toBe(Images.VECTOR);
    // native (1.29+): under the SIGTERM hold (3 s, its read delay; issue 39); legacy: as it is
    expect(agentArgvOf(sidecar)).toEqual(['/usr/bin/vector', '--config', '/etc/log-agent/vector.yaml', '--graceful-shutdown-limit-secs', '5']);
    expect(sigtermHoldOf(sidecar)).toBe(3);
    const legacy = synth(LogAgent.vector(), { mode: SidecarMode.LEGACY }, 'Deployment', '1.30').sidecar;
    expect(legacy.command).toEqual(['/usr/bin/vector']);
    expect(legacy.args).toEqual(['--config', '/etc/log-agent/vector.yaml', '--graceful-shutdown-limit-secs', '5']);
    expect(sidecar.securityContext.runAsUser).toBe(65532);
    const custom = synth(LogAgent.vector({ image: 'registry.local/vector:0.54.0-distroless-libc' })).sidecar;
    expect(custom.image).toBe('registry.local/vector:0.54.0-distroless-libc');
  });

  test('tails the log directory from the beginning; checkpoints in data_dir on the shared volume, not tailed', () => {
    const { config } = vectorConfig({ logDirectory: '/logs', filePattern: '*.json' });
    expect(config.data_dir).toBe('/logs');
    const source = config.sources.app_logs;
    expect(source).toEqual({
      type: 'file',
      include: ['/logs/*.json'],
      exclude: ['/logs/app_logs', '/logs/app_logs/*'],
      read_from: 'beginning',
      fingerprint: { strategy: 'device_and_inode' },
      // 1 MiB, the floor for a real log line (Vector's default is 100 KiB)
      max_line_bytes: 1048576,
    });
  });

  test('the probes need no API: an http_server source on the pod IP answers the kubelet\'s GET, and nothing else reaches the output', () => {
    for (const [agent, port] of [[LogAgent.vector({ apiPort: 9686 }), 9686], [LogAgent.vector(), 8686]] as const) {
      const { config, sidecar, workloadManifest } = vectorConfig({ kubernetesVersion: '1.30' }, agent);
      // From 0.55 the API also serves the gRPC observability API (`vector tap`): it stays off.
      expect(config.api).toEqual({ enabled: false });
      const probe = sidecar.startupProbe.httpGet;
      expect(probe).toEqual({ path: '/health', port });
      expect(podSpecOf(workloadManifest).initContainers.find((x: any) => x.name === 'log-agent').ports).toEqual([{ containerPort: port, name: 'vector-health', protocol: 'TCP' }]);
      // the kubelet probes the pod IP: the one component listening on that port, on every address
      const listening = Object.entries<any>(config.sources).filter(([, src]) => src.type === 'http_server');
      expect(listening).toHaveLength(1);
      const [id, src] = listening[0];
      expect(src.address).toBe(`0.0.0.0:${port}`);
      expect(vectorHttpServerAnswer(src, 'GET', probe.path)).toBe(200);
      // every other request is refused, and the probe's source feeds only a blackhole
      expect(vectorHttpServerAnswer(src, 'POST', probe.path)).toBe(405);
      expect(vectorHttpServerAnswer(src, 'GET', '/health/x')).toBe(404);
      expect(vectorHttpServerAnswer(src, 'GET', '/')).toBe(404);
      const readers = Object.entries<any>({ ...config.transforms, ...config.sinks }).filter(([, c]) => c.inputs.includes(id));
      expect(readers.map(([, c]) => c.type)).toEqual(['blackhole']);
    }
  });

  test('the pod identity is added by a remap transform reading the env', () => {
    const { config } = vectorConfig();
    expect(config.transforms.pod_metadata.type).toBe('remap');
    expect(config.transforms.pod_metadata.inputs).toEqual(['app_logs']);
    expect(config.transforms.pod_metadata.source).toBe(
      '.pod = get_env_var!("POD_NAME")\n.namespace = get_env_var!("POD_NAMESPACE")\n.node = get_env_var!("NODE_NAME")\n',
    );
  });

  test('graceful shutdown limit: the flag and the grace period (native: app + 3 s SIGTERM hold + limit + 1s)', () => {
    const { sidecar, workloadManifest } = vectorConfig(
      { appShutdownTime: Duration.seconds(50) }, LogAgent.vector({ gracefulShutdownLimit: Duration.seconds(7) }),
    );
    expect(agentArgvOf(sidecar).slice(3)).toEqual(['--graceful-shutdown-limit-secs', '7']);
    expect(podSpecOf(workloadManifest).terminationGracePeriodSeconds).toBe(61);
  });

  test('graceful shutdown limit in the legacy layout: the preStop delay, then the limit', () => {
    const { workloadManifest } = vectorConfig(
      { mode: SidecarMode.LEGACY, kubernetesVersion: '1.30', appShutdownTime: Duration.seconds(40) },
      LogAgent.vector({ gracefulShutdownLimit: Duration.seconds(20) }),
    );
    // 40 s app + 3 s poll delay + 20 s limit + 1 s exit
    expect(podSpecOf(workloadManifest).terminationGracePeriodSeconds).toBe(64);
  });

  test('no scratch volume: Vector writes only its data_dir (the tools\' volume holds the busybox of its SIGTERM hold)', () => {
    const { workloadManifest } = vectorConfig({ kubernetesVersion: '1.30' });
    expect(podSpecOf(workloadManifest).volumes.map((x: any) => x.name)).toEqual(['log-agent-logs', 'log-agent-config', 'sidecar-tools']);
  });

  describe('outputs: every sink reads a defined component, secrets come from the env', () => {
    const supported = OUTPUT_NAMES.filter(o => o !== 'forward');

    test.each(supported)('%s: the graph is closed and the config still parses once Vector has put the secrets in', (name) => {
      const r = vectorConfig({ output: OUTPUTS[name]() });
      const { config } = r;
      expectVectorGraph(config);
      expect(config.sinks.output.inputs).toEqual(['pod_metadata']);
      // the elasticsearch sink encodes JSON itself (its `encoding` has no codec)
      if (config.sinks.output.type !== 'elasticsearch') expect(config.sinks.output.encoding).toEqual({ codec: 'json' });
      const loaded = vectorLoadInPod(r);
      if (config.sinks.output.auth) {
        expect(loaded.sinks.output.auth).toEqual({ strategy: 'basic', user: SECRET_VALUES['log-basic'].user, password: SECRET_VALUES['log-basic'].pass });
      }
      if (name === 'http') expect(loaded.sinks.output.request.headers).toEqual({ 'X-Api-Key': 'key a"b' }); // the trailing line break chomped
    });

    test('stdout: console sink', () => {
      expect(vectorConfig().config.sinks.output).toEqual({
        type: 'console', inputs: ['pod_metadata'], target: 'stdout', encoding: { codec: 'json' }, acknowledgements: { enabled: true },
      });
    });

    test('http: newline-delimited JSON, basic auth and secret headers from the secret backend, TLS verified', () => {
      expect(vectorConfig({ output: OUTPUTS.http() }).config.sinks.output).toEqual({
        type: 'http',
        inputs: ['pod_metadata'],
        uri: 'https://logs.example.com:443/ingest',
        method: 'post',
        encoding: { codec: 'json' },
        framing: { method: 'newline_delimited' },
        auth: { strategy: 'basic', user: 'SECRET[log_output.LOG_OUTPUT_USERNAME]', password: 'SECRET[log_output.LOG_OUTPUT_PASSWORD]' },
        request: { headers: { 'X-Api-Key': 'SECRET[log_output.LOG_OUTPUT_HEADER_X_API_KEY]' } },
        tls: { verify_certificate: true, verify_hostname: true },
        // the file source checkpoints only what the sink delivered (src/sources/file.rs, v0.54.0 and v0.57.0)
        acknowledgements: { enabled: true },
      });
    });

    test('loki: endpoint, labels, tenant, no TLS by default', () => {
      expect(vectorConfig({ output: OUTPUTS.loki() }).config.sinks.output).toEqual({
        type: 'loki',
        inputs: ['pod_metadata'],
        endpoint: 'http://loki.monitoring:3100',
        encoding: { codec: 'json' },
        labels: { team: 'shop' },
        tenant_id: 'shop',
        auth: { strategy: 'basic', user: 'SECRET[log_output.LOG_OUTPUT_USERNAME]', password: 'SECRET[log_output.LOG_OUTPUT_PASSWORD]' },
        // the file source checkpoints only what the sink delivered (src/sources/file.rs, v0.54.0 and v0.57.0)
        acknowledgements: { enabled: true },
      });
    });

    test('elasticsearch: bulk into the index, API version detected', () => {
      expect(vectorConfig({ output: OUTPUTS.elasticsearch() }).config.sinks.output).toEqual({
        type: 'elasticsearch',
        inputs: ['pod_metadata'],
        endpoints: ['https://es.logging:9200'],
        mode: 'bulk',
        api_version: 'auto',
        bulk: { index: 'web' },
        auth: { strategy: 'basic', user: 'SECRET[log_output.LOG_OUTPUT_USERNAME]', password: 'SECRET[log_output.LOG_OUTPUT_PASSWORD]' },
        tls: { verify_certificate: true, verify_hostname: true },
        // the file source checkpoints only what the sink delivered (src/sources/file.rs, v0.54.0 and v0.57.0)
        acknowledgements: { enabled: true },
      });
    });

    test('opensearch: the elasticsearch sink with typeless (v8) bulk requests', () => {
      expect(vectorConfig({ output: OUTPUTS.opensearch() }).config.sinks.output).toEqual({
        type: 'elasticsearch',
        inputs: ['pod_metadata'],
        endpoints: ['http://os.logging:9200'],
        mode: 'bulk',
        api_version: 'v8',
        bulk: { index: 'app-logs' },
        // the file source checkpoints only what the sink delivered (src/sources/file.rs, v0.54.0 and v0.57.0)
        acknowledgements: { enabled: true },
      });
    });

    test('forward: refused, naming the alternatives', () => {
      expect(() => vectorConfig({ output: OUTPUTS.forward() })).toThrow(
        "WithLogAgent 'test/logs': Vector has no Fluent forward sink, so LogAgent.vector() cannot use LogOutput.forward(); " +
        'ship with LogOutput.http(), loki(), elasticsearch(), opensearch() or stdout(), or keep the forward output with ' +
        'LogAgent.fluentBit() or LogAgent.fluentd().',
      );
    });

    test('a `$` in a user value is refused (0.54-0.56 interpolate it, 0.57 does not: no one text means it to both)', () => {
      expect(() => vectorConfig({ output: LogOutput.loki({ host: 'loki', labels: { cost: 'US$HOME' } }) }))
        .toThrow("WithLogAgent 'test/logs': Vector cannot be given \"US$HOME\" as it is");
    });
  });

  describe('one config for 0.54 up to 0.58: no API keys an image of that range rejects', () => {
    test.each(['timberio/vector:0.54.0-distroless-libc', 'timberio/vector:0.55.0-distroless-libc', 'registry.local:5000/vector:stable'])(
      '%s: accepted, the API off (0.55 rejects api.graphql and api.playground)', (image) => {
        const { config } = vectorConfig({}, LogAgent.vector({ image }));
        expect(config.api).toEqual({ enabled: false });
      });

    test('exposeGrpcApi (deprecated) changes nothing', () => {
      const image = 'timberio/vector:0.57.0-distroless-libc';
      expect(vectorConfig({}, LogAgent.vector({ image, exposeGrpcApi: true })).manifests)
        .toEqual(vectorConfig({}, LogAgent.vector({ image })).manifests);
    });
  });

  test('a limit below one second is refused', () => {
    // Refused by the factory itself, before any construct exists (wording: test/bad-input.test.ts).
    expect(() => LogAgent.vector({ gracefulShutdownLimit: Duration.seconds(0) })).toThrow(/^LogAgent\.vector\(\): gracefulShutdownLimit .*0s/);
    expect(() => LogAgent.vector({ gracefulShutdownLimit: Duration.seconds(1) })).not.toThrow();
  });
});

describe('Fluentd', () => {
  test('pinned image, overridable; tini as PID 1, fluentd with the mounted config', () => {
    const { sidecar } = fluentdConfig();
    expect(Images.FLUENTD).toMatch(/^fluent\/fluentd:v\d+\.\d+\.\d+-debian-\d+\.\d+$/);
    expect(sidecar.image).toBe(Images.FLUENTD);
    expect(sidecar.command).toEqual(['tini', '--', 'fluentd']);
    expect(sidecar.args).toEqual(['--config', '/etc/log-agent/fluent.conf']);
    expect(sidecar.securityContext.runAsUser).toBe(999);
    expect(synth(LogAgent.fluentd({ image: 'registry.local/fluentd:v1.19.3-debian-2.2' })).sidecar.image)
      .toBe('registry.local/fluentd:v1.19.3-debian-2.2');
  });

  test('in_tail reads the log directory from the head, position file on the shared volume and not tailed', () => {
    const { conf } = fluentdConfig({ logDirectory: '/logs', filePattern: '*.json' });
    const tail = only(conf, 'source', 'tail');
    expect(v(tail, 'path')).toBe('/logs/*.json');
    expect(v(tail, 'pos_file')).toBe('/logs/.fluentd-tail.pos');
    expect(JSON.parse(v(tail, 'exclude_path'))).toEqual(['/logs/.fluentd-tail.pos', '/logs/.fluentd-buffer/*']);
    expect(v(tail, 'read_from_head')).toBe('true');
    expect(v(tail, 'follow_inodes')).toBe('true');
    // new files (e.g. a short Job's) are picked up within a second
    expect(v(tail, 'refresh_interval')).toBe('1s');
    expect(child(tail, 'parse').params['@type'].raw).toBe('none');
  });

  test('an upstream Fluentd image older than 1.19.3 is refused: its monitor_agent leaks plugin settings', () => {
    for (const image of ['fluent/fluentd:v1.16.2-debian-1.1', 'fluent/fluentd-kubernetes-daemonset:v1.19.2-debian-elasticsearch8-1.0', 'mirror.local/fluentd:v1.19.2']) {
      expect(() => synth(LogAgent.fluentd({ image }))).toThrow(
        `WithLogAgent 'test/logs': Fluentd image '${image}' is older than 1.19.3, whose in_monitor_agent (on the pod IP for the probes) ` +
        "still answers ?debug=1 and ?with_ivars= with the plugins' settings, output passwords included. " +
        'Use fluent/fluentd:v1.19.3-debian-2.2 or later, or set `allowMonitorDebugInfo: true` and keep other pods off port 24220 with a NetworkPolicy.',
      );
    }
    expect(synth(LogAgent.fluentd({ image: 'fluent/fluentd:v1.16.2-debian-1.1', allowMonitorDebugInfo: true })).sidecar.image).toBe('fluent/fluentd:v1.16.2-debian-1.1');
    // 1.19.3+, and images of your own (their tag is not a Fluentd version), pass
    expect(synth(LogAgent.fluentd({ image: 'fluent/fluentd:v1.20.0-debian-1.0' })).sidecar.image).toBe('fluent/fluentd:v1.20.0-debian-1.0');
    expect(synth(LogAgent.fluentd({ image: 'registry.local/fluentd-plugins:1.0.0' })).sidecar.image).toBe('registry.local/fluentd-plugins:1.0.0');
  });

  test('monitor_agent on 0.0.0.0 for the probes, without config or debug info in its answers', () => {
    const { conf, sidecar } = fluentdConfig({}, LogAgent.fluentd({ monitorPort: 24230 }));
    const monitor = only(conf, 'source', 'monitor_agent');
    expect(v(monitor, 'bind')).toBe('0.0.0.0');
    expect(v(monitor, 'port')).toBe('24230');
    expect(v(monitor, 'include_config')).toBe('false');
    expect(v(monitor, 'include_debug_info')).toBe('false');
    expect(sidecar.startupProbe.httpGet).toEqual({ path: '/api/plugins.json', port: 24230 });
  });

  test('the pod identity is added by record_transformer from the env', () => {
    const { conf } = fluentdConfig();
    const record = child(only(conf, 'filter'), 'record');
    expect(Object.fromEntries(Object.keys(record.params).map(k => [k, v(record, k)]))).toEqual({ pod: 'web-1', namespace: 'shop', node: 'node-a' });
  });

  test('a writable /tmp of its own (the supervisor socket), the root filesystem stays read-only', () => {
    const { workloadManifest, sidecar } = fluentdConfig({ containerName: 'shipper' });
    // A tmpfs (root 1777): Ruby's Dir.tmpdir refuses the 0777 root of a disk-backed emptyDir.
    expect(podSpecOf(workloadManifest).volumes).toContainEqual({ emptyDir: { medium: 'Memory', sizeLimit: '16Mi' }, name: 'shipper-tmp' });
    expect(containerOf(workloadManifest, 'shipper').volumeMounts).toContainEqual({ mountPath: '/tmp', name: 'shipper-tmp' });
    expect(containerOf(workloadManifest, 'app').volumeMounts).not.toContainEqual(expect.objectContaining({ name: 'shipper-tmp' }));
    expect(sidecar.securityContext.readOnlyRootFilesystem).toBe(true);
  });

  test('shutdown: buffers flushed at shutdown, one whole attempt fits (native: app + shutdownGrace, or app + one attempt + 1 s)', () => {
    const { conf, workloadManifest } = fluentdConfig(
      { output: OUTPUTS.forward(), appShutdownTime: Duration.seconds(50) },
      LogAgent.fluentd({ shutdownGrace: Duration.seconds(12), flushInterval: Duration.seconds(2) }),
    );
    const match = only(conf, 'match');
    const buffer = child(match, 'buffer');
    expect(v(buffer, 'flush_at_shutdown')).toBe('true');
    expect(v(buffer, '@type')).toBe('file');
    // on the log volume, beside the pos file; a quarter of the default 1 GiB volume
    expect(v(buffer, 'path')).toBe('/var/log/app/.fluentd-buffer');
    expect(v(buffer, 'total_limit_size')).toBe('256m');
    expect(v(buffer, 'flush_interval')).toBe('2s');
    // docs/log-agents.md: the connect phase gets shutdownGrace less 1 s, the send the default requestTimeout (15 s)
    expect([v(match, 'connect_timeout'), v(match, 'send_timeout')]).toEqual(['11', '15']);
    // the attempt (11 + 15 s) and the exit (1 s) are longer than shutdownGrace (12 s)
    expect(podSpecOf(workloadManifest).terminationGracePeriodSeconds).toBe(50 + 11 + 15 + 1);
    const fits = fluentdConfig(
      { output: OUTPUTS.forward(), appShutdownTime: Duration.seconds(50) },
      LogAgent.fluentd({ shutdownGrace: Duration.seconds(30), requestTimeout: Duration.seconds(10) }),
    );
    expect([v(only(fits.conf, 'match'), 'connect_timeout'), v(only(fits.conf, 'match'), 'send_timeout')]).toEqual(['29', '10']);
    // 29 + 10 + 1 > 30: still the attempt
    expect(podSpecOf(fits.workloadManifest).terminationGracePeriodSeconds).toBe(50 + 29 + 10 + 1);
  });

  test('shutdown in the legacy layout: the preStop delay, then shutdownGrace', () => {
    const { workloadManifest } = fluentdConfig({ mode: SidecarMode.LEGACY, kubernetesVersion: '1.30', appShutdownTime: Duration.seconds(40) });
    expect(podSpecOf(workloadManifest).terminationGracePeriodSeconds).toBe(50);
  });

  describe('outputs: every <filter> and <match> routes what in_tail emits; buffered outputs flush at shutdown', () => {
    const core: OutputName[] = ['stdout', 'forward', 'http'];
    const plugins: OutputName[] = ['loki', 'elasticsearch', 'opensearch'];
    const withPlugins = () => LogAgent.fluentd({ image: 'registry.local/fluentd-plugins:1.0.0' });

    test.each([...core.map(o => [o, 'default image'] as const), ...plugins.map(o => [o, 'own image'] as const)])('%s (%s)', (name, image) => {
      const { conf } = fluentdConfig({ output: OUTPUTS[name]() }, image === 'own image' ? withPlugins() : undefined);
      expectFluentdRouting(conf, '/var/log/app/web.log');
      const match = only(conf, 'match');
      expect(v(match, '@id')).toBe('out_logs');
      if (name !== 'stdout') expect(v(child(match, 'buffer'), 'flush_at_shutdown')).toBe('true');
    });

    test('stdout: JSON lines', () => {
      const match = only(fluentdConfig().conf, 'match', 'stdout');
      expect(child(match, 'format').params['@type'].raw).toBe('json');
    });

    test('forward: the server, TLS with hostname verification', () => {
      const match = only(fluentdConfig({ output: OUTPUTS.forward() }).conf, 'match', 'forward');
      expect(v(match, 'transport')).toBe('tls');
      expect(v(match, 'tls_verify_hostname')).toBe('true');
      const server = child(match, 'server');
      expect([v(server, 'host'), v(server, 'port')]).toEqual(['fluentd.logging', '24224']);
      const plain = only(fluentdConfig({ output: LogOutput.forward({ host: 'fluentd' }) }).conf, 'match', 'forward');
      expect(plain.params.transport).toBeUndefined();
    });

    test('http: endpoint, NDJSON, basic auth and secret headers evaluated from the env (JSON-escaped)', () => {
      const match = only(fluentdConfig({ output: OUTPUTS.http() }).conf, 'match', 'http');
      expect(v(match, 'endpoint')).toBe('https://logs.example.com:443/ingest');
      expect(v(match, 'http_method')).toBe('post');
      expect(v(match, 'json_array')).toBe('false');
      expect(v(match, 'tls_verify_mode')).toBe('peer');
      // a hash parameter: the evaluated string is parsed as JSON
      expect(JSON.parse(v(match, 'headers'))).toEqual({ 'X-Api-Key': 'key a"b' });
      const auth = child(match, 'auth');
      expect([v(auth, 'method'), v(auth, 'username'), v(auth, 'password')]).toEqual(['basic', 'shipper', RUNTIME_ENV.LOG_OUTPUT_PASSWORD]);
      expect(child(match, 'format').params['@type'].raw).toBe('json');
    });

    test('loki (own image): url, credentials, tenant, static labels, JSON lines', () => {
      const match = only(fluentdConfig({ output: OUTPUTS.loki() }, withPlugins()).conf, 'match', 'loki');
      expect(v(match, 'url')).toBe('http://loki.monitoring:3100');
      expect([v(match, 'username'), v(match, 'password')]).toEqual(['shipper', RUNTIME_ENV.LOG_OUTPUT_PASSWORD]);
      expect(v(match, 'tenant')).toBe('shop');
      expect(JSON.parse(v(match, 'extra_labels'))).toEqual({ team: 'shop' });
      expect(v(match, 'line_format')).toBe('json');
    });

    test.each(['elasticsearch', 'opensearch'] as const)('%s (own image): host, port, scheme, credentials, index, no type', (name) => {
      const match = only(fluentdConfig({ output: OUTPUTS[name]() }, withPlugins()).conf, 'match', name);
      const tls = name === 'elasticsearch';
      expect(v(match, 'host')).toBe(tls ? 'es.logging' : 'os.logging');
      expect(v(match, 'port')).toBe('9200');
      expect(v(match, 'scheme')).toBe(tls ? 'https' : 'http');
      expect(match.params.ssl_verify ? v(match, 'ssl_verify') : undefined).toBe(tls ? 'true' : undefined);
      expect(v(match, 'index_name')).toBe(tls ? 'web' : 'app-logs');
      expect(v(match, 'suppress_type_name')).toBe('true');
      // the plugins require a tag (or _index) chunk key
      expect(child(match, 'buffer').arg).toBe('tag');
    });

    test.each([
      ['loki', 'fluent-plugin-grafana-loki'],
      ['elasticsearch', 'fluent-plugin-elasticsearch'],
      ['opensearch', 'fluent-plugin-opensearch'],
    ] as const)('%s on the default image: refused, naming the gem and the ways out', (name, gem) => {
      expect(() => fluentdConfig({ output: OUTPUTS[name]() })).toThrow(
        `WithLogAgent 'test/logs': the ${name} output needs the ${gem} gem, which the default Fluentd image ${Images.FLUENTD} ` +
        'does not ship (it has the core plugins only: stdout, forward, http). Pass `LogAgent.fluentd({ image })` with an image ' +
        `that has it (e.g. one built FROM ${Images.FLUENTD} with \`gem install ${gem}\`), or use ` +
        // the registered agents that ship to it: the collector ships to Loki (OTLP), not to the search engines
        `${name === 'loki' ? 'LogAgent.fluentBit(), LogAgent.vector() or LogAgent.otelCollector()' : 'LogAgent.fluentBit() or LogAgent.vector()'}, which support this output natively.`,
      );
    });

    test('user values that are not plain words are single-quoted (no embedded Ruby, no comment)', () => {
      const { conf } = fluentdConfig({ output: LogOutput.loki({ host: 'loki', tenantId: "team(it's)" }) }, withPlugins());
      const match = only(conf, 'match', 'loki');
      expect(match.params.tenant.kind).toBe('single');
      expect(v(match, 'tenant')).toBe("team(it's)");
    });

    test('a label value with `#{...}` reaches Loki as written: Fluentd would run it as Ruby inside a JSON hash', () => {
      // fluent/fluentd lib/fluent/config/literal_parser.rb `scan_json` (v1.19.3) evaluates `#{...}` in JSON values.
      const { text, conf } = fluentdConfig({ output: LogOutput.loki({ host: 'loki', labels: { app: "#{ENV['LOG_OUTPUT_PASSWORD']}" } }) }, withPlugins());
      expect(text).not.toContain("#{ENV['LOG_OUTPUT_PASSWORD']}");
      expect(JSON.parse(v(only(conf, 'match', 'loki'), 'extra_labels'))).toEqual({ app: "#{ENV['LOG_OUTPUT_PASSWORD']}" });
    });
  });

  test.each([
    [{ shutdownGrace: Duration.seconds(0) }, /^LogAgent\.fluentd\(\): shutdownGrace .*0s/],
    [{ flushInterval: Duration.millis(500) }, /^LogAgent\.fluentd\(\): flushInterval 0\.5s/],
    [{ flushInterval: Duration.seconds(0) }, /^LogAgent\.fluentd\(\): flushInterval .*0s/],
  ])('bad options %#: refused by the factory, naming the option and the value', (options, message) => {
    expect(() => LogAgent.fluentd(options)).toThrow(message);
  });

  test('Fluent Bit: a flush interval of 0 is refused too', () => {
    expect(() => LogAgent.fluentBit({ flushInterval: Duration.seconds(0) })).toThrow(/^LogAgent\.fluentBit\(\): flushInterval .*0s/);
  });
});
