/**
 * Issue 46: Vector 0.57 no longer interpolates `${NAME}` in its config (unless started with
 * `--dangerously-allow-env-var-interpolation`, which the library does not pass): a `${...}` the
 * library wrote would reach the backend as that text (the password `${LOG_OUTPUT_PASSWORD}`: 401,
 * every line lost, while `vector validate` still passes). The guard: no vector.yaml the library can
 * write, for every output shape and option, holds an environment reference; every `SECRET[...]`
 * in it is read by a backend the config declares from a file the pod mounts, read-only, from
 * the Secret the user named; and the values are nowhere in the manifests or the agent's env.
 * The real Vector checks the same end to end in test/agents/vector.agent-test.ts.
 */
import { Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { LogAgent, LogOutput, WithLogAgent } from '../src';
import { containerOf, kplusWorkload, manifestOf, newChart, podSpecOf } from './util/fixtures';
import { VECTOR_ENV_REFERENCE, secretVolumeFiles, vectorLoad } from './util/vector-config';
import { VECTOR_SECRETS } from '../src/agents/vector/config';

const VALUES: Record<string, Record<string, string>> = {
  'log-basic': { user: 'ship"per', pass: 'p@ss: "w\\ord" #1 $HOME ${X} SECRET[x.y]\n' },
  'log-token': { header: 'Bearer a$b', other: "it's" },
  'other-secret': { pass: 'second #secret' },
};
const ref = (name: string, key: string) => ({ secret: kplus.Secret.fromSecretName(newChart().chart, `${name}-${key}`, name), key });

/** Every output shape Vector takes, with each option that changes what is written. */
function outputs(): Array<[string, LogOutput]> {
  const basic = { username: ref('log-basic', 'user'), password: ref('log-basic', 'pass') };
  const split = { username: ref('log-basic', 'user'), password: ref('other-secret', 'pass') };
  const out: Array<[string, LogOutput]> = [['stdout', LogOutput.stdout()]];
  for (const tls of [true, false]) {
    out.push(
      [`http tls=${tls}`, LogOutput.http({ host: 'logs.example.com', tls })],
      [`http tls=${tls} uri basicAuth`, LogOutput.http({ host: 'logs.example.com', tls, uri: '/in?x=1', basicAuth: basic })],
      [`http tls=${tls} headers`, LogOutput.http({ host: 'h', tls, secretHeaders: { 'X-Api-Key': ref('log-token', 'header'), 'X-Other': ref('log-token', 'other') } })],
      [`http tls=${tls} headers basicAuth (two Secrets)`, LogOutput.http({ host: 'h', tls, secretHeaders: { 'X-Api-Key': ref('log-token', 'header') }, basicAuth: split })],
      [`http tls=${tls} Authorization header`, LogOutput.http({ host: 'h', tls, secretHeaders: { Authorization: ref('log-token', 'header') } })],
      [`loki tls=${tls}`, LogOutput.loki({ host: 'loki', tls })],
      [`loki tls=${tls} tenant labels basicAuth`, LogOutput.loki({ host: 'loki', tls, tenantId: 'team-a', labels: { app: 'web', team: 'shop' }, basicAuth: basic })],
    );
    for (const kind of ['elasticsearch', 'opensearch'] as const) {
      out.push(
        [`${kind} tls=${tls}`, LogOutput[kind]({ host: 'es', tls })],
        [`${kind} tls=${tls} index date basicAuth`, LogOutput[kind]({ host: 'es', tls, index: 'web', indexDateFormat: '%Y.%m.%d', basicAuth: split })],
      );
    }
  }
  return out;
}

const AGENT_OPTIONS: Array<[string, () => LogAgent, object]> = [
  ['defaults', () => LogAgent.vector(), {}],
  ['own port, limit, directory, pattern, user', () => LogAgent.vector({ apiPort: 9000 }), { logDirectory: '/data/logs', filePattern: 'app-?.json', agentUser: 1000 }],
];

function synth(output: LogOutput, agent: LogAgent, extra: object, version: string) {
  const { chart } = newChart();
  const workload = kplusWorkload(chart, 'Deployment');
  new WithLogAgent(chart, 'logs', { workload, kubernetesVersion: version, agent, output, ...extra });
  const manifests = Testing.synth(chart);
  const workloadManifest = manifestOf(manifests, 'Deployment');
  return { manifests, pod: podSpecOf(workloadManifest), text: manifestOf(manifests, 'ConfigMap').data['vector.yaml'] as string, sidecar: containerOf(workloadManifest, 'log-agent') };
}

describe.each(['1.27', '1.33'])('Kubernetes %s', (version) => {
  describe.each(AGENT_OPTIONS)('Vector %s', (_n, agent, extra) => {
    test.each(outputs())('%s: no ${...}, every SECRET[...] read from the mounted Secret, the values nowhere else', (_name, output) => {
      const { manifests, pod, text, sidecar } = synth(output, agent(), extra, version);
      // nothing Vector would have to interpolate from the environment (it no longer does)
      expect(text).not.toMatch(VECTOR_ENV_REFERENCE);
      expect(text).not.toContain('$');
      // the agent's env carries no secret
      expect((sidecar.env ?? []).filter((e: any) => e.valueFrom?.secretKeyRef)).toEqual([]);
      const o = output._config;
      const wants = ('basicAuth' in o && o.basicAuth) || (o.type === 'http' && Object.keys(o.headers).length > 0);
      const volume = pod.volumes.find((v: any) => v.name === 'log-agent-secrets');
      const mount = (sidecar.volumeMounts ?? []).find((m: any) => m.name === 'log-agent-secrets');
      if (!wants) {
        expect({ volume, mount, secret: text.includes('SECRET[') }).toEqual({ volume: undefined, mount: undefined, secret: false });
        return;
      }
      expect(mount).toEqual({ mountPath: VECTOR_SECRETS.directory, name: 'log-agent-secrets', readOnly: true });
      // only the agent mounts it
      for (const c of [...pod.containers, ...(pod.initContainers ?? [])].filter((x: any) => x.name !== 'log-agent')) {
        expect((c.volumeMounts ?? []).map((m: any) => m.name)).not.toContain('log-agent-secrets');
      }
      const config = vectorLoad(text, secretVolumeFiles(volume, mount.mountPath, VALUES));
      const sink = config.sinks.output;
      const refValue = (r: { secretName: string; key: string }) => VALUES[r.secretName][r.key].replace(/\n+$/, '');
      if ('basicAuth' in o && o.basicAuth) {
        expect(sink.auth).toEqual({ strategy: 'basic', user: refValue(o.basicAuth.username), password: refValue(o.basicAuth.password) });
      }
      if (o.type === 'http') {
        expect(sink.request?.headers ?? {}).toEqual(Object.fromEntries(Object.entries(o.headers).map(([h, r]) => [h, refValue(r)])));
      }
      // no value of a Secret in any manifest (the ConfigMap included)
      const all = JSON.stringify(manifests);
      for (const secretValues of Object.values(VALUES)) for (const v of Object.values(secretValues)) expect(all).not.toContain(v.trim());
    });
  });
});

test('the other agents keep the env: Fluent Bit reads ${NAME} (a variable of its own config), no secret volume', () => {
  const output = LogOutput.loki({ host: 'loki', basicAuth: { username: ref('log-basic', 'user'), password: ref('log-basic', 'pass') } });
  const { chart } = newChart();
  new WithLogAgent(chart, 'logs', { workload: kplusWorkload(chart, 'Deployment'), kubernetesVersion: '1.33', agent: LogAgent.fluentBit(), output });
  const pod = podSpecOf(manifestOf(Testing.synth(chart), 'Deployment'));
  expect(pod.volumes.map((v: any) => v.name)).not.toContain('log-agent-secrets');
  expect(containerOf({ spec: { template: { spec: pod } } }, 'log-agent').env.filter((e: any) => e.valueFrom?.secretKeyRef).map((e: any) => e.name))
    .toEqual(['LOG_OUTPUT_USERNAME', 'LOG_OUTPUT_PASSWORD']);
});

test('logDirectory inside the secrets directory is refused', () => {
  const { chart } = newChart();
  expect(() => new WithLogAgent(chart, 'logs', {
    workload: kplusWorkload(chart, 'Deployment'), agent: LogAgent.vector(), logDirectory: `${VECTOR_SECRETS.directory}/logs`,
  })).toThrow(`WithLogAgent 'test/logs': logDirectory '${VECTOR_SECRETS.directory}/logs' is inside the agent's secrets directory '${VECTOR_SECRETS.directory}'`);
});

test('podLogs: the one ${...} is the pod-logs path, which Vector expands because the agent starts with interpolation on; the secrets stay files', () => {
  const { chart } = newChart();
  const output = LogOutput.loki({ host: 'loki', basicAuth: { username: ref('log-basic', 'user'), password: ref('log-basic', 'pass') } });
  new WithLogAgent(chart, 'logs', { workload: kplusWorkload(chart, 'Deployment'), kubernetesVersion: '1.33', agent: LogAgent.vector(), output, podLogs: {} });
  const manifests = Testing.synth(chart);
  const text: string = manifestOf(manifests, 'ConfigMap').data['vector.yaml'];
  const sidecar = containerOf(manifestOf(manifests, 'Deployment'), 'log-agent');
  const refs = [...text.matchAll(/\$\{([^}]*)\}/g)].map(m => m[1]);
  const env = Object.fromEntries((sidecar.env ?? []).map((e: any) => [e.name, e]));
  expect({ refs, flag: env.VECTOR_DANGEROUSLY_ALLOW_ENV_VAR_INTERPOLATION?.value, defined: refs.every(r => r in env) })
    .toEqual({ refs: [expect.any(String)], flag: 'true', defined: true });
  // the CRI regex's `$` anchors are no variable to Vector's interpolation (src/config/vars.rs: `$` then a non-name character stays)
  expect(text.replace(/\$\{[A-Z0-9_]+\}/, '')).not.toMatch(VECTOR_ENV_REFERENCE);
  expect((sidecar.env ?? []).filter((e: any) => e.valueFrom?.secretKeyRef)).toEqual([]);
  expect(text).toContain('SECRET[log_output.LOG_OUTPUT_PASSWORD]');
});
