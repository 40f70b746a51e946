/**
 * WithSidecar and AdoptSidecar (issue 18): the README recipes ("## Any sidecar: WithSidecar and
 * adopt"), each synthesized for a legacy (1.27) and a native (1.29) cluster and checked with the
 * strict per-release schema, the engine's API-server rules and the Pod Security "restricted" profile.
 *
 * The tools' flags, ports and paths, as read in their sources:
 * - Cloud SQL Auth Proxy, GoogleCloudPlatform/cloud-sql-proxy v2.25.3 `cmd/root.go`: `--quitquitquit`
 *   serves `/quitquitquit` (GET or POST) on the localhost admin server, `--admin-port` default 9091;
 *   `--health-check` serves `/startup`, `/readiness`, `/liveness` on `--http-address` (default
 *   localhost, so 0.0.0.0 for the kubelet) and `--http-port` (default 9090); `--port` the first
 *   instance's local port; `--exit-zero-on-sigterm` (default exit code 143), `--max-sigterm-delay`;
 *   `cmd/errors.go`: a /quitquitquit exit is code 0. Image: distroless `static:nonroot`, USER 65532 (Dockerfile).
 * - oauth2-proxy v7.15.3 `pkg/apis/options/options.go`: `--http-address` (default 127.0.0.1:4180),
 *   `--upstream`, `--ping-path` /ping, `--ready-path` /ready, `--email-domain`, `--reverse-proxy`;
 *   `legacy_options.go`: `--provider`, `--oidc-issuer-url`, `--client-id`; `load.go`: every option
 *   also as `OAUTH2_PROXY_<NAME>` env (OAUTH2_PROXY_CLIENT_SECRET, OAUTH2_PROXY_COOKIE_SECRET).
 *   Image: `Makefile` DOCKER_BUILD_RUNTIME_IMAGE gcr.io/distroless/static:nonroot (uid 65532).
 * - Vault agent, hashicorp/vault-k8s `agent-inject/agent/container_sidecar.go` (`vault agent -config=...`),
 *   `agent-inject/agent/agent.go` (DefaultAgentRunAsUser 100, DefaultAgentRunAsGroup 1000); config
 *   keys as in hashicorp/vault `command/agent/config/test-fixtures/config-template-min.hcl`
 *   (`auto_auth { method { type, config } }`, `template { destination }`), `exit_after_auth`.
 */
