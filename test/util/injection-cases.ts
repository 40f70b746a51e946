/**
 * The cases SidecarInjectionPolicy is proven on (test/sidecar-injection-policy.test.ts offline with
 * @bufbuild/cel, test/k8s-api/admission-policy.real-test.ts with Kubernetes' own MAP code): agent
 * sets, pod shapes, the same workloads synthesized by the library, and what may differ.
 */
import { ApiObject, Chart, Duration, Testing } from 'cdk8s';
import { newChart } from './fixtures';
import { LogAgent } from '../../src/log-agent';
import { LogOutput } from '../../src/log-output';
import { SidecarInjectionPolicy } from '../../src/sidecar-injection-policy';
import { WithEnvoy } from '../../src/with-envoy';
import { WithLogAgent } from '../../src/with-log-agent';
import { SidecarCheck, SidecarVolume, WithSidecar } from '../../src/with-sidecar';
import { WithTracer } from '../../src/with-tracer';

export type Json = any;

/** The agents, the same props at synthesis and in the policy. */
export type Attach = (scope: any, workload: any) => void;
export const AGENTS: Record<string, Attach> = {
  'log agent': (s, w) => { new WithLogAgent(s, 'logs', { workload: w, output: LogOutput.loki({ host: 'loki.monitoring.svc' }) }); },
  'log agent + tracer + envoy': (s, w) => {
    new WithLogAgent(s, 'logs', { workload: w });
    new WithTracer(s, 'tracer', { workload: w, exporterEndpoint: 'otel-gateway.monitoring:4317' });
    new WithEnvoy(s, 'envoy', { workload: w, appPort: 8080 });
  },
  'log agent, appShutdownTime 20s': (s, w) => { new WithLogAgent(s, 'logs', { workload: w, appShutdownTime: Duration.seconds(20) }); },
  'Vector + a WithSidecar (Vault agent: config file, memory volumes the app mounts, exec check)': (s, w) => {
    new WithLogAgent(s, 'logs', { workload: w, agent: LogAgent.vector() });
    new WithSidecar(s, 'vault-agent', {
      workload: w,
      containerName: 'vault-agent',
      image: 'hashicorp/vault:1.20.4',
      command: ['vault'],
      args: ['agent', '-config=/etc/vault-agent/config.hcl'],
      configFiles: { 'config.hcl': 'exit_after_auth = false\n' },
      user: 100,
      group: 1000,
      volumes: [
        SidecarVolume.emptyDir('vault-secrets', '/vault/secrets', { memory: true, appMountPath: '/vault/secrets' }),
        SidecarVolume.emptyDir('vault-run', '/vault/run', { memory: true }),
      ],
      appEnv: { VAULT_ADDR: 'https://vault.example.com:8200' },
      startupCheck: SidecarCheck.exec(['/bin/sh', '-c', 'test -s /vault/secrets/db.env']),
    });
  },
};

export const APP = { name: 'app', image: 'ghcr.io/example/app:1.0.0', ports: [{ containerPort: 8080 }] };

