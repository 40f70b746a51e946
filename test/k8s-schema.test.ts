import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { Chart, Cron, Duration, Size, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { expectValidManifests, SCHEMA_RELEASES, schemaErrors, schemaSource } from './util/k8s-schema';

// ---------------------------------------------------------------------------
// Hand-written manifests, shaped like cdk8s output (quantities as strings,
// ports as numbers, int-or-string as either).
// ---------------------------------------------------------------------------

const labels = { app: 'web' };

function container(extra: Record<string, any> = {}): Record<string, any> {
  return {
    name: 'main',
    image: 'nginx:1.27',
    ports: [{ containerPort: 8080, name: 'http', protocol: 'TCP' }],
    env: [{ name: 'MODE', value: 'prod' }],
    resources: {
      requests: { cpu: '100m', memory: '64Mi' },
      limits: { cpu: 1, memory: '128Mi' },
    },
    readinessProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 5 },
    livenessProbe: { tcpSocket: { port: 8080 } },
    ...extra,
  };
}

function podSpec(extra: Record<string, any> = {}): Record<string, any> {
  return { containers: [container()], ...extra };
}

function deployment(spec: Record<string, any> = podSpec()): Record<string, any> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', labels },
    spec: {
      replicas: 2,
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 0 } },
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec },
    },
  };
}

function cronJob(spec: Record<string, any> = podSpec({ restartPolicy: 'OnFailure' })): Record<string, any> {
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name: 'nightly' },
    spec: {
      schedule: '0 3 * * *',
      jobTemplate: { spec: { backoffLimit: 2, template: { spec } } },
    },
  };
}

const MINIMAL: Record<string, any>[] = [
  deployment(),
  {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'db' },
    spec: {
      serviceName: 'db',
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: podSpec() },
      volumeClaimTemplates: [{
        metadata: { name: 'data' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      }],
    },
  },
  {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'agent' },
    spec: {
      selector: { matchLabels: labels },
      updateStrategy: { rollingUpdate: { maxUnavailable: 1 } },
      template: { metadata: { labels }, spec: podSpec() },
    },
  },
  {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'once' },
    spec: { template: { spec: podSpec({ restartPolicy: 'Never' }) } },
  },
  cronJob(),
  {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'solo', annotations: { note: 'x' } },
    spec: podSpec({ terminationGracePeriodSeconds: 30 }),
  },
  {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'conf' },
    data: { 'fluent-bit.conf': '[SERVICE]\n  Flush 1\n' },
    binaryData: { blob: 'aGVsbG8=' },
  },
  {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web' },
    spec: {
      type: 'ClusterIP',
      selector: labels,
      ports: [
        { name: 'http', port: 80, targetPort: 'http' },
        { name: 'admin', port: 9901, targetPort: 9901, protocol: 'TCP' },
      ],
    },
  },
];

/** A Deployment with a native sidecar: an init container with restartPolicy: Always. */
function nativeSidecarDeployment(): Record<string, any> {
  return deployment(podSpec({
    initContainers: [{ name: 'log-agent', image: 'fluent/fluent-bit:3.0', restartPolicy: 'Always' }],
  }));
}

/** A Deployment whose container has a preStop sleep hook (LifecycleHandler.sleep, 1.30+). */
function preStopSleepDeployment(): Record<string, any> {
  return deployment(podSpec({
    containers: [container({ lifecycle: { preStop: { sleep: { seconds: 5 } } } })],
  }));
}

const releasesFrom = (first: string) => SCHEMA_RELEASES.filter((r) => Number(r.split('.')[1]) >= Number(first.split('.')[1]));

// ---------------------------------------------------------------------------

