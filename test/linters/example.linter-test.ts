/**
 * The pipeline linters over the example app as `npm run synth:example` writes it (examples/dist/,
 * 1.27 legacy and 1.29 native; `npm run test:linters` synthesizes it first):
 *
 * - kubeconform -strict with the schemas of 1.27.16 and 1.29.15: every object valid;
 * - kube-score: a finding about one of the library's containers is a documented design choice
 *   (./util/design-choices.ts); a finding about the pod as a whole is compared with the same
 *   manifests without the library's containers (what the app alone gives), so a pod-level finding
 *   the library adds is a design choice too, and one it hides is one it warns about.
 */
import * as fs from 'fs';
import * as path from 'path';
import { parseAllDocuments } from 'yaml';
import { noteSkipped } from '../util/skips';
import { DESIGN_CHOICES, HIDDEN_FINDINGS, LIBRARY_CONTAINERS } from './util/design-choices';
import { Finding, findingKey, kubeLinter, kubeLinterMissing, kubeScore, kubeconform, missing, releaseOf } from './util/linters';

const DIST = path.resolve(__dirname, '../../examples/dist');
const CLUSTERS = [{ dir: 'cluster-1.27', minor: '1.27' }, { dir: 'cluster-1.29', minor: '1.29' }];

const WHY = missing() ?? (CLUSTERS.every(c => fs.existsSync(path.join(DIST, c.dir))) ? undefined : 'examples/dist/ is missing: run `npm run synth:example` (`npm run test:linters` does)');
if (WHY && process.env.CI === 'true') throw new Error(`test/linters: ${WHY}`);
const describeReal = WHY ? describe.skip : describe;
if (WHY) test(`skipped: ${WHY}`, () => noteSkipped(WHY));

const KUBE_LINTER_WHY = kubeLinterMissing();

function read(dir: string): { yaml: string; manifests: any[] } {
  const files = fs.readdirSync(path.join(DIST, dir)).filter(f => f.endsWith('.yaml')).sort();
  const yaml = files.map(f => fs.readFileSync(path.join(DIST, dir, f), 'utf8')).join('\n---\n');
  return { yaml, manifests: files.flatMap(f => parseAllDocuments(fs.readFileSync(path.join(DIST, dir, f), 'utf8')).map(d => d.toJS())).filter(m => m) };
}

/** The pod specs of a manifest of any workload kind. */
function podSpecs(m: any): any[] {
  if (m.kind === 'CronJob') return [m.spec?.jobTemplate?.spec?.template?.spec];
  if (m.kind === 'Pod') return [m.spec];
  return m.spec?.template?.spec ? [m.spec.template.spec] : [];
}

/** The manifests without the library's containers: the app alone, for the pod-level comparison. */
function withoutLibrary(manifests: any[]): string {
  const copy = JSON.parse(JSON.stringify(manifests));
  for (const m of copy) {
    for (const spec of podSpecs(m)) {
      for (const list of ['containers', 'initContainers']) {
        if (spec?.[list]) spec[list] = spec[list].filter((c: any) => !(LIBRARY_CONTAINERS as readonly string[]).includes(c.name));
      }
    }
  }
  return copy.map((m: any) => JSON.stringify(m)).join('\n---\n');
}

describeReal('the example app (npm run synth:example)', () => {
  test.each(CLUSTERS)('kubeconform -strict: every object of $dir is valid at the newest $minor patch', ({ dir, minor }) => {
    const { yaml, manifests } = read(dir);
    const results = kubeconform(yaml, releaseOf(minor));
    expect(results.filter(r => r.status !== 'statusValid').map(r => `${r.kind}/${r.name}: ${r.status} ${r.msg}`)).toEqual([]);
    expect(results).toHaveLength(manifests.length);
  });

  test.each(CLUSTERS)('kube-score: what it says about the library in $dir is a documented design choice', ({ dir, minor }) => {
    const { yaml, manifests } = read(dir);
    const findings = kubeScore(yaml, minor);
    const appAlone = new Set(kubeScore(withoutLibrary(manifests), minor).map(findingKey));
    const ours = (f: Finding) => (LIBRARY_CONTAINERS as readonly string[]).includes(f.path);
    const added = findings.filter(f => ours(f) || (f.path === '' && !appAlone.has(findingKey(f))));
    const keys = new Set(findings.map(findingKey));
    const hidden = kubeScore(withoutLibrary(manifests), minor).filter(f => f.path === '' && !keys.has(findingKey(f)));
    // eslint-disable-next-line no-console
    console.log(`${dir}: the library's ${JSON.stringify(added.map(findingKey))}, hidden ${JSON.stringify(hidden.map(findingKey))}`);
    const allowed = (f: Finding) => DESIGN_CHOICES.some(d => d.check === f.check && d.summary === f.summary && d.containers.includes(f.path));
    expect(added.filter(f => !allowed(f)).map(findingKey)).toEqual([]);
    expect(hidden.filter(f => !HIDDEN_FINDINGS.some(h => h.check === f.check && h.summary === f.summary)).map(findingKey)).toEqual([]);
    // the example app is the one to copy: nothing hidden that the library warns about
    expect(hidden.filter(f => HIDDEN_FINDINGS.find(h => h.check === f.check && h.summary === f.summary)?.warning).map(findingKey)).toEqual([]);
  });

  // kube-linter's default checks: what it says of the example is what it says of the app alone
  // (no-anti-affinity on the replicated workloads: the app's choice)
  (KUBE_LINTER_WHY ? test.skip : test).each(CLUSTERS)('kube-linter: the library adds no finding in $dir', ({ dir }) => {
    const { yaml, manifests } = read(dir);
    const findings = kubeLinter(yaml);
    expect(findings.length).toBeGreaterThan(0); // the check runs: the app's own findings are there
    expect(findings).toEqual(kubeLinter(withoutLibrary(manifests)));
  });
});
