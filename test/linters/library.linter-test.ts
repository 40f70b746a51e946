/**
 * The pipeline linters over the library-only app (./util/library-app.ts): each construct alone on
 * a workload, at 1.27 (legacy layout) and 1.33 (native), against the same app without it.
 *
 * - kubeconform -strict, with the schemas of the release (1.27.16, 1.33.13): every object valid;
 * - kube-score: every finding the library adds (in the report of the app with the construct, not
 *   in the one without) is a documented design choice (./util/design-choices.ts); every finding it
 *   hides (in the report without, not with) is one the library warns about instead.
 *
 *   npm run test:linters      (builds the linters once, cached, then runs test/linters/)
 *
 * Without the binaries it passes one test that says so (and fails under CI=true).
 */
import { noteSkipped } from '../util/skips';
import { DESIGN_CHOICES, HIDDEN_FINDINGS, LIBRARY_CONTAINERS } from './util/design-choices';
import { VARIANTS, build } from './util/library-app';
import { Finding, findingKey, kubeLinter, kubeLinterMissing, kubeScore, kubeconform, missing, releaseOf } from './util/linters';

const WHY = missing();
if (WHY && process.env.CI === 'true') throw new Error(`test/linters: ${WHY}`);
const describeReal = WHY ? describe.skip : describe;
if (WHY) test(`skipped: ${WHY}`, () => noteSkipped(WHY));

const MINORS = ['1.27', '1.33'];
const KUBE_LINTER_WHY = kubeLinterMissing();
if (!WHY && KUBE_LINTER_WHY) test(`skipped: ${KUBE_LINTER_WHY}`, () => noteSkipped(KUBE_LINTER_WHY));

const CASES = VARIANTS.flatMap(v => MINORS.filter(m => Number(m.split('.')[1]) >= (v.fromMinor ?? 0)).map(minor => ({ variant: v, minor })));

/** A finding the library may add: a design choice about one of its containers. */
function allowed(f: Finding): boolean {
  return DESIGN_CHOICES.some(d => d.check === f.check && d.summary === f.summary && d.containers.includes(f.path));
}

describeReal('the library-only app, each construct alone', () => {
  test('the schemas are strict and per release: an unknown field, and a native sidecar at 1.27, are errors', () => {
    const built = build(VARIANTS[0], '1.33', true);
    const deployment = built.manifests.find(m => m.kind === 'Deployment');
    const yaml = (m: any) => JSON.stringify(m);
    // the native layout (initContainers[].restartPolicy) is valid at 1.33, not at 1.27
    expect(kubeconform(yaml(deployment), releaseOf('1.33')).map(r => r.status)).toEqual(['statusValid']);
    const at127 = kubeconform(yaml(deployment), releaseOf('1.27'));
    expect(at127.map(r => r.status)).toEqual(['statusInvalid']);
    expect(at127[0].msg).toMatch(/restartPolicy/);
    const unknown = JSON.parse(yaml(deployment));
    unknown.spec.template.spec.containers[0].fooBar = 1;
    expect(kubeconform(yaml(unknown), releaseOf('1.33'))[0].msg).toMatch(/fooBar/);
  });

  test.each(CASES)('kubeconform -strict: every object of "$variant.name" at $minor is valid', ({ variant, minor }) => {
    const built = build(variant, minor, true);
    const results = kubeconform(built.yaml, releaseOf(minor));
    expect(results.filter(r => r.status !== 'statusValid').map(r => `${r.kind}/${r.name}: ${r.status} ${r.msg}`)).toEqual([]);
    expect(results).toHaveLength(built.manifests.length);
  });

  test.each(CASES)('kube-score: "$variant.name" at $minor adds only the documented design choices, and hides only what it warns about', ({ variant, minor }) => {
    const withLibrary = build(variant, minor, true);
    const without = build(variant, minor, false);
    const after = kubeScore(withLibrary.yaml, minor);
    const before = kubeScore(without.yaml, minor);
    const beforeKeys = new Set(before.map(findingKey));
    const afterKeys = new Set(after.map(findingKey));
    const added = after.filter(f => !beforeKeys.has(findingKey(f)));
    const hidden = before.filter(f => !afterKeys.has(findingKey(f)));
    // eslint-disable-next-line no-console
    console.log(`${variant.name} at ${minor}: added ${JSON.stringify(added.map(findingKey))}, hidden ${JSON.stringify(hidden.map(findingKey))}`);
    expect(added.filter(f => !allowed(f)).map(findingKey)).toEqual([]);
    // never about one of the app's containers
    for (const f of added) expect(['', ...LIBRARY_CONTAINERS]).toContain(f.path);
    for (const f of hidden) {
      const h = HIDDEN_FINDINGS.find(x => x.check === f.check && x.summary === f.summary);
      expect({ hidden: findingKey(f), explained: h !== undefined }).toEqual({ hidden: findingKey(f), explained: true });
      if (h?.warning) expect(withLibrary.warnings.filter(w => w.includes(h.warning!))).toHaveLength(1);
    }
  });

  // kube-linter's default checks: the library adds no finding at all (nothing to document)
  (KUBE_LINTER_WHY ? test.skip : test).each(CASES)('kube-linter: "$variant.name" at $minor adds no finding', ({ variant, minor }) => {
    const before = new Set(kubeLinter(build(variant, minor, false).yaml));
    expect(kubeLinter(build(variant, minor, true).yaml).filter(f => !before.has(f))).toEqual([]);
  });
});
