/**
 * The one kinds table (src/facts/kinds.ts): which kinds carry a pod template and where, read the
 * same way by the engine, the timeline, the checks and the CLI.
 */
import * as fs from 'fs';
import * as path from 'path';
import { COMPLETING_KINDS, SUPPORTED_KINDS, TEMPLATE_PATHS, jobSpecIn, podTemplateCopy, podTemplateIn, podTemplateOf } from '../src/facts/kinds';

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

test.each(Object.keys(TEMPLATE_PATHS))('%s: podTemplateIn reads the pod template where the API puts it, and creates nothing', (kind) => {
  const spec = { containers: [{ name: 'app', image: 'a' }] };
  const manifest = manifestOf(kind, spec);
  const before = JSON.stringify(manifest);
  const where = kind === 'Pod' ? manifest.spec : kind === 'CronJob' ? manifest.spec.jobTemplate.spec.template.spec : manifest.spec.template.spec;
  expect(podTemplateIn(manifest)?.spec).toBe(where);
  expect(podTemplateCopy(manifest)?.spec).toEqual(spec);
  expect(podTemplateCopy(manifest)?.spec).not.toBe(where);
  expect(JSON.stringify(manifest)).toBe(before);
  // a manifest without its template: none (a Pod is its own template)
  expect(podTemplateIn({ kind })).toEqual(kind === 'Pod' ? { kind } : undefined);
  expect(JSON.stringify(manifest)).toBe(before);
});

test.each(Object.keys(TEMPLATE_PATHS))('%s: podTemplateOf creates what is missing on the manifest it is given', (kind) => {
  const bare: any = { kind, metadata: { name: 'x' } };
  const template = podTemplateOf(bare)!;
  // (a Pod is its own template: its metadata is the object's)
  expect(template).toEqual({ metadata: kind === 'Pod' ? { name: 'x' } : {}, spec: {} });
  template.spec.containers = [{ name: 'app' }];
  expect(podTemplateIn(bare)?.spec.containers).toEqual([{ name: 'app' }]);
  // a node of the path that is not an object: no template (the API server refuses the object's type)
  const broken: any = { kind, spec: 5 };
  expect(podTemplateOf(broken)).toBeUndefined();
  // (a Pod's template node is the Pod itself: podTemplateIn gives it, whose spec is not an object)
  expect(kind === 'Pod' ? podTemplateIn(broken)?.spec : podTemplateIn(broken)).toBe(kind === 'Pod' ? 5 : undefined);
});

test('podTemplateIn, podTemplateOf and podTemplateCopy of a kind without a pod template (or of no object) are undefined, also for names of Object.prototype', () => {
  for (const m of [{ kind: 'Service', spec: { template: { spec: {} } } }, { kind: 'toString' }, { kind: 'constructor' }, {}, null, undefined, 5, [{ kind: 'Pod' }]]) {
    expect(podTemplateIn(m as any)).toBeUndefined();
    expect(podTemplateCopy(m)).toBeUndefined();
  }
  for (const m of [{ kind: 'Service', spec: { template: { spec: {} } } }, { kind: 'toString' }, { kind: 'constructor' }, {}]) {
    expect(podTemplateOf(m)).toBeUndefined();
  }
});

test('jobSpecIn: the spec of a Job and of a CronJob\'s jobs, with its path; none for the other kinds', () => {
  const job = manifestOf('Job', {});
  const cron = manifestOf('CronJob', {});
  expect(jobSpecIn(job)).toEqual({ spec: job.spec, path: 'spec' });
  expect(jobSpecIn(cron)).toEqual({ spec: cron.spec.jobTemplate.spec, path: 'spec.jobTemplate.spec' });
  expect(jobSpecIn(cron)!.spec).toBe(cron.spec.jobTemplate.spec);
  for (const kind of SUPPORTED_KINDS.filter(k => !COMPLETING_KINDS.has(k))) expect(jobSpecIn(manifestOf(kind, {}))).toBeUndefined();
  expect(jobSpecIn({ kind: 'CronJob', spec: { jobTemplate: 5 } })).toBeUndefined();
});

test('no file of src/ outside the table spells a pod template\'s path, the completing kinds or a list of the kinds again', () => {
  const offenders: string[] = [];
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {walk(p);} else if (p.endsWith('.ts') && !p.endsWith(path.join('facts', 'kinds.ts'))) {
        const text = fs.readFileSync(p, 'utf8');
        if (/jobTemplate/.test(text) || /kind === 'Job' \|\| [\w.]*kind === 'CronJob'/.test(text) || /new Set\(\['Job', 'CronJob'\]\)/.test(text) ||
          // a list of the workload kinds (the timeline had its own)
          /'(Pod|Deployment|StatefulSet|DaemonSet|ReplicaSet|ReplicationController|Job|CronJob)',\s*'(Pod|Deployment|StatefulSet|DaemonSet|ReplicaSet|ReplicationController|Job|CronJob)'/.test(text)) {
          offenders.push(path.relative(path.join(__dirname, '..'), p));
        }
      }
    }
  };
  walk(path.join(__dirname, '..', 'src'));
  expect(offenders).toEqual([]);
});