describe('SCHEMA_RELEASES and where each comes from', () => {
  test('1.27 to 1.37, in version order', () => {
    expect(SCHEMA_RELEASES).toEqual(['1.27', '1.28', '1.29', '1.30', '1.31', '1.32', '1.33', '1.34', '1.35', '1.36', '1.37']);
  });

  // The package.json devDependencies (each pinned by the lock file): cdk8s-plus-XX for 1.XX.
  const devDependencies: Record<string, string> = JSON.parse(
    fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf-8')).devDependencies;

  test.each(SCHEMA_RELEASES.filter((r) => !['1.35', '1.36', '1.37'].includes(r)))('%s: its own cdk8s-plus assembly, a dev dependency', (release) => {
    const name = `cdk8s-plus-${release.split('.')[1]}`;
    expect(devDependencies[name]).toBeDefined();
    expect(schemaSource(release)).toMatch(new RegExp(`^${name}@\\d+\\.\\d+\\.\\d+$`));
  });

  test.each(['1.35', '1.36', '1.37'])('%s: no cdk8s-plus of it is published, so the newest assembly (1.34) checks it', (release) => {
    expect(devDependencies[`cdk8s-plus-${release.split('.')[1]}`]).toBeUndefined();
    expect(schemaSource(`v${release}.2`)).toMatch(/^cdk8s-plus-34@\d+\.\d+\.\d+ \(Kubernetes 1\.34: no newer assembly is published\)$/);
  });
});

describe('versions', () => {
  test.each(['1.27', 'v1.27', '1.27.3', 'v1.27.0'])('%s selects release 1.27', (version) => {
    expect(schemaErrors(nativeSidecarDeployment(), version)).toEqual([
      'Deployment/web /spec/template/spec/initContainers/0: must NOT have additional properties ("restartPolicy")',
    ]);
  });

  test('a release without a schema file throws, listing the available ones', () => {
    expect(() => schemaErrors(deployment(), '1.26')).toThrow(/No Kubernetes schema for release 1\.26 .*available: 1\.27, 1\.28,.*1\.37\.$/);
    expect(() => schemaErrors(deployment(), '1.38')).toThrow(/No Kubernetes schema for release 1\.38 /);
  });

  test('a malformed version throws', () => {
    expect(() => schemaErrors(deployment(), 'latest')).toThrow("Invalid Kubernetes version 'latest'");
  });
});

describe('valid manifests pass on every release', () => {
  const cases = SCHEMA_RELEASES.flatMap((release) => MINIMAL.map((m) => [release, m.kind, m] as const));
  test.each(cases)('%s %s', (release, _kind, manifest) => {
    expect(schemaErrors(manifest, release)).toEqual([]);
  });

  test.each(SCHEMA_RELEASES)('expectValidManifests accepts all of them on %s', (release) => {
    expect(() => expectValidManifests(MINIMAL, release)).not.toThrow();
  });
});

describe('strictness follows the release', () => {
  test('restartPolicy on an init container is rejected on 1.27', () => {
    expect(schemaErrors(nativeSidecarDeployment(), '1.27')).toEqual([
      'Deployment/web /spec/template/spec/initContainers/0: must NOT have additional properties ("restartPolicy")',
    ]);
  });

  test.each(releasesFrom('1.28'))('restartPolicy on an init container is accepted on %s', (release) => {
    expect(schemaErrors(nativeSidecarDeployment(), release)).toEqual([]);
  });

  test.each(SCHEMA_RELEASES)('an unknown container field is rejected on %s', (release) => {
    const manifest = deployment(podSpec({ containers: [container({ foo: 'bar' })] }));
    expect(schemaErrors(manifest, release)).toEqual([
      'Deployment/web /spec/template/spec/containers/0: must NOT have additional properties ("foo")',
    ]);
  });

  // The sleep action is alpha (gate off) in 1.29 and beta in 1.30, but the 1.29 OpenAPI already
  // lists it: the schemas include alpha fields (as 1.28's does for the alpha restartPolicy above).
  // The schema can therefore only reject it below 1.29; "not below 1.30" is a library rule.
  test.each(SCHEMA_RELEASES.filter((r) => !releasesFrom('1.29').includes(r)))('preStop sleep is rejected on %s', (release) => {
    expect(schemaErrors(preStopSleepDeployment(), release)).toEqual([
      'Deployment/web /spec/template/spec/containers/0/lifecycle/preStop: must NOT have additional properties ("sleep")',
    ]);
  });

  test.each(releasesFrom('1.29'))('preStop sleep is accepted on %s', (release) => {
    expect(schemaErrors(preStopSleepDeployment(), release)).toEqual([]);
  });

  test('a typo deep in a CronJob pod template is reported with its path', () => {
    const manifest = cronJob(podSpec({
      restartPolicy: 'OnFailure',
      containers: [container({ readinessProbe: { httpGet: { path: '/', prot: 8080 } } })],
    }));
    expect(schemaErrors(manifest, '1.31')).toEqual([
      'CronJob/nightly /spec/jobTemplate/spec/template/spec/containers/0/readinessProbe/httpGet: must have required property \'port\'',
      'CronJob/nightly /spec/jobTemplate/spec/template/spec/containers/0/readinessProbe/httpGet: must NOT have additional properties ("prot")',
    ]);
  });

  test('unknown fields in metadata and at the top level are rejected', () => {
    const manifest = { ...deployment(), metadata: { name: 'web', lables: labels }, extra: true };
    expect(schemaErrors(manifest, '1.29')).toEqual([
      'Deployment/web /: must NOT have additional properties ("extra")',
      'Deployment/web /metadata: must NOT have additional properties ("lables")',
    ]);
  });

  test('maps (labels, resources, data) still take arbitrary keys', () => {
    const manifest = deployment(podSpec({
      containers: [container({ resources: { limits: { 'nvidia.com/gpu': 1, 'cpu': '2' } } })],
    }));
    manifest.metadata.annotations = { 'example.com/anything': 'goes' };
    expect(schemaErrors(manifest, '1.29')).toEqual([]);
  });
});

describe('types', () => {
  test('int-or-string and quantity fields report the accepted types once', () => {
    const manifest = deployment(podSpec({
      containers: [container({
        resources: { requests: { cpu: true } },
        readinessProbe: { httpGet: { port: 1.5 } },
      })],
    }));
    expect(schemaErrors(manifest, '1.29')).toEqual([
      'Deployment/web /spec/template/spec/containers/0/readinessProbe/httpGet/port: must be string or integer',
      'Deployment/web /spec/template/spec/containers/0/resources/requests/cpu: must be string or number',
    ]);
  });

  test('ports must be integers, and required fields present', () => {
    const manifest = deployment(podSpec({ containers: [{ image: 'x', ports: [{ containerPort: '80' }] }] }));
    expect(schemaErrors(manifest, '1.29')).toEqual([
      'Deployment/web /spec/template/spec/containers/0: must have required property \'name\'',
      'Deployment/web /spec/template/spec/containers/0/ports/0/containerPort: must be integer',
    ]);
  });

  test('date-time fields are checked', () => {
    const manifest = deployment();
    manifest.metadata.creationTimestamp = 'yesterday';
    expect(schemaErrors(manifest, '1.29')).toEqual([
      'Deployment/web /metadata/creationTimestamp: must match format "date-time"',
    ]);
    manifest.metadata.creationTimestamp = '2026-11-30T12:00:00Z';
    expect(schemaErrors(manifest, '1.29')).toEqual([]);
  });

  // jsii has one `number` type for integer, int32, int64 and double; every one of them in the API
  // types is an integer field, so a fraction is an error (issue 30: the strict k8s.io/api decoders
  // of test/k8s-api/decode.real-test.ts reject it, and the schema accepted it before).
  test('a fraction where the API has an integer is an error', () => {
    const manifest = deployment(podSpec({ containers: [container({ ports: [{ containerPort: 80.5 }] })] }));
    expect(schemaErrors(manifest, '1.29')).toEqual(['Deployment/web /spec/template/spec/containers/0/ports/0/containerPort: must be integer']);
  });

  // The limits of the source: a plain string for the `byte` format and no int32 range, so these
  // pass here (the API server rejects them). The library emits no binaryData.
  test('what the assemblies cannot say: int32 range, base64', () => {
    const manifest = deployment();
    manifest.spec.replicas = 2 ** 31;
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'conf' }, binaryData: { blob: 'not base64!' } };
    expect([...schemaErrors(manifest, '1.29'), ...schemaErrors(cm, '1.29')]).toEqual([]);
  });

  test('status is not part of the cdk8s props, so it is rejected', () => {
    expect(schemaErrors({ ...deployment(), status: { replicas: 1 } }, '1.29')).toEqual([
      'Deployment/web /: must NOT have additional properties ("status")',
    ]);
  });
});

