/**
 * Issue 27 point 2: the pull policy of a sidecar's image follows Kubernetes' defaulting rule
 * (kubernetes `pkg/apis/core/v1/defaults.go` `SetDefaults_Container`; the docs' "Default image pull
 * policy" table, content/en/docs/concepts/containers/images.md): written out as the cluster would
 * default it, so that an untagged or `:latest` image is never served stale from a node's cache.
 */
import { Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { LogAgent, WithLogAgent, WithSidecar } from '../src';
import { containerOf, manifestOf, newChart } from './util/fixtures';
import { defaultPullPolicy } from '../src/engine/pull-policy';

// The docs' table, row by row: the expected values are Kubernetes', not the function's.
test.each([
  ['gcr.io/x/cloud-sql-proxy', 'Always'], // no tag: the tag defaults to latest
  ['busybox', 'Always'],
  ['busybox:latest', 'Always'],
  ['localhost:5000/team/app', 'Always'], // a registry port is not a tag
  ['localhost:5000/team/app:1.2.3', 'IfNotPresent'],
  ['fluent/fluent-bit:3.2.10', 'IfNotPresent'],
  ['app@sha256:0000000000000000000000000000000000000000000000000000000000000000', 'IfNotPresent'], // a digest without a tag
  ['app:latest@sha256:0000000000000000000000000000000000000000000000000000000000000000', 'Always'], // the tag decides
])('%s -> %s', (image, policy) => {
  expect(defaultPullPolicy(image)).toBe(policy);
});

test('an untagged image on WithSidecar gets Always; a tagged one IfNotPresent; a digest IfNotPresent', () => {
  for (const [image, policy] of [['gcr.io/x/cloud-sql-proxy', 'Always'], ['gcr.io/x/cloud-sql-proxy:latest', 'Always'],
    ['gcr.io/x/cloud-sql-proxy:2.25.3', 'IfNotPresent'], [`gcr.io/x/cloud-sql-proxy@sha256:${'a'.repeat(64)}`, 'IfNotPresent']]) {
    const { chart } = newChart();
    const dep = new kplus.Deployment(chart, 'web', { containers: [{ name: 'app', image: 'nginx:1.27', ports: [{ number: 8080 }] }] });
    new WithSidecar(chart, 'proxy', { workload: dep, containerName: 'sql-proxy', image, kubernetesVersion: '1.29' });
    expect(containerOf(manifestOf(Testing.synth(chart), 'Deployment'), 'sql-proxy').imagePullPolicy).toBe(policy);
  }
});

test('an agent image given as latest (a mirror) gets Always', () => {
  const { chart } = newChart();
  const dep = new kplus.Deployment(chart, 'web', { containers: [{ name: 'app', image: 'nginx:1.27', ports: [{ number: 8080 }] }] });
  new WithLogAgent(chart, 'logs', { workload: dep, kubernetesVersion: '1.29', agent: LogAgent.fluentBit({ image: 'mirror.example.com/fluent-bit:latest' }) });
  expect(containerOf(manifestOf(Testing.synth(chart), 'Deployment'), 'log-agent').imagePullPolicy).toBe('Always');
});
