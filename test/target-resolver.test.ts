/**
 * One reader of the target's sources (src/target/resolver.ts) behind the constructs
 * (Sidecars.targetOf), SidecarTimeline.ofManifest, the CLI's check/timeline target, render's
 * config and the validation plugin: the same precedence, and the same answer to a variable that is
 * set but empty (an error, never a silent fallback), a version that is not one, or a gate that is
 * neither 'true' nor 'false'.
 */
import { App, Chart } from 'cdk8s';
import { Sidecars, SidecarTimeline, SidecarValidationPlugin } from '../src';
import { withEnv } from './util/fixtures';
import { readRenderConfig } from '../src/cli/render-config';
import { resolveCliTarget } from '../src/cli/target-options';

const VERSION = 'CDK8S_SIDECARS_KUBERNETES_VERSION';
const GATE = 'CDK8S_SIDECARS_SIDECAR_CONTAINERS_GATE';

const POD = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'app', image: 'a' }] } };
const CONFIG = { workloads: [{ select: { kind: 'Deployment' }, logAgent: {} }] };

/** Each reader, reading the target with nothing given but the environment. */
const READERS: Array<[string, () => unknown]> = [
  ['Sidecars.targetOf', () => Sidecars.targetOf(new Chart(new App(), 'c'))],
  ['SidecarTimeline.ofManifest', () => SidecarTimeline.ofManifest(POD)],
  ['the CLI (check, timeline)', () => resolveCliTarget(undefined, undefined)],
  ['render', () => readRenderConfig(CONFIG)],
  ['the validation plugin', () => new SidecarValidationPlugin()],
];

describe.each(READERS)('%s', (_name, read) => {
  test.each(['', ' '])(`${VERSION}=%j is an error that says so`, value => withEnv(VERSION, value, () => {
    expect(read).toThrow(`environment variable ${VERSION} is set but empty. Set it (e.g. ${VERSION}=1.29) or unset it to use `);
  }));

  test.each(['', ' '])(`${GATE}=%j is an error that says so`, value => withEnv(VERSION, '1.28', () => withEnv(GATE, value, () => {
    expect(read).toThrow(`environment variable ${GATE} is set but empty. Set it (e.g. ${GATE}=true) or unset it to use `);
  })));

  test.each([
    ['1.2x', "kubernetesVersion '1.2x' is not a Kubernetes version. Use the lowest minor version of the cluster's API server and nodes"],
    ['v1.29.3-eks-adc7111', "kubernetesVersion 'v1.29.3-eks-adc7111' carries a vendor suffix (as `kubectl get nodes` prints it); drop it"],
    ['1.26', "kubernetesVersion '1.26' is older than 1.27, the oldest release this library supports."],
  ])(`${VERSION}=%s is an error that names the variable, in the same words everywhere`, (value, problem) => withEnv(VERSION, value, () => {
    expect(read).toThrow(`environment variable ${VERSION}: ${problem}`);
  }));

  test(`${GATE}=yes is an error that names the two values`, () => withEnv(VERSION, '1.28', () => withEnv(GATE, 'yes', () => {
    expect(read).toThrow(
      `environment variable ${GATE} is 'yes'; use 'true' (the SidecarContainers feature gate is on in the API server and every kubelet) or 'false'.`,
    );
  })));
});

describe('what is given where the target is read comes before the environment, which is then not read', () => {
  test('a construct scope, the timeline, the CLI flag and the render key', () => withEnv(VERSION, '', () => withEnv(GATE, 'yes', () => {
    const app = new App();
    Sidecars.configure(app, { kubernetesVersion: '1.30' });
    // Sidecars.configure is below the environment: an empty variable is still an error there
    expect(() => Sidecars.targetOf(app)).toThrow(/set but empty/);
    expect(() => SidecarTimeline.ofManifest(POD, { kubernetesVersion: '1.29', sidecarContainersGate: false })).not.toThrow();
    expect(resolveCliTarget('1.29', false)).toMatchObject({ raw: '1.29', gate: false });
    expect(readRenderConfig({ ...CONFIG, kubernetesVersion: '1.29', sidecarContainersGate: true })).toMatchObject({ kubernetesVersion: '1.29', sidecarContainersGate: true });
  })));

  test('the environment gives the version to every reader alike', () => withEnv(VERSION, '1.29.3', () => withEnv(GATE, undefined, () => {
    expect(Sidecars.targetOf(new App())).toMatchObject({ kubernetesVersion: '1.29.3', source: 'env', sidecarContainersGate: false });
    expect(resolveCliTarget(undefined, undefined)).toMatchObject({ raw: '1.29.3', gate: false });
    expect(readRenderConfig(CONFIG)).toMatchObject({ kubernetesVersion: '1.29.3' });
  })));
});
