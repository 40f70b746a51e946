/**
 * The engine's API-server rules against what kubernetes/kubernetes does at the release tags
 * (pkg/apis/core/validation/validation.go and friends, named beside each case), and the names,
 * annotations and objects the constructs emit checked against those rules.
 */
import { ApiObject, Duration, Size, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { LogAgent, SidecarMode, SidecarValidation, WithEnvoy, WithLogAgent, WithTracer } from '../src';
import { allDocs, readDoc } from './util/docs';
import { kplusWorkload, manifestOf, newChart, podMetadataOf, podSpecOf } from './util/fixtures';
import { applySidecars } from '../src/engine/pod-template';
import { POD_SPEC_RULES, checkPodSpec } from '../src/engine/rules';
import { SidecarSpec } from '../src/engine/spec';
import { Json } from '../src/private/json';

const where = "Deployment 'web'";
const check = (spec: Json, minor: number, gate = false) => checkPodSpec(spec, { minor, gate }, where);

/** IsDNS1123Label (k8s.io/apimachinery/pkg/util/validation/validation.go), written out independently. */
function isLabel(s: string): boolean {
  if (s.length < 1 || s.length > 63) return false;
  const alnum = (ch: string) => (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
  return alnum(s[0]) && alnum(s[s.length - 1]) && [...s].every(ch => alnum(ch) || ch === '-');
}

describe('point 2: every name the library derives is a DNS-1123 label', () => {
  // The longest containerName the constructs accept, on the construct with the most derived
  // volumes of each agent kind (Envoy with TLS and a client CA, each log agent, the tracer).
  const NAME = 'n'.repeat(53);
  const builds: Array<[string, (chart: any, workload: any, kubernetesVersion: string) => void]> = [
    ['WithEnvoy (TLS + client CA)', (chart, workload, kubernetesVersion) => new WithEnvoy(chart, 'c', {
      workload, kubernetesVersion, appPort: 8080, appListensOnPodIp: true, containerName: NAME, tls: { secret: { name: 'web-tls' }, clientCaSecret: { name: 'web-ca' } },
    })],
    ['WithLogAgent (Fluent Bit)', (chart, workload, kubernetesVersion) => new WithLogAgent(chart, 'c', { workload, kubernetesVersion, containerName: NAME })],
    ['WithLogAgent (Vector)', (chart, workload, kubernetesVersion) => new WithLogAgent(chart, 'c', { workload, kubernetesVersion, containerName: NAME, agent: LogAgent.vector() })],
    ['WithLogAgent (Fluentd)', (chart, workload, kubernetesVersion) => new WithLogAgent(chart, 'c', { workload, kubernetesVersion, containerName: NAME, agent: LogAgent.fluentd() })],
    ['WithTracer', (chart, workload, kubernetesVersion) => new WithTracer(chart, 'c', { workload, kubernetesVersion, containerName: NAME, exporterEndpoint: 'otel.observability:4317' })],
  ];
  test.each(builds)('%s with a 53-character containerName, in both layouts', (_name, build) => {
    for (const version of ['1.27', '1.30']) {
      const { chart } = newChart();
      const workload = kplusWorkload(chart, 'Deployment');
      build(chart, workload, version);
      const pod = podSpecOf(manifestOf(Testing.synth(chart), 'Deployment'));
      const names = [
        ...[...(pod.initContainers ?? []), ...pod.containers].map((c: Json) => c.name),
        ...(pod.volumes ?? []).map((v: Json) => v.name),
      ];
      expect(names.filter(n => !isLabel(n))).toEqual([]);
    }
  });

  test('the rules check every container and volume name as the API server does (ValidateVolumes, validateContainerCommon)', () => {
    const long = `${'n'.repeat(54)}-client-ca`; // 64 characters
    expect(check({ containers: [{ name: 'app' }], volumes: [{ name: long, emptyDir: {} }] }, 29)).toEqual([
      `${where}: volume name '${long}' is 64 characters, more than the 63 of a DNS-1123 label; the API server rejects it.`,
    ]);
    expect(check({ containers: [{ name: 'App_1' }] }, 29)).toEqual([
      `${where}: container name 'App_1' is not a DNS-1123 label (lower-case letters, digits and '-', starting and ending with a letter or digit); the API server rejects it.`,
    ]);
    expect(check({ initContainers: [{ name: 'x'.repeat(64) }], containers: [{ name: 'app' }] }, 29)[0]).toMatch(/container name 'x{64}' is 64 characters/);
  });

  test('the engine names the sidecar whose derived volume name does not fit, and the longest containerName that does', () => {
    const name = 'n'.repeat(54);
    const spec: SidecarSpec = {
      owner: "WithX 'x'",
      kind: 'WithX',
      rank: 1,
      layout: 'NATIVE',
      allowLegacyOnJob: false,
      container: { name, image: 'x:1', startupProbe: { httpGet: { path: '/', port: 9000 } } },
      volumes: [{ name: `${name}-config`, emptyDir: {} }, { name: `${name}-client-ca`, emptyDir: {} }],
      appMounts: [],
      appEnv: [],
      podAnnotations: {},
      shutdown: { stopSeconds: 1, appShutdownSeconds: 1 },
    };
    const deployment = { kind: 'Deployment', metadata: { name: 'web' }, spec: { template: { spec: { containers: [{ name: 'app', image: 'a' }] } } } };
    const errors = applySidecars(deployment, [spec], { minor: 29, gate: false }).errors;
    expect(errors).toContain(
      `WithX 'x': volume name '${name}-client-ca' (derived from containerName '${name}') is not a DNS-1123 label of at most 63 characters, ` +
      'so the API server would reject the pod; use a containerName of at most 53 characters.',
    );
  });
});

describe('point 3: per-release rules that agree with the API server', () => {
  test('resizePolicy on init containers: refused up to 1.32, allowed from 1.33 (AllowSidecarResizePolicy, validation.go v1.33.0)', () => {
    const spec = { initContainers: [{ name: 's', restartPolicy: 'Always', resizePolicy: [{ resourceName: 'cpu', restartPolicy: 'NotRequired' }] }], containers: [{ name: 'app' }] };
    expect(check(spec, 32)).toEqual([
      `${where}: init container 's' sets resizePolicy, which Kubernetes 1.32 refuses on init containers (allowed from 1.33). Remove it or target 1.33+.`,
    ]);
    expect(check(spec, 33)).toEqual([]);
    expect(check(spec, 35)).toEqual([]);
    // `len(ctr.ResizePolicy) > 0`: an empty list is not a resize policy.
    expect(check({ initContainers: [{ name: 's', restartPolicy: 'Always', resizePolicy: [] }], containers: [{ name: 'app' }] }, 29)).toEqual([]);
  });

  test('restartPolicy on a regular container: refused up to 1.34, Always/OnFailure/Never from 1.35 (ContainerRestartRules beta)', () => {
    const spec = (restartPolicy: string) => ({ containers: [{ name: 'app', restartPolicy }] });
    expect(check(spec('Never'), 34)).toEqual([
      `${where}: container 'app' sets restartPolicy 'Never': restartPolicy may not be set for non-init containers in Kubernetes 1.34 (allowed from 1.35). Remove it.`,
    ]);
    for (const p of ['Always', 'OnFailure', 'Never']) expect(check(spec(p), 35)).toEqual([]);
    expect(check(spec('Sometimes'), 35)).toEqual([
      `${where}: container 'app' has restartPolicy 'Sometimes': only 'Always', 'OnFailure' and 'Never' are allowed.`,
    ]);
  });

  test('restartPolicy on an init container: only Always up to 1.34; OnFailure and Never too from 1.35', () => {
    const spec = { initContainers: [{ name: 'once', restartPolicy: 'Never' }], containers: [{ name: 'app' }] };
    expect(check(spec, 34)).toEqual([`${where}: init container 'once' has restartPolicy 'Never': only 'Always' is allowed on init containers` +
      ' in Kubernetes 1.34 (OnFailure and Never from 1.35). Remove restartPolicy for an init container that runs once before the app (its own restarts follow the pod\'s restartPolicy), set \'Always\' for a sidecar that runs beside it, or target 1.35+.']);
    expect(check(spec, 35)).toEqual([]);
  });

  test('a sleep hook longer than terminationGracePeriodSeconds is rejected from 1.30 (validateSleepAction); equal passes', () => {
    const spec = (seconds: number, grace?: number) => ({
      terminationGracePeriodSeconds: grace,
      containers: [{ name: 'app', lifecycle: { preStop: { sleep: { seconds } } } }],
    });
    expect(check(spec(45, 40), 30)).toEqual([
      `${where}: container 'app' has a preStop sleep of 45 seconds, longer than the pod's terminationGracePeriodSeconds (40), which the API server rejects. ` +
      'Shorten the sleep or raise terminationGracePeriodSeconds.',
    ]);
    expect(check(spec(40, 40), 30)).toEqual([]);
    // Unset: the API server defaults the grace period to 30 before validating.
    expect(check(spec(31), 33)).toHaveLength(1);
    expect(check(spec(30), 33)).toEqual([]);
  });

  test('a grace period too short for a legacy sidecar\'s sleep delay is reported once, as its cause', () => {
    const spec: SidecarSpec = {
      owner: "WithX 'x'",
      kind: 'WithX',
      rank: 1,
      layout: 'LEGACY',
      allowLegacyOnJob: false,
      container: { name: 'x', image: 'x:1', startupProbe: { httpGet: { path: '/', port: 9000 } } },
      volumes: [],
      appMounts: [],
      appEnv: [],
      podAnnotations: {},
      shutdown: { stopSeconds: 2, appShutdownSeconds: 10 },
    };
    const deployment = {
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: { template: { spec: { terminationGracePeriodSeconds: 5, containers: [{ name: 'app', image: 'a' }] } } },
    };
    const r = applySidecars(deployment, [spec], { minor: 30, gate: false });
    expect(r.manifest.spec.template.spec.containers[1].lifecycle.preStop).toEqual({ sleep: { seconds: 10 } });
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toMatch(/^Deployment 'web': terminationGracePeriodSeconds is 5, but its sidecars need 12/);
  });

  test('SidecarValidation.checkManifest passes no sleep hook the API server rejects', () => {
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: { template: { spec: { terminationGracePeriodSeconds: 10, containers: [{ name: 'app', image: 'a', lifecycle: { preStop: { sleep: { seconds: 15 } } } }] } } },
    };
    expect(SidecarValidation.checkManifest(deployment, '1.31')).toEqual([
      "Deployment 'web': container 'app' has a preStop sleep of 15 seconds, longer than the pod's terminationGracePeriodSeconds (10), which the API server rejects. " +
      'Shorten the sleep or raise terminationGracePeriodSeconds.',
    ]);
  });

  test('every rule names its releases and its upstream source', () => {
    for (const rule of POD_SPEC_RULES) {
      expect(rule.releases).not.toEqual('');
      expect(rule.source).toMatch(/\.go|kube_features|v1\.\d+/);
    }
  });
});

describe('issue 37: the fields and rules of 1.35-1.37, each refused below its release with the API server\'s message', () => {
  // Read in kubernetes v1.35.0, v1.36.0 and v1.37.2 (pkg/features/kube_features.go,
  // pkg/api/pod/util.go, pkg/apis/core/validation/validation.go), named in each rule's source.
  const app = { name: 'app', image: 'nginx' };

  test('restartPolicyRules: refused up to 1.34 (absent, then alpha and off), Restart from 1.35, RestartAllContainers from 1.36', () => {
    const rule = (action: string) => ({ action, exitCodes: { operator: 'In', values: [42] } });
    const regular = (action: string) => ({ containers: [{ ...app, restartPolicy: 'Never', restartPolicyRules: [rule(action)] }] });
    expect(check(regular('Restart'), 33)).toEqual(expect.arrayContaining([expect.stringMatching(/container 'app' sets restartPolicyRules, which Kubernetes 1\.33 does not have \(the field is new in 1\.34\).*target 1\.35\+/)]));
    expect(check(regular('Restart'), 34)).toEqual(expect.arrayContaining([expect.stringMatching(/restartPolicyRules, which Kubernetes 1\.34 drops \(ContainerRestartRules is alpha and off in 1\.34\)/)]));
    expect(check(regular('Restart'), 35)).toEqual([]);
    expect(check(regular('RestartAllContainers'), 35)).toEqual([
      `${where}: container 'app': restartPolicyRules[0].action "RestartAllContainers" is not supported by Kubernetes 1.35: supported values: "Restart" (RestartAllContainers from 1.36).`,
    ]);
    expect(check(regular('RestartAllContainers'), 36)).toEqual([]);
    // validateContainerRestartPolicy: a rule needs the container's restartPolicy and exitCodes
    expect(check({ containers: [{ ...app, restartPolicyRules: [{ action: 'Restart' }] }] }, 37)).toEqual([
      `${where}: container 'app': restartPolicyRules need a container restartPolicy ("must specify restartPolicy when restart rules are used").`,
      `${where}: container 'app': restartPolicyRules[0].exitCodes must be specified.`,
    ]);
    // a native sidecar: "restartPolicyRules are not allowed for init containers with restart policy Always" until 1.36
    const sidecar = { initContainers: [{ name: 's', image: 'x', restartPolicy: 'Always', restartPolicyRules: [rule('RestartAllContainers')] }], containers: [app] };
    expect(check(sidecar, 35)[0]).toMatch(/init container 's' is a native sidecar with restartPolicyRules, which Kubernetes 1\.35 refuses \("restartPolicyRules are not allowed for init containers with restart policy Always"/);
    expect(check(sidecar, 36)).toEqual([]);
  });

  test('lifecycle.stopSignal: dropped on every release with the default gates (ContainerStopSignals alpha 1.33-1.37), with the spec.os.name hint', () => {
    const spec = (os?: string) => ({ ...(os ? { os: { name: os } } : {}), containers: [{ ...app, lifecycle: { stopSignal: 'SIGUSR1' } }] });
    expect(check(spec(), 32)[0]).toMatch(/sets lifecycle\.stopSignal "SIGUSR1", which Kubernetes 1\.32 does not have \(the field is new in 1\.33, alpha\)/);
    for (const minor of [33, 35, 36, 37]) {
      expect(check(spec(), minor)).toEqual([
        `${where}: container 'app' sets lifecycle.stopSignal "SIGUSR1", which Kubernetes 1.${minor} drops with its default feature gates (ContainerStopSignals is alpha and off through 1.37), ` +
        'so the container would be stopped with its image\'s STOPSIGNAL instead; where the gate is on, it also needs spec.os.name ("may not be set for containers with empty `spec.os.name`"). ' +
        'Set the signal in the image (STOPSIGNAL), or remove lifecycle.stopSignal.',
      ]);
    }
    expect(check(spec('linux'), 37)[0]).not.toMatch(/spec\.os\.name/);
  });

  test('pod-level resources: refused up to 1.33; from 1.34 the pod\'s requests (or limits) cover the app and native sidecars\' requests', () => {
    const spec = (podRes: Json) => ({
      resources: podRes,
      initContainers: [{ name: 'log-agent', image: 'x', restartPolicy: 'Always', resources: { requests: { cpu: '100m', memory: '64Mi' } } }],
      containers: [{ ...app, resources: { requests: { cpu: '400m', memory: '256Mi' }, limits: { cpu: '500m' } } }],
    });
    expect(check(spec({ limits: { cpu: '1' } }), 33)[0]).toMatch(/sets pod-level spec\.resources, which Kubernetes 1\.33 drops \(PodLevelResources is alpha and off in 1\.32-1\.33\)/);
    expect(check(spec({ limits: { cpu: '1' } }), 31)[0]).toMatch(/does not have \(the field is new in 1\.32\)/);
    expect(check(spec({ limits: { cpu: '500m', memory: '320Mi' } }), 34)).toEqual([]);
    expect(check(spec({ limits: { cpu: '450m' } }), 37)).toEqual([
      `${where}: pod-level spec.resources.limits.cpu 450m is below the 500m that the app containers and the native sidecars 'log-agent' request together ` +
      '(the pod\'s request defaults to that aggregate, and the API server: "must be less than or equal to cpu limit of 450m"; ' +
      'the workload is accepted but its Pods are refused (FailedCreate)). Raise spec.resources.limits.cpu to at least that, ' +
      'or give the sidecars smaller requests (their resources prop).',
      `${where}: container 'app' limits cpu to 500m, above the pod-level limit 450m ("must be less than or equal to pod limits"). Lower the container's limit or raise spec.resources.limits.cpu.`,
    ]);
    // a bare Pod with limits only is refused itself (SetDefaults_Pod defaults its request)
    expect(checkPodSpec(spec({ limits: { cpu: '450m' } }), { minor: 37, gate: false }, "Pod 'p'", { kind: 'Pod' })[0])
      .toMatch(/"must be less than or equal to cpu limit of 450m"; the Pod is refused\)/);
    // the request is what counts when both are given
    expect(check(spec({ requests: { memory: '300Mi' }, limits: { memory: '1Gi' } }), 37)).toEqual([expect.stringMatching(/spec\.resources\.requests\.memory 300Mi is below the 320Mi .* \(the API server: "must be greater than or equal to aggregate container requests of 320Mi"\)/)]);
  });

  test('resizePolicy RestartContainer on an init container that is not a sidecar: allowed 1.33-1.35, refused from 1.36 (kubernetes#137458)', () => {
    const spec = (restartPolicy?: string) => ({
      initContainers: [{ name: 'migrate', image: 'x', ...(restartPolicy ? { restartPolicy } : {}), resizePolicy: [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }] }],
      containers: [app],
    });
    expect(check(spec(), 35)).toEqual([]);
    expect(check(spec(), 36)).toEqual([
      `${where}: init container 'migrate' has a resizePolicy with restartPolicy 'RestartContainer', which Kubernetes 1.36 refuses on an init container that is not a native sidecar ` +
      '("must not be set to \'RestartContainer\' for non-sidecar initContainers"; such a container is never resized). Use \'NotRequired\' or remove the resizePolicy.',
    ]);
    expect(check(spec('Always'), 37)).toEqual([]);
  });

  test('podCertificate and clusterTrustBundle projections: dropped up to 1.36, kept from 1.37 (GA)', () => {
    const spec = {
      containers: [app],
      volumes: [{ name: 'tls', projected: { sources: [{ podCertificate: { signerName: 'example.com/signer', keyType: 'ED25519', credentialBundlePath: 'bundle.pem' } }, { clusterTrustBundle: { signerName: 'example.com/signer', labelSelector: {}, path: 'ca.pem' } }] } }],
    };
    expect(check(spec, 36)).toEqual([
      `${where}: volume 'tls' projects a podCertificate source, which Kubernetes 1.36 drops with its default feature gates (on by default from 1.37), so the files it should hold are missing. Target 1.37+, or use a Secret.`,
      `${where}: volume 'tls' projects a clusterTrustBundle source, which Kubernetes 1.36 drops with its default feature gates (on by default from 1.37), so the files it should hold are missing. Target 1.37+, or use a Secret or ConfigMap.`,
    ]);
    expect(check(spec, 37)).toEqual([]);
  });

  test('a workload with a pod-level budget too small for its sidecars is refused at synthesis, before any file is written', () => {
    const synth = (podCpu: string) => {
      const { chart } = newChart();
      const web = new ApiObject(chart, 'web', {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web' },
        spec: {
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { resources: { limits: { cpu: podCpu, memory: '256Mi' } }, containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu: '200m', memory: '128Mi' } } }] },
          },
        },
      });
      new WithLogAgent(chart, 'logs', { workload: web, kubernetesVersion: '1.35', resources: { cpu: { request: { amount: '100m' } }, memory: { request: Size.mebibytes(32) } } });
      return podSpecOf(manifestOf(Testing.synth(chart), 'Deployment'));
    };
    expect(() => synth('250m')).toThrow(/Validation failed[^]*\[test\/web\] Deployment 'web': pod-level spec\.resources\.limits\.cpu 250m is below the 300m that the app containers and the native sidecars 'log-agent' request together/);
    // inside the budget: synthesized, the budget as the user wrote it
    expect(synth('300m').resources).toEqual({ limits: { cpu: '300m', memory: '256Mi' } });
  });
});

