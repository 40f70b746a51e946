/**
 * Liveness (issue 28): every sidecar of the library's carries a livenessProbe that restarts a
 * hung agent and never a healthy one, on a port the kubelet reaches without an admin interface;
 * WithSidecar and AdoptSidecar take a `livenessCheck`.
 *
 * What "restarts" means comes from the kubelet's prober as written from its code
 * (test/util/kubelet-prober.ts), not from the library's settings: a stall of up to 30 s (a
 * garbage collection, a flush blocked on a slow backend, a loaded node) is never a restart, an
 * agent that stops answering is restarted within 90 s. That the endpoints stay up while the
 * backend is down, and stop answering when the process hangs, is measured with the real
 * programs: test/agents/*.agent-test.ts (`npm run test:agents`) and
 * test/collector/otelcol.real-test.ts (`npm run test:collector`).
 */
import { Duration, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { parse as parseYaml } from 'yaml';
import { AdoptSidecar, LogAgent, SidecarCheck, SidecarMode, WithEnvoy, WithLogAgent, WithSidecar, WithTracer } from '../src';
import { WORKLOAD_KINDS, kplusWorkload, manifestOf, newChart, podSpecOf, rawDeployment } from './util/fixtures';
import { LivenessWorker, simulateLiveness } from './util/kubelet-prober';
import { restrictedViolations } from './util/pss';
import { checkPodSpec } from '../src/engine/rules';

type Attach = (chart: any, workload: any, props: any) => void;
/** Each sidecar of the library's, and how its config file says where the probed port listens. */
const SIDECARS: Array<[string, Attach, string]> = [
  ['WithLogAgent (Fluent Bit)', (c, workload, p) => new WithLogAgent(c, 'logs', { workload, ...p }), 'log-agent'],
  ['WithLogAgent (Vector)', (c, workload, p) => new WithLogAgent(c, 'logs', { workload, agent: LogAgent.vector(), ...p }), 'log-agent'],
  ['WithLogAgent (Fluentd)', (c, workload, p) => new WithLogAgent(c, 'logs', { workload, agent: LogAgent.fluentd(), ...p }), 'log-agent'],
  ['WithTracer', (c, workload, p) => new WithTracer(c, 'tracer', { workload, exporterEndpoint: 'otel-collector.observability:4317', ...p }), 'tracer'],
  ['WithEnvoy', (c, workload, p) => new WithEnvoy(c, 'envoy', { workload, appPort: 8080, appListensOnPodIp: true, ...p }), 'envoy'],
];

/**
 * Where the probed port listens, read from the agent's own config in its ConfigMap: the address
 * the agent binds for that port (each format as the agent reads it).
 */
function bindAddressOf(configs: Record<string, string>, port: number): string | undefined {
  const text = Object.values(configs).join('\n');
  // Fluent Bit: [SERVICE] HTTP_Listen / HTTP_Port
  const fb = /HTTP_Listen\s+(\S+)[\s\S]*?HTTP_Port\s+(\d+)/.exec(text);
  if (fb && Number(fb[2]) === port) return fb[1];
  // Fluentd: <source> @type monitor_agent, bind / port
  const fd = /@type monitor_agent[\s\S]*?bind\s+(\S+)[\s\S]*?port\s+(\d+)/.exec(text);
  if (fd && Number(fd[2]) === port) return fd[1];
  // Vector (api.address), the collector (an extension's endpoint), Envoy (socket_address): YAML or JSON
  const found: string[] = [];
  const walk = (o: any, key?: string) => {
    if (typeof o === 'string' && ['address', 'endpoint'].includes(key ?? '')) {
      const m = /^(.*):(\d+)$/.exec(o);
      if (m && Number(m[2]) === port) found.push(m[1]);
    } else if (o && typeof o === 'object') {
      if (o.socket_address?.port_value === port) found.push(o.socket_address.address);
      for (const [k, v] of Object.entries(o)) walk(v, k);
    }
  };
  for (const file of Object.values(configs)) {
    try {
      walk(parseYaml(file));
    } catch {
      // not YAML (Fluent Bit's and Fluentd's formats, read above)
    }
  }
  return found.length === 1 ? found[0] : undefined;
}

/** Envoy's admin address, from its bootstrap. */
function envoyAdmin(configs: Record<string, string>): { address: string; port: number } | undefined {
  for (const file of Object.values(configs)) {
    try {
      const a = parseYaml(file)?.admin?.address?.socket_address;
      if (a) return { address: a.address, port: a.port_value };
    } catch {
      // not YAML
    }
  }
  return undefined;
}

describe('every sidecar of the library carries a livenessProbe the kubelet can reach, on no admin interface', () => {
  for (const [name, attach, container] of SIDECARS) {
    for (const kind of WORKLOAD_KINDS) {
      for (const [version, mode] of [['1.27', SidecarMode.AUTO], ['1.29', SidecarMode.AUTO], ['1.30', SidecarMode.LEGACY]] as const) {
        test(`${name} on a ${kind}, ${version} (${mode})`, () => {
          const { chart } = newChart();
          attach(chart, kplusWorkload(chart, kind), { kubernetesVersion: version, mode, allowLegacyOnJob: true });
          const manifests = Testing.synth(chart);
          const spec = podSpecOf(manifests.find(x => x.kind === kind));
          const c = [...spec.initContainers ?? [], ...spec.containers].find((x: any) => x.name === container);
          const probe = c.livenessProbe;
          expect(probe).toBeDefined();
          const port = probe.httpGet?.port;
          // a declared port of the container (the kubelet probes the pod IP), the startup probe's
          expect(c.ports.map((p: any) => p.containerPort)).toContain(port);
          expect(port).toBe(c.startupProbe.httpGet.port);
          const configs = manifests.filter(m => m.kind === 'ConfigMap').reduce((acc, m) => ({ ...acc, ...m.data }), {});
          expect({ port, bind: bindAddressOf(configs, port) }).toEqual({ port, bind: '0.0.0.0' });
          const admin = envoyAdmin(configs);
          if (name === 'WithEnvoy') {
            expect(admin?.address).toBe('127.0.0.1');
            expect(port).not.toBe(admin?.port);
            expect(c.ports.map((p: any) => p.containerPort)).not.toContain(admin?.port);
          }
          // Fluent Bit's health endpoints fail on output errors: not the liveness endpoint
          expect(['/api/v1/health', '/api/v2/health']).not.toContain(probe.httpGet.path);
          // still restricted; the only other library container (the hook tools) has no probe at all
          expect(restrictedViolations(c, {})).toEqual([]);
          for (const other of spec.initContainers ?? []) {
            if (other.restartPolicy !== 'Always') expect(other.livenessProbe).toBeUndefined();
          }
          // the API server's rules (a probe on an init container only with restartPolicy: Always)
          expect(checkPodSpec(spec, { minor: Number(version.split('.')[1]), gate: false }, 'web', { kind })).toEqual([]);
        });
      }
    }
  }
});

describe('the kubelet (simulated from its prober) restarts a hung agent and never a healthy one', () => {
  const probes = SIDECARS.map(([name, attach, container]) => {
    const { chart } = newChart();
    attach(chart, kplusWorkload(chart, 'Deployment'), { kubernetesVersion: '1.29' });
    const spec = podSpecOf(manifestOf(Testing.synth(chart), 'Deployment'));
    return [name, [...spec.initContainers, ...spec.containers].find((x: any) => x.name === container).livenessProbe] as const;
  });
  const up = { status: 200, seconds: 0.01 };

  test.each(probes)('%s: a stall of up to 30 s (a GC pause, a blocked flush, a loaded node) is never a restart', (_, probe) => {
    for (const start of [0, 3, 7.5, 100]) {
      for (const stall of [1, 5, 12, 30]) {
        expect({ start, stall, restart: simulateLiveness(probe, t => (t >= start && t < start + stall ? undefined : up), 600) })
          .toEqual({ start, stall, restart: undefined });
      }
    }
    // answers that take 4 s each (a node under load) keep it alive
    expect(simulateLiveness(probe, () => ({ status: 200, seconds: 4 }), 600)).toBeUndefined();
  });

  test.each(probes)('%s: an agent that stops answering (stopped, deadlocked) is restarted within 90 s', (_, probe) => {
    for (const hangAt of [0, 4, 9.9, 200]) {
      const restart = simulateLiveness(probe, t => (t < hangAt ? up : undefined), 1000);
      expect(restart).toBeDefined();
      expect(restart! - hangAt).toBeLessThanOrEqual(90);
    }
  });

  test('the simulation can fail: the kubelet\'s default timing (1 s timeout, 3 x 10 s) restarts an agent that answers in 4 s', () => {
    expect(simulateLiveness({}, () => ({ status: 200, seconds: 4 }), 600)).toBe(20 + 1);
    expect(simulateLiveness({ periodSeconds: 1, failureThreshold: 3 }, t => (t >= 10 && t < 15 ? undefined : up), 600)).toBe(12 + 1);
    // a status of 400 or above is a failure, 399 a success (pkg/probe/http/http.go)
    expect(simulateLiveness({}, () => ({ status: 500, seconds: 0 }), 600)).toBe(20);
    expect(simulateLiveness({}, () => ({ status: 399, seconds: 0 }), 600)).toBeUndefined();
    const w = new LivenessWorker({ failureThreshold: 2 });
    expect([w.record(false), w.record(true), w.record(false), w.record(false)]).toEqual([false, false, false, true]);
  });
});

// ---------------------------------------------------------------------------
// WithSidecar / AdoptSidecar livenessCheck
// ---------------------------------------------------------------------------

const names = (spec: any) => [...spec.initContainers ?? [], ...spec.containers].map((c: any) => c.name);
const PROXY = 'gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.25.3';
// cloud-sql-proxy v2.25.3 cmd/root.go: `--health-check` serves /startup, /readiness and /liveness on `--http-port` (9090)
const proxyProps = (workload: any, kubernetesVersion: string, extra: any = {}) => ({
  workload,
  kubernetesVersion,
  containerName: 'cloud-sql-proxy',
  image: PROXY,
  args: ['--port=5432', '--health-check', '--http-address=0.0.0.0', 'my-project:europe-west1:db'],
  ports: [{ number: 9090, name: 'proxy-health' }],
  localPorts: [5432],
  startupCheck: SidecarCheck.http(9090, { path: '/startup' }),
  livenessCheck: SidecarCheck.http(9090, { path: '/liveness', period: Duration.seconds(10), timeout: Duration.minutes(1) }),
  ...extra,
});

describe('WithSidecar livenessCheck', () => {
  test.each([['1.27', 'containers'], ['1.29', 'initContainers']])('%s: the livenessProbe of the sidecar (in %s)', (version, where) => {
    const { chart } = newChart();
    const web = kplusWorkload(chart, 'Deployment');
    new WithSidecar(chart, 'proxy', proxyProps(web, version));
    const spec = podSpecOf(manifestOf(Testing.synth(chart), 'Deployment'));
    const c = spec[where].find((x: any) => x.name === 'cloud-sql-proxy');
    expect(c.livenessProbe).toEqual({ failureThreshold: 6, httpGet: { path: '/liveness', port: 9090 }, periodSeconds: 10, timeoutSeconds: 1 });
    expect(checkPodSpec(spec, { minor: Number(version.split('.')[1]), gate: false }, 'web', { kind: 'Deployment' })).toEqual([]);
  });

  test('TCP and exec checks too; none by default', () => {
    const { chart } = newChart();
    new WithSidecar(chart, 'sa', proxyProps(kplusWorkload(chart, 'Deployment', 'a'), '1.29', { livenessCheck: SidecarCheck.tcp(9090) }));
    new WithSidecar(chart, 'sb', proxyProps(kplusWorkload(chart, 'Deployment', 'b'), '1.29', {
      livenessCheck: SidecarCheck.exec(['/bin/sh', '-c', 'test -S /run/agent.sock']),
    }));
    new WithSidecar(chart, 'sc', proxyProps(kplusWorkload(chart, 'Deployment', 'c'), '1.29', { livenessCheck: undefined }));
    const probeOf = (name: string) => podSpecOf(Testing.synth(chart).find((m: any) => m.kind === 'Deployment' && m.metadata.name.includes(`-${name}-`)))
      .initContainers.find((x: any) => x.name === 'cloud-sql-proxy').livenessProbe;
    expect(probeOf('a')).toEqual({ failureThreshold: 120, tcpSocket: { port: 9090 }, periodSeconds: 1, timeoutSeconds: 1 });
    expect(probeOf('b').exec).toEqual({ command: ['/bin/sh', '-c', 'test -S /run/agent.sock'] });
    expect(probeOf('c')).toBeUndefined();
  });

  test('a port in localPorts (127.0.0.1 only): refused with the path, the port and the fix', () => {
    const { chart } = newChart();
    const web = kplusWorkload(chart, 'Deployment');
    expect(() => new WithSidecar(chart, 'proxy', proxyProps(web, '1.29', { livenessCheck: SidecarCheck.http(5432) })))
      .toThrow("WithSidecar 'test/proxy': livenessCheck connects to port 5432, which is in localPorts (bound on 127.0.0.1 only), but the kubelet probes the pod IP");
  });

  test('a port the sidecar does not declare: refused, naming the declared ports', () => {
    const { chart } = newChart();
    const web = kplusWorkload(chart, 'Deployment');
    expect(() => new WithSidecar(chart, 'proxy', proxyProps(web, '1.29', { livenessCheck: SidecarCheck.http(9091, { path: '/liveness' }) })))
      .toThrow("WithSidecar 'test/proxy': livenessCheck connects to port 9091, which is none of the sidecar's declared ports (9090)");
  });

  test('not a SidecarCheck (JavaScript): refused before anything is attached; an exec check needs a command', () => {
    const { chart } = newChart();
    const web = kplusWorkload(chart, 'Deployment');
    expect(() => new WithSidecar(chart, 'proxy', proxyProps(web, '1.29', { livenessCheck: { httpGet: { port: 9090 } } })))
      .toThrow("WithSidecar 'test/proxy': livenessCheck must be made with SidecarCheck.http(), .tcp() or .exec()");
    // nothing attached: the workload is synthesized as it was
    expect(names(podSpecOf(manifestOf(Testing.synth(chart), 'Deployment')))).toEqual(['app']);
    expect(() => SidecarCheck.exec([])).toThrow(/command \[\] must be a non-empty list/);
  });
});

describe('AdoptSidecar livenessCheck', () => {
  test.each([['1.27', 'containers'], ['1.29', 'initContainers']])('%s: laid over the adopted container (in %s), its other fields kept', (version, where) => {
    const { chart } = newChart();
    const raw = rawDeployment(chart, 'vendor', {
      containers: [
        { name: 'app', image: 'ghcr.io/example/web:1.0.0' },
        { name: 'proxy', image: PROXY, args: ['--health-check'], ports: [{ containerPort: 9090 }], livenessProbe: { tcpSocket: { port: 9090 } } },
      ],
    });
    new AdoptSidecar(chart, 'adopt', {
      workload: raw,
      kubernetesVersion: version,
      containerName: 'proxy',
      startupCheck: SidecarCheck.http(9090, { path: '/startup' }),
      livenessCheck: SidecarCheck.http(9090, { path: '/liveness', period: Duration.seconds(10), timeout: Duration.minutes(1) }),
    });
    const spec = podSpecOf(manifestOf(Testing.synth(chart), 'Deployment'));
    const c = spec[where].find((x: any) => x.name === 'proxy');
    expect(c.livenessProbe).toEqual({ failureThreshold: 6, httpGet: { path: '/liveness', port: 9090 }, periodSeconds: 10, timeoutSeconds: 1 });
    expect(c.args).toEqual(['--health-check']);
  });

  test('a check on a port the adopted container does not declare: an error at synthesis naming its ports; none when it declares none', () => {
    const synth = (ports: any[] | undefined, livenessPort: number) => {
      const { chart } = newChart();
      const raw = rawDeployment(chart, 'vendor', {
        containers: [{ name: 'app', image: 'ghcr.io/example/web:1.0.0' }, { name: 'proxy', image: PROXY, ...(ports ? { ports } : {}) }],
      });
      new AdoptSidecar(chart, 'adopt', {
        workload: raw,
        kubernetesVersion: '1.29',
        containerName: 'proxy',
        startupCheck: SidecarCheck.http(9090, { path: '/startup' }),
        livenessCheck: SidecarCheck.http(livenessPort, { path: '/liveness' }),
      });
      return () => Testing.synth(chart);
    };
    expect(synth([{ containerPort: 9090 }, { containerPort: 5432 }], 9091))
      .toThrow("AdoptSidecar 'test/adopt': livenessCheck connects to port 9091, which is none of the ports container 'proxy' declares (9090, 5432)");
    expect(synth([{ containerPort: 8080 }], 8080))
      .toThrow("AdoptSidecar 'test/adopt': startupCheck connects to port 9090, which is none of the ports container 'proxy' declares (8080)");
    expect(synth([{ containerPort: 9090 }], 9090)).not.toThrow();
    expect(synth(undefined, 9091)).not.toThrow();
  });

  test('not a SidecarCheck: refused with the path', () => {
    const { chart } = newChart();
    const web = new kplus.Deployment(chart, 'web', { containers: [{ image: 'ghcr.io/example/web:1.0.0', name: 'app' }, { image: PROXY, name: 'proxy' }] });
    expect(() => new AdoptSidecar(chart, 'adopt', { workload: web, containerName: 'proxy', livenessCheck: 'tcp:9090' as any }))
      .toThrow("AdoptSidecar 'test/adopt': livenessCheck must be made with SidecarCheck.http(), .tcp() or .exec() (got");
  });
});
