/**
 * The bad-input catalogue: every mistake a user can make with the three constructs,
 * `Sidecars.configure()` and `SidecarValidation`, as one case each. For every case:
 * - the user's program (build the app, then `app.synth()` into a fresh directory) fails;
 * - the message names the construct (its path), the bad value, and what to do, in that order;
 * - nothing is written to the output directory.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { ApiObject, App, Chart, Cron, Duration, JsonPatch, Lazy, Size, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { Construct } from 'constructs';
// Imported module by module (not from '../src'), so that constructs in progress cannot break this suite.
import { AdoptSidecar } from '../src/adopt-sidecar';
import { Images } from '../src/images';
import { LogAgent } from '../src/log-agent';
import { LogOutput } from '../src/log-output';
import { Sidecars } from '../src/settings';
import { SidecarInjectionPolicy } from '../src/sidecar-injection-policy';
import { SidecarMode } from '../src/target/capabilities';
import { SidecarValidation } from '../src/validation';
import { WithEnvoy } from '../src/with-envoy';
import { WithLogAgent } from '../src/with-log-agent';
import { SidecarCheck, SidecarQuit, SidecarVolume, WithSidecar } from '../src/with-sidecar';
import { WithTracer } from '../src/with-tracer';
import { APP, Case, ENDPOINT, ENV, USER, ctx, expectRefused, withoutVersionEnv } from './util/catalogue';

withoutVersionEnv();

const secret = (scope: Construct, name: string, key: string) => ({ secret: kplus.Secret.fromSecretName(scope, `${name}-${key}`, name), key });

const CASES: Case[] = [
  // ---------------------------------------------------------------- target
  {
    name: 'a version copied from `kubectl version` (vendor suffix)',
    build: c => new WithTracer(c.chart, 'tracer', { workload: c.deployment(), exporterEndpoint: ENDPOINT, kubernetesVersion: 'v1.29.3-eks-adc7111' }),
    message: ['test/tracer', "kubernetesVersion 'v1.29.3-eks-adc7111' carries a vendor suffix", "drop it and give the Kubernetes version alone, e.g. 'v1.29.3'"],
  },
  {
    name: 'an empty version',
    build: c => new WithEnvoy(c.chart, 'envoy', { workload: c.deployment(), appPort: 8080, kubernetesVersion: '' }),
    message: ['test/envoy', "kubernetesVersion '' is not a Kubernetes version", "Use the lowest minor version of the cluster's API server and nodes"],
  },
  {
    name: 'Sidecars.configure with a version that is not one',
    build: c => Sidecars.configure(c.chart, { kubernetesVersion: 'latest' }),
    message: ["Sidecars.configure('test')", "kubernetesVersion 'latest' is not a Kubernetes version", "e.g. '1.29'"],
  },
  {
    name: 'the environment variable holds a version that is not one',
    build: c => {
      process.env[ENV] = '1.29-gke';
      new WithLogAgent(c.chart, 'logs', { workload: c.deployment() });
    },
    message: ['test/logs: environment variable CDK8S_SIDECARS_KUBERNETES_VERSION', "kubernetesVersion '1.29-gke'", "e.g. '1.29'"],
  },
  {
    name: 'mode NATIVE on 1.27 (inherited from Sidecars.configure)',
    build: c => {
      Sidecars.configure(c.app, { kubernetesVersion: '1.27', mode: SidecarMode.NATIVE });
      new WithTracer(c.chart, 'tracer', { workload: c.deployment(), exporterEndpoint: ENDPOINT });
    },
    message: ["WithTracer 'test/tracer'", 'mode NATIVE on Kubernetes 1.27', 'Target 1.29 or later, or use SidecarMode.AUTO / SidecarMode.LEGACY'],
  },
  {
    name: 'mode NATIVE on 1.28 without the SidecarContainers gate',
    build: c => new WithEnvoy(c.chart, 'envoy', { workload: c.deployment(), appPort: 8080, kubernetesVersion: '1.28', mode: SidecarMode.NATIVE }),
    message: ["WithEnvoy 'test/envoy'", 'mode NATIVE on Kubernetes 1.28 without the SidecarContainers feature gate', 'Set `sidecarContainersGate: true`'],
  },
  {
    name: 'a mode that is not a SidecarMode (plain JavaScript)',
    build: c => new WithLogAgent(c.chart, 'logs', { workload: c.deployment(), kubernetesVersion: '1.29', mode: 'native' as SidecarMode }),
    message: ["WithLogAgent 'test/logs'", "unknown mode 'native'", 'use SidecarMode.AUTO, SidecarMode.NATIVE or SidecarMode.LEGACY'],
  },
  {
    name: 'the sidecars of one workload target different clusters',
    build: c => {
      const workload = c.deployment();
      new WithLogAgent(c.chart, 'logs', { workload, kubernetesVersion: '1.29' });
      new WithTracer(c.chart, 'tracer', { workload, exporterEndpoint: ENDPOINT, kubernetesVersion: '1.30' });
    },
    message: ["Deployment 'web': its sidecars target different clusters", "'test/logs': 1.29, 'test/tracer': 1.30", 'give them the same kubernetesVersion'],
  },

  // ---------------------------------------------------------------- workload
  {
    name: 'a Service as the workload',
    build: c => {
      const svc = new kplus.Service(c.chart, 'svc', { ports: [{ port: 80 }] });
      new WithEnvoy(c.chart, 'envoy', { workload: svc, appPort: 8080 });
    },
    message: ["WithEnvoy 'test/envoy'", "workload 'test/svc' is a v1 Service, which has no pod template", 'Attach sidecars to a Pod, Deployment'],
  },
  {
    name: 'a plain construct as the workload',
    build: c => new WithTracer(c.chart, 'tracer', { workload: new Construct(c.chart, 'group'), exporterEndpoint: ENDPOINT }),
    message: ["WithTracer 'test/tracer'", "workload 'test/group' is neither a cdk8s-plus workload nor a cdk8s ApiObject", 'Pass a Deployment, StatefulSet, DaemonSet, Job, CronJob or Pod of cdk8s-plus (any major, 27 to 34)'],
  },
  {
    name: 'a custom resource (Argo Rollout) as the workload',
    build: c => {
      const rollout = new ApiObject(c.chart, 'rollout', { apiVersion: 'argoproj.io/v1alpha1', kind: 'Rollout', metadata: { name: 'web' } });
      new WithLogAgent(c.chart, 'logs', { workload: rollout });
    },
    message: ["WithLogAgent 'test/logs'", "workload 'test/rollout' is a argoproj.io/v1alpha1 Rollout, which has no pod template", 'Attach sidecars to a'],
  },
  {
    name: 'a raw workload without app containers',
    build: c => new WithLogAgent(c.chart, 'logs', { workload: c.raw({ containers: [] }), kubernetesVersion: '1.30' }),
    message: ["[test/raw] Deployment 'raw'", 'has no app containers (spec.containers is empty)', "Add the app's containers to the workload"],
  },

  // ---------------------------------------------------------------- Jobs
  {
    name: 'a legacy Envoy on a Job (1.28 without the gate)',
    build: c => new WithEnvoy(c.chart, 'envoy', { workload: c.raw({ containers: [APP], restartPolicy: 'Never' }, 'Job'), appPort: 8080, kubernetesVersion: '1.28' }),
    message: ["WithEnvoy 'test/envoy'", "a legacy sidecar on Job 'raw' never exits, so the Job never completes", 'set `allowLegacyOnJob: true`'],
  },
  {
    name: 'a tracer forced LEGACY on a CronJob, its image\'s entrypoint not known',
    build: c => {
      const job = new kplus.CronJob(c.chart, 'nightly', {
        metadata: { name: 'nightly' }, schedule: Cron.daily(), containers: [{ image: 'ghcr.io/example/report:1', securityContext: USER }],
      });
      new WithTracer(c.chart, 'tracer', {
        workload: job, exporterEndpoint: ENDPOINT, kubernetesVersion: '1.31', mode: SidecarMode.LEGACY, image: 'otel/opentelemetry-collector-contrib:0.159.0',
      });
    },
    // (the default image's entrypoint is known: it would exit with the app, test/exit-with-app.test.ts)
    message: ["WithTracer 'test/tracer'", "a legacy sidecar on CronJob 'nightly' never exits", 'the program its image runs is not known (no command)'],
  },

  // ---------------------------------------------------------------- collisions with the user's containers
  {
    name: 'containerName is the name of a user init container',
    build: c => {
      const dep = c.deployment();
      dep.addInitContainer({ name: 'migrate', image: 'ghcr.io/example/migrate:1', securityContext: USER });
      new WithTracer(c.chart, 'tracer', { workload: dep, exporterEndpoint: ENDPOINT, kubernetesVersion: '1.30', containerName: 'migrate' });
    },
    message: ["WithTracer 'test/tracer'", "container name 'migrate' is already used by a container of Deployment 'web'", 'choose another containerName'],
  },
  {
    name: 'a user container already called envoy',
    build: c => new WithEnvoy(c.chart, 'envoy', {
      workload: c.raw({ containers: [APP, { name: 'envoy', image: 'envoyproxy/envoy:v1.30.0' }] }), appPort: 8080, kubernetesVersion: '1.29',
    }),
    message: ["WithEnvoy 'test/envoy'", "container name 'envoy' is already used by a container of Deployment 'raw'", 'choose another containerName'],
  },
  {
    name: 'a user volume with the name the tracer derives',
    build: c => new WithTracer(c.chart, 'tracer', {
      workload: c.raw({ containers: [APP], volumes: [{ name: 'tracer-config', emptyDir: {} }] }), exporterEndpoint: ENDPOINT, kubernetesVersion: '1.29',
    }),
    message: ["WithTracer 'test/tracer'", "volume name 'tracer-config' is already used by Deployment 'raw'", 'choose another containerName (volume names derive from it)'],
  },
  {
    name: 'the app listens on the tracer\'s OTLP port (localhost-only, undeclared by the agent)',
    build: c => new WithTracer(c.chart, 'tracer', {
      workload: c.raw({ containers: [{ ...APP, ports: [{ containerPort: 4317 }] }] }), exporterEndpoint: ENDPOINT, kubernetesVersion: '1.29',
    }),
    message: ["WithTracer 'test/tracer'", "port 4317 of sidecar 'tracer' is also a port of container 'app'", 'choose another port for one of them'],
  },
  {
    name: 'a user init container on Envoy\'s admin port',
    build: c => new WithEnvoy(c.chart, 'envoy', {
      workload: c.raw({ containers: [APP], initContainers: [{ name: 'warmup', image: 'x:1', ports: [{ containerPort: 9901 }] }] }), appPort: 8080, kubernetesVersion: '1.33',
    }),
    message: ["WithEnvoy 'test/envoy'", "port 9901 of sidecar 'envoy' is also a port of container 'warmup'", 'choose another port for one of them'],
  },
  {
    name: 'the log directory is already a mount of the app (custom directory)',
    build: c => new WithLogAgent(c.chart, 'logs', {
      workload: c.raw({ containers: [{ ...APP, volumeMounts: [{ name: 'data', mountPath: '/logs' }] }], volumes: [{ name: 'data', emptyDir: {} }] }),
      kubernetesVersion: '1.29',
      logDirectory: '/logs',
    }),
    message: ["WithLogAgent 'test/logs'", "container 'app' of Deployment 'raw' already mounts volume 'data' at /logs", 'choose another directory for the sidecar'],
  },
  {
    name: 'a user container called sidecar-tools where the hooks need the tools (legacy before 1.30)',
    build: c => new WithLogAgent(c.chart, 'logs', {
      workload: c.raw({ containers: [APP, { name: 'sidecar-tools', image: 'busybox:1.36' }] }), kubernetesVersion: '1.27',
    }),
    message: ["[test/raw] Deployment 'raw': container name 'sidecar-tools' is the name of the library's init container",
      "that the preStop/postStart hooks of WithLogAgent 'test/logs' need", 'rename your container'],
  },
  {
    name: 'a user volume called sidecar-tools where the hooks need the tools (legacy before 1.30)',
    build: c => new WithLogAgent(c.chart, 'logs', {
      workload: c.raw({ containers: [APP], volumes: [{ name: 'sidecar-tools', emptyDir: {} }] }), kubernetesVersion: '1.27',
    }),
    message: ["[test/raw] Deployment 'raw': volume name 'sidecar-tools' is the name of the library's volume",
      "that the preStop/postStart hooks of WithLogAgent 'test/logs' need (busybox)", 'rename your volume'],
  },
  {
    name: 'the result would have a container name twice (the user\'s sidecar-tools and the tools\')',
    build: c => new WithLogAgent(c.chart, 'logs', {
      workload: c.raw({ containers: [APP, { name: 'sidecar-tools', image: 'busybox:1.36' }] }), kubernetesVersion: '1.27',
    }),
    message: ["[test/raw] Deployment 'raw'", "container name 'sidecar-tools' is used 2 times", 'names must be unique across initContainers and containers'],
  },
  {
    name: 'the result would have a volume name twice (the user\'s sidecar-tools and the tools\')',
    build: c => new WithLogAgent(c.chart, 'logs', {
      workload: c.raw({ containers: [APP], volumes: [{ name: 'sidecar-tools', emptyDir: {} }] }), kubernetesVersion: '1.27',
    }),
    message: ["[test/raw] Deployment 'raw'", "volume name 'sidecar-tools' is used 2 times", 'volume names must be unique'],
  },
  {
    name: 'containerName sidecar-tools (reserved)',
    build: c => new WithLogAgent(c.chart, 'logs', { workload: c.deployment(), kubernetesVersion: '1.29', containerName: 'sidecar-tools' }),
    message: ["WithLogAgent 'test/logs'", "container name 'sidecar-tools' is reserved for the library's hook tools", 'choose another containerName'],
  },

  // ---------------------------------------------------------------- collisions between the sidecars
  {
    name: 'two sidecars with one containerName',
    build: c => {
      const workload = c.deployment();
      new WithLogAgent(c.chart, 'logs', { workload, kubernetesVersion: '1.29', containerName: 'envoy' });
      new WithEnvoy(c.chart, 'envoy', { workload, kubernetesVersion: '1.29', appPort: 8080 });
    },
    message: ["WithEnvoy 'test/envoy'", "container name 'envoy' is already used by the sidecar of", 'choose another containerName'],
  },
  {
    name: 'two sidecars whose derived volume names clash',
    build: c => {
      const workload = c.deployment();
      new WithLogAgent(c.chart, 'logs', { workload, kubernetesVersion: '1.29', containerName: 'tracer' });
      new WithTracer(c.chart, 'tracer', { workload, exporterEndpoint: ENDPOINT, kubernetesVersion: '1.29', containerName: 'otel' });
      new WithEnvoy(c.chart, 'envoy', { workload, kubernetesVersion: '1.29', appPort: 8080, containerName: 'tracer' });
    },
    message: ["WithEnvoy 'test/envoy'", "volume name 'tracer-config' is already used by the sidecar of WithLogAgent 'test/logs'", 'choose another containerName for one of them'],
  },
  {
    name: 'Envoy\'s listener on the log agent\'s port',
    build: c => {
      const workload = c.deployment();
      new WithLogAgent(c.chart, 'logs', { workload, kubernetesVersion: '1.29' });
      new WithEnvoy(c.chart, 'envoy', { workload, kubernetesVersion: '1.29', appPort: 8080, listenerPort: 2020 });
    },
    message: ["WithEnvoy 'test/envoy'", "port 2020 of sidecar 'envoy' is also used by sidecar 'log-agent'", 'choose another port'],
  },
  {
    name: 'the same construct twice on one workload',
    build: c => {
      const workload = c.deployment();
      new WithTracer(c.chart, 'tracer', { workload, exporterEndpoint: ENDPOINT, kubernetesVersion: '1.29' });
      new WithTracer(c.chart, 'tracer2', { workload, exporterEndpoint: ENDPOINT, kubernetesVersion: '1.29', containerName: 'tracer-2', healthPort: 13134 });
    },
    message: ["WithTracer 'test/tracer2'", "Deployment 'web' already has one: WithTracer 'test/tracer'", 'attach one WithTracer per workload'],
  },

  {
    name: 'a sidecar construct whose workload belongs to another App',
    build: c => {
      const other = new Chart(new App(), 'other');
      new WithLogAgent(c.chart, 'logs', { workload: new kplus.Deployment(other, 'web', { containers: [{ image: 'ghcr.io/example/app:1.0.0' }] }) });
    },
    message: ["WithLogAgent 'test/logs'", "workload 'other/web/Resource' belongs to another cdk8s App", "Create the construct in the workload's App"],
  },
  {
    name: '`layout` read, then the target changed so that the layout differs',
    build: c => {
      const logs = new WithLogAgent(c.chart, 'logs', { workload: c.deployment() });
      void logs.layout; // LEGACY (1.27, the default)
      Sidecars.configure(c.app, { kubernetesVersion: '1.29' });
    },
    message: ["WithLogAgent 'test/logs'", '`layout` was read as LEGACY (Kubernetes 1.27, from the default), but at synthesis the target is Kubernetes 1.29 from Sidecars.configure()', 'before reading `layout`'],
  },

  // ---------------------------------------------------------------- grace periods and times
  {
    // (with appShutdownTime: without it the workload's grace is the app's budget, docs/target.md)
    name: 'a grace period set too low for a native Envoy, with appShutdownTime',
    build: c => new WithEnvoy(c.chart, 'envoy', {
      workload: c.deployment({ terminationGracePeriod: Duration.seconds(10) }), appPort: 8080, kubernetesVersion: '1.31', appShutdownTime: Duration.seconds(10),
    }),
    message: ["Deployment 'web': terminationGracePeriodSeconds is 10", 'but its sidecars need 11 (native: app 10s + envoy 1s)', 'Raise terminationGracePeriodSeconds to at least 11'],
  },
  {
    name: 'a raw grace period too low for a legacy log agent',
    build: c => new WithLogAgent(c.chart, 'logs', {
      workload: c.raw({ containers: [APP], terminationGracePeriodSeconds: 5 }), kubernetesVersion: '1.27', appShutdownTime: Duration.seconds(20),
    }),
    // the delay: the app's 20 s and Fluent Bit's 2 s to read the last line
    message: ["Deployment 'raw': terminationGracePeriodSeconds is 5", 'but its sidecars need 28 (legacy log-agent: preStop delay 22s + stop 6s)', 'at least 28'],
  },
  // An app preStop hook that cannot be read and the user's own native sidecars without
  // userSidecarStopTime are inferred from the manifest, with a warning (test/shutdown.test.ts).
  {
    name: 'appShutdownTime that is not whole seconds',
    build: c => new WithTracer(c.chart, 'tracer', { workload: c.deployment(), exporterEndpoint: ENDPOINT, appShutdownTime: Duration.millis(2500) }),
    message: ["WithTracer 'test/tracer'", 'appShutdownTime 2.5s is not a whole, non-negative number of seconds', 'use e.g. Duration.seconds(10)'],
  },
  {
    name: 'an Envoy drain longer than the app\'s shutdown',
    build: c => new WithEnvoy(c.chart, 'envoy', { workload: c.deployment(), appPort: 8080, drainTime: Duration.seconds(15) }),
    message: ["WithEnvoy 'test/envoy'", 'drainTime 15s is longer than appShutdownTime 10s', 'Shorten drainTime to at most Duration.seconds(10) or raise appShutdownTime'],
  },
  {
    name: 'an Envoy drain of zero',
    build: c => new WithEnvoy(c.chart, 'envoy', { workload: c.deployment(), appPort: 8080, drainTime: Duration.seconds(0) }),
    message: ["WithEnvoy 'test/envoy'", 'drainTime 0s leaves clients no time', 'use at least Duration.seconds(1)'],
  },
  {
    name: 'a tracer drain too short to export',
    build: c => new WithTracer(c.chart, 'tracer', { workload: c.deployment(), exporterEndpoint: ENDPOINT, drainTime: Duration.seconds(2) }),
    message: ["WithTracer 'test/tracer'", 'drainTime 2s is too short', 'use at least Duration.seconds(3)'],
  },
  {
    name: 'a Fluent Bit grace that is not whole seconds',
    build: c => new WithLogAgent(c.chart, 'logs', { workload: c.deployment(), agent: LogAgent.fluentBit({ grace: Duration.millis(1500) }) }),
    message: ['LogAgent.fluentBit()', 'grace 1.5s is not a whole, non-negative number of seconds', 'use e.g. Duration.seconds(10)'],
  },
  {
    name: 'a Vector shutdown limit of zero',
    build: c => new WithLogAgent(c.chart, 'logs', { workload: c.deployment(), agent: LogAgent.vector({ gracefulShutdownLimit: Duration.seconds(0) }) }),
    message: ['LogAgent.vector()', 'gracefulShutdownLimit must be at least 1 second (got 0s)', 'Vector accepts only a positive limit'],
  },
  {
    name: 'a Fluentd shutdown grace of zero',
    build: c => new WithLogAgent(c.chart, 'logs', { workload: c.deployment(), agent: LogAgent.fluentd({ shutdownGrace: Duration.seconds(0) }) }),
    message: ['LogAgent.fluentd()', 'shutdownGrace must be at least 1 second (got 0s)', 'Fluentd needs time to flush its buffer'],
  },

  {
    name: 'a log agent image that is not an image reference',
    build: c => new WithLogAgent(c.chart, 'logs', { workload: c.deployment(), agent: LogAgent.fluentBit({ image: 'not an image' }) }),
    message: ['LogAgent.fluentBit()', "image 'not an image' is not an image reference", "use e.g. 'fluent/fluent-bit:"],
  },
  {
    name: 'an empty Vector image',
    build: c => new WithLogAgent(c.chart, 'logs', { workload: c.deployment(), agent: LogAgent.vector({ image: '' }) }),
    message: ['LogAgent.vector()', "image '' is not an image reference", "use e.g. 'timberio/vector:"],
  },
  {
    name: 'a Fluentd monitor port below 1024',
    build: c => new WithLogAgent(c.chart, 'logs', { workload: c.deployment(), agent: LogAgent.fluentd({ monitorPort: 80 }) }),
    message: ['LogAgent.fluentd()', 'monitorPort 80 is below 1024', 'use a port from 1024 up'],
  },
  {
    name: 'an exporter header from a Secret reference the API server rejects',
    build: c => new WithTracer(c.chart, 'tracer', {
      workload: c.deployment(),
      exporterEndpoint: ENDPOINT,
      exporterHeaders: { authorization: { secret: kplus.Secret.fromSecretName(c.chart, 's', 'Bad_Name'), key: 'token' } },
    }),
    message: ["WithTracer 'test/tracer'", "exporterHeaders 'authorization' refers to Secret 'Bad_Name' key 'token'", 'Give e.g.'],
  },

  {
    name: 'a log output host with a scheme and a path',
    build: c => new WithLogAgent(c.chart, 'logs', { workload: c.deployment(), output: LogOutput.http({ host: 'http://logs.example.com/x' }) }),
    message: ['LogOutput.http()', 'host "http://logs.example.com/x" is not a DNS name or IPv4 address', 'give the host alone, without scheme, port or path'],
  },

  {
    name: 'an http output with basicAuth and an Authorization secret header (two Authorization headers)',
    build: c => new WithLogAgent(c.chart, 'logs', {
      workload: c.deployment(),
      output: LogOutput.http({
        host: 'logs.example.com',
        secretHeaders: { authorization: { secret: kplus.Secret.fromSecretName(c.chart, 'tok', 'log-token'), key: 'token' } },
        basicAuth: {
          username: { secret: kplus.Secret.fromSecretName(c.chart, 'u', 'log-basic'), key: 'user' },
          password: { secret: kplus.Secret.fromSecretName(c.chart, 'p', 'log-basic'), key: 'pass' },
        },
      }),
    }),
    message: ['LogOutput.http()', 'secretHeaders name "authorization" comes with basicAuth', 'give basicAuth or the Authorization header, not both'],
  },
  {
    name: 'an Elasticsearch index of 140 characters with Fluent Bit (its bulk body loses a newline)',
    build: c => new WithLogAgent(c.chart, 'logs', { workload: c.deployment(), output: LogOutput.elasticsearch({ host: 'es.logging', index: 'a'.repeat(140) }) }),
    message: ["WithLogAgent 'test/logs'", `index "${'a'.repeat(140)}" (140 characters)`, 'give an index of at most 139 characters'],
  },
  {
    name: 'an OpenSearch index of 255 characters with Fluent Bit (cut to 254)',
    build: c => new WithLogAgent(c.chart, 'logs', { workload: c.deployment(), output: LogOutput.opensearch({ host: 'os.logging', index: 'a'.repeat(255) }) }),
    message: ["WithLogAgent 'test/logs'", `index "${'a'.repeat(255)}" (255 characters)`, 'give an index of at most 254 characters'],
  },
  {
    name: 'a Fluent Bit multiline parser that is not a built-in one',
    build: c => new WithLogAgent(c.chart, 'logs', { workload: c.deployment(), agent: LogAgent.fluentBit({ multilineParsers: ['log4j' as any] }) }),
    message: ['LogAgent.fluentBit()', 'multilineParsers has "log4j"', 'use FluentBitMultilineParser values'],
  },
  {
    name: 'a Fluent Bit config format that is not one',
    build: c => new WithLogAgent(c.chart, 'logs', { workload: c.deployment(), agent: LogAgent.fluentBit({ configFormat: 'toml' as any }) }),
    message: ['LogAgent.fluentBit()', 'configFormat "toml" is not a config format of Fluent Bit', 'use FluentBitConfigFormat values (classic, yaml)'],
  },

  // ---------------------------------------------------------------- ports
  {
    name: 'Envoy appPort 0',
    build: c => new WithEnvoy(c.chart, 'envoy', { workload: c.deployment(), appPort: 0 }),
    message: ["WithEnvoy 'test/envoy'", 'appPort 0 is not a valid port', 'use an integer from 1 to 65535'],
  },
  {
    name: 'Envoy listening on 443 as non-root',
    build: c => new WithEnvoy(c.chart, 'envoy', { workload: c.deployment(), appPort: 8080, listenerPort: 443 }),
    message: ["WithEnvoy 'test/envoy'", 'listenerPort 443 is below 1024', 'use a port from 1024 up'],
  },
  {
    name: 'Envoy admin and health on one port',
    build: c => new WithEnvoy(c.chart, 'envoy', { workload: c.deployment(), appPort: 8080, adminPort: 15021 }),
    message: ["WithEnvoy 'test/envoy'", 'healthPort 15021 is also adminPort', 'choose another healthPort'],
  },
  {
    name: 'an Envoy upstream on the app\'s port',
    build: c => new WithEnvoy(c.chart, 'envoy', {
      workload: c.deployment(), appPort: 8080, upstreams: [{ name: 'payments', localPort: 8080, host: 'payments.shop.svc.cluster.local' }],
    }),
    message: ["WithEnvoy 'test/envoy'", "upstreams[0] 'payments' localPort 8080 is also appPort", "choose another upstreams[0] 'payments' localPort"],
  },
  {
    name: 'an Envoy Service port out of range',
    build: c => {
      const envoy = new WithEnvoy(c.chart, 'envoy', { workload: c.deployment(), appPort: 8080 });
      envoy.servicePort({ port: 70000 });
    },
    message: ["WithEnvoy 'test/envoy'", 'service port 70000 is not a valid port', 'use an integer from 1 to 65535'],
  },
  {
    name: 'the tracer\'s health port on its own OTLP receiver',
    build: c => new WithTracer(c.chart, 'tracer', { workload: c.deployment(), exporterEndpoint: ENDPOINT, healthPort: 4318 }),
    message: ["WithTracer 'test/tracer'", 'healthPort 4318 is taken by the agent\'s OTLP receivers', 'choose another port'],
  },
  {
    name: 'a Fluent Bit HTTP port out of range',
    build: c => new WithLogAgent(c.chart, 'logs', { workload: c.deployment(), agent: LogAgent.fluentBit({ httpPort: 0 }) }),
    message: ['LogAgent.fluentBit()', 'httpPort 0 is not a valid port', 'use an integer from 1 to 65535'],
  },
  {
    name: 'a Loki port out of range',
    build: c => new WithLogAgent(c.chart, 'logs', { workload: c.deployment(), output: LogOutput.loki({ host: 'loki.monitoring', port: -1 }) }),
    message: ["WithLogAgent 'test/logs'", 'loki output port -1 is not a valid port', 'use an integer from 1 to 65535'],
  },

  // ---------------------------------------------------------------- names
  {
    name: 'a containerName with a dot',
    build: c => new WithEnvoy(c.chart, 'envoy', { workload: c.deployment(), appPort: 8080, containerName: 'envoy.proxy' }),
    message: ["WithEnvoy 'test/envoy'", "containerName 'envoy.proxy' is not a valid DNS-1123 label", "use at most 53 lower-case letters, digits and '-'"],
  },
  {
    name: 'a containerName of 64 characters',
    build: c => new WithTracer(c.chart, 'tracer', { workload: c.deployment(), exporterEndpoint: ENDPOINT, containerName: 'a'.repeat(64) }),
    message: ["WithTracer 'test/tracer'", `containerName '${'a'.repeat(64)}' is 64 characters`, 'must fit in 63, so use at most 53'],
  },
  {
    // '<name>-client-ca' would be 64 characters: the API server rejects such a volume name.
    name: 'a containerName of 54 characters (its volume names would not fit in 63)',
    build: c => new WithEnvoy(c.chart, 'envoy', { workload: c.deployment(), appPort: 8080, containerName: 'e'.repeat(54) }),
    message: ["WithEnvoy 'test/envoy'", `containerName '${'e'.repeat(54)}' is 54 characters`, 'use at most 53'],
  },
  {
    name: 'an upstream name with capitals',
    build: c => new WithEnvoy(c.chart, 'envoy', { workload: c.deployment(), appPort: 8080, upstreams: [{ name: 'Payments', localPort: 9100, host: 'payments' }] }),
    message: ["WithEnvoy 'test/envoy'", "upstreams[0] name 'Payments' is not a valid DNS-1123 label", 'lower-case letters'],
  },
  {
    name: 'two upstreams with one name',
    build: c => new WithEnvoy(c.chart, 'envoy', {
      workload: c.deployment(),
      appPort: 8080,
      upstreams: [{ name: 'payments', localPort: 9100, host: 'payments' }, { name: 'payments', localPort: 9101, host: 'payments-v2' }],
    }),
    message: ["WithEnvoy 'test/envoy'", "upstreams[1] name 'payments' is also the name of upstreams[0]", 'give every upstream its own name'],
  },
  {
    name: 'an upstream name too long for Envoy',
    build: c => new WithEnvoy(c.chart, 'envoy', { workload: c.deployment(), appPort: 8080, upstreams: [{ name: 'p'.repeat(51), localPort: 9100, host: 'payments' }] }),
    message: ["WithEnvoy 'test/envoy'", `upstreams[0] name '${'p'.repeat(51)}' is 51 characters long`, 'use at most 50'],
  },

  // ---------------------------------------------------------------- TLS and Secrets
  {
    name: 'TLS without its Secret (an empty name)',
    build: c => new WithEnvoy(c.chart, 'envoy', { workload: c.deployment(), appPort: 8080, tls: { secret: { name: '' } } }),
    message: ["WithEnvoy 'test/envoy'", "tls.secret.name '' is not a Secret name", "use the name of a Secret in the workload's namespace"],
  },
  {
    name: 'mTLS with a client CA Secret name that is not one',
    build: c => new WithEnvoy(c.chart, 'envoy', { workload: c.deployment(), appPort: 8080, tls: { secret: { name: 'web-tls' }, clientCaSecret: { name: 'Client_CA' } } }),
    message: ["WithEnvoy 'test/envoy'", "tls.clientCaSecret.name 'Client_CA' is not a Secret name", "e.g. 'web-tls'"],
  },
  {
    name: 'an exporter header without a Secret key',
    build: c => new WithTracer(c.chart, 'tracer', {
      workload: c.deployment(), exporterEndpoint: ENDPOINT, exporterHeaders: { authorization: { ...secret(c.chart, 'otel', 'token'), key: '' } },
    }),
    message: ["WithTracer 'test/tracer'", "exporterHeaders 'authorization' needs a Secret reference", 'values come only from Secrets'],
  },
  {
    name: 'a gRPC-reserved exporter header',
    build: c => new WithTracer(c.chart, 'tracer', {
      workload: c.deployment(), exporterEndpoint: ENDPOINT, exporterHeaders: { 'grpc-timeout': secret(c.chart, 'otel', 'timeout') },
    }),
    message: ["WithTracer 'test/tracer'", "exporterHeaders name 'grpc-timeout' is reserved by gRPC", 'use a plain text header name'],
  },

  // ---------------------------------------------------------------- endpoints and hosts
  {
    name: 'an empty exporter endpoint',
    build: c => new WithTracer(c.chart, 'tracer', { workload: c.deployment(), exporterEndpoint: '' }),
    message: ["WithTracer 'test/tracer'", 'exporterEndpoint is empty', "e.g. 'otel-collector.observability:4317'"],
  },
  {
    name: 'an exporter endpoint with a scheme',
    build: c => new WithTracer(c.chart, 'tracer', { workload: c.deployment(), exporterEndpoint: 'https://otel.example.com:4317' }),
    message: ["WithTracer 'test/tracer'", "exporterEndpoint 'https://otel.example.com:4317' has a scheme ('https://')", 'give host:port only'],
  },
  {
    name: 'an exporter endpoint without a port',
    build: c => new WithTracer(c.chart, 'tracer', { workload: c.deployment(), exporterEndpoint: 'otel-collector.observability' }),
    message: ["WithTracer 'test/tracer'", "exporterEndpoint 'otel-collector.observability' is not host:port", "use e.g. 'otel-collector.observability:4317'"],
  },
  {
    name: 'an exporter endpoint that is the agent itself',
    build: c => new WithTracer(c.chart, 'tracer', { workload: c.deployment(), exporterEndpoint: 'localhost:4317' }),
    message: ["WithTracer 'test/tracer'", "exporterEndpoint 'localhost:4317' is the agent's own receiver", "Give the central collector's address"],
  },
  {
    name: 'an upstream host with a scheme',
    build: c => new WithEnvoy(c.chart, 'envoy', { workload: c.deployment(), appPort: 8080, upstreams: [{ name: 'api', localPort: 9100, host: 'https://api.example.com' }] }),
    message: ["WithEnvoy 'test/envoy'", "upstreams[0] 'api' host 'https://api.example.com' is not a DNS name or IPv4 address", 'give the bare host (no scheme, port or path)'],
  },
  {
    name: 'an empty upstream host',
    build: c => new WithEnvoy(c.chart, 'envoy', { workload: c.deployment(), appPort: 8080, upstreams: [{ name: 'api', localPort: 9100, host: ' ' }] }),
    message: ["WithEnvoy 'test/envoy'", "upstreams[0] 'api' has an empty host", "set the upstream's DNS name or IPv4 address"],
  },
  {
    name: 'an HTTP log output without a host',
    build: c => new WithLogAgent(c.chart, 'logs', { workload: c.deployment(), output: LogOutput.http({ host: '' }) }),
    message: ["WithLogAgent 'test/logs'", 'the http output needs a host; got an empty string', "Set host to the destination's DNS name or IP address"],
  },
  {
    name: 'Vector with the forward output',
    build: c => new WithLogAgent(c.chart, 'logs', { workload: c.deployment(), agent: LogAgent.vector(), output: LogOutput.forward({ host: 'fluentd.logging' }) }),
    message: ["WithLogAgent 'test/logs'", 'LogAgent.vector() cannot use LogOutput.forward()', 'or keep the forward output with LogAgent.fluentBit() or LogAgent.fluentd()'],
  },
  {
    name: 'Fluentd\'s default image with the Loki output',
    build: c => new WithLogAgent(c.chart, 'logs', { workload: c.deployment(), agent: LogAgent.fluentd(), output: LogOutput.loki({ host: 'loki.monitoring' }) }),
    message: ["WithLogAgent 'test/logs'", 'the loki output needs the fluent-plugin-grafana-loki gem', 'Pass `LogAgent.fluentd({ image })`'],
  },

  // ---------------------------------------------------------------- other props
  {
    name: 'a sampling ratio above 1',
    build: c => new WithTracer(c.chart, 'tracer', { workload: c.deployment(), exporterEndpoint: ENDPOINT, samplingRatio: 1.5 }),
    message: ["WithTracer 'test/tracer'", 'samplingRatio 1.5 is out of range', 'use a number from 0 (no traces) to 1 (every trace)'],
  },
  {
    name: 'a resource attribute the tracer sets itself',
    build: c => new WithTracer(c.chart, 'tracer', { workload: c.deployment(), exporterEndpoint: ENDPOINT, resourceAttributes: { 'k8s.pod.name': 'x' } }),
    message: ["WithTracer 'test/tracer'", "resourceAttributes key 'k8s.pod.name' is set by the construct", 'remove it'],
  },
  {
    name: 'a service name with a leading space',
    build: c => new WithTracer(c.chart, 'tracer', { workload: c.deployment(), exporterEndpoint: ENDPOINT, serviceName: ' checkout' }),
    message: ["WithTracer 'test/tracer'", "serviceName ' checkout' must be a non-empty name without leading or trailing spaces", "e.g. 'checkout'"],
  },
  {
    name: 'a collector memory limit too small',
    build: c => new WithTracer(c.chart, 'tracer', {
      workload: c.deployment(), exporterEndpoint: ENDPOINT, resources: { memory: { request: Size.mebibytes(32), limit: Size.mebibytes(48) } },
    }),
    message: ["WithTracer 'test/tracer'", 'memory limit 48Mi is too small for the collector', 'give resources.memory.limit at least Size.mebibytes(64)'],
  },
  {
    name: 'an Envoy image with a space',
    build: c => new WithEnvoy(c.chart, 'envoy', { workload: c.deployment(), appPort: 8080, image: 'envoyproxy/envoy: v1.36.4' }),
    message: ["WithEnvoy 'test/envoy'", "image 'envoyproxy/envoy: v1.36.4' is not an image reference", "use e.g. 'envoyproxy/envoy:"],
  },
  {
    name: 'zero Envoy worker threads',
    build: c => new WithEnvoy(c.chart, 'envoy', { workload: c.deployment(), appPort: 8080, concurrency: 0 }),
    message: ["WithEnvoy 'test/envoy'", 'concurrency 0 is not a number of worker threads', 'use an integer from 1 to 64'],
  },
  {
    name: 'the log directory /tmp',
    build: c => new WithLogAgent(c.chart, 'logs', { workload: c.deployment(), logDirectory: '/tmp' }),
    message: ["WithLogAgent 'test/logs'", "logDirectory '/tmp' must be an absolute, normalized directory of its own", "e.g. '/var/log/app'"],
  },
  {
    name: 'a file pattern with a directory',
    build: c => new WithLogAgent(c.chart, 'logs', { workload: c.deployment(), filePattern: 'app/*.log' }),
    message: ["WithLogAgent 'test/logs'", "filePattern 'app/*.log' must be a file-name glob without '/'", "e.g. '*.log'"],
  },

  // ---------------------------------------------------------------- found by the catalogue and the property tests
  {
    name: 'Envoy\'s appPort is none of the ports the app declares',
    build: c => new WithEnvoy(c.chart, 'envoy', { workload: c.raw({ containers: [APP] }), appPort: 3000, kubernetesVersion: '1.29' }),
    message: ["WithEnvoy 'test/envoy'", "appPort 3000 is none of the ports the app's containers declare (8080 ('app'))",
      "Set appPort to the port the app listens on, or declare it on the app's container"],
  },
  {
    name: 'the user\'s own native sidecar on 1.27, with a sidecar construct',
    build: c => new WithLogAgent(c.chart, 'logs', {
      workload: c.raw({ containers: [APP], initContainers: [{ name: 'proxy', image: 'x:1', restartPolicy: 'Always' }] }), kubernetesVersion: '1.27',
    }),
    message: ["[test/raw] Deployment 'raw': init container 'proxy'", "has restartPolicy 'Always' (a native sidecar), which Kubernetes 1.27",
      "Either move 'proxy' to spec.containers"],
  },
  {
    name: 'Envoy sends the app\'s traffic to a port another sidecar binds',
    build: c => {
      const workload = c.raw({ containers: [{ name: 'app', image: 'ghcr.io/example/app:1.0.0' }] });
      new WithLogAgent(c.chart, 'logs', { workload, kubernetesVersion: '1.30' });
      new WithEnvoy(c.chart, 'envoy', { workload, kubernetesVersion: '1.30', appPort: 2020 });
    },
    message: ["WithEnvoy 'test/envoy'", "the app's port 2020, where envoy sends the app's traffic, is bound by sidecar 'log-agent'", 'Choose another port for one of them'],
  },
  {
    name: 'a Fluent Bit HTTP port below 1024 (the agent runs as non-root)',
    build: c => new WithLogAgent(c.chart, 'logs', { workload: c.deployment(), agent: LogAgent.fluentBit({ httpPort: 80 }) }),
    message: ['LogAgent.fluentBit()', 'httpPort 80 is below 1024', 'use a port from 1024 up'],
  },
  {
    name: 'a tracer health port below 1024',
    build: c => new WithTracer(c.chart, 'tracer', { workload: c.deployment(), exporterEndpoint: ENDPOINT, healthPort: 443 }),
    message: ["WithTracer 'test/tracer'", 'healthPort 443 is below 1024', 'use a port from 1024 up'],
  },
  {
    name: 'the log directory is the agent\'s own config directory',
    build: c => new WithLogAgent(c.chart, 'logs', { workload: c.deployment(), logDirectory: '/etc/log-agent' }),
    message: ["WithLogAgent 'test/logs'", "logDirectory '/etc/log-agent' is the agent's config directory '/etc/log-agent'", 'choose a directory of its own'],
  },
  {
    name: 'the log directory inside the hook tools directory',
    build: c => new WithLogAgent(c.chart, 'logs', { workload: c.deployment(), kubernetesVersion: '1.27', logDirectory: '/sidecar-tools/logs' }),
    message: ["WithLogAgent 'test/logs'", "logDirectory '/sidecar-tools/logs' is inside the agent's hook tools directory '/sidecar-tools'", 'choose a directory of its own'],
  },
  {
    name: 'the log directory is Fluentd\'s scratch directory',
    build: c => new WithLogAgent(c.chart, 'logs', { workload: c.deployment(), agent: LogAgent.fluentd(), logDirectory: '/tmp' }),
    message: ["WithLogAgent 'test/logs'", "logDirectory '/tmp' must be an absolute, normalized directory of its own", "e.g. '/var/log/app'"],
  },
  {
    name: 'a negative cpu request (issue 48)',
    build: c => new WithTracer(c.chart, 'tracer', { workload: c.deployment(), exporterEndpoint: ENDPOINT, resources: { cpu: { request: kplus.Cpu.millis(-5) } } }),
    message: ["WithTracer 'test/tracer'", 'resources.cpu.request "-5m" is negative, which the API server rejects', 'give a CPU amount of 0 or more'],
  },
  {
    name: 'a cpu request above the default limit',
    build: c => new WithTracer(c.chart, 'tracer', { workload: c.deployment(), exporterEndpoint: ENDPOINT, resources: { cpu: { request: kplus.Cpu.units(1) } } }),
    message: ["WithTracer 'test/tracer'", 'resources.cpu request 1 is above the limit 500m (the default)', 'set resources.cpu.limit to at least 1'],
  },
  {
    name: 'a memory limit below the default request',
    build: c => new WithLogAgent(c.chart, 'logs', { workload: c.deployment(), resources: { memory: { limit: Size.mebibytes(16) } } }),
    message: ["WithLogAgent 'test/logs'", 'resources.memory request 32Mi (the default) is above the limit 16Mi', 'or a smaller resources.memory.request'],
  },
  {
    name: 'memory that is not whole mebibytes',
    build: c => new WithEnvoy(c.chart, 'envoy', { workload: c.deployment(), appPort: 8080, resources: { memory: { request: Size.kibibytes(100) } } }),
    message: ["WithEnvoy 'test/envoy'", 'resources.memory.request 100Ki is not a whole number of mebibytes', 'use e.g. Size.mebibytes(64)'],
  },
  {
    name: 'a construct in a namespaced chart on a workload without a namespace',
    build: c => {
      const other = new Chart(c.app, 'sidecars', { namespace: 'observability' });
      new WithLogAgent(other, 'logs', { workload: c.deployment(), kubernetesVersion: '1.29' });
    },
    message: ["WithLogAgent 'sidecars/logs'", "has no namespace, but this construct's chart puts objects into namespace 'observability'", "Create the construct in the workload's chart"],
  },

  // ---------------------------------------------------------------- SidecarInjectionPolicy (issue 47)
  {
    name: 'a policy for 1.35 without allowBetaApi',
    build: c => {
      const p = new SidecarInjectionPolicy(c.chart, 'inject', { namespaces: ['shop'], kubernetesVersion: '1.35' });
      new WithLogAgent(p.pod, 'logs', { workload: p.pod });
    },
    message: ['test/inject', 'Kubernetes 1.35 serves MutatingAdmissionPolicy only as admissionregistration.k8s.io/v1beta1', 'Set `allowBetaApi: true`'],
  },
  {
    name: 'a policy\'s sidecar in the legacy layout',
    build: c => {
      const p = new SidecarInjectionPolicy(c.chart, 'inject', { namespaces: ['shop'], kubernetesVersion: '1.36' });
      new WithLogAgent(p.pod, 'logs', { workload: p.pod, mode: SidecarMode.LEGACY });
    },
    message: ['test/inject', 'is in the legacy layout, which a policy cannot give a pod at admission', 'Target Kubernetes 1.34+ in the native layout'],
  },
  {
    name: 'a policy\'s sidecar placed after an init container',
    build: c => {
      const p = new SidecarInjectionPolicy(c.chart, 'inject', { namespaces: ['shop'], kubernetesVersion: '1.36' });
      new WithLogAgent(p.pod, 'logs', { workload: p.pod, after: 'fetch-secrets' });
    },
    message: ['test/inject', 'sets after, which depends on the init containers of each pod', 'Drop it'],
  },
  // ---------------------------------------------------------------- SidecarValidation
  {
    name: 'SidecarValidation.addTo with a version that is not one',
    build: c => SidecarValidation.addTo(c.chart, { kubernetesVersion: 'v1.30.x' }),
    message: ["SidecarValidation.addTo('test')", "kubernetesVersion 'v1.30.x' is not a Kubernetes version", "e.g. '1.29'"],
  },
  {
    name: 'SidecarValidation.checkManifest with a version that is not one',
    build: () => SidecarValidation.checkManifest({ kind: 'Pod' }, 'latest'),
    message: ['SidecarValidation.checkManifest', "kubernetesVersion 'latest' is not a Kubernetes version", "e.g. '1.29'"],
  },
  {
    name: 'SidecarValidation: the user\'s own native sidecar on 1.28 without the gate',
    build: c => {
      c.raw({ containers: [APP], initContainers: [{ name: 'proxy', image: 'x:1', restartPolicy: 'Always' }] });
      SidecarValidation.addTo(c.app, { kubernetesVersion: '1.28' });
    },
    message: ["test/raw: Deployment 'raw': init container 'proxy'", "has restartPolicy 'Always' (a native sidecar), which Kubernetes 1.28 drops without the SidecarContainers feature gate", "Either move 'proxy' to spec.containers"],
  },
  {
    name: 'SidecarValidation on 1.27 and a sidecar construct pinned to 1.29',
    build: c => {
      new WithLogAgent(c.chart, 'logs', { workload: c.deployment(), kubernetesVersion: '1.29' });
      SidecarValidation.addTo(c.app, { kubernetesVersion: '1.27' });
    },
    message: ["SidecarValidation.addTo(app), Kubernetes 1.27: test/web/Resource: Deployment 'web'", "pinned by WithLogAgent 'test/logs' (kubernetesVersion: \"1.29\", Kubernetes 1.29)", 'remove those props'],
  },
  {
    name: 'SidecarValidation: a preStop sleep action on 1.29',
    build: c => {
      c.raw({ containers: [{ ...APP, lifecycle: { preStop: { sleep: { seconds: 5 } } } }] });
      SidecarValidation.addTo(c.app, { kubernetesVersion: '1.29' });
    },
    message: ["test/raw: Deployment 'raw': container 'app'", 'uses the preStop sleep action, which Kubernetes 1.29 does not have', 'Use an exec hook or target 1.30+'],
  },
  // ---------------------------------------------------------------- WithSidecar, AdoptSidecar (issue 18)
  {
    name: 'WithSidecar without an image',
    build: c => new WithSidecar(c.chart, 'side', { workload: c.deployment(), image: ' ' }),
    message: ["WithSidecar 'test/side'", "image ' ' is not an image reference", "use e.g. 'gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.25.3'"],
  },
  {
    name: 'WithSidecar as root',
    build: c => new WithSidecar(c.chart, 'side', { workload: c.deployment(), image: 'example/side:1', user: 0 }),
    message: ["WithSidecar 'test/side'", 'user 0 is not a non-root uid', 'use an integer from 1 to 2147483647'],
  },
  {
    // issue 27 point 3: as WithEnvoy refuses 443 (non-root, every capability dropped: cannot bind below 1024)
    name: 'WithSidecar: a port below 1024',
    build: c => new WithSidecar(c.chart, 'side', { workload: c.deployment(), image: 'example/side:1', ports: [{ number: 80 }] }),
    message: ["WithSidecar 'test/side'", 'port 80 is below 1024', 'use a port from 1024 up (the sidecar runs as non-root with every capability dropped)'],
  },
  {
    name: 'WithSidecar: a localhost-only port below 1024',
    build: c => new WithSidecar(c.chart, 'side', { workload: c.deployment(), image: 'example/side:1', localPorts: [53] }),
    message: ["WithSidecar 'test/side'", 'port 53 is below 1024', 'use a port from 1024 up'],
  },
  {
    // issue 27 point 4: the native pod would stay in Init for ever
    name: 'WithSidecar: a startup check on a port the sidecar does not declare',
    build: c => new WithSidecar(c.chart, 'side', {
      workload: c.deployment(), image: 'example/side:1', ports: [{ number: 9090 }], startupCheck: SidecarCheck.http(9009, { path: '/ready' }),
    }),
    message: ["WithSidecar 'test/side'", 'startupCheck connects to port 9009, which is none of the sidecar\'s declared ports (9090)', 'declare 9009 in ports'],
  },
  {
    name: 'WithSidecar: a readiness check on a localhost-only port',
    build: c => new WithSidecar(c.chart, 'side', {
      workload: c.deployment(), image: 'example/side:1', localPorts: [9901], readinessCheck: SidecarCheck.tcp(9901),
    }),
    message: ["WithSidecar 'test/side'", 'readinessCheck connects to port 9901, which is in localPorts (bound on 127.0.0.1 only)', 'the kubelet probes the pod IP'],
  },
  {
    name: 'WithSidecar: holdApplicationUntilStarted with a TCP check',
    build: c => new WithSidecar(c.chart, 'side', {
      workload: c.deployment(), image: 'example/side:1', startupCheck: SidecarCheck.tcp(5432), holdApplicationUntilStarted: true,
    }),
    message: ["WithSidecar 'test/side'", 'holdApplicationUntilStarted needs an HTTP startupCheck', 'use startupCheck: SidecarCheck.http(port, { path })'],
  },
  {
    name: 'SidecarCheck.http with a path without /',
    build: c => new WithSidecar(c.chart, 'side', { workload: c.deployment(), image: 'example/side:1', startupCheck: SidecarCheck.http(9090, { path: 'startup' }) }),
    message: ['SidecarCheck.http()', "path 'startup' must start with '/'", "e.g. '/ready'"],
  },
  {
    name: 'SidecarCheck with a timeout shorter than its period',
    build: () => SidecarCheck.tcp(80, { period: Duration.seconds(10), timeout: Duration.seconds(5) }),
    message: ['SidecarCheck', 'timeout 5s is shorter than period 10s', 'use a timeout of at least one period'],
  },
  {
    name: 'SidecarQuit.http on port 0',
    build: () => SidecarQuit.http(0, '/quitquitquit'),
    message: ['SidecarQuit.http()', 'port 0 is not a valid port', 'use an integer from 1 to 65535'],
  },
  {
    name: 'WithSidecar: an env var name with a space',
    build: c => new WithSidecar(c.chart, 'side', { workload: c.deployment(), image: 'example/side:1', env: { 'DB HOST': 'x' } }),
    message: ["WithSidecar 'test/side'", "env 'DB HOST' is not an env var name", "e.g. 'DB_HOST'"],
  },
  {
    name: 'WithSidecar: a secretEnv without a key',
    build: c => new WithSidecar(c.chart, 'side', { workload: c.deployment(), image: 'example/side:1', secretEnv: { TOKEN: { secret: { name: 'creds' }, key: '' } } }),
    message: ["WithSidecar 'test/side'", "secretEnv 'TOKEN' needs a Secret (its name a DNS-1123 subdomain) and a key", "e.g. { secret: { name: 'oauth2-proxy' }, key: 'client-secret' }"],
  },
  {
    name: 'WithSidecar: two volumes at one path',
    build: c => new WithSidecar(c.chart, 'side', {
      workload: c.deployment(),
      image: 'example/side:1',
      volumes: [SidecarVolume.emptyDir('a', '/data'), SidecarVolume.emptyDir('b', '/data')],
    }),
    message: ["WithSidecar 'test/side'", "volume 'b' and volume 'a' are both mounted at /data", 'give each its own directory'],
  },
  {
    name: 'WithSidecar: a volume over the hook tools directory',
    build: c => new WithSidecar(c.chart, 'side', { workload: c.deployment(), image: 'example/side:1', volumes: [SidecarVolume.emptyDir('t', '/sidecar-tools')] }),
    message: ["WithSidecar 'test/side'", "volume 't' is mounted at /sidecar-tools, the library's hook tools directory", 'choose another directory'],
  },
  {
    name: 'WithSidecar: serveInitContainers on 1.27',
    build: c => new WithSidecar(c.chart, 'side', {
      workload: c.raw({ initContainers: [{ name: 'migrate', image: 'm:1' }], containers: [APP] }),
      kubernetesVersion: '1.27',
      image: 'example/side:1',
      serveInitContainers: true,
    }),
    message: ["WithSidecar 'test/side'", 'serveInitContainers asks the sidecar to serve the init containers', 'Target Kubernetes 1.29 or later'],
  },
  {
    name: 'WithSidecar: after an init container the workload does not have',
    build: c => new WithSidecar(c.chart, 'side', {
      workload: c.raw({ initContainers: [{ name: 'migrate', image: 'm:1' }], containers: [APP] }),
      kubernetesVersion: '1.29',
      image: 'example/side:1',
      after: 'fetch-secret',
    }),
    message: ["WithSidecar 'test/side'", "after 'fetch-secret' names no init container of Deployment 'raw'; its init containers are 'migrate'", 'Name one of them'],
  },
  {
    name: 'WithSidecar: legacy on a Job without a quit endpoint',
    build: c => new WithSidecar(c.chart, 'side', { workload: c.raw({ containers: [APP], restartPolicy: 'Never' }, 'Job'), kubernetesVersion: '1.27', image: 'example/side:1' }),
    message: ["WithSidecar 'test/side'", 'a legacy sidecar on Job \'raw\' never exits', 'Target Kubernetes 1.29+'],
  },
  {
    name: 'WithSidecar: a volume name the workload already uses',
    build: c => new WithSidecar(c.chart, 'side', {
      workload: c.raw({ containers: [APP], volumes: [{ name: 'data', emptyDir: {} }] }),
      kubernetesVersion: '1.29',
      image: 'example/side:1',
      volumes: [SidecarVolume.emptyDir('data', '/data')],
    }),
    message: ["WithSidecar 'test/side'", "volume name 'data' is already used by Deployment 'raw'", "give the sidecar's volume another name"],
  },
  {
    // (required by the type, test/adopt-types.test.ts; a caller without types still gets the message)
    name: 'AdoptSidecar without containerName',
    build: c => new AdoptSidecar(c.chart, 'adopt', { workload: c.deployment() } as any),
    message: ["AdoptSidecar 'test/adopt'", 'containerName is required', "e.g. 'cloud-sql-proxy'"],
  },
  {
    name: 'AdoptSidecar: a container the workload does not have',
    build: c => new AdoptSidecar(c.chart, 'adopt', { workload: c.raw({ containers: [APP] }), kubernetesVersion: '1.29', containerName: 'proxy' }),
    message: ["AdoptSidecar 'test/adopt'", "Deployment 'raw' has no container named 'proxy' to adopt; its spec.containers are 'app'", 'Name one of them as containerName'],
  },
  {
    name: 'AdoptSidecar: the only container',
    build: c => new AdoptSidecar(c.chart, 'adopt', { workload: c.raw({ containers: [APP] }), kubernetesVersion: '1.29', containerName: 'app' }),
    message: ["Deployment 'raw'", "adopting 'app' as sidecar leaves no app container", 'Adopt only the sidecars, not the app'],
  },
  {
    name: 'AdoptSidecar: a preStop of its own where the legacy layout needs one',
    build: c => new AdoptSidecar(c.chart, 'adopt', {
      workload: c.raw({ containers: [APP, { name: 'proxy', image: 'p:1', lifecycle: { preStop: { exec: { command: ['/drain'] } } } }] }),
      kubernetesVersion: '1.27',
      containerName: 'proxy',
    }),
    message: ["AdoptSidecar 'test/adopt'", "adopted container 'proxy' has its own lifecycle.preStop", 'Remove lifecycle.preStop from the manifest (e.g. with a JSON patch), or set outliveApp: false'],
  },
  // The shared checks of src/bind/checks.ts, each through one construct or factory that uses it.
  {
    name: 'WithLogAgent: agentUser 0 (root)',
    build: c => new WithLogAgent(c.chart, 'logs', { workload: c.deployment(), agentUser: 0 }),
    message: ["WithLogAgent 'test/logs'", 'agentUser 0 is not a non-root uid', "use an integer from 1 to 2147483647 (e.g. the app's uid)"],
  },
  {
    name: 'WithEnvoy: user 0 (root)',
    build: c => new WithEnvoy(c.chart, 'envoy', { workload: c.deployment(), appPort: 8080, user: 0 }),
    message: ["WithEnvoy 'test/envoy'", 'user 0 is not a non-root uid', 'use an integer from 1 to 2147483647 (e.g. 10101)'],
  },
  {
    name: 'WithTracer: a group that is not a whole number',
    build: c => new WithTracer(c.chart, 'tracer', { workload: c.deployment(), exporterEndpoint: ENDPOINT, group: 10.5 }),
    message: ["WithTracer 'test/tracer'", 'group 10.5 is not a gid', 'use an integer from 0 to 2147483647 (e.g. 10001)'],
  },
  {
    name: 'Images.pin: a digest that is not sha256 and 64 hex digits',
    build: () => Images.pin(Images.ENVOY, 'sha256:abc'),
    message: ['Images.pin', 'digest "sha256:abc" is not a sha256 digest', "give 'sha256:' and the 64 lower-case hex digits"],
  },
  {
    name: 'WithLogAgent: a log volume under 1 MiB',
    build: c => new WithLogAgent(c.chart, 'logs', { workload: c.deployment(), logVolumeSizeLimit: Size.kibibytes(512) }),
    message: ["WithLogAgent 'test/logs'", 'logVolumeSizeLimit must be at least 1 MiB (got 0 MiB)', 'e.g. Size.gibibytes(1)'],
  },
  {
    name: 'SidecarVolume.configMap with a name that is no object name',
    build: () => SidecarVolume.configMap('cfg', 'Proxy_Config', '/etc/proxy'),
    message: ["SidecarVolume.configMap('cfg')", "configMapName 'Proxy_Config' is not a ConfigMap name (a DNS-1123 subdomain", "e.g. 'proxy-config'"],
  },
  {
    name: 'SidecarQuit.http with a path with a space',
    build: () => SidecarQuit.http(9091, '/quit now'),
    message: ['SidecarQuit.http()', "path '/quit now' must start with '/' and hold no white space", "e.g. '/quitquitquit'"],
  },
  {
    name: 'WithSidecar: a configFiles key that is no file name',
    build: c => new WithSidecar(c.chart, 'side', { workload: c.deployment(), image: 'example/side:1', configFiles: { 'conf/main.hcl': 'a = 1' } }),
    message: ["WithSidecar 'test/side'", "configFiles key 'conf/main.hcl' is not a ConfigMap key", "use a file name such as 'config.hcl'"],
  },
  {
    name: "WithSidecar: a configFiles key '..data' (the kubelet's own entry of a ConfigMap volume)",
    build: c => new WithSidecar(c.chart, 'side', { workload: c.deployment(), image: 'example/side:1', configFiles: { '..data': 'a = 1' } }),
    message: ["WithSidecar 'test/side'", "configFiles key '..data' is not a ConfigMap key", "use a file name such as 'config.hcl'"],
  },
  {
    name: 'WithSidecar: args that are no list of strings',
    build: c => new WithSidecar(c.chart, 'side', { workload: c.deployment(), image: 'example/side:1', args: ['--port', 5432 as any] }),
    message: ["WithSidecar 'test/side'", 'args[1] 5432 is not a string', "quote numbers, e.g. ['--port', '5432']"],
  },
  {
    // issue 39: .some() skipped the hole, cdk8s wrote `[--a, null, --b]` and Go's decoder made the null an empty argument
    name: 'WithSidecar: args with a hole',
    // eslint-disable-next-line no-sparse-arrays
    build: c => new WithSidecar(c.chart, 'side', { workload: c.deployment(), image: 'example/side:1', args: ['--a', , '--b'] as string[] }),
    message: ["WithSidecar 'test/side'", 'args[1] is a hole (an empty slot', 'remove it or give the argument'],
  },
  {
    name: 'WithSidecar: command with a hole',
    // eslint-disable-next-line no-sparse-arrays
    build: c => new WithSidecar(c.chart, 'side', { workload: c.deployment(), image: 'example/side:1', command: ['/proxy', , '--x'] as string[] }),
    message: ["WithSidecar 'test/side'", 'command[1] is a hole (an empty slot', 'remove it or give the argument'],
  },
  {
    // issue 39: accepted, then cdk8s failed at synthesis naming no prop ("can't render non-simple object of type 'undefined'")
    name: "WithSidecar: a configFiles key 'constructor' (cdk8s' writer cannot write it)",
    build: c => new WithSidecar(c.chart, 'side', { workload: c.deployment(), image: 'example/side:1', configFiles: { constructor: 'a = 1' } as any }),
    message: ["WithSidecar 'test/side'", "configFiles key 'constructor' cannot be written by cdk8s in a ConfigMap's data", 'rename the file'],
  },
  {
    // issue 39: the message said "undefined", a value the user never gave
    name: 'resources.cpu.limit a Lazy',
    build: c => new WithLogAgent(c.chart, 'logs', { workload: c.deployment(), resources: { cpu: { limit: Lazy.any({ produce: () => '1' }) as any } } }),
    message: ["WithLogAgent 'test/logs'", 'resources.cpu.limit a Lazy is not a CPU quantity', "give the value itself); use e.g. { amount: '250m' }"],
  },
  {
    // issue 39: written as a ClusterIP Service with a nodePort, which the API server rejects
    // (validation.go: "may not be used when `type` is 'ClusterIP'")
    name: 'exposeVia() with a nodePort on a ClusterIP cdk8s-plus Service',
    build: c => {
      const workload = c.deployment();
      const service = new kplus.Service(c.chart, 'svc', { selector: workload, ports: [{ port: 9000, name: 'a' }] });
      new WithEnvoy(c.chart, 'envoy', { workload, appPort: 8080 }).exposeVia(service, { nodePort: 30080 });
    },
    message: ["WithEnvoy 'test/envoy'", "Service 'test/svc/Resource' spec.ports[1] has nodePort 30080, but the Service is of type ClusterIP",
      'leave nodePort out of exposeVia(), or make the Service a NodePort or LoadBalancer one'],
  },
  {
    name: 'exposeVia() with a nodePort on a raw Service without a type (ClusterIP by default)',
    build: c => {
      const workload = c.deployment();
      const service = new ApiObject(c.chart, 'svc', { apiVersion: 'v1', kind: 'Service', spec: { selector: { app: 'web' }, ports: [{ port: 9000, name: 'a' }] } });
      new WithEnvoy(c.chart, 'envoy', { workload, appPort: 8080 }).exposeVia(service, { nodePort: 30080 });
    },
    message: ["WithEnvoy 'test/envoy'", 'spec.ports[1] has nodePort 30080, but the Service is of type ClusterIP (no type: ClusterIP is the default)',
      'leave nodePort out of exposeVia()'],
  },
  {
    // issue 39: the message named neither the patch nor its path
    name: "a JSON patch of a sidecar's container (patches apply before the sidecars)",
    build: c => {
      const workload = c.raw({ containers: [APP] });
      new WithSidecar(c.chart, 'proxy', { workload, image: 'example/side:1', containerName: 'proxy' });
      workload.addJsonPatch(JsonPatch.add('/metadata/labels', { a: 'b' }), JsonPatch.replace('/spec/template/spec/initContainers/0/image', 'x'));
    },
    message: ["'test/raw': a JSON patch of the workload failed: patch 2 of 2",
      '{"op":"replace","path":"/spec/template/spec/initContainers/0/image","value":"x"}, at path \'/spec/template/spec/initContainers/0/image\'',
      "fix the patch's path to one the workload itself has"],
  },
];

describe('the bad-input catalogue', () => {
  test('has at least 40 cases, each with the construct, the bad value and the fix', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(40);
    for (const c of CASES) expect(c.message).toHaveLength(3);
    expect(new Set(CASES.map(c => c.name)).size).toBe(CASES.length);
  });

  test.each(CASES.map(c => [c.name, c] as const))('%s', (_name, c) => {
    // one reported error holds the parts in order: the construct (path), the bad value, the fix
    expectRefused(c, { tmpPrefix: 'sidecars-bad-' });
  });
});

describe('what the catalogue found', () => {
  test('with SidecarValidation on the app, a sidecar error is reported once (not again as a failed toJson)', () => {
    const app = new App({ outdir: fs.mkdtempSync(path.join(os.tmpdir(), 'sidecars-bad-')) });
    const chart = new Chart(app, 'test');
    const raw = ctx(app, chart).raw({ containers: [APP], terminationGracePeriodSeconds: 5 });
    new WithLogAgent(chart, 'logs', { workload: raw, kubernetesVersion: '1.29', appShutdownTime: Duration.seconds(10) });
    SidecarValidation.addTo(app, { kubernetesVersion: '1.29' });
    let message = '';
    try {
      app.synth();
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message.match(/terminationGracePeriodSeconds is 5/g)).toHaveLength(1);
    expect(message).not.toContain('cdk8s-sidecars:');
    fs.rmSync(app.outdir, { recursive: true, force: true });
  });
});

describe('errors that are one cause are reported once', () => {
  test('two log agents on one workload: one message, the cause (not the name, volume and port clashes that follow)', () => {
    const app = Testing.app();
    const chart = new Chart(app, 'test');
    const workload = ctx(app, chart).deployment();
    new WithLogAgent(chart, 'a', { workload, kubernetesVersion: '1.29' });
    new WithLogAgent(chart, 'b', { workload, kubernetesVersion: '1.29' });
    let message = '';
    try {
      Testing.synth(chart);
    } catch (e) {
      message = (e as Error).message;
    }
    const lines = message.split('\n').filter(l => l.trim().startsWith('['));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('attach one WithLogAgent per workload');
  });

  test('an app container named envoy: one message, the cause (not again as a duplicate name in the result; issue 27 point 8)', () => {
    const app = Testing.app();
    const chart = new Chart(app, 'test');
    new WithEnvoy(chart, 'envoy', {
      workload: ctx(app, chart).raw({ containers: [APP, { name: 'envoy', image: 'envoyproxy/envoy:v1.30.0' }] }), appPort: 8080, kubernetesVersion: '1.29',
    });
    let message = '';
    try {
      Testing.synth(chart);
    } catch (e) {
      message = (e as Error).message;
    }
    const lines = message.split('\n').filter(l => l.trim().startsWith('['));
    expect(lines).toEqual([expect.stringContaining("container name 'envoy' is already used by a container of Deployment 'raw'; choose another containerName.")]);
  });
});
