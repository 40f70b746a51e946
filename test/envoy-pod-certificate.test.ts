/**
 * Issue 37 point 4: WithEnvoy's TLS from a pod certificate and its client CA from a
 * ClusterTrustBundle (both GA in 1.37: kubernetes v1.37.2 pkg/features/kube_features.go
 * PodCertificateRequest, ClusterTrustBundleProjection), instead of Secrets; refused below 1.37,
 * where the API server drops both sources (pkg/api/pod/util.go dropDisabledPodCertificateProjection,
 * dropDisabledClusterTrustBundleProjection). Shapes as validation.go v1.37.2 checks them.
 */
import { Testing } from 'cdk8s';
import { WithEnvoy } from '../src';
import { kplusWorkload, manifestOf, newChart, podSpecOf } from './util/fixtures';
import { expectValidManifests } from './util/k8s-schema';

function build(version: string, tls: any) {
  const { chart } = newChart();
  const workload = kplusWorkload(chart, 'Deployment');
  // (the fixture's app declares portNumber: it listens on the pod IP too)
  new WithEnvoy(chart, 'envoy', { workload, kubernetesVersion: version, appPort: 8080, appListensOnPodIp: true, tls });
  return chart;
}

test('1.37: the certificate from a pod certificate and the client CA from a ClusterTrustBundle, where Envoy reads the Secret files', () => {
  const manifests = Testing.synth(build('1.37', { podCertificateSigner: 'example.com/serving', clientCaTrustBundleSigner: 'example.com/clients' }));
  expectValidManifests(manifests, '1.37');
  const spec = podSpecOf(manifestOf(manifests, 'Deployment'));
  const volumes = Object.fromEntries(spec.volumes.map((v: any) => [v.name, v]));
  expect(volumes['envoy-tls']).toEqual({
    name: 'envoy-tls',
    projected: { sources: [{ podCertificate: { certificateChainPath: 'tls.crt', keyPath: 'tls.key', keyType: 'ECDSAP256', signerName: 'example.com/serving' } }] },
  });
  expect(volumes['envoy-client-ca']).toEqual({
    name: 'envoy-client-ca',
    projected: { sources: [{ clusterTrustBundle: { labelSelector: {}, path: 'ca.crt', signerName: 'example.com/clients' } }] },
  });
  // the same mounts (and so the same bootstrap paths) as with Secrets
  const envoy = spec.initContainers.find((c: any) => c.name === 'envoy');
  const secretBased = podSpecOf(manifestOf(Testing.synth(build('1.37', { secret: { name: 'web-tls' }, clientCaSecret: { name: 'web-ca' } })), 'Deployment'))
    .initContainers.find((c: any) => c.name === 'envoy');
  expect(envoy.volumeMounts).toEqual(secretBased.volumeMounts);
  const config = manifests.find(m => m.kind === 'ConfigMap').data;
  const secretConfig = Testing.synth(build('1.37', { secret: { name: 'web-tls' }, clientCaSecret: { name: 'web-ca' } })).find(m => m.kind === 'ConfigMap').data;
  expect(config).toEqual(secretConfig);
});

test.each(['1.29', '1.36'])('%s: refused, naming the volume, the source and the fix', (version) => {
  expect(() => Testing.synth(build(version, { podCertificateSigner: 'example.com/serving' }))).toThrow(
    `volume 'envoy-tls' projects a podCertificate source, which Kubernetes ${version.replace(/^1\./, '1.')} drops with its default feature gates (on by default from 1.37), ` +
    'so the files it should hold are missing. Target 1.37+, or use a Secret.',
  );
  expect(() => Testing.synth(build(version, { secret: { name: 'web-tls' }, clientCaTrustBundleSigner: 'example.com/clients' }))).toThrow(
    "volume 'envoy-client-ca' projects a clusterTrustBundle source",
  );
});

test('bad input: both or neither certificate source, two client CAs, a bad signer or key type', () => {
  expect(() => build('1.37', { secret: { name: 'web-tls' }, podCertificateSigner: 'example.com/serving' })).toThrow(
    "WithEnvoy 'test/envoy': tls needs its certificate from exactly one place: give tls.secret (a kubernetes.io/tls Secret) or, on Kubernetes 1.37+, tls.podCertificateSigner (a pod certificate); got both.",
  );
  expect(() => build('1.37', { clientCaSecret: { name: 'web-ca' } })).toThrow('got neither.');
  expect(() => build('1.37', { secret: { name: 'web-tls' }, clientCaSecret: { name: 'a' }, clientCaTrustBundleSigner: 'example.com/clients' })).toThrow(
    'give tls.clientCaSecret or tls.clientCaTrustBundleSigner for the client CA, not both.',
  );
  expect(() => build('1.37', { podCertificateSigner: 'serving' })).toThrow("tls.podCertificateSigner \"serving\" is not a signer name; give '<domain>/<path>', e.g. 'example.com/serving'.");
  expect(() => build('1.37', { podCertificateSigner: 'example.com/serving', podCertificateKeyType: 'DSA' })).toThrow(
    'tls.podCertificateKeyType "DSA" is not supported; use one of RSA3072, RSA4096, ECDSAP256, ECDSAP384, ECDSAP521, ED25519.',
  );
  expect(() => build('1.37', { secret: { name: 'web-tls' }, podCertificateKeyType: 'ED25519' })).toThrow('tls.podCertificateKeyType is for a pod certificate');
});