/**
 * Fields each release adds (found by comparing the Kubernetes OpenAPI definitions of v1.27.0 to
 * v1.35.0, api/openapi-spec/swagger.json in kubernetes/kubernetes, by hand): a manifest that uses
 * one is valid from that release on, and an unknown-field error before it.
 */
const NEW_FIELDS: Array<{ since: string; field: string; at: string; spec: () => Record<string, any> }> = [
  {
    since: '1.28',
    field: 'restartPolicy',
    at: '/spec/template/spec/initContainers/0',
    spec: () => podSpec({ initContainers: [{ name: 'log-agent', image: 'fluent/fluent-bit:3.0', restartPolicy: 'Always' }] }),
  },
  {
    since: '1.29',
    field: 'sleep',
    at: '/spec/template/spec/containers/0/lifecycle/preStop',
    spec: () => podSpec({ containers: [container({ lifecycle: { preStop: { sleep: { seconds: 5 } } } })] }),
  },
  {
    since: '1.30',
    field: 'appArmorProfile',
    at: '/spec/template/spec/containers/0/securityContext',
    spec: () => podSpec({ containers: [container({ securityContext: { appArmorProfile: { type: 'RuntimeDefault' } } })] }),
  },
  {
    since: '1.31',
    field: 'image',
    at: '/spec/template/spec/volumes/0',
    spec: () => podSpec({ volumes: [{ name: 'models', image: { reference: 'registry.example.com/models:1' } }] }),
  },
  {
    since: '1.32',
    field: 'resources',
    at: '/spec/template/spec',
    spec: () => podSpec({ resources: { limits: { cpu: '2', memory: '1Gi' } } }),
  },
  {
    since: '1.33',
    field: 'stopSignal',
    at: '/spec/template/spec/containers/0/lifecycle',
    spec: () => podSpec({ containers: [container({ lifecycle: { stopSignal: 'SIGTERM' } })] }),
  },
  {
    since: '1.34',
    field: 'restartPolicyRules',
    at: '/spec/template/spec/initContainers/0',
    spec: () => podSpec({ initContainers: [{ name: 'log-agent', image: 'fluent/fluent-bit:3.0', restartPolicy: 'Always', restartPolicyRules: [{ action: 'Restart', exitCodes: { operator: 'In', values: [42] } }] }] }),
  },
  {
    since: '1.35',
    field: 'workloadRef',
    at: '/spec/template/spec',
    spec: () => podSpec({ workloadRef: { name: 'training', podGroup: 'workers' } }),
  },
];

