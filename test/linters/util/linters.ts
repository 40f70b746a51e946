/**
 * The pipeline linters of `npm run test:linters` (scripts/build-linters.sh builds them into the
 * cache): where the binaries are, how each is run, and what counts as a finding.
 *
 * - kubeconform `-strict` against the schemas generated from the release's own swagger.json
 *   (./k8s-json-schema.ts), no `-ignore-missing-schemas`: a kind without a schema is an error too.
 * - kube-score `score -o json`: a finding is one comment of a check that is neither skipped nor
 *   graded OK (10), keyed by object, check id, path (the container kube-score names) and summary.
 * - kube-linter `lint --format json` with its default checks: a finding is one report, keyed by
 *   object, check and message (the message names the container). Built only from a checkout
 *   (scripts/build-linters.sh, KUBE_LINTER_SRC): without it its tests skip, also in CI.
 */
import { execFileSync, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { generateKubeconformSchemas } from './k8s-json-schema';

const REPO_ROOT = path.resolve(__dirname, '../../..');
const BUILD_SCRIPT = path.join(REPO_ROOT, 'scripts/build-linters.sh');

/** The pins of scripts/build-linters.sh, read from it (one place to bump). */
function pin(name: string): string {
  const m = new RegExp(`^${name}="?([^"\\n]+)"?$`, 'm').exec(fs.readFileSync(BUILD_SCRIPT, 'utf8'));
  if (!m) throw new Error(`scripts/build-linters.sh has no ${name}= line`);
  return m[1];
}

export const KUBECONFORM_VERSION = pin('KUBECONFORM_VERSION');
export const KUBE_SCORE_VERSION = pin('KUBE_SCORE_VERSION');
export const KUBE_LINTER_VERSION = pin('KUBE_LINTER_VERSION');
/** The full releases whose schemas kubeconform reads ('1.27.16', ...). */
export const KUBERNETES_RELEASES = pin('KUBERNETES_RELEASES').split(/\s+/);

/** The cached release for a minor ('1.29' -> '1.29.15'). */
export function releaseOf(minor: string): string {
  const found = KUBERNETES_RELEASES.find(r => r.startsWith(`${minor}.`));
  if (!found) throw new Error(`scripts/build-linters.sh KUBERNETES_RELEASES has no ${minor}.x (it has ${KUBERNETES_RELEASES.join(', ')})`);
  return found;
}

export const CACHE = path.join(process.env.CDK8S_SIDECARS_CACHE ?? path.join(os.homedir(), '.cache', 'cdk8s-sidecars'), 'linters');
export const KUBECONFORM = path.join(CACHE, 'bin', `kubeconform-${KUBECONFORM_VERSION}`);
export const KUBE_SCORE = path.join(CACHE, 'bin', `kube-score-${KUBE_SCORE_VERSION}`);
export const KUBE_LINTER = path.join(CACHE, 'bin', `kube-linter-${KUBE_LINTER_VERSION}`);

/** Why kube-linter cannot run here (the proxy does not serve it: it is built from a checkout), or undefined. */
export function kubeLinterMissing(): string | undefined {
  return fs.existsSync(KUBE_LINTER) ? undefined
    : `kube-linter ${KUBE_LINTER_VERSION} is not in ${path.join(CACHE, 'bin')}: KUBE_LINTER_SRC=<a checkout of its tag> bash scripts/build-linters.sh`;
}

/** kube-linter's findings (its default checks) over YAML text, as `object check: message`, sorted. */
export function kubeLinter(yaml: string): string[] {
  const r = spawnSync(KUBE_LINTER, ['lint', '--format', 'json', '-'], { input: yaml, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  if (r.error) throw r.error;
  let out: any;
  try {
    out = JSON.parse(r.stdout);
  } catch {
    throw new Error(`kube-linter printed no JSON (exit ${r.status}): ${r.stdout}${r.stderr}`);
  }
  if ((out.Checks ?? []).length === 0) throw new Error(`kube-linter ran no check: ${r.stderr}`);
  return (out.Reports ?? []).map((x: any) => {
    const o = x.Object.K8sObject;
    return `${o.GroupVersionKind.Kind}/${o.Name} ${x.Check}: ${x.Diagnostic.Message}`;
  }).sort();
}

/** Why the linters cannot run here, or undefined when they can. */
export function missing(): string | undefined {
  const absent = [KUBECONFORM, KUBE_SCORE, ...KUBERNETES_RELEASES.map(r => path.join(CACHE, 'swagger', `v${r}.json`))]
    .filter(f => !fs.existsSync(f));
  return absent.length === 0 ? undefined : `${absent.map(f => path.relative(CACHE, f)).join(', ')} not in ${CACHE}: run \`npm run test:linters\` (it runs scripts/build-linters.sh; needs Go and the Go module proxy)`;
}

/** The schema directory kubeconform reads for `release`, generated on first use. */
function schemaRoot(release: string): string {
  const root = path.join(CACHE, 'schemas');
  generateKubeconformSchemas(path.join(CACHE, 'swagger', `v${release}.json`), path.join(root, `v${release}-standalone-strict`));
  return root;
}

export interface KubeconformResult {
  readonly filename: string;
  readonly kind: string;
  readonly name: string;
  readonly version: string;
  readonly status: string;
  readonly msg: string;
}

/** kubeconform -strict over YAML text at `release` ('1.29.15'): every resource's result (valid ones included). */
export function kubeconform(yaml: string, release: string): KubeconformResult[] {
  const root = schemaRoot(release);
  const r = spawnSync(KUBECONFORM, [
    '-strict', '-verbose', '-output', 'json', '-kubernetes-version', release, '-schema-location', root, '-',
  ], { input: yaml, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  if (r.error) throw r.error;
  let out: any;
  try {
    out = JSON.parse(r.stdout);
  } catch {
    throw new Error(`kubeconform printed no JSON (exit ${r.status}): ${r.stdout}${r.stderr}`);
  }
  return out.resources ?? [];
}

export interface Finding {
  /** `Deployment/web` */
  readonly object: string;
  readonly check: string;
  /** The container kube-score names, or '' for the pod. */
  readonly path: string;
  readonly summary: string;
  /** 1 critical, 5 warning, 7 almost OK. */
  readonly grade: number;
}

export const findingKey = (f: Finding): string => `${f.object} ${f.check} [${f.path}] ${f.summary}`;

/** kube-score's findings over YAML text. */
export function kubeScore(yaml: string, minor: string): Finding[] {
  const r = spawnSync(KUBE_SCORE, ['score', '--output-format', 'json', '--kubernetes-version', `v${minor}`, '-'], {
    input: yaml, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024,
  });
  if (r.error) throw r.error;
  let objects: any[];
  try {
    objects = JSON.parse(r.stdout) ?? [];
  } catch {
    throw new Error(`kube-score printed no JSON (exit ${r.status}): ${r.stdout}${r.stderr}`);
  }
  const out: Finding[] = [];
  for (const o of objects) {
    const object = `${o.type_meta.kind}/${o.object_meta.name}`;
    for (const c of o.checks ?? []) {
      if (c.skipped || c.grade >= 10) continue;
      for (const comment of c.comments ?? [{ path: '', summary: '' }]) {
        out.push({ object, check: c.check.id, path: comment.path ?? '', summary: comment.summary, grade: c.grade });
      }
    }
  }
  return out.sort((a, b) => findingKey(a).localeCompare(findingKey(b)));
}

/** The version line each binary prints, for the test's log. */
export function versions(): string {
  const kc = execFileSync(KUBECONFORM, ['-v'], { encoding: 'utf8' }).trim();
  const ks = execFileSync(KUBE_SCORE, ['version'], { encoding: 'utf8' }).trim();
  return `kubeconform ${kc}, ${ks}`;
}
