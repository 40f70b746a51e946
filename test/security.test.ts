/**
 * Every container the library adds meets the Pod Security Standard "restricted" profile, has
 * small resources of its own, and every volume it adds is of an allowed type.
 */
import { Testing } from 'cdk8s';
import { SidecarMode, WithLogAgent } from '../src';
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

describe('WithLogAgent containers and volumes', () => {
  for (const kind of WORKLOAD_KINDS) {
    for (const [version, mode] of [['1.27', SidecarMode.AUTO], ['1.29', SidecarMode.AUTO], ['1.30', SidecarMode.LEGACY]] as const) {
      test(`${kind} on ${version} (${mode})`, () => {
        const { chart } = newChart();
        const workload = kplusWorkload(chart, kind);
        new WithLogAgent(chart, 'logs', { workload, kubernetesVersion: version, mode, allowLegacyOnJob: true });
        const m = Testing.synth(chart).find(x => x.kind === kind);
        const spec = podSpecOf(m);
        const added = [...(spec.initContainers ?? []), ...spec.containers].filter((c: any) => !USER_CONTAINERS.has(c.name));
        expect(added.length).toBeGreaterThan(0);
        for (const c of added) {
          // the pod-level context is the user's: our containers must not rely on it
          expect(restrictedViolations(c, {})).toEqual([]);
          expect(c.resources.requests).toBeDefined();
          expect(c.resources.limits).toBeDefined();
        }
        for (const v of spec.volumes) expect(volumeViolations(v)).toEqual([]);
      });
    }
  }
});