const minorOf = (release: string) => Number(release.split('.')[1]);

describe('each release accepts its own new fields and rejects those of later releases', () => {
  const cases = SCHEMA_RELEASES.flatMap((release) => NEW_FIELDS.map((f) => [release, f.field, f.since, f] as const));
  test.each(cases)('%s: %s (new in %s)', (release, field, since, f) => {
    // 1.35 is checked against the 1.34 assembly: the field new in 1.35 is unknown there too.
    const known = minorOf(release) >= minorOf(since) && since !== '1.35';
    const expected = known ? [] : [`Deployment/web ${f.at}: must NOT have additional properties ("${field}")`];
    if (field === 'restartPolicyRules' && minorOf(release) < 28) {
      // The native sidecar the rules belong to is unknown on 1.27 as well.
      expected.unshift(`Deployment/web ${f.at}: must NOT have additional properties ("restartPolicy")`);
    }
    expect(schemaErrors(deployment(f.spec()), release)).toEqual(expected);
  });
});

describe('what the old schemas rejected is rejected at every release', () => {
  test.each(SCHEMA_RELEASES)('wrong types on %s', (release) => {
    const manifest = deployment(podSpec({ containers: [container({ image: 5, args: 'serve' })] }));
    manifest.spec.replicas = 'two';
    expect(schemaErrors(manifest, release)).toEqual([
      'Deployment/web /spec/replicas: must be integer',
      'Deployment/web /spec/template/spec/containers/0/args: must be array',
      'Deployment/web /spec/template/spec/containers/0/image: must be string',
    ]);
  });

  test.each(SCHEMA_RELEASES)('missing required fields on %s', (release) => {
    const manifest = deployment(podSpec({ containers: [{ image: 'nginx' }] }));
    delete manifest.spec.selector;
    expect(schemaErrors(manifest, release)).toEqual([
      'Deployment/web /spec: must have required property \'selector\'',
      'Deployment/web /spec/template/spec/containers/0: must have required property \'name\'',
    ]);
  });

  test.each(SCHEMA_RELEASES)('an apiVersion the release does not serve on %s', (release) => {
    expect(schemaErrors({ ...deployment(), apiVersion: 'apps/v1beta2' }, release)).toEqual([
      `Deployment/web /: no schema for apiVersion "apps/v1beta2" kind "Deployment" in Kubernetes ${release}; `
      + `Kubernetes ${release} serves Deployment as apps/v1`,
    ]);
  });
});

