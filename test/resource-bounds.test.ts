/**
 * What a platform engineer notices (issue 48 point 6): a sidecar asking more CPU or memory than a
 * node of the usual machine types offers synthesizes with a warning that names the construct, the
 * field and the likely unit mistake (src/facts/pod-defaults.ts SIDECAR_RESOURCE_BOUND); at the bound, or
 * with the defaults, no warning; docs/errors.md states the bound the code uses.
 */
import * as fs from 'fs';
import * as path from 'path';
import { Size } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { SidecarResources, SidecarWarnings, WithEnvoy, WithLogAgent, WithTracer } from '../src';
import { withoutVersionEnv } from './util/catalogue';
import { kplusWorkload, newChart } from './util/fixtures';
import { SIDECAR_RESOURCE_BOUND } from '../src/facts/pod-defaults';

withoutVersionEnv();

type Make = (chart: any, resources: SidecarResources | undefined) => void;
const SIDECARS: Array<[string, Make]> = [
  ['WithTracer', (chart, resources) => new WithTracer(chart, 's', { workload: kplusWorkload(chart, 'Deployment'), kubernetesVersion: '1.29', exporterEndpoint: 'otel:4317', resources })],
  ['WithLogAgent', (chart, resources) => new WithLogAgent(chart, 's', { workload: kplusWorkload(chart, 'Deployment'), kubernetesVersion: '1.29', resources })],
  ['WithEnvoy', (chart, resources) => new WithEnvoy(chart, 's', { workload: kplusWorkload(chart, 'Deployment'), kubernetesVersion: '1.29', appPort: 8080, appListensOnPodIp: true, resources })],
];

function warningsOf(make: Make, resources: SidecarResources | undefined): { warnings: string[]; yaml: string } {
  const { app, chart } = newChart();
  make(chart, resources);
  const yaml = app.synthYaml();
  return { warnings: SidecarWarnings.of(app).filter(w => w.includes('resources.')), yaml };
}

describe.each(SIDECARS)('%s', (name, make) => {
  test('500 CPUs and 5 TiB: synthesized, with one warning per field naming the construct, the value and the unit to check', () => {
    const huge = {
      cpu: { request: kplus.Cpu.units(500), limit: kplus.Cpu.units(500) },
      memory: { request: Size.tebibytes(5), limit: Size.tebibytes(5) },
    };
    const { warnings, yaml } = warningsOf(make, huge);
    expect(yaml).toContain('5242880Mi');
    expect(warnings).toEqual([
      `${name} 'test/s': resources.cpu.request 500 is 500 CPUs, above 64 CPUs, more than a node of the usual machine types offers one pod ` +
      "(the pod stays Pending where no node has it); if you meant millicores, use { amount: '500m' } (Cpu.millis)",
      `${name} 'test/s': resources.memory.request 5242880Mi is 5120 GiB, above 256 GiB, more than a node of the usual machine types offers one pod ` +
      '(the pod stays Pending where no node has it); check the unit (Size.mebibytes, not gibibytes or tebibytes)',
      expect.stringContaining(`${name} 'test/s': resources.cpu.limit 500 is 500 CPUs`),
      expect.stringContaining(`${name} 'test/s': resources.memory.limit 5242880Mi is 5120 GiB`),
    ]);
  });

  test('at the bound (64 CPUs, 256 GiB) and with the defaults: no warning', () => {
    const atBound = {
      cpu: { request: kplus.Cpu.units(1), limit: kplus.Cpu.units(SIDECAR_RESOURCE_BOUND.cpuCores) },
      memory: { request: Size.mebibytes(256), limit: Size.mebibytes(SIDECAR_RESOURCE_BOUND.memoryMiB) },
    };
    expect(warningsOf(make, atBound).warnings).toEqual([]);
    expect(warningsOf(make, undefined).warnings).toEqual([]);
    expect(warningsOf(make, { cpu: { limit: { amount: '64001m' } } }).warnings).toEqual([expect.stringContaining('resources.cpu.limit 64001m is 64.001 CPUs, above 64 CPUs')]);
  });

  test('a negative CPU amount is an error naming the construct', () => {
    const { chart } = newChart();
    expect(() => make(chart, { cpu: { limit: kplus.Cpu.millis(-5) } })).toThrow(`${name} 'test/s': resources.cpu.limit "-5m" is negative`);
  });
});

test('docs/errors.md states the bound the code uses', () => {
  const doc = fs.readFileSync(path.join(__dirname, '..', 'docs', 'errors.md'), 'utf8');
  const stated = /<!-- resource-bound -->(.*?)<!-- \/resource-bound -->/.exec(doc)?.[1];
  expect(stated).toBe(`${SIDECAR_RESOURCE_BOUND.cpuCores} CPUs or ${SIDECAR_RESOURCE_BOUND.memoryMiB / 1024} GiB`);
});
