/**
 * One typed error for bad input (issue 35 point 4): every check throws a `SidecarError` (src/private/errors.ts)
 * that names where the value was given, the value and the fix, and whose message is built in one
 * place. A plain `new Error(` in src/ outside internalError(), and a check that takes its place
 * as a `who: string`, are lint errors (.projenrc.ts, no-restricted-syntax; test/src-lint-rules.test.ts).
 */
import * as fs from 'fs';
import * as path from 'path';
import { App, Chart, Duration, Testing } from 'cdk8s';
import { LogAgent } from '../src/log-agent';
import { LogOutput } from '../src/log-output';
import { SidecarError, Where } from '../src/private/errors';
import { Sidecars } from '../src/settings';
import { SidecarMode, resolveLayout } from '../src/target/capabilities';
import { targetVersion } from '../src/target/resolver';
import { SidecarTimeline } from '../src/timeline';
import { WithEnvoy } from '../src/with-envoy';
import { WithLogAgent } from '../src/with-log-agent';
import { WithSidecar } from '../src/with-sidecar';
import { rawDeployment } from './util/fixtures';

const SRC = path.join(__dirname, '..', 'src');

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap(e => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sources(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

/** How often `pattern` occurs in each file of src/ (relative path), files without it left out. */
function occurrences(pattern: RegExp): Record<string, number> {
  const out: Record<string, number> = {};
  for (const file of sources(SRC)) {
    const n = (fs.readFileSync(file, 'utf8').match(pattern) ?? []).length;
    if (n > 0) out[path.relative(SRC, file).split(path.sep).join('/')] = n;
  }
  return out;
}

test('the marked internal errors are few (a bug of the library or of a SidecarBase subclass, not bad input)', () => {
  const found = occurrences(/\binternalError\(`/g);
  expect(found).toEqual({
    'agents/vector/config.ts': 1, // a SECRET[...] in vector.yaml that is not one of the output's (LogOutput refuses the user's)
    'engine/check-rules.ts': 2, // the rule tables do not match each other
    'engine/injection-policy.ts': 3, // a value the engine wrote that a CEL literal cannot hold (a fraction, a field name CEL reserves)
    'private/values.ts': 1, // a number the renderers did not check
    'sidecar-injection-policy.ts': 1, // the stand-in pod missing from its own chart's output
    'sidecar.ts': 5, // SidecarBase's contract broken by a subclass: _attach twice, a volume without source, ...
  });
});

function thrownBy(f: () => unknown): SidecarError {
  try {
    f();
  } catch (e) {
    return e as SidecarError;
  }
  throw new Error('nothing was thrown');
}

describe('SidecarError', () => {
  test('the message is built from where, problem, separator and fix, in one place', () => {
    const e = new Where("WithEnvoy 'app/web/envoy'").error('appPort 80 is below 1024', 80, 'use a port from 1024 up');
    expect(e).toBeInstanceOf(SidecarError);
    expect(e).toBeInstanceOf(Error);
    expect(e.message).toBe("WithEnvoy 'app/web/envoy': appPort 80 is below 1024; use a port from 1024 up.");
    expect([e.where, e.value, e.problem, e.fix, e.sep]).toEqual(["WithEnvoy 'app/web/envoy'", 80, 'appPort 80 is below 1024', 'use a port from 1024 up', '; ']);
    expect(e.name).toBe('SidecarError');
    expect(new Where('x').error('p', 1, 'e.g. 2', ', ').message).toBe('x: p, e.g. 2.');
  });

  test('an error of a lower layer has no where until the construct places it', () => {
    const low = new SidecarError({ problem: "Fluentd's config cannot hold \"a\\u0000\"", value: 'a\u0000', fix: 'give a value without it' });
    expect(low.message).toBe("Fluentd's config cannot hold \"a\\u0000\"; give a value without it");
    const placed = new Where("WithLogAgent 'c/logs'").place(low) as SidecarError;
    expect(placed.message).toBe("WithLogAgent 'c/logs': Fluentd's config cannot hold \"a\\u0000\"; give a value without it.");
    expect([placed.where, placed.value, placed.fix]).toEqual(["WithLogAgent 'c/logs'", 'a\u0000', 'give a value without it']);
    const other = new TypeError('x');
    expect(new Where('w').place(other)).toBe(other);
  });

  test('the target layer\'s errors are typed too: placed by the construct, or worded by the CLI', () => {
    const env = { CDK8S_SIDECARS_KUBERNETES_VERSION: ' ' };
    let e: unknown;
    try {
      targetVersion({}, { fail: x => x.placedAt('w'), versionFallback: 'the default 1.27', gateFallback: 'the default false', env });
    } catch (x) {
      e = x;
    }
    const s = e as SidecarError;
    expect(s).toBeInstanceOf(SidecarError);
    expect(s.message).toBe('w: environment variable CDK8S_SIDECARS_KUBERNETES_VERSION is set but empty. Set it (e.g. CDK8S_SIDECARS_KUBERNETES_VERSION=1.29) or unset it to use the default 1.27.');
    expect([s.problem, s.value, s.sep]).toEqual(['environment variable CDK8S_SIDECARS_KUBERNETES_VERSION is set but empty', ' ', '. ']);
    // the CLI words it without a place: the sentence alone
    let bare: unknown;
    try {
      targetVersion({}, { fail: x => x, versionFallback: 'the default 1.27', gateFallback: 'the default false', env });
    } catch (x) {
      bare = x;
    }
    expect((bare as SidecarError).text).toBe(s.message.slice('w: '.length));
    // the version check of a variable is nested under its reader's place
    const nested = thrownBy(() => targetVersion({}, {
      fail: x => x.placedAt("WithEnvoy 'c/e'"), versionFallback: '', gateFallback: '', env: { CDK8S_SIDECARS_KUBERNETES_VERSION: '1.29-eks' },
    }));
    expect(nested.where).toBe("WithEnvoy 'c/e': environment variable CDK8S_SIDECARS_KUBERNETES_VERSION");
    expect(nested.message).toMatch(/^WithEnvoy 'c\/e': environment variable CDK8S_SIDECARS_KUBERNETES_VERSION: kubernetesVersion '1\.29-eks' carries a vendor suffix/);
    const mode = resolveLayout({ major: 1, minor: 27 } as any, SidecarMode.NATIVE, false).error!;
    expect([mode.where, mode.value, mode.fix]).toEqual(['', SidecarMode.NATIVE, 'Target 1.29 or later, or use SidecarMode.AUTO / SidecarMode.LEGACY']);
  });
});

/** The error `f` throws (fails when it throws none). */
function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  throw new Error('nothing was thrown');
}

describe('a bad prop, option or file value throws a SidecarError with where, value and fix filled', () => {
  const app = () => new Chart(new App({ outdir: '/nonexistent-never-written' }), 'test');
  const cases: Array<[string, () => unknown, { where: string; value: unknown; fix: RegExp }]> = [
    ['a construct prop (bind/checks.ts)', () => {
      const chart = app();
      new WithEnvoy(chart, 'envoy', { workload: rawDeployment(chart, 'web', {}), appPort: 70000, kubernetesVersion: '1.29' });
    }, { where: "WithEnvoy 'test/envoy'", value: 70000, fix: /^use an integer from 1 to 65535/ }],
    ['a construct prop (the construct itself)', () => {
      const chart = app();
      new WithSidecar(chart, 's', {
        workload: rawDeployment(chart, 'web', {}),
        image: 'ghcr.io/example/s:1.0.0',
        containerName: 'helper',
        kubernetesVersion: '1.29',
        ports: [{ number: 8080 }],
        localPorts: [8080],
      });
    }, { where: "WithSidecar 'test/s'", value: 8080, fix: /^list it once$/ }],
    ['a factory option', () => LogAgent.fluentBit({ flushInterval: Duration.seconds(0) }),
      { where: 'LogAgent.fluentBit()', value: Duration.seconds(0), fix: /Duration\.seconds\(1\)/ }],
    ['a log output', () => LogOutput.http({ host: 'logs.example.com', uri: 'no-slash' }),
      { where: 'LogOutput.http()', value: 'no-slash', fix: /^e\.g\. '\/ingest/ }],
    ['the target', () => Sidecars.configure(app(), { kubernetesVersion: '1.29-eks' }),
      { where: "Sidecars.configure('test')", value: '1.29-eks', fix: /^drop it/ }],
    ['a manifest read by the timeline', () => SidecarTimeline.ofManifest({ kind: 'Service' }),
      { where: 'SidecarTimeline.ofManifest', value: { kind: 'Service' }, fix: /^Pass one Kubernetes object/ }],
  ];
  test.each(cases)('%s', (_name, f, want) => {
    const e = thrown(f);
    expect(e).toBeInstanceOf(SidecarError);
    const s = e as SidecarError;
    expect(s.where).toBe(want.where);
    expect(s.value).toEqual(want.value);
    expect(s.fix).toMatch(want.fix);
    expect(s.message.startsWith(`${s.where}: ${s.problem}`)).toBe(true);
    expect(s.message.endsWith(`${s.fix}.`)).toBe(true);
  });

  test('an agent config renderer\'s refusal is placed at the construct (no message without the path)', () => {
    const chart = app();
    const workload = rawDeployment(chart, 'web', {});
    const e = thrown(() => {
      new WithLogAgent(chart, 'logs', {
        workload,
        kubernetesVersion: '1.29',
        agent: LogAgent.vector(),
        output: LogOutput.forward({ host: 'logs.example.com' }),
      });
      Testing.synth(chart);
    }) as SidecarError;
    expect(e).toBeInstanceOf(SidecarError);
    expect(e.where).toBe("WithLogAgent 'test/logs'");
    expect(e.message).toMatch(/^WithLogAgent 'test\/logs': Vector has no Fluent forward sink, .*; ship with LogOutput\.http\(\)/);
  });
});