describe('JSON names come from the assembly, not from the jsii names', () => {
  // Names whose jsii form differs: JSONSchemaProps' x-kubernetes-* (xKubernetes...), $ref and
  // $schema (ref, schema), openAPIV3Schema (openApiv3Schema), acronyms (hostIPC: hostIpc,
  // nonResourceURLs: nonResourceUrLs, downwardAPI: downwardApi). Digits occur in no 1.27-1.34
  // field name but fieldsV1 and openAPIV3Schema (no x509...).
  test.each(SCHEMA_RELEASES)('CRD schemas with x-kubernetes-*, $ref and $schema on %s', (release) => {
    const crd: Record<string, any> = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.example.com' },
      spec: {
        group: 'example.com',
        names: { kind: 'Widget', plural: 'widgets' },
        scope: 'Namespaced',
        versions: [{
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              '$schema': 'http://json-schema.org/draft-04/schema#',
              'type': 'object',
              'x-kubernetes-preserve-unknown-fields': true,
              'x-kubernetes-validations': [{ rule: 'self.size() > 0' }],
              'properties': { spec: { '$ref': '#/definitions/x', 'x-kubernetes-int-or-string': true } },
            },
          },
        }],
      },
    };
    expect(schemaErrors(crd, release)).toEqual([]);
    crd.spec.versions[0].schema = { openApiv3Schema: { xKubernetesPreserveUnknownFields: true } };
    expect(schemaErrors(crd, release)).toEqual([
      'CustomResourceDefinition/widgets.example.com /spec/versions/0/schema: must NOT have additional properties ("openApiv3Schema")',
    ]);
    crd.spec.versions[0].schema = { openAPIV3Schema: { xKubernetesPreserveUnknownFields: true } };
    expect(schemaErrors(crd, release)).toEqual([
      'CustomResourceDefinition/widgets.example.com /spec/versions/0/schema/openAPIV3Schema: must NOT have additional properties ("xKubernetesPreserveUnknownFields")',
    ]);
  });

  test.each(SCHEMA_RELEASES)('acronyms (clusterIPs, hostIPC, setHostnameAsFQDN, downwardAPI, nonResourceURLs) on %s', (release) => {
    const svc = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web' },
      spec: { clusterIP: 'None', clusterIPs: ['None'], externalIPs: ['192.0.2.1'], ports: [{ port: 80 }], sessionAffinityConfig: { clientIP: { timeoutSeconds: 10 } } },
    };
    const workload = deployment(podSpec({
      hostIPC: false,
      hostPID: false,
      setHostnameAsFQDN: true,
      containers: [container({ ports: [{ containerPort: 80, hostIP: '0.0.0.0' }] })],
      volumes: [{ name: 'info', downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] } }],
    }));
    workload.metadata.managedFields = [{ manager: 'kubectl', operation: 'Apply', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': {} } }];
    const role = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'metrics' },
      rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }],
    };
    expect([svc, workload, role].flatMap((m) => schemaErrors(m, release))).toEqual([]);
    expect([
      { ...svc, spec: { clusterIp: 'None', ports: [{ port: 80 }] } },
      { ...role, rules: [{ nonResourceUrLs: ['/metrics'], verbs: ['get'] }] },
    ].flatMap((m) => schemaErrors(m, release))).toEqual([
      'Service/web /spec: must NOT have additional properties ("clusterIp")',
      'ClusterRole/metrics /rules/0: must NOT have additional properties ("nonResourceUrLs")',
    ]);
  });
});