describe('point 5: StatefulSets that mount their volumeClaimTemplates', () => {
  // The shape of the kubernetes/website `web` StatefulSet (content/en/examples/application/web/web.yaml).
  const web = () => ({
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'web' },
    spec: {
      selector: { matchLabels: { app: 'nginx' } },
      serviceName: 'nginx',
      replicas: 2,
      template: {
        metadata: { labels: { app: 'nginx' } },
        spec: {
          containers: [{
            name: 'nginx',
            image: 'registry.k8s.io/nginx-slim:0.21',
            ports: [{ containerPort: 80, name: 'web' }],
            volumeMounts: [{ name: 'www', mountPath: '/usr/share/nginx/html' }],
          }],
        },
      },
      volumeClaimTemplates: [{
        metadata: { name: 'www' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      }],
    },
  });

  test('SidecarValidation.checkManifest accepts it at every release', () => {
    for (const v of ['1.27', '1.29', '1.33', '1.35']) expect(SidecarValidation.checkManifest(web(), v)).toEqual([]);
  });

  test('a mount of neither a volume nor a claim template is still reported', () => {
    const m = web();
    m.spec.template.spec.containers[0].volumeMounts.push({ name: 'cache', mountPath: '/cache' });
    expect(SidecarValidation.checkManifest(m, '1.29')).toEqual([
      "StatefulSet 'web': container 'nginx' mounts volume 'cache', which is not a volume of the pod.",
    ]);
  });

  test('a sidecar attaches to it through Include/ApiObject, and addTo passes the untouched input', () => {
    const { app, chart } = newChart();
    const sts = new ApiObject(chart, 'web', web());
    new WithLogAgent(chart, 'logs', { workload: sts, kubernetesVersion: '1.29' });
    new ApiObject(chart, 'plain', { ...web(), metadata: { name: 'plain' } });
    SidecarValidation.addTo(app, { kubernetesVersion: '1.29' });
    const out = Testing.synth(chart);
    const spec = podSpecOf(out.find((m: Json) => m.metadata?.name === 'web'));
    expect(spec.containers[0].volumeMounts.map((m: Json) => m.name)).toContain('www');
    expect(spec.initContainers.map((c: Json) => c.name)).toContain('log-agent');
  });

  test('a sidecar volume named like a claim template is refused (the controller would mount the claim instead)', () => {
    const { chart } = newChart();
    const m = web();
    m.spec.volumeClaimTemplates[0].metadata.name = 'log-agent-config';
    const sts = new ApiObject(chart, 'web', m);
    m.spec.template.spec.containers[0].volumeMounts[0].name = 'log-agent-config';
    new WithLogAgent(chart, 'logs', { workload: sts, kubernetesVersion: '1.29' });
    expect(() => Testing.synth(chart)).toThrow(/volume name 'log-agent-config' is the name of a volumeClaimTemplate of StatefulSet 'web'/);
  });
});

