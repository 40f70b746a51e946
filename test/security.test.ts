/**
 * Every container the library adds meets the Pod Security Standard "restricted" profile, has
 * small resources of its own, and every volume it adds is of an allowed type.
 */
import { Testing } from 'cdk8s';
import { LogAgent, SidecarMode, WithEnvoy, WithLogAgent, WithTracer } from '../src';
import { WORKLOAD_KINDS, kplusWorkload, newChart, podSpecOf } from './util/fixtures';
import { restrictedViolations, volumeViolations } from './util/pss';

const USER_CONTAINERS = new Set(['app']);

describe('the restricted-profile checker itself', () => {
  test('flags what the profile forbids', () => {
    expect(restrictedViolations({ name: 'c', securityContext: { privileged: true, runAsUser: 0, capabilities: { add: ['SYS_ADMIN'] } }, ports: [{ hostPort: 80 }] })).toEqual([
      "container 'c': privileged must be unset or false",
      "container 'c': hostPort 80 is not allowed",
      "container 'c': capability SYS_ADMIN is not allowed (baseline)",
      "container 'c': allowPrivilegeEscalation must be false",
      "container 'c': capabilities.drop must include ALL",
      "container 'c': only NET_BIND_SERVICE may be added (got SYS_ADMIN)",
      "container 'c': runAsNonRoot must be true",
      "container 'c': runAsUser must not be 0",
      "container 'c': seccompProfile.type must be RuntimeDefault or Localhost (got undefined)",
    ]);
    expect(volumeViolations({ name: 'h', hostPath: { path: '/' } })).toEqual(["volume 'h': type hostPath is not allowed"]);
  });
  test('pod-level settings count', () => {
    const c = { name: 'c', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } };
    expect(restrictedViolations(c, { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } })).toEqual([]);
  });
});

type Attach = (chart: any, workload: any, props: any) => void;
const SIDECARS: Array<[string, Attach]> = [
  ['WithLogAgent (Fluent Bit)', (c, workload, p) => new WithLogAgent(c, 'logs', { workload, ...p })],
  ['WithLogAgent (Vector)', (c, workload, p) => new WithLogAgent(c, 'logs', { workload, agent: LogAgent.vector(), ...p })],
  ['WithLogAgent (Fluentd)', (c, workload, p) => new WithLogAgent(c, 'logs', { workload, agent: LogAgent.fluentd(), ...p })],
  ['WithTracer', (c, workload, p) => new WithTracer(c, 'tracer', { workload, exporterEndpoint: 'otel-collector.observability:4317', ...p })],
  ['WithEnvoy (mTLS, upstream)', (c, workload, p) => new WithEnvoy(c, 'envoy', {
    workload,
    appPort: 8080,
    // The shared fixture's app declares `portNumber: 8080` (a TCP startup probe on the pod IP), so it listens there too.
    appListensOnPodIp: true,
    tls: { secret: { name: 'web-tls' }, clientCaSecret: { name: 'web-ca' } },
    upstreams: [{ name: 'payments', localPort: 9002, host: 'payments.shop.svc', port: 8080 }],
    ...p,
  })],
];

describe('every container and volume the library adds', () => {
  for (const [name, attach] of SIDECARS) {
    for (const kind of WORKLOAD_KINDS) {
      for (const [version, mode] of [['1.27', SidecarMode.AUTO], ['1.29', SidecarMode.AUTO], ['1.30', SidecarMode.LEGACY]] as const) {
        test(`${name} on a ${kind}, ${version} (${mode})`, () => {
          const { chart } = newChart();
          const workload = kplusWorkload(chart, kind);
          attach(chart, workload, { kubernetesVersion: version, mode, allowLegacyOnJob: true });
          const m = Testing.synth(chart).find(x => x.kind === kind);
          const spec = podSpecOf(m);
          const added = [...(spec.initContainers ?? []), ...spec.containers].filter((c: any) => !USER_CONTAINERS.has(c.name));
          expect(added.length).toBeGreaterThan(0);
          for (const c of added) {
            // the pod-level context is the user's: our containers must not rely on it
            expect(restrictedViolations(c, {})).toEqual([]);
            expect(c.securityContext.readOnlyRootFilesystem).toBe(true);
            for (const r of ['cpu', 'memory']) {
              expect(c.resources.requests[r]).toBeDefined();
              expect(c.resources.limits[r]).toBeDefined();
            }
          }
          for (const v of spec.volumes) expect(volumeViolations(v)).toEqual([]);
        });
      }
    }
  }
});