describe('manifests without a schema are errors, never a pass', () => {
  test('a custom resource', () => {
    const cr = { apiVersion: 'monitoring.coreos.com/v1', kind: 'ServiceMonitor', metadata: { name: 'web' }, spec: {} };
    expect(schemaErrors(cr, '1.29')).toEqual([
      'ServiceMonitor/web /: no schema for apiVersion "monitoring.coreos.com/v1" kind "ServiceMonitor" in Kubernetes 1.29 '
      + '(not a built-in kind of Kubernetes 1.29: a custom resource cannot be validated here)',
    ]);
  });

  test('an API version the release does not serve', () => {
    const old = { ...cronJob(), apiVersion: 'batch/v1beta1' };
    expect(schemaErrors(old, '1.29')).toEqual([
      'CronJob/nightly /: no schema for apiVersion "batch/v1beta1" kind "CronJob" in Kubernetes 1.29; '
      + 'Kubernetes 1.29 serves CronJob as batch/v1',
    ]);
  });

  test('missing apiVersion/kind, or not an object', () => {
    expect(schemaErrors({ metadata: { name: 'x' } }, '1.29')).toEqual([
      '<no kind>/x /: apiVersion and kind must be strings (apiVersion: undefined, kind: undefined)',
    ]);
    expect(schemaErrors(null, '1.29')).toEqual([
      '<no kind>/<no name> /: manifest must be an object, got null',
    ]);
  });

  test('CRD schemas keep their x-kubernetes-* property names', () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.example.com' },
      spec: {
        group: 'example.com',
        names: { kind: 'Widget', plural: 'widgets' },
        scope: 'Namespaced',
        versions: [{
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { 'type': 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        }],
      },
    };
    expect(schemaErrors(crd, '1.29')).toEqual([]);
  });
});