describe('point 6: a manifest\'s own native sidecar on a release without native sidecars', () => {
  const pod = (sidecar: Json) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p' },
    spec: { initContainers: [{ name: 'proxy', image: 'p:1', restartPolicy: 'Always', ...sidecar }], containers: [{ name: 'app', image: 'a:1' }] },
  });

  test('with a probe: the API server rejects the object (it does not hang); the message names the field and the ways out', () => {
    expect(SidecarValidation.checkManifest(pod({ startupProbe: { httpGet: { path: '/', port: 1 } } }), '1.27')).toEqual([
      "Pod 'p': init container 'proxy' has restartPolicy 'Always' (a native sidecar), which Kubernetes 1.27 does not know " +
      '(its API server drops the field, or rejects the object under strict field validation): without the field, startupProbe is ' +
      'forbidden on an init container, so the API server rejects the Pod ("may not be set for init containers"). ' +
      "Either move 'proxy' to spec.containers (it then runs beside " +
      'the app, but neither starts before nor stops after it), or target Kubernetes 1.29 or later if every node runs it.',
    ]);
  });

  test('a Deployment is rejected at kubectl apply; a StatefulSet is accepted and its pods are rejected', () => {
    const { spec } = pod({ readinessProbe: { exec: { command: ['true'] } } });
    const wrap = (kind: string) => ({ apiVersion: 'apps/v1', kind, metadata: { name: 'w' }, spec: { template: { spec } } });
    expect(SidecarValidation.checkManifest(wrap('Deployment'), '1.27')[0]).toMatch(/rejects the Deployment at `kubectl apply` \("may not be set for init containers"\)/);
    expect(SidecarValidation.checkManifest(wrap('StatefulSet'), '1.27')[0]).toMatch(/rejects each of its pods \(FailedCreate events on the StatefulSet; the StatefulSet itself is accepted\)/);
  });

  test('1.28 without the gate: the 1.28 message, and the gate as a way out', () => {
    const [message] = SidecarValidation.checkManifest(pod({ lifecycle: { preStop: { exec: { command: ['true'] } } } }), '1.28');
    expect(message).toMatch(/which Kubernetes 1\.28 drops without the SidecarContainers feature gate: without the field, lifecycle is forbidden/);
    expect(message).toMatch(/"may not be set for init containers without restartPolicy=Always"/);
    expect(message).toMatch(/`sidecarContainersGate: true`/);
    expect(message).not.toMatch(/legacy layout/);
  });

  test('without probes or hooks: it would run as an ordinary init container and the pod hangs in Init', () => {
    const [message] = SidecarValidation.checkManifest(pod({}), '1.27');
    expect(message).toMatch(/runs as an ordinary init container; if it never exits \(a sidecar does not\), the pod hangs in Init\./);
    expect(message).not.toMatch(/legacy layout/);
  });
});