import * as path from 'path';
import { Chart, Cron, Duration, Include, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { AdoptSidecar } from '../src/adopt-sidecar';
import { checkPodSpec } from '../src/engine/rules';
import { WithLogAgent } from '../src/with-log-agent';
import { SidecarCheck, SidecarQuit, SidecarVolume, WithSidecar } from '../src/with-sidecar';
import { WithTracer } from '../src/with-tracer';
import { manifestOf, newChart, podSpecOf, rawDeployment } from './util/fixtures';
import { expectValidManifests } from './util/k8s-schema';
import { restrictedViolations } from './util/pss';

const CLOUD_SQL_PROXY_IMAGE = 'gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.25.3';
const names = (cs: any[] = []) => cs.map(c => c.name);

/** Synthesizes, then checks every manifest against the release's strict schema and the pod spec against the API-server rules. */
function synthChecked(chart: Chart, version: string): any[] {
  const all = Testing.synth(chart);
  expectValidManifests(all, version);
  const minor = Number(version.split('.')[1]);
  for (const m of all.filter(x => ['Deployment', 'CronJob', 'Job', 'Pod', 'StatefulSet', 'DaemonSet'].includes(x.kind))) {
    expect(checkPodSpec(podSpecOf(m), { minor, gate: false }, m.metadata.name, { kind: m.kind })).toEqual([]);
  }
  return all;
}

// ---------------------------------------------------------------------------
// Recipe 1: the Cloud SQL Auth Proxy on a CronJob
// ---------------------------------------------------------------------------

function cloudSqlCronJob(chart: Chart, kubernetesVersion: string) {
  const job = new kplus.CronJob(chart, 'report', {
    schedule: Cron.daily(),
    containers: [{
      name: 'report',
      image: 'ghcr.io/example/report:1.0.0',
      // The app stops the proxy when done, where it must (legacy): the URL is set only there.
      command: ['/bin/sh', '-c', 'run-report; if [ -n "$PROXY_QUIT_URL" ]; then wget -q -O- --post-data= "$PROXY_QUIT_URL"; fi'],
      securityContext: { user: 1000, group: 1000 },
    }],
  });
  new WithSidecar(chart, 'cloud-sql-proxy', {
    workload: job,
    kubernetesVersion,
    containerName: 'cloud-sql-proxy',
    image: CLOUD_SQL_PROXY_IMAGE,
    args: [
      '--structured-logs', '--port=5432', '--health-check', '--http-address=0.0.0.0', '--quitquitquit',
      '--exit-zero-on-sigterm', 'my-project:europe-west1:reports',
    ],
    ports: [{ number: 9090, name: 'proxy-health' }],
    localPorts: [5432, 9091],
    startupCheck: SidecarCheck.http(9090, { path: '/startup' }),
    // Legacy: the report starts only once the proxy is up.
    holdApplicationUntilStarted: true,
    jobQuit: SidecarQuit.http(9091, '/quitquitquit', 'PROXY_QUIT_URL'),
    appEnv: { DB_HOST: '127.0.0.1', DB_PORT: '5432' },
  });
  return job;
}

describe('recipe: the Cloud SQL Auth Proxy on a CronJob', () => {
  test('1.29: a native sidecar; the Job completes without the app stopping it (no quit URL in the app)', () => {
    const { chart } = newChart();
    cloudSqlCronJob(chart, '1.29');
    const spec = podSpecOf(manifestOf(synthChecked(chart, '1.29'), 'CronJob'));
    expect(names(spec.initContainers)).toEqual(['cloud-sql-proxy']);
    const proxy = spec.initContainers[0];
    expect(proxy.restartPolicy).toBe('Always');
    expect(proxy.startupProbe).toEqual({ failureThreshold: 120, httpGet: { path: '/startup', port: 9090 }, periodSeconds: 1, timeoutSeconds: 1 });
    expect(restrictedViolations(proxy)).toEqual([]);
    const app = spec.containers[0];
    expect(app.env).toEqual([{ name: 'DB_HOST', value: '127.0.0.1' }, { name: 'DB_PORT', value: '5432' }]);
    expect(app.env.find((e: any) => e.name === 'PROXY_QUIT_URL')).toBeUndefined();
  });

  test('1.27: legacy, first in spec.containers holding the app until /startup answers; the app gets the quit URL', () => {
    const { chart } = newChart();
    cloudSqlCronJob(chart, '1.27');
    const spec = podSpecOf(manifestOf(synthChecked(chart, '1.27'), 'CronJob'));
    expect(names(spec.containers)).toEqual(['cloud-sql-proxy', 'report']);
    expect(names(spec.initContainers)).toEqual(['sidecar-tools']);
    const proxy = spec.containers[0];
    expect(proxy.restartPolicy).toBeUndefined();
    expect(proxy.lifecycle.postStart.exec.command.join(' ')).toContain('http://127.0.0.1:9090/startup');
    expect(restrictedViolations(proxy)).toEqual([]);
    expect(spec.containers[1].env).toContainEqual({ name: 'PROXY_QUIT_URL', value: 'http://127.0.0.1:9091/quitquitquit' });
  });

  test('1.27 without the quit endpoint: the refusal of a legacy sidecar on a Job, as before', () => {
    const { chart } = newChart();
    const job = new kplus.Job(chart, 'job', { containers: [{ name: 'app', image: 'app:1', securityContext: { user: 1000 } }] });
    new WithSidecar(chart, 'proxy', { workload: job, kubernetesVersion: '1.27', image: CLOUD_SQL_PROXY_IMAGE });
    expect(() => Testing.synth(chart)).toThrow(/WithSidecar 'test\/proxy': a legacy sidecar on Job '.*' never exits, so the Job never completes/);
  });
});

// ---------------------------------------------------------------------------
// Recipe 2: a Vault agent beside the app
// ---------------------------------------------------------------------------

const VAULT_AGENT_CONFIG = `exit_after_auth = false
pid_file = "/vault/run/pid"

vault {
  address = "https://vault.example.com:8200"
}

auto_auth {
  method {
    type       = "kubernetes"
    mount_path = "auth/kubernetes"
    config = {
      role = "orders"
    }
  }
}

template {
  destination = "/vault/secrets/db.env"
  contents    = "{{ with secret \\"database/creds/orders\\" }}DB_USER={{ .Data.username }}\\nDB_PASSWORD={{ .Data.password }}{{ end }}"
}
`;

function vaultAgent(chart: Chart, kubernetesVersion: string) {
  const deployment = new kplus.Deployment(chart, 'orders', {
    containers: [{ name: 'orders', image: 'ghcr.io/example/orders:2.0.0', portNumber: 8080, securityContext: { user: 1000, group: 1000 } }],
  });
  new WithSidecar(chart, 'vault-agent', {
    workload: deployment,
    kubernetesVersion,
    containerName: 'vault-agent',
    image: 'hashicorp/vault:1.20.4',
    command: ['vault'],
    args: ['agent', '-config=/etc/vault-agent/config.hcl'],
    configFiles: { 'config.hcl': VAULT_AGENT_CONFIG },
    user: 100,
    group: 1000,
    volumes: [
      // rendered secrets, in memory, read-only in the app at the same path
      SidecarVolume.emptyDir('vault-secrets', '/vault/secrets', { memory: true, appMountPath: '/vault/secrets' }),
      SidecarVolume.emptyDir('vault-run', '/vault/run', { memory: true }),
    ],
    // started = the first secret is rendered (native: the app starts after it)
    startupCheck: SidecarCheck.exec(['/bin/sh', '-c', 'test -s /vault/secrets/db.env'], { timeout: Duration.minutes(2) }),
    stopTime: Duration.seconds(5),
  });
  return deployment;
}

describe('recipe: a Vault agent beside the app', () => {
  test.each(['1.27', '1.29'])('%s: the secrets directory shared read-only with the app; the config in a ConfigMap', (version) => {
    const { chart } = newChart();
    vaultAgent(chart, version);
    const all = synthChecked(chart, version);
    const spec = podSpecOf(manifestOf(all, 'Deployment'));
    const agent = [...(spec.initContainers ?? []), ...spec.containers].find((c: any) => c.name === 'vault-agent');
    expect(agent.restartPolicy).toBe(version === '1.29' ? 'Always' : undefined);
    expect(agent.startupProbe.exec.command).toEqual(['/bin/sh', '-c', 'test -s /vault/secrets/db.env']);
    expect(agent.securityContext).toMatchObject({ runAsUser: 100, runAsGroup: 1000, runAsNonRoot: true, readOnlyRootFilesystem: true });
    expect(restrictedViolations(agent)).toEqual([]);
    const app = spec.containers.find((c: any) => c.name === 'orders');
    expect(app.volumeMounts).toContainEqual({ mountPath: '/vault/secrets', name: 'vault-secrets', readOnly: true });
    expect(spec.volumes).toContainEqual({ emptyDir: { medium: 'Memory', sizeLimit: '16Mi' }, name: 'vault-secrets' });
    const cm = manifestOf(all, 'ConfigMap');
    expect(cm.data['config.hcl']).toBe(VAULT_AGENT_CONFIG);
    expect(agent.volumeMounts).toContainEqual({ mountPath: '/etc/vault-agent', name: 'vault-agent-config', readOnly: true });
  });
});

// ---------------------------------------------------------------------------
// Recipe 3: oauth2-proxy in front of the app
// ---------------------------------------------------------------------------

function oauth2Proxy(chart: Chart, kubernetesVersion: string) {
  const deployment = new kplus.Deployment(chart, 'dashboard', {
    containers: [{ name: 'dashboard', image: 'ghcr.io/example/dashboard:3.1.0', portNumber: 8080, securityContext: { user: 1000, group: 1000 } }],
  });
  new WithSidecar(chart, 'oauth2-proxy', {
    workload: deployment,
    kubernetesVersion,
    containerName: 'oauth2-proxy',
    image: 'quay.io/oauth2-proxy/oauth2-proxy:v7.15.3',
    args: [
      '--http-address=0.0.0.0:4180',
      '--upstream=http://127.0.0.1:8080',
      '--provider=oidc',
      '--oidc-issuer-url=https://login.example.com',
      '--client-id=dashboard',
      '--email-domain=example.com',
      '--reverse-proxy=true',
    ],
    secretEnv: {
      OAUTH2_PROXY_CLIENT_SECRET: { secret: { name: 'dashboard-oauth2' }, key: 'client-secret' },
      OAUTH2_PROXY_COOKIE_SECRET: { secret: { name: 'dashboard-oauth2' }, key: 'cookie-secret' },
    },
    ports: [{ number: 4180, name: 'oauth2-http' }],
    startupCheck: SidecarCheck.http(4180, { path: '/ping' }),
    // in the request path: its readiness counts for the pod's
    readinessCheck: SidecarCheck.http(4180, { path: '/ready', period: Duration.seconds(5), timeout: Duration.seconds(15) }),
    appShutdownTime: Duration.seconds(15),
  });
  // The Service sends traffic to the proxy, not to the app.
  new kplus.Service(chart, 'dashboard-svc', { selector: deployment, ports: [{ port: 80, targetPort: 4180, name: 'http' }] });
  return deployment;
}

describe('recipe: oauth2-proxy in front of the app', () => {
  test.each(['1.27', '1.29'])('%s: the proxy on 4180 forwards to the app on 127.0.0.1:8080; secrets from a Secret', (version) => {
    const { chart } = newChart();
    oauth2Proxy(chart, version);
    const all = synthChecked(chart, version);
    const spec = podSpecOf(manifestOf(all, 'Deployment'));
    const proxy = [...(spec.initContainers ?? []), ...spec.containers].find((c: any) => c.name === 'oauth2-proxy');
    expect(proxy.ports).toEqual([{ containerPort: 4180, name: 'oauth2-http', protocol: 'TCP' }]);
    expect(proxy.readinessProbe).toEqual({ failureThreshold: 3, httpGet: { path: '/ready', port: 4180 }, periodSeconds: 5, timeoutSeconds: 1 });
    expect(proxy.env).toEqual([
      { name: 'OAUTH2_PROXY_CLIENT_SECRET', valueFrom: { secretKeyRef: { key: 'client-secret', name: 'dashboard-oauth2' } } },
      { name: 'OAUTH2_PROXY_COOKIE_SECRET', valueFrom: { secretKeyRef: { key: 'cookie-secret', name: 'dashboard-oauth2' } } },
    ]);
    expect(restrictedViolations(proxy)).toEqual([]);
    // no secret in any ConfigMap
    expect(all.filter(m => m.kind === 'ConfigMap')).toEqual([]);
    // legacy: the proxy outlives the app's 15 s shutdown
    if (version === '1.27') expect(proxy.lifecycle.preStop.exec.command).toEqual(['/sidecar-tools/busybox', 'sleep', '15']);
    else expect(proxy.lifecycle).toBeUndefined();
  });
});

// ---------------------------------------------------------------------------
// Recipe 4: adopting a legacy sidecar from an Include'd vendor manifest
// ---------------------------------------------------------------------------

const VENDOR_YAML = path.join(__dirname, 'fixtures', 'vendor', 'orders-api.yaml');

function adoptVendorProxy(chart: Chart, kubernetesVersion: string) {
  const vendor = new Include(chart, 'vendor', { url: VENDOR_YAML });
  const deployment = vendor.apiObjects.find(o => o.kind === 'Deployment')!;
  new AdoptSidecar(chart, 'adopt-proxy', {
    workload: deployment,
    kubernetesVersion,
    containerName: 'cloud-sql-proxy',
    startupCheck: SidecarCheck.http(9090, { path: '/startup' }),
    holdApplicationUntilStarted: true,
  });
  return deployment;
}

describe('recipe: adopt a legacy sidecar from an Include\'d vendor manifest', () => {
  const original = () => {
    const { chart } = newChart();
    const d = new Include(chart, 'vendor', { url: VENDOR_YAML }).apiObjects.find(o => o.kind === 'Deployment')!;
    return podSpecOf(d.toJson()).containers.find((c: any) => c.name === 'cloud-sql-proxy');
  };

  test('1.29: a native sidecar with every original field kept, and its startup check', () => {
    const { chart } = newChart();
    adoptVendorProxy(chart, '1.29');
    const spec = podSpecOf(manifestOf(synthChecked(chart, '1.29'), 'Deployment'));
    expect(names(spec.containers)).toEqual(['orders-api']);
    expect(names(spec.initContainers)).toEqual(['cloud-sql-proxy']);
    const { restartPolicy, startupProbe, ...rest } = spec.initContainers[0];
    expect(restartPolicy).toBe('Always');
    expect(startupProbe.httpGet).toEqual({ path: '/startup', port: 9090 });
    expect(rest).toEqual(original());
    expect(spec.serviceAccountName).toBe('orders-api');
  });

  test('1.27: left legacy, first with the hold and the preStop delay; its fields kept', () => {
    const { chart } = newChart();
    adoptVendorProxy(chart, '1.27');
    const spec = podSpecOf(manifestOf(synthChecked(chart, '1.27'), 'Deployment'));
    expect(names(spec.containers)).toEqual(['cloud-sql-proxy', 'orders-api']);
    const { lifecycle, startupProbe, volumeMounts, ...rest } = spec.containers[0];
    expect(Object.keys(lifecycle).sort()).toEqual(['postStart', 'preStop']);
    expect(startupProbe.httpGet.path).toBe('/startup');
    expect(volumeMounts).toEqual([{ mountPath: '/sidecar-tools', name: 'sidecar-tools', readOnly: true }]);
    expect(rest).toEqual(original());
  });

  test('a name the manifest does not have: the error names the containers present', () => {
    const { chart } = newChart();
    const deployment = new Include(chart, 'vendor', { url: VENDOR_YAML }).apiObjects.find(o => o.kind === 'Deployment')!;
    new AdoptSidecar(chart, 'adopt', { workload: deployment, kubernetesVersion: '1.29', containerName: 'cloudsql-proxy' });
    expect(() => Testing.synth(chart)).toThrow(
      "AdoptSidecar 'test/adopt': Deployment 'orders-api' has no container named 'cloudsql-proxy' to adopt; its spec.containers are 'orders-api', 'cloud-sql-proxy'.",
    );
  });
});

// ---------------------------------------------------------------------------
// The construct's own behaviour
// ---------------------------------------------------------------------------

describe('WithSidecar', () => {
  test('restricted security defaults, small resources, no cdk8s-plus defaults', () => {
    const { chart } = newChart();
    const d = new kplus.Deployment(chart, 'web', { containers: [{ name: 'app', image: 'app:1', securityContext: { user: 1000 } }] });
    new WithSidecar(chart, 'side', { workload: d, kubernetesVersion: '1.29', image: 'example/side:1' });
    const c = podSpecOf(manifestOf(Testing.synth(chart), 'Deployment')).initContainers[0];
    expect(c).toEqual({
      image: 'example/side:1',
      imagePullPolicy: 'IfNotPresent',
      name: 'sidecar',
      resources: { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '50m', memory: '64Mi' } },
      restartPolicy: 'Always',
      securityContext: {
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] },
        privileged: false,
        readOnlyRootFilesystem: true,
        runAsGroup: 65532,
        runAsNonRoot: true,
        runAsUser: 65532,
        seccompProfile: { type: 'RuntimeDefault' },
      },
    });
  });

  test('after and serveInitContainers on a raw ApiObject: placed after the named init container, which is served', () => {
    const { chart } = newChart();
    const raw = rawDeployment(chart, 'raw', {
      initContainers: [{ name: 'fetch-ca', image: 'fetch:1' }, { name: 'migrate', image: 'migrate:1' }],
      containers: [{ name: 'app', image: 'app:1' }],
    });
    new WithSidecar(chart, 'proxy', {
      workload: raw,
      kubernetesVersion: '1.30',
      image: 'example/proxy:1',
      containerName: 'proxy',
      after: 'fetch-ca',
      serveInitContainers: true,
      appEnv: { HTTPS_PROXY: 'http://127.0.0.1:3128' },
    });
    const spec = podSpecOf(manifestOf(synthChecked(chart, '1.30'), 'Deployment'));
    expect(names(spec.initContainers)).toEqual(['fetch-ca', 'proxy', 'migrate']);
    expect(spec.initContainers[0].env).toBeUndefined();
    expect(spec.initContainers[2].env).toEqual([{ name: 'HTTPS_PROXY', value: 'http://127.0.0.1:3128' }]);
    expect(spec.containers[0].env).toEqual([{ name: 'HTTPS_PROXY', value: 'http://127.0.0.1:3128' }]);
  });

  test('two WithSidecars on one workload (different names) are fine; the same name twice is an error', () => {
    const { chart } = newChart();
    const d = new kplus.Deployment(chart, 'web', { containers: [{ name: 'app', image: 'app:1', securityContext: { user: 1000 } }] });
    new WithSidecar(chart, 'a', { workload: d, kubernetesVersion: '1.29', image: 'a:1', containerName: 'a' });
    new WithSidecar(chart, 'b', { workload: d, kubernetesVersion: '1.29', image: 'b:1', containerName: 'b' });
    expect(names(podSpecOf(manifestOf(Testing.synth(chart), 'Deployment')).initContainers)).toEqual(['a', 'b']);
    new WithSidecar(chart, 'c', { workload: d, kubernetesVersion: '1.29', image: 'c:1', containerName: 'a' });
    expect(() => Testing.synth(chart)).toThrow(/attach one WithSidecar 'a' per workload/);
  });
});

