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
    workload: /^(Job|CronJob)\//,
    targets: ['1.27', '1.28'],
    message: /a legacy sidecar on (Job|CronJob) '[^']+' never exits, so the Job never completes/,
    why: 'below native sidecars a log agent in spec.containers never exits, so the Job never completes',
  },
  {
    workload: /^Deployment\/myapp$/,
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