describe('point 7: SidecarValidation.checkManifest on other tools\' output', () => {
  const deployment = (name: string, init: Json[]) => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: { template: { spec: { initContainers: init, containers: [{ name: 'app', image: 'a' }] } } },
  });

  test('kind: List (kubectl get -o yaml) is checked item by item', () => {
    const list = {
      apiVersion: 'v1',
      kind: 'List',
      metadata: { resourceVersion: '' },
      items: [
        { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' } },
        deployment('web', [{ name: 'proxy', image: 'p', restartPolicy: 'Always', startupProbe: { tcpSocket: { port: 1 } } }]),
      ],
    };
    const problems = SidecarValidation.checkManifest(list, '1.27');
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^List items\[1\]: Deployment 'web': init container 'proxy' has restartPolicy 'Always'/);
    expect(SidecarValidation.checkManifest(list, '1.29')).toEqual([]);
  });

  test('a ReplicationController is checked like the other workloads', () => {
    const rc = {
      apiVersion: 'v1',
      kind: 'ReplicationController',
      metadata: { name: 'rc' },
      spec: {
        replicas: 1,
        selector: { app: 'x' },
        template: {
          metadata: { labels: { app: 'x' } },
          spec: {
            initContainers: [{ name: 'proxy', image: 'p', restartPolicy: 'Always' }], containers: [{ name: 'app', image: 'a' }],
          },
        },
      },
    };
    expect(SidecarValidation.checkManifest(rc, '1.27')[0]).toMatch(/^ReplicationController 'rc': init container 'proxy'/);
    expect(SidecarValidation.checkManifest(rc, '1.29')).toEqual([]);
    // and a sidecar construct attaches to one (its pod template is at spec.template, as a ReplicaSet's)
    const { chart } = newChart();
    const obj = new ApiObject(chart, 'rc', rc);
    // (the proxy is a native sidecar of the user's: its stop time is the user's to say)
    new WithLogAgent(chart, 'logs', { workload: obj, kubernetesVersion: '1.29', userSidecarStopTime: Duration.seconds(2) });
    const out = manifestOf(Testing.synth(chart), 'ReplicationController');
    // (sidecar-tools first: a native Fluent Bit's SIGTERM hold runs under its busybox)
    expect(out.spec.template.spec.initContainers.map((c: Json) => c.name)).toEqual(['sidecar-tools', 'log-agent', 'proxy']);
  });

  describe('host ports as validateContainers / validateInitContainers / AccumulateUniqueHostPorts check them', () => {
    const port = (hostPort: number, extra: Json = {}) => ({ containerPort: hostPort, hostPort, ...extra });
    test('an init container and a regular container may share a host port (init containers run one by one)', () => {
      expect(check({ initContainers: [{ name: 'i', ports: [port(80)] }], containers: [{ name: 'app', ports: [port(80)] }] }, 29)).toEqual([]);
    });
    test('two init containers may share one; one init container may not declare it twice', () => {
      expect(check({ initContainers: [{ name: 'i', ports: [port(80)] }, { name: 'j', ports: [port(80)] }], containers: [{ name: 'app' }] }, 29)).toEqual([]);
      expect(check({ initContainers: [{ name: 'i', ports: [port(80), { containerPort: 81, hostPort: 80 }] }], containers: [{ name: 'app' }] }, 29)).toEqual([
        `${where}: init container 'i' declares hostPort 80/TCP 2 times, which the API server rejects; declare it once.`,
      ]);
    });
    test('regular containers: keyed by protocol, hostIP and port', () => {
      const two = (a: Json, b: Json) => ({ containers: [{ name: 'a', ports: [a] }, { name: 'b', ports: [b] }] });
      expect(check(two(port(80, { hostIP: '10.0.0.1' }), port(80, { hostIP: '10.0.0.2' })), 29)).toEqual([]);
      expect(check(two(port(80), port(80, { protocol: 'UDP' })), 29)).toEqual([]);
      expect(check(two(port(80, { hostIP: '10.0.0.1' }), port(80, { hostIP: '10.0.0.1' })), 29)).toEqual([
        `${where}: hostPort 10.0.0.1:80/TCP is used by both 'a' and 'b', which the API server rejects (one host port per pod); give 'b' another hostPort, or drop hostPort (the pod IP and Services reach containerPort without it).`,
      ]);
      expect(check(two(port(80), port(80, { protocol: 'TCP' })), 29)).toEqual([`${where}: hostPort 80/TCP is used by both 'a' and 'b', which the API server rejects (one host port per pod); give 'b' another hostPort, or drop hostPort (the pod IP and Services reach containerPort without it).`]);
    });
  });
});

