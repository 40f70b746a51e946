/**
 * The public way to recognise the library's refusals (src/errors.ts): from the error in
 * TypeScript, from its message alone in the other jsii languages (test/bindings runs the same in
 * Python, Java and Go), at construction and at synthesis, with the rule id `check` shares.
 */
import { ApiObject, App, Chart } from 'cdk8s';
import { Errors } from '../src/errors';
import { internalError } from '../src/private/errors';
import { WithEnvoy } from '../src/with-envoy';
import { WithSidecar } from '../src/with-sidecar';
import { rawDeployment } from './util/fixtures';

function caught(f: () => unknown): Error {
  try {
    f();
  } catch (e) {
    return e as Error;
  }
  throw new Error('nothing was thrown');
}

const APP_CONTAINER = { name: 'app', image: 'ghcr.io/example/app:1.0.0', ports: [{ containerPort: 8080 }] };

/** An app whose synthesis refuses a native sidecar of the user's on 1.27 (rule CS001). */
function nativeOn127(): { app: App; workload: ApiObject } {
  const app = new App({ outdir: '/nonexistent-never-written' });
  const chart = new Chart(app, 'c');
  const workload = rawDeployment(chart, 'web', {
    initContainers: [{ name: 'early', image: 'ghcr.io/example/early:1.0.0', restartPolicy: 'Always' }],
    containers: [APP_CONTAINER],
  });
  new WithSidecar(chart, 's', { workload, image: 'ghcr.io/example/s:1.0.0', containerName: 'helper', kubernetesVersion: '1.27' });
  return { app, workload };
}

describe('a refusal at construction', () => {
  const e = caught(() => {
    const chart = new Chart(new App({ outdir: '/nonexistent-never-written' }), 'c');
    new WithEnvoy(chart, 'envoy', { workload: rawDeployment(chart, 'web', { containers: [APP_CONTAINER] }), appPort: 70000, kubernetesVersion: '1.29' });
  });

  test('is recognised from the error, and from its message as Python, Java and Go hold it', () => {
    expect(Errors.isSidecarError(e)).toBe(true);
    expect(Errors.isSidecarError(e.message)).toBe(true);
    // jsii's RuntimeError in the other languages: '<name>: <message>'
    expect(Errors.isSidecarError(`SidecarError: ${e.message}`)).toBe(true);
    expect(Errors.refusalOf(`SidecarError: ${e.message}`)).toEqual({ messages: [e.message], ruleIds: [] });
  });
});

describe('a refusal at synthesis carries the rule id of `check`', () => {
  test('app.synth(): inside cdk8s\' "Validation failed" error', () => {
    const { app } = nativeOn127();
    const e = caught(() => app.synth());
    expect(e.message).toMatch(/^Validation failed with the following errors:\n {2}\[c\/web\] Deployment 'web': init container 'early'/);
    expect(Errors.isSidecarError(e)).toBe(true);
    const refusal = Errors.refusalOf(e)!;
    expect(refusal.ruleIds).toEqual(['CS001']);
    expect(refusal.messages).toHaveLength(1);
    expect(e.message).toContain(refusal.messages[0]);
    expect(Errors.refusalOf(`Error: ${e.message}`)?.ruleIds).toEqual(['CS001']);
  });

  test('a workload\'s toJson(): the one builder\'s error, as before under \'cdk8s-sidecars:\'', () => {
    const { workload } = nativeOn127();
    const e = caught(() => workload.toJson());
    expect(e.message).toMatch(/^cdk8s-sidecars: Deployment 'web': init container 'early' .* \[CS001 native-sidecar-below-1\.29\]$/s);
    expect(Errors.refusalOf(e)).toEqual({ messages: [e.message], ruleIds: ['CS001'] });
  });
});

describe('anything else is not a refusal', () => {
  test.each<[string, unknown]>([
    ['an Error of another library', new Error('ENOENT: no such file or directory')],
    ['a bug of the library (internalError)', internalError('check-rules.ts: 2 POD_SPEC_RULES start with x')],
    ['an empty message', ''],
    ['undefined', undefined],
    ['null', null],
    ['a number', 42],
    ['an object without a message', { a: 1 }],
  ])('%s', (_name, value) => {
    expect(Errors.isSidecarError(value)).toBe(false);
    expect(Errors.refusalOf(value)).toBeUndefined();
  });
});