describe('expectValidManifests', () => {
  test('throws one error listing every error of every manifest', () => {
    const bad = [
      nativeSidecarDeployment(),
      MINIMAL[6],
      cronJob(podSpec({ containers: [container({ imagePullPolicy: 'Always', foo: 1 })] })),
    ];
    expect(() => expectValidManifests(bad, 'v1.27.9')).toThrow(new Error([
      '2 schema error(s) in 3 manifest(s) against Kubernetes 1.27 (strict):',
      '  Deployment/web /spec/template/spec/initContainers/0: must NOT have additional properties ("restartPolicy")',
      '  CronJob/nightly /spec/jobTemplate/spec/template/spec/containers/0: must NOT have additional properties ("foo")',
    ].join('\n')));
  });

  test('passes the same manifests once the release supports them', () => {
    const manifests = [nativeSidecarDeployment(), preStopSleepDeployment(), ...MINIMAL];
    expect(() => expectValidManifests(manifests, '1.29')).not.toThrow();
    expect(() => expectValidManifests(manifests, '1.28')).toThrow(/^1 schema error\(s\) in 10 manifest\(s\) against Kubernetes 1\.28 \(strict\):\n  Deployment\/web \/spec\/template\/spec\/containers\/0\/lifecycle\/preStop: must NOT have additional properties \("sleep"\)$/);
  });
});

describe('real cdk8s output', () => {
  test.each(SCHEMA_RELEASES)('cdk8s-plus-27 workloads validate on %s', (release) => {
    const app = Testing.app();
    const chart = new Chart(app, 'test');
    const web = new kplus.Deployment(chart, 'web', { replicas: 2 });
    web.addContainer({
      image: 'nginx',
      portNumber: 8080,
      resources: { cpu: { request: kplus.Cpu.millis(100), limit: kplus.Cpu.units(1) }, memory: { request: Size.mebibytes(64) } },
      readiness: kplus.Probe.fromHttpGet('/healthz'),
    });
    web.addInitContainer({ image: 'busybox', command: ['true'] });
    web.exposeViaService({ ports: [{ port: 80, targetPort: 8080 }] });
    new kplus.CronJob(chart, 'nightly', {
      schedule: Cron.daily(),
      containers: [{ image: 'busybox' }],
      ttlAfterFinished: Duration.minutes(5),
    });
    new kplus.ConfigMap(chart, 'conf', { data: { a: 'b' } });
    const manifests = Testing.synth(chart);
    expect(manifests.map((m) => m.kind).sort()).toEqual(['ConfigMap', 'CronJob', 'Deployment', 'Service']);
    expect(() => expectValidManifests(manifests, release)).not.toThrow();
  });
});

describe('the clone is self-contained', () => {
  const root = path.join(__dirname, '..');
  // Paths outside the clone that exist only on the maintainers' machines. Spelled in pieces, so
  // that this file does not name them itself.
  const outside = new RegExp([
    ['\\.\\.', 'shared(/|\\b)'].join('/'),
    ['', 'shared', '(k8s-schemas|real-manifests)'].join('/'),
    ['', 'work', '(shared|main|wt)\\b'].join('/'),
  ].join('|'));

  test('no tracked file (tests, scripts, projen tasks, docs) names such a path', () => {
    const files = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf-8' }).split('\0').filter(Boolean);
    expect(files).toEqual(expect.arrayContaining(['package.json', '.projenrc.ts', '.ci/run', 'README.md', 'test/util/k8s-schema.ts']));
    const hits = files
      .filter((f) => fs.statSync(path.join(root, f)).isFile())
      .flatMap((f) => fs.readFileSync(path.join(root, f), 'utf-8').split('\n')
        .map((line, i) => (outside.test(line) ? `${f}:${i + 1}: ${line.trim()}` : undefined))
        .filter((hit): hit is string => hit !== undefined));
    expect(hits).toEqual([]);
  });

  test('the pattern finds what it is for', () => {
    const examples = [
      ['..', 'shared', 'k8s-schemas'],
      ["path.resolve(__dirname, '..", '..', '..', "shared')"],
      ['', 'tmp', 'clone', 'shared', 'real-manifests', 'a.yaml'],
      ['', 'work', 'shared', 'SIDECARS.md'],
    ].map((parts) => parts.join('/'));
    expect(examples.filter((p) => outside.test(p))).toEqual(examples);
    expect(outside.test('the shared log directory /var/log/app')).toBe(false);
  });
});