describe('issue 16 point 6: kubectl picks the app, not a sidecar placed first', () => {
  const synthEnvoy = (version: string, annotations?: Record<string, string>) => {
    const { chart } = newChart();
    const web = kplusWorkload(chart, 'Deployment') as kplus.Deployment;
    if (annotations) for (const [k, v] of Object.entries(annotations)) web.podMetadata.addAnnotation(k, v);
    // The fixture app declares portNumber 8080 (a TCP startupProbe on the pod IP): it listens there too.
    new WithEnvoy(chart, 'envoy', { workload: web, appPort: 8080, appListensOnPodIp: true, kubernetesVersion: version });
    return manifestOf(Testing.synth(chart), 'Deployment');
  };

  test('legacy layout with Envoy first in spec.containers: the annotation names the app container', () => {
    const m = synthEnvoy('1.27');
    expect(podSpecOf(m).containers[0].name).toBe('envoy');
    expect(podMetadataOf(m).annotations['kubectl.kubernetes.io/default-container']).toBe('app');
  });

  test('a value the user set is kept', () => {
    const m = synthEnvoy('1.27', { 'kubectl.kubernetes.io/default-container': 'debug' });
    expect(podMetadataOf(m).annotations['kubectl.kubernetes.io/default-container']).toBe('debug');
  });

  test('nothing is added when the app is first (native layout, or a legacy sidecar after the app)', () => {
    expect(podMetadataOf(synthEnvoy('1.29')).annotations?.['kubectl.kubernetes.io/default-container']).toBeUndefined();
    const { chart } = newChart();
    const web = kplusWorkload(chart, 'Deployment');
    new WithLogAgent(chart, 'logs', { workload: web, mode: SidecarMode.LEGACY, kubernetesVersion: '1.29' });
    const m = manifestOf(Testing.synth(chart), 'Deployment');
    expect(podSpecOf(m).containers[0].name).toBe('app');
    expect(podMetadataOf(m).annotations?.['kubectl.kubernetes.io/default-container']).toBeUndefined();
  });
});