describe('serveInitContainers and after on the library\'s own agents (SidecarProps)', () => {
  function withInit(chart: Chart) {
    const d = new kplus.Deployment(chart, 'web', { containers: [{ name: 'app', image: 'app:1', securityContext: { user: 1000 } }] });
    d.addInitContainer({ name: 'migrate', image: 'migrate:1', securityContext: { user: 1000 } });
    return d;
  }

  test('1.29: the log directory mount and the OTEL_* env reach the user\'s init container', () => {
    const { chart } = newChart();
    const d = withInit(chart);
    new WithLogAgent(chart, 'logs', { workload: d, kubernetesVersion: '1.29', serveInitContainers: true });
    new WithTracer(chart, 'tracer', { workload: d, kubernetesVersion: '1.29', exporterEndpoint: 'otel.example.com:4317', serveInitContainers: true });
    const spec = podSpecOf(manifestOf(synthChecked(chart, '1.29'), 'Deployment'));
    const migrate = spec.initContainers.find((c: any) => c.name === 'migrate');
    const app = spec.containers[0];
    expect(migrate.volumeMounts).toEqual(app.volumeMounts);
    expect(migrate.env.map((e: any) => e.name)).toEqual(app.env.map((e: any) => e.name));
    expect(migrate.env.some((e: any) => e.name.startsWith('OTEL_'))).toBe(true);
  });

  test('1.27: refused with the construct path, why and the fix', () => {
    const { chart } = newChart();
    new WithLogAgent(chart, 'logs', { workload: withInit(chart), kubernetesVersion: '1.27', serveInitContainers: true });
    expect(() => Testing.synth(chart)).toThrow(
      /WithLogAgent 'test\/logs': serveInitContainers asks the sidecar to serve the init containers of Deployment '.*', but in the legacy layout \(Kubernetes 1.27\).*Target Kubernetes 1.29 or later/,
    );
  });

  test('after: the log agent after the user\'s init container (which it then does not serve)', () => {
    const { chart } = newChart();
    new WithLogAgent(chart, 'logs', { workload: withInit(chart), kubernetesVersion: '1.30', after: 'migrate' });
    const spec = podSpecOf(manifestOf(synthChecked(chart, '1.30'), 'Deployment'));
    // (sidecar-tools first: a native Fluent Bit's SIGTERM hold runs under its busybox)
    expect(names(spec.initContainers)).toEqual(['sidecar-tools', 'migrate', 'log-agent']);
  });

  test('after a name the workload does not have: the error names the init containers present', () => {
    const { chart } = newChart();
    new WithLogAgent(chart, 'logs', { workload: withInit(chart), kubernetesVersion: '1.30', after: 'migrations' });
    expect(() => Testing.synth(chart)).toThrow(
      "WithLogAgent 'test/logs': after 'migrations' names no init container of Deployment 'test-web-c8ba1bf5'; its init containers are 'migrate'. Name one of them, or drop `after`.",
    );
  });
});
