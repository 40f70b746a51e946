/**
 * Issue 27: vendor-shaped manifests (test/fixtures/vendor/*.yaml, written for this test: explicit
 * grace periods, probes on every port kind incl. named ports and gRPC, exec preStop scripts, their
 * own native and legacy sidecars, hostNetwork, several containers, StatefulSets with claim
 * templates, Jobs, CronJobs) brought in with `Include`, given the sidecars with default props (a
 * log agent on every workload; the tracer, and Envoy on the first declared port, on Deployments)
 * at every supported target. At least 95 % of the workload x target cells synthesize on the first
 * try; every output is schema-, rule- and PSS-valid and changes the user's objects only as
 * documented (test/util/vendor-cells.ts); every refused cell is one of the true hazards listed
 * below, with the library's message for it.
 */
import * as fs from 'fs';
import * as path from 'path';
import { CELL_TARGETS, Cell, runCells, workloadsOf } from './util/vendor-cells';

const DIR = path.join(__dirname, 'fixtures', 'vendor');
const FILES = fs.readdirSync(DIR).filter(f => f.endsWith('.yaml')).sort().map(f => path.join(DIR, f));

/**
 * The refusals that are true hazards: what the pod would do if the library emitted it anyway.
 * Each is matched by the workload, the targets and the library's message.
 */
const HAZARDS: Array<{ workload: RegExp; targets: string[]; message: RegExp; why: string }> = [
  {
    workload: /^DaemonSet\/node-exporter$/,
    targets: CELL_TARGETS.map(t => `${t.version}${t.gate ? ' (gate on)' : ''}`),
    message: /uses hostNetwork: true, so its sidecars would listen on the node's network/,
    why: 'the sidecars\' ports would be the node\'s: admin ports on the node\'s loopback, health ports colliding between pods',
  },
  {
    workload: /^(Job\/ingress-admission-create|CronJob\/report)$/,
    targets: ['1.27', '1.28'],
    message: /a legacy sidecar on (Job|CronJob) '[^']+' never exits, so the Job never completes; with restartPolicy OnFailure the library cannot make it exit with the app/,
    why: 'below native sidecars a log agent in spec.containers never exits by itself; with restartPolicy OnFailure the kubelet restarts a failed app ' +
      'in place, and a wrapper that stops the agent when the app is gone cannot tell a failed try from the last one',
  },
  {
    workload: /^(Deployment\/myapp|Job\/myjob)$/,
    targets: ['1.27', '1.28'],
    message: /init container 'logshipper'.*restartPolicy/,
    why: 'the manifest\'s own native sidecar: the release drops restartPolicy and the pod hangs in Init',
  },
];

const label = (c: Cell) => `${path.basename(c.file)} ${c.workload} @ ${c.target}`;