describe('point 8: the docs say what the source does', () => {
  // every page for what must not be said anywhere; the page that says it for what must be said
  const docs = allDocs(true);
  const troubleshooting = readDoc('docs/troubleshooting.md', true);
  const target = readDoc('docs/target.md', true);

  test('the API server messages it quotes are the ones validation.go has (v1.27.0 / v1.28.0), and the rules quote them too', () => {
    expect(docs).not.toMatch(/must not be set for init containers/);
    expect(troubleshooting).toMatch(/`Forbidden: may not be set for init containers` \(1\.27\)/);
    expect(troubleshooting).toMatch(/`Forbidden: may not be set for init containers without restartPolicy=Always` \(1\.28/);
    const pod = { initContainers: [{ name: 's', restartPolicy: 'Always', startupProbe: {} }], containers: [{ name: 'app' }] };
    expect(checkPodSpec(pod, { minor: 27, gate: false }, 'Pod', { kind: 'Pod' })[0]).toMatch(/\("may not be set for init containers"\)/);
    expect(checkPodSpec(pod, { minor: 28, gate: false }, 'Pod', { kind: 'Pod' })[0]).toMatch(/\("may not be set for init containers without restartPolicy=Always"\)/);
  });

  test('an API server that drops restartPolicy rejects a Deployment at kubectl apply: no FailedCreate on the ReplicaSet for that', () => {
    expect(docs).not.toMatch(/No pod is created\. The controller reports `FailedCreate`/);
    expect(troubleshooting).toMatch(/\*\*`kubectl apply` fails\*\*/);
  });

  test('init containers are not said to be served by every sidecar: the log mount and OTEL_* env go to spec.containers only', () => {
    expect(docs).not.toMatch(/so they are served too/);
    const spec: SidecarSpec = {
      owner: "WithX 'x'",
      kind: 'WithX',
      rank: 1,
      layout: 'NATIVE',
      allowLegacyOnJob: false,
      container: { name: 'x', image: 'x:1', startupProbe: { httpGet: { path: '/', port: 9000 } } },
      volumes: [{ name: 'x-logs', emptyDir: {} }],
      appMounts: [{ name: 'x-logs', mountPath: '/var/log/app' }],
      appEnv: [{ name: 'OTEL_EXPORTER_OTLP_ENDPOINT', value: 'http://127.0.0.1:4318' }],
      podAnnotations: {},
      shutdown: { stopSeconds: 1, appShutdownSeconds: 1 },
    };
    const deployment = {
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: { template: { spec: { initContainers: [{ name: 'migrate', image: 'm' }], containers: [{ name: 'app', image: 'a' }] } } },
    };
    const out = applySidecars(deployment, [spec], { minor: 29, gate: false }).manifest.spec.template.spec;
    const migrate = out.initContainers.find((c: Json) => c.name === 'migrate');
    expect(migrate.env).toBeUndefined();
    expect(migrate.volumeMounts).toBeUndefined();
    expect(target).toMatch(/The log directory mount and the `OTEL_\*` variables, though, are added to `spec\.containers` only/);
  });
});
