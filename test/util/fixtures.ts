/**
 * Workloads of every kind, and small accessors for synthesized pod templates.
 */
import { ApiObject, App, Chart, Cron, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import { SidecarSpec } from '../../src/engine/spec';

export const WORKLOAD_KINDS = ['Deployment', 'StatefulSet', 'DaemonSet', 'Job', 'CronJob', 'Pod'] as const;
export type WorkloadKind = typeof WORKLOAD_KINDS[number];

/** An app container as a user would write it. */
export const APP_CONTAINER: kplus.ContainerProps = {
  name: 'app',
  image: 'ghcr.io/example/app:1.0.0',
  portNumber: 8080,
  securityContext: { user: 1000, group: 1000 },
};

/** A cdk8s-plus-27 workload of the given kind with one app container. */
export function kplusWorkload(scope: Construct, kind: WorkloadKind, id = 'web'): kplus.AbstractPod {
  const containers = [APP_CONTAINER];
  switch (kind) {
    case 'Deployment': return new kplus.Deployment(scope, id, { containers });
    case 'StatefulSet': {
      const service = new kplus.Service(scope, `${id}-svc`, { ports: [{ port: 8080 }], clusterIP: 'None' });
      return new kplus.StatefulSet(scope, id, { containers, service });
    }
    case 'DaemonSet': return new kplus.DaemonSet(scope, id, { containers });
    case 'Job': return new kplus.Job(scope, id, { containers });
    case 'CronJob': return new kplus.CronJob(scope, id, { containers, schedule: Cron.daily() });
    case 'Pod': return new kplus.Pod(scope, id, { containers });
  }
}

/** A fresh app and chart. */
export function newChart(): { app: App; chart: Chart } {
  const app = Testing.app();
  const chart = new Chart(app, 'test');
  return { app, chart };
}

/** The pod spec of a synthesized manifest of any workload kind. */
export function podSpecOf(manifest: any): any {
  switch (manifest.kind) {
    case 'Pod': return manifest.spec;
    case 'CronJob': return manifest.spec.jobTemplate.spec.template.spec;
    default: return manifest.spec.template.spec;
  }
}

/** The pod template metadata of a synthesized manifest. */
export function podMetadataOf(manifest: any): any {
  switch (manifest.kind) {
    case 'Pod': return manifest.metadata;
    case 'CronJob': return manifest.spec.jobTemplate.spec.template.metadata;
    default: return manifest.spec.template.metadata;
  }
}

/** The one manifest of the given kind. */
export function manifestOf(manifests: any[], kind: string): any {
  const found = manifests.filter(m => m.kind === kind);
  if (found.length !== 1) throw new Error(`expected one ${kind}, found ${found.length}`);
  return found[0];
}

/** Names of init containers and containers, in order. */
export function layoutOf(manifest: any): { init: string[]; containers: string[] } {
  const spec = podSpecOf(manifest);
  return {
    init: (spec.initContainers ?? []).map((c: any) => c.name),
    containers: (spec.containers ?? []).map((c: any) => c.name),
  };
}

/** Finds a container (init or regular) by name. */
export function containerOf(manifest: any, name: string): any {
  const spec = podSpecOf(manifest);
  const c = [...(spec.initContainers ?? []), ...(spec.containers ?? [])].find((x: any) => x.name === name);
  if (!c) throw new Error(`no container '${name}' in ${manifest.kind}`);
  return c;
}

/**
 * A raw Deployment as an ApiObject (as Include/Helm produce), with `podSpec` as its pod template's
 * spec (default: one app container on 8080).
 */
export function rawDeployment(scope: Construct, id = 'raw', podSpec?: any): ApiObject {
  return rawWorkload(scope, id, podSpec ?? { containers: [{ name: 'app', image: 'ghcr.io/example/app:1.0.0', ports: [{ containerPort: 8080 }] }] });
}

/**
 * A raw workload ApiObject named `id` with `podSpec` as its pod template's spec: a Deployment
 * (apps/v1, a selector on app: <id>) or a Job (batch/v1, no selector).
 */
export function rawWorkload(scope: Construct, id: string, podSpec: any, kind: 'Deployment' | 'Job' | string = 'Deployment'): ApiObject {
  return new ApiObject(scope, id, {
    apiVersion: kind === 'Job' ? 'batch/v1' : 'apps/v1',
    kind,
    metadata: { name: id },
    spec: {
      ...(kind === 'Job' ? {} : { selector: { matchLabels: { app: id } } }),
      template: { metadata: { labels: { app: id } }, spec: podSpec },
    },
  });
}

/**
 * A HorizontalPodAutoscaler manifest (autoscaling/v2) 'web' in namespace 'shop' on a Resource
 * metric's Utilization of the Deployment 'web' (the app-wide check's fixture: test/cli.test.ts
 * and test/manifests-check.test.ts).
 */
export function hpaManifest(options: { averageUtilization: number; minReplicas?: number; resource?: string }): any {
  return {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: 'web', namespace: 'shop' },
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
      ...(options.minReplicas !== undefined ? { minReplicas: options.minReplicas } : {}),
      maxReplicas: 3,
      metrics: [{ type: 'Resource', resource: { name: options.resource ?? 'cpu', target: { type: 'Utilization', averageUtilization: options.averageUtilization } } }],
    },
  };
}

/** Runs `fn` with an environment variable set, restoring it after. */
export function withEnv<T>(name: string, value: string | undefined, fn: () => T): T {
  const before = process.env[name];
  if (value === undefined) delete process.env[name]; else process.env[name] = value;
  try {
    return fn();
  } finally {
    if (before === undefined) delete process.env[name]; else process.env[name] = before;
  }
}

/**
 * A bare engine SidecarSpec `name` (for the engine tests against injected proxies: test/with-mesh.test.ts,
 * test/injectors.test.ts): a container with one port `basePort + rank` and a startup probe on it.
 */
export function engineSpec(name: string, rank: number, stopSeconds: number, layout: 'NATIVE' | 'LEGACY', basePort = 9000): SidecarSpec {
  return {
    owner: `With '${name}'`,
    kind: `Kind-${name}`,
    rank,
    container: { name, image: `example/${name}:1`, ports: [{ containerPort: basePort + rank }], startupProbe: { httpGet: { path: '/', port: basePort + rank } } },
    volumes: [],
    appMounts: [],
    appEnv: [],
    podAnnotations: {},
    shutdown: { stopSeconds, appShutdownSeconds: 10 },
    layout,
    allowLegacyOnJob: false,
  };
}