describe('vendor-shaped manifests, default props, every supported target', () => {
  // GIVEN the fixtures, WHEN every cell is synthesized
  const cells = runCells(FILES);
  const refused = cells.filter(c => c.refused !== undefined);

  test('the fixtures carry what vendor manifests carry', () => {
    const text = FILES.map(f => fs.readFileSync(f, 'utf-8')).join('\n');
    for (const needle of ['terminationGracePeriodSeconds: 30', 'terminationGracePeriodSeconds: 60', 'grpc: { port:', 'port: http', 'tcpSocket',
      'preStop', 'restartPolicy: Always', 'hostNetwork: true', 'volumeClaimTemplates', 'kind: Job', 'kind: CronJob', 'kind: StatefulSet']) {
      expect(text).toContain(needle);
    }
    expect(FILES.flatMap(workloadsOf).length).toBeGreaterThanOrEqual(40);
  });

  test('at least 95 % of the workload x target cells synthesize on the first try', () => {
    const share = (cells.length - refused.length) / cells.length;
    // (printed so that a reader of the test output sees the figures)
    process.stdout.write(`vendor fixtures: ${cells.length - refused.length} of ${cells.length} cells synthesized (${(100 * share).toFixed(1)} %), ` +
      `${refused.length} refused: ${refused.map(label).join('; ')}\n`);
    expect(share).toBeGreaterThanOrEqual(0.95);
  });

  test('the cells synthesized and the cells refused, each with its reason (issue 27: 293 of 308 before a legacy sidecar could exit with the app)', () => {
    expect(cells.length - refused.length).toBeGreaterThanOrEqual(321);
    const reason = (c: Cell) =>
      HAZARDS.find(h => h.workload.test(c.workload) && h.targets.includes(c.target) && h.message.test(c.refused!))?.why ?? c.refused;
    const byReason = new Map<string, string[]>();
    for (const c of refused) byReason.set(reason(c)!, [...(byReason.get(reason(c)!) ?? []), label(c)]);
    expect(Object.fromEntries(byReason)).toEqual({
      [HAZARDS[0].why]: CELL_TARGETS.map(t => `monitoring.yaml DaemonSet/node-exporter @ ${t.version}${t.gate ? ' (gate on)' : ''}`),
      [HAZARDS[1].why]: ['ingress.yaml Job/ingress-admission-create @ 1.27', 'ingress.yaml Job/ingress-admission-create @ 1.28',
        'sidecars.yaml CronJob/report @ 1.27', 'sidecars.yaml CronJob/report @ 1.28'],
      [HAZARDS[2].why]: ['sidecars.yaml Deployment/myapp @ 1.27', 'sidecars.yaml Job/myjob @ 1.27', 'sidecars.yaml Deployment/myapp @ 1.28', 'sidecars.yaml Job/myjob @ 1.28'],
    });
    // the Jobs with restartPolicy Never synthesize at 1.27 and 1.28, their log agent exiting with the app
    for (const c of cells.filter(x => path.basename(x.file) === 'batch.yaml' && ['1.27', '1.28'].includes(x.target))) {
      expect([label(c), c.refused]).toEqual([label(c), undefined]);
      expect(c.warnings.join('\n')).toMatch(/is run under a wrapper that exits with the app/);
    }
  });

  test('every refused cell is a true hazard, with the library\'s message for it', () => {
    const explained = (c: Cell) => HAZARDS.some(h => h.workload.test(c.workload) && h.targets.includes(c.target) && h.message.test(c.refused!));
    const unexplained = refused.filter(c => !explained(c));
    expect(unexplained.map(c => `${label(c)}: ${c.refused}`)).toEqual([]);
    // and every listed hazard is refused (none is silently emitted)
    for (const h of HAZARDS) {
      for (const c of cells.filter(x => h.workload.test(x.workload) && h.targets.includes(x.target))) {
        expect([label(c), c.refused === undefined ? 'emitted' : 'refused']).toEqual([label(c), 'refused']);
      }
    }
  });

  test('every output is schema-, rule- and PSS-valid and changes the user\'s objects only as documented', () => {
    expect(cells.filter(c => c.violations.length > 0).map(c => `${label(c)}: ${c.violations.join('; ')}`)).toEqual([]);
  });

  test('what was inferred is visible: a warning for every vendor grace period below the need and every probe on appPort', () => {
    const at = (file: string, workload: string, target: string) =>
      cells.find(c => path.basename(c.file) === file && c.workload === workload && c.target === target)!;
    // emailservice: grace 5 s, a gRPC probe on appPort 8080 by number
    expect(at('shop.yaml', 'Deployment/emailservice', '1.30').warnings).toEqual(expect.arrayContaining([
      expect.stringMatching(/terminationGracePeriodSeconds 5s is taken as the app's own budget/),
      expect.stringMatching(/the manifest probes appPort 8080 on the pod IP \('server' readinessProbe \(grpc\), 'server' livenessProbe \(grpc\)\)/),
      expect.stringMatching(/Service 'vendor\/manifest\/emailservice-service' selects the workload's pods and sends traffic to appPort 8080/),
    ]));
    // the ingress controller: an exec preStop the library cannot read, within its own 300 s
    expect(at('ingress.yaml', 'Deployment/ingress-controller', '1.33').warnings).toEqual(expect.arrayContaining([
      expect.stringMatching(/terminationGracePeriodSeconds 300s is taken as the app's own budget \(its preStop hook included: container\(s\) 'controller'/),
    ]));
    // the manifest's own native sidecar: the documented 10 s
    expect(at('sidecars.yaml', 'Deployment/myapp', '1.29').warnings).toEqual(expect.arrayContaining([
      expect.stringMatching(/has native sidecars of its own \('logshipper'\).*so 10s each is counted/),
    ]));
  });
});