/** Pod specs as teams write them (no sidecar): the policy must give each what synthesis gives it. */
export const POD_SPECS: Record<string, Json> = {
  'one container': { containers: [APP] },
  'env and a mount of its own, an init container': {
    containers: [{ ...APP, env: [{ name: 'OTEL_SERVICE_NAME', value: 'mine' }, { name: 'A', value: '1' }], volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
    initContainers: [{ name: 'migrate', image: 'ghcr.io/example/migrate:1' }],
    volumes: [{ name: 'data', emptyDir: {} }],
  },
  'two containers, a sleep preStop of 25s': {
    containers: [{ ...APP, lifecycle: { preStop: { sleep: { seconds: 25 } } } }, { name: 'worker', image: 'ghcr.io/example/worker:1', lifecycle: { preStop: { exec: { command: ['sleep', '7'] } } } }],
  },
  'an httpGet preStop (unreadable), grace 45': {
    containers: [{ ...APP, lifecycle: { preStop: { httpGet: { path: '/shutdown', port: 8080 } } } }],
    terminationGracePeriodSeconds: 45,
  },
  'grace 120 above the need': { containers: [APP], terminationGracePeriodSeconds: 120 },
  'grace 12 below the need': { containers: [APP], terminationGracePeriodSeconds: 12 },
};

/** A plain workload of `kind` around `podSpec` (a raw ApiObject, as Include/Helm/kubectl users have). */
export function workload(scope: Chart, kind: string, podSpec: Json, id = 'web'): ApiObject {
  const labels = { app: id };
  const spec: Json = { template: { metadata: { labels }, spec: structuredClone(podSpec) } };
  if (kind === 'Job') spec.template.spec.restartPolicy = 'Never';
  if (kind !== 'Job') spec.selector = { matchLabels: labels };
  if (kind === 'StatefulSet') spec.serviceName = id;
  return new ApiObject(scope, id, { apiVersion: kind === 'Job' ? 'batch/v1' : 'apps/v1', kind, metadata: { name: id, namespace: 'shop' }, spec });
}

/** The pod template the library writes at synthesis for `kind` with `agents`. */
export function synthesized(kind: string, podSpec: Json, attach: Attach, version: string): Json {
  const { chart } = newChart();
  const w = workload(chart, kind, podSpec);
  const m = withVersion(version, () => {
    attach(chart, w);
    return Testing.synth(chart).find(x => x.kind === kind);
  });
  return m.spec.template;
}

export function withVersion<T>(version: string, fn: () => T): T {
  const before = process.env.CDK8S_SIDECARS_KUBERNETES_VERSION;
  process.env.CDK8S_SIDECARS_KUBERNETES_VERSION = version;
  try {
    return fn();
  } finally {
    if (before === undefined) delete process.env.CDK8S_SIDECARS_KUBERNETES_VERSION;
    else process.env.CDK8S_SIDECARS_KUBERNETES_VERSION = before;
  }
}

export interface Synthesized { manifests: Json[]; policy: Json; binding: Json; construct: SidecarInjectionPolicy }

export function policyFor(attach: Attach, version: string, extra: Json = {}): Synthesized {
  const { chart } = newChart();
  const construct = new SidecarInjectionPolicy(chart, 'inject', { namespaces: ['shop', 'billing'], kubernetesVersion: version, ...extra });
  attach(construct.pod, construct.pod);
  const manifests = Testing.synth(chart);
  return {
    manifests,
    policy: manifests.find(m => m.kind === 'MutatingAdmissionPolicy'),
    binding: manifests.find(m => m.kind === 'MutatingAdmissionPolicyBinding'),
    construct,
  };
}

/**
 * A pod as the API server has it at mutating admission: the template as its controller creates it
 * (kubernetes v1.37.2: the ReplicaSet's generateName and pod-template-hash label, the Job's
 * job-name label, the StatefulSet's ordinal name and pod-index label), defaulted where it matters
 * to the policy (pkg/apis/core/v1/defaults.go: terminationGracePeriodSeconds 30, restartPolicy Always).
 */
export function podOf(kind: string, template: Json): Json {
  const spec = structuredClone(template.spec);
  spec.terminationGracePeriodSeconds ??= 30;
  spec.restartPolicy ??= 'Always';
  const metadata = structuredClone(template.metadata ?? {});
  metadata.labels = { ...metadata.labels };
  if (kind === 'Deployment') {
    metadata.labels['pod-template-hash'] = '7d4b9c8f5d';
    metadata.generateName = 'web-7d4b9c8f5d-';
  } else if (kind === 'Job') {
    metadata.labels['batch.kubernetes.io/job-name'] = 'web';
    metadata.labels['job-name'] = 'web';
    metadata.generateName = 'web-';
  } else {
    metadata.labels['apps.kubernetes.io/pod-index'] = '0';
    metadata.labels['statefulset.kubernetes.io/pod-name'] = 'web-0';
    metadata.name = 'web-0';
  }
  return { apiVersion: 'v1', kind: 'Pod', metadata: { ...metadata, namespace: 'shop' }, spec };
}

/**
 * What may differ, with its reason (docs/admission.md, "What differs"): the agents' ConfigMaps are
 * the policy's (one per namespace, named after the policy), so their names in the volumes and,
 * where the config names the workload, the checksum annotation; WithTracer's workload attribute
 * (`K8S_WORKLOAD_NAME`, `k8s.<kind>.name=`), which names the workload's kind and object: not
 * written at admission.
 */
export function normalized(pod: Json): Json {
  const out = structuredClone(pod);
  for (const v of out.spec.volumes ?? []) if (v.configMap) v.configMap.name = '<agent config>';
  for (const k of Object.keys(out.metadata.annotations ?? {})) if (k.includes('checksum')) out.metadata.annotations[k] = '<checksum>';
  for (const c of [...out.spec.containers, ...(out.spec.initContainers ?? [])]) {
    if (!c.env) continue;
    c.env = c.env.filter((e: Json) => e.name !== 'K8S_WORKLOAD_NAME');
    for (const e of c.env) if (e.name === 'OTEL_RESOURCE_ATTRIBUTES') e.value = e.value.replace(/,k8s\.[a-z]+\.name=[^,]*$/, '');
  }
  return out;
}

