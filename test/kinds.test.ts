/**
 * The one kinds table (src/facts/kinds.ts): which kinds carry a pod template and where, read the
 * same way by the engine, the timeline, the checks and the CLI.
 */
import * as fs from 'fs';
import * as path from 'path';
import { COMPLETING_KINDS, SUPPORTED_KINDS, TEMPLATE_PATHS, podSpecIn, podTemplateOf } from '../src/facts/kinds';

/** A manifest of `kind` whose pod spec is `spec`, built from the API's own shapes (not from the table). */
function manifestOf(kind: string, spec: object): any {
  const template = { metadata: { labels: { app: 'a' } }, spec };
  switch (kind) {
    case 'Pod': return { apiVersion: 'v1', kind, metadata: { name: 'p' }, spec };
    case 'CronJob': return { apiVersion: 'batch/v1', kind, metadata: { name: 'c' }, spec: { schedule: '* * * * *', jobTemplate: { spec: { template } } } };
    default: return { apiVersion: 'apps/v1', kind, metadata: { name: 'w' }, spec: { template } };
  }
}

test('the kinds with a pod template are the eight workload kinds of the API', () => {
  expect([...SUPPORTED_KINDS].sort()).toEqual(['CronJob', 'DaemonSet', 'Deployment', 'Job', 'Pod', 'ReplicaSet', 'ReplicationController', 'StatefulSet']);
  expect([...COMPLETING_KINDS].sort()).toEqual(['CronJob', 'Job']);
});

test.each(Object.keys(TEMPLATE_PATHS))('%s: podSpecIn reads the pod spec where the API puts it, and creates nothing', (kind) => {
  const spec = { containers: [{ name: 'app', image: 'a' }] };
  const manifest = manifestOf(kind, spec);
  const before = JSON.stringify(manifest);
  const where = kind === 'Pod' ? manifest.spec : kind === 'CronJob' ? manifest.spec.jobTemplate.spec.template.spec : manifest.spec.template.spec;
  expect(podSpecIn(manifest)).toBe(where);
  expect(podTemplateOf(structuredClone(manifest))?.spec).toEqual(spec);
  expect(JSON.stringify(manifest)).toBe(before);
  expect(podSpecIn({ kind })).toBeUndefined();
});

test('podSpecIn of a kind without a pod template (or of no object) is undefined, also for names of Object.prototype', () => {
  for (const m of [{ kind: 'Service', spec: { template: { spec: {} } } }, { kind: 'toString' }, { kind: 'constructor' }, {}, null, undefined]) {
    expect(podSpecIn(m as any)).toBeUndefined();
  }
});

test('no file of src/ outside the table spells a pod template\'s path or the completing kinds again', () => {
  const offenders: string[] = [];
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {walk(p);} else if (p.endsWith('.ts') && !p.endsWith(path.join('facts', 'kinds.ts'))) {
        const text = fs.readFileSync(p, 'utf8');
        if (/jobTemplate\??\.spec\??\.template/.test(text) || /kind === 'Job' \|\| [\w.]*kind === 'CronJob'/.test(text) || /new Set\(\['Job', 'CronJob'\]\)/.test(text)) {
          offenders.push(path.relative(path.join(__dirname, '..'), p));
        }
      }
    }
  };
  walk(path.join(__dirname, '..', 'src'));
  expect(offenders).toEqual([]);
});
