import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { App, Chart, Testing } from 'cdk8s';
import { SidecarLayout, SidecarMode, Sidecars, WithLogAgent } from '../src';
import { kplusWorkload, layoutOf, manifestOf, newChart, withEnv } from './util/fixtures';
import { parseKubernetesVersion, resolveLayout } from '../src/target/capabilities';

const ENV = 'CDK8S_SIDECARS_KUBERNETES_VERSION';

describe('parseKubernetesVersion', () => {
  test.each(['1.29', 'v1.29', '1.29.3', 'v1.29.3', '1.27', 'v1.35.0'])('accepts %s', raw => {
    expect(parseKubernetesVersion(raw)).toMatchObject({ major: 1, minor: Number(raw.replace(/^v/, '').split('.')[1]) });
  });
  test.each(['', '1', '1.29.3.1', 'V1.29', ' 1.29', '1.29 ', '2.0', '1.x', 'latest', '1.29-eks', '1.29.3-gke.100', '01.29x'])('rejects %j', raw => {
    expect(parseKubernetesVersion(raw)).toBeUndefined();
  });
});

describe('resolveLayout: the version matrix (SIDECARS.md §2)', () => {
  const v = (minor: number) => parseKubernetesVersion(`1.${minor}`)!;
  test.each([
    [27, false, 'LEGACY'], [27, true, 'LEGACY'],
    [28, false, 'LEGACY'], [28, true, 'NATIVE'],
    [29, false, 'NATIVE'], [32, false, 'NATIVE'], [33, false, 'NATIVE'], [35, false, 'NATIVE'],
  ])('AUTO on 1.%d (gate %s) is %s', (minor, gate, layout) => {
    expect(resolveLayout(v(minor as number), SidecarMode.AUTO, gate as boolean)).toEqual({ layout });
  });
  test('LEGACY is always legacy', () => {
    for (const minor of [27, 28, 29, 35]) expect(resolveLayout(v(minor), SidecarMode.LEGACY, true)).toEqual({ layout: SidecarLayout.LEGACY });
  });
  test('NATIVE where the cluster can run it', () => {
    expect(resolveLayout(v(28), SidecarMode.NATIVE, true)).toEqual({ layout: SidecarLayout.NATIVE });
    expect(resolveLayout(v(29), SidecarMode.NATIVE, false)).toEqual({ layout: SidecarLayout.NATIVE });
  });
  test('NATIVE where the cluster would drop or reject it is an error that says what happens and what to do', () => {
    expect(resolveLayout(v(27), SidecarMode.NATIVE, false).error?.message).toMatch(/^mode NATIVE on Kubernetes 1\.27: .*the API server drops it .*pod hangs in Init\. Target 1\.29 or later, or use SidecarMode\.AUTO/);
    expect(resolveLayout(v(28), SidecarMode.NATIVE, false).error?.message).toMatch(/^mode NATIVE on Kubernetes 1\.28 without the SidecarContainers feature gate: .*silently drops .*Set `sidecarContainersGate: true`/);
  });
});

describe('target precedence: prop > CDK8S_SIDECARS_KUBERNETES_VERSION > Sidecars.configure > 1.27', () => {
  function agentIn(props: { kubernetesVersion?: string; overrideAppTarget?: boolean; sidecarContainersGate?: boolean } = {}) {
    const { app, chart } = newChart();
    const workload = kplusWorkload(chart, 'Deployment');
    const agent = new WithLogAgent(chart, 'logs', { workload, ...props });
    return { app, chart, agent };
  }

  test('default is 1.27 (legacy)', () => withEnv(ENV, undefined, () => {
    const { agent } = agentIn();
    expect(agent.targetVersion).toBe('1.27');
    expect(agent.layout).toBe(SidecarLayout.LEGACY);
  }));

  test('Sidecars.configure on the App, called AFTER the construct was created, counts', () => withEnv(ENV, undefined, () => {
    const { app, chart, agent } = agentIn();
    Sidecars.configure(app, { kubernetesVersion: 'v1.30.2' });
    expect(agent.targetVersion).toBe('1.30');
    expect(layoutOf(manifestOf(Testing.synth(chart), 'Deployment')).init).toEqual(['sidecar-tools', 'log-agent']); // the hold's busybox first
  }));

  test('Sidecars.configure before the construct, on the Chart; the nearer scope wins', () => withEnv(ENV, undefined, () => {
    const { app, chart } = newChart();
    Sidecars.configure(app, { kubernetesVersion: '1.27' });
    Sidecars.configure(chart, { kubernetesVersion: '1.29' });
    const agent = new WithLogAgent(chart, 'logs', { workload: kplusWorkload(chart, 'Deployment') });
    expect(agent.targetVersion).toBe('1.29');
  }));

  test('the versions and layout decisions the reader keeps answer as reading afresh (issue 36: the target is read at every render)', () => withEnv(ENV, undefined, () => {
    // the same texts read by many constructs, and by one construct again after a change
    for (let i = 0; i < 3; i++) {
      const { app, agent } = agentIn();
      expect([agent.targetVersion, agent.layout]).toEqual(['1.27', SidecarLayout.LEGACY]);
      Sidecars.configure(app, { kubernetesVersion: '1.29.3' });
      expect(agent.targetVersion).toBe('1.29');
      const native = agentIn({ kubernetesVersion: '1.29.3' }).agent;
      expect([native.targetVersion, native.layout]).toEqual(['1.29', SidecarLayout.NATIVE]);
    }
    // an error decision is not kept as an answer: each construct gets its own, placed at its path
    for (const id of ['a', 'b']) {
      const { chart } = newChart();
      expect(() => new WithLogAgent(chart, id, { workload: kplusWorkload(chart, 'Deployment'), kubernetesVersion: '1.27', mode: SidecarMode.NATIVE }).layout)
        .toThrow(new RegExp(`'test/${id}'.*mode NATIVE on Kubernetes 1.27`));
    }
    // a bad text is refused each time (never kept)
    for (let i = 0; i < 2; i++) expect(() => agentIn({ kubernetesVersion: '1.2x' })).toThrow(/is not a Kubernetes version/);
  }));

  test('configure sets mode and gate too', () => withEnv(ENV, undefined, () => {
    const { app, agent } = agentIn();
    Sidecars.configure(app, { kubernetesVersion: '1.28', sidecarContainersGate: true });
    expect(agent.layout).toBe(SidecarLayout.NATIVE);
    Sidecars.configure(app, { kubernetesVersion: '1.31', mode: SidecarMode.LEGACY });
    expect(agent.layout).toBe(SidecarLayout.LEGACY);
  }));

  test('`layout` is fixed once read: a later configure() that flips it fails synthesis naming both; one that keeps it is fine', () => withEnv(ENV, undefined, () => {
    const flipped = agentIn();
    expect(flipped.agent.layout).toBe(SidecarLayout.LEGACY);
    Sidecars.configure(flipped.app, { kubernetesVersion: '1.29' });
    expect(() => Testing.synth(flipped.chart)).toThrow(/`layout` was read as LEGACY \(Kubernetes 1\.27, from the default\).*Kubernetes 1\.29 from Sidecars\.configure\(\).*NATIVE/);
    const kept = agentIn();
    expect(kept.agent.layout).toBe(SidecarLayout.LEGACY);
    Sidecars.configure(kept.app, { kubernetesVersion: '1.28' }); // still legacy (no gate)
    expect(layoutOf(manifestOf(Testing.synth(kept.chart), 'Deployment')).containers).toEqual(['app', 'log-agent']);
    const unread = agentIn();
    Sidecars.configure(unread.app, { kubernetesVersion: '1.29' }); // never read: no error
    expect(layoutOf(manifestOf(Testing.synth(unread.chart), 'Deployment')).init).toContain('log-agent');
  }));

  test('the environment variable overrides configure()', () => withEnv(ENV, '1.29', () => {
    const { app, agent } = agentIn();
    Sidecars.configure(app, { kubernetesVersion: '1.27' });
    expect(agent.targetVersion).toBe('1.29');
    expect(agent.layout).toBe(SidecarLayout.NATIVE);
  }));

  test('an explicit prop that disagrees with the environment variable is an error (issue 48); with overrideAppTarget it wins', () => withEnv(ENV, '1.29', () => {
    expect(() => agentIn({ kubernetesVersion: '1.27' })).toThrow(
      "test/logs: kubernetesVersion '1.27' differs from the app's target, Kubernetes 1.29 from the environment variable CDK8S_SIDECARS_KUBERNETES_VERSION " +
      "(the construct's gives the LEGACY layout, the app's the NATIVE one)",
    );
    expect(agentIn({ kubernetesVersion: '1.27', overrideAppTarget: true }).agent.targetVersion).toBe('1.27');
    expect(agentIn({ kubernetesVersion: 'v1.29' }).agent.targetVersion).toBe('1.29'); // the same release: no error
  }));

  test('a bad environment variable is an error that names it', () => withEnv(ENV, 'banana', () => {
    expect(() => agentIn()).toThrow("test/logs: environment variable CDK8S_SIDECARS_KUBERNETES_VERSION: kubernetesVersion 'banana' is not a Kubernetes version.");
  }));

  test('a version with a vendor suffix says what to write instead', () => withEnv(ENV, undefined, () => {
    expect(() => agentIn({ kubernetesVersion: 'v1.29.3-eks-ae9a62a' })).toThrow(
      "test/logs: kubernetesVersion 'v1.29.3-eks-ae9a62a' carries a vendor suffix (as `kubectl get nodes` prints it); drop it and give the Kubernetes version alone, e.g. 'v1.29.3'.",
    );
    expect(() => agentIn({ kubernetesVersion: '1.30.1+k3s1' })).toThrow("e.g. '1.30.1'");
  }));

  test('a bad version in configure() is an error at once', () => {
    const { app } = newChart();
    expect(() => Sidecars.configure(app, { kubernetesVersion: '1.x' })).toThrow("Sidecars.configure(the App): kubernetesVersion '1.x' is not a Kubernetes version.");
  });

  test('sidecars on one workload must target the same cluster', () => withEnv(ENV, undefined, () => {
    const { chart } = newChart();
    const workload = kplusWorkload(chart, 'Deployment');
    new WithLogAgent(chart, 'a', { workload, kubernetesVersion: '1.29' });
    new WithLogAgent(chart, 'b', { workload, kubernetesVersion: '1.30', containerName: 'b', agent: undefined });
    expect(() => Testing.synth(chart)).toThrow(/its sidecars target different clusters \('test\/a': 1\.29, 'test\/b': 1\.30\)/);
  }));
});

describe('versions the library does not support, and empty or bad environment variables (issue 16)', () => {
  const GATE = 'CDK8S_SIDECARS_SIDECAR_CONTAINERS_GATE';
  function agentIn(props: { kubernetesVersion?: string; sidecarContainersGate?: boolean; overrideAppTarget?: boolean } = {}) {
    const { app, chart } = newChart();
    const workload = kplusWorkload(chart, 'Deployment');
    const agent = new WithLogAgent(chart, 'logs', { workload, ...props });
    return { app, chart, agent };
  }

  test('the parser keeps the patch version when one is given', () => {
    expect(parseKubernetesVersion('v1.29.3')).toEqual({ major: 1, minor: 29, patch: 3, raw: 'v1.29.3' });
    expect(parseKubernetesVersion('1.31.0')).toMatchObject({ minor: 31, patch: 0 });
    expect(parseKubernetesVersion('1.29')).toEqual({ major: 1, minor: 29, raw: '1.29' });
  });

  // `kubernetesVersion: 1.30` in a YAML values file arrives as the number 1.3; the old code gave
  // legacy output for it without a word.
  test.each(['1.3', 'v1.3'])('%s (what YAML makes of 1.30) is refused, with the YAML trap named', raw => withEnv(ENV, undefined, () => {
    expect(() => agentIn({ kubernetesVersion: raw })).toThrow(
      `test/logs: kubernetesVersion '${raw}' is older than 1.27, the oldest release this library supports. ` +
      "If the value came from YAML or JSON, an unquoted 1.30 is read as the number 1.3: quote it ('1.30'). " +
      "Give the lowest minor version of the cluster's API server and nodes, 1.27 or later.",
    );
  }));

  test('1.3 from the environment variable and from configure() is refused too', () => {
    withEnv(ENV, '1.3', () => expect(() => agentIn()).toThrow(/environment variable CDK8S_SIDECARS_KUBERNETES_VERSION: kubernetesVersion '1\.3' is older than 1\.27.*quote it \('1\.30'\)/));
    const { app } = newChart();
    expect(() => Sidecars.configure(app, { kubernetesVersion: 'v1.3' })).toThrow(/^Sidecars\.configure\(the App\): kubernetesVersion 'v1\.3' is older than 1\.27/);
  });

  test.each(['1.26', '1.26.15', 'v1.0', '1.2'])('%s is older than 1.27 and refused without the YAML hint', raw => withEnv(ENV, undefined, () => {
    expect(() => agentIn({ kubernetesVersion: raw })).toThrow(`test/logs: kubernetesVersion '${raw}' is older than 1.27, the oldest release this library supports. Give the lowest`);
  }));

  test('1.27 (the oldest supported) and 1.8x are accepted', () => withEnv(ENV, undefined, () => {
    expect(agentIn({ kubernetesVersion: '1.27' }).agent.targetVersion).toBe('1.27');
    expect(agentIn({ kubernetesVersion: '1.80' }).agent.targetVersion).toBe('1.80');
  }));

  test.each(['', ' '])('a set but empty CDK8S_SIDECARS_KUBERNETES_VERSION (%j) is an error, not a fallback to 1.27', value => withEnv(ENV, value, () => {
    expect(() => agentIn()).toThrow(
      'test/logs: environment variable CDK8S_SIDECARS_KUBERNETES_VERSION is set but empty. ' +
      'Set it (e.g. CDK8S_SIDECARS_KUBERNETES_VERSION=1.29) or unset it to use Sidecars.configure() or the default 1.27.',
    );
  }));

  test('an empty CDK8S_SIDECARS_KUBERNETES_VERSION is an error also when configure() gives a version (it would be overridden)', () => withEnv(ENV, '', () => {
    const { app, agent } = withEnv(ENV, undefined, () => agentIn());
    Sidecars.configure(app, { kubernetesVersion: '1.29' });
    expect(() => agent.layout).toThrow(/environment variable CDK8S_SIDECARS_KUBERNETES_VERSION is set but empty/);
  }));

  test('a construct with an explicit kubernetesVersion reads the environment variable too (to compare): set but empty is an error', () => withEnv(ENV, '', () => {
    expect(() => agentIn({ kubernetesVersion: '1.30' })).toThrow(/environment variable CDK8S_SIDECARS_KUBERNETES_VERSION is set but empty/);
  }));

  describe('CDK8S_SIDECARS_SIDECAR_CONTAINERS_GATE', () => {
    const both = (version: string | undefined, gate: string | undefined, fn: () => void) => withEnv(ENV, version, () => withEnv(GATE, gate, fn));

    test('true turns the 1.28 gate on (native), false leaves it off (legacy)', () => {
      both('1.28', 'true', () => expect(agentIn().agent.layout).toBe(SidecarLayout.NATIVE));
      both('1.28', 'false', () => expect(agentIn().agent.layout).toBe(SidecarLayout.LEGACY));
      both('1.28', undefined, () => expect(agentIn().agent.layout).toBe(SidecarLayout.LEGACY));
    });

    test('precedence: prop (with overrideAppTarget where it differs) > environment variable > Sidecars.configure > false', () => {
      both('1.28', 'false', () => {
        const { app, agent } = agentIn();
        Sidecars.configure(app, { sidecarContainersGate: true });
        expect(agent.layout).toBe(SidecarLayout.LEGACY); // env beats configure
        expect(() => agentIn({ sidecarContainersGate: true })).toThrow(/sidecarContainersGate true differs from the app's, false from the environment variable CDK8S_SIDECARS_SIDECAR_CONTAINERS_GATE/);
        expect(agentIn({ sidecarContainersGate: true, overrideAppTarget: true }).agent.layout).toBe(SidecarLayout.NATIVE); // prop beats env, when meant
      });
      both('1.28', 'true', () => {
        const { app, agent } = agentIn();
        Sidecars.configure(app, { sidecarContainersGate: false });
        expect(agent.layout).toBe(SidecarLayout.NATIVE);
        expect(agentIn({ sidecarContainersGate: false, overrideAppTarget: true }).agent.layout).toBe(SidecarLayout.LEGACY);
      });
      both('1.28', undefined, () => {
        const { app, agent } = agentIn();
        Sidecars.configure(app, { sidecarContainersGate: true });
        expect(agent.layout).toBe(SidecarLayout.NATIVE);
      });
    });

    test.each(['TRUE', 'yes', '1', 'on', 'true '])('%j is an error that names the variable and the accepted values', value => both('1.28', value, () => {
      expect(() => agentIn()).toThrow(
        `test/logs: environment variable CDK8S_SIDECARS_SIDECAR_CONTAINERS_GATE is '${value}'; use 'true' (the SidecarContainers feature gate is on in the API server and every kubelet) or 'false'.`,
      );
    }));

    test('set but empty is an error', () => both('1.28', '', () => {
      expect(() => agentIn()).toThrow(
        'test/logs: environment variable CDK8S_SIDECARS_SIDECAR_CONTAINERS_GATE is set but empty. ' +
        'Set it (e.g. CDK8S_SIDECARS_SIDECAR_CONTAINERS_GATE=true) or unset it to use Sidecars.configure() or the default false.',
      );
    }));

    test('a bad value is an error also where the prop decides (it is compared with the prop)', () => both('1.28', 'yes', () => {
      expect(() => agentIn({ sidecarContainersGate: true })).toThrow(/CDK8S_SIDECARS_SIDECAR_CONTAINERS_GATE is 'yes'/);
    }));
  });
});

describe('one target per app, never overridden in silence (issue 48)', () => {
  const GATE_ENV = 'CDK8S_SIDECARS_SIDECAR_CONTAINERS_GATE';
  function stderrOf(fn: () => void): string {
    let out = '';
    const spy = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: any) => { out += String(chunk); return true; });
    try {
      fn();
    } finally {
      spy.mockRestore();
    }
    return out;
  }

  test('CDK8S_SIDECARS_KUBERNETES_VERSION=1.27 with a construct that says 1.29: synthesis fails before any file is written, naming the construct, both releases and the fixes', () => withEnv(ENV, '1.27', () => {
    const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecars-one-target-'));
    try {
      expect(() => {
        const app = new App({ outdir });
        const chart = new Chart(app, 'shop');
        new WithLogAgent(chart, 'logs', { workload: kplusWorkload(chart, 'Deployment'), kubernetesVersion: '1.29' });
        app.synth();
      }).toThrow(new RegExp([
        "shop/logs: kubernetesVersion '1\\.29' differs from the app's target, Kubernetes 1\\.27 from the environment variable CDK8S_SIDECARS_KUBERNETES_VERSION ",
        "\\(the construct's gives the NATIVE layout, the app's the LEGACY one\\).*Remove the prop.*overrideAppTarget: true",
      ].join('')));
      expect(fs.readdirSync(outdir)).toEqual([]);
      // docs/target.md shows this very message (One target per app)
      let message = '';
      try {
        const app = new App({ outdir });
        const chart = new Chart(app, 'shop');
        new WithLogAgent(chart, 'web-logs', { workload: kplusWorkload(chart, 'Deployment'), kubernetesVersion: '1.29' });
      } catch (e) {
        message = (e as Error).message;
      }
      expect(fs.readFileSync(path.join(__dirname, '..', 'docs', 'target.md'), 'utf8')).toContain(`\n${message}\n`);
    } finally {
      fs.rmSync(outdir, { recursive: true, force: true });
    }
  }));

  test('Sidecars.configure set after the construct: the disagreement is an error at synthesis', () => withEnv(ENV, undefined, () => {
    const { app, chart } = newChart();
    new WithLogAgent(chart, 'logs', { workload: kplusWorkload(chart, 'Deployment'), kubernetesVersion: '1.29' });
    Sidecars.configure(app, { kubernetesVersion: '1.27' });
    expect(() => app.synthYaml()).toThrow(/test\/logs: kubernetesVersion '1\.29' differs from the app's target, Kubernetes 1\.27 from Sidecars\.configure\(\) on an enclosing scope/);
  }));

  test('a patch the app gives and the construct drops is a disagreement too (its known-bug checks would be lost)', () => withEnv(ENV, '1.29.3', () => {
    const { chart } = newChart();
    expect(() => new WithLogAgent(chart, 'logs', { workload: kplusWorkload(chart, 'Deployment'), kubernetesVersion: '1.29' }))
      .toThrow(/kubernetesVersion '1\.29' differs from the app's target, Kubernetes 1\.29\.3/);
  }));

  test('with overrideAppTarget: true the construct\'s release is emitted, and every synthesis says so on stderr', () => withEnv(ENV, '1.27', () => {
    const { app, chart } = newChart();
    new WithLogAgent(chart, 'logs', { workload: kplusWorkload(chart, 'Deployment'), kubernetesVersion: '1.29', overrideAppTarget: true });
    let yaml = '';
    const err = stderrOf(() => { yaml = app.synthYaml(); });
    expect(yaml).toMatch(/initContainers:[\s\S]*name: log-agent[\s\S]*restartPolicy: Always/);
    expect(err).toContain("[cdk8s-sidecars] NOTICE: test/logs: kubernetesVersion '1.29' differs from the app's target, Kubernetes 1.27 from the environment " +
      "variable CDK8S_SIDECARS_KUBERNETES_VERSION (the construct's gives the NATIVE layout, the app's the LEGACY one); emitted for the construct's own " +
      '(overrideAppTarget: true), Kubernetes 1.29, as asked.');
  }));

  test('no app-level target: a construct\'s own prop is the target (no error, no notice of the default)', () => withEnv(ENV, undefined, () => withEnv(GATE_ENV, undefined, () => {
    const { app, chart } = newChart();
    new WithLogAgent(chart, 'logs', { workload: kplusWorkload(chart, 'Deployment'), kubernetesVersion: '1.29' });
    expect(stderrOf(() => app.synthYaml())).toBe('');
  })));

  test('overrideAppTarget is a construct\'s prop: Sidecars.configure refuses it, and it must be a boolean', () => {
    const { app, chart } = newChart();
    expect(() => Sidecars.configure(app, { overrideAppTarget: true })).toThrow(
      "Sidecars.configure(the App): overrideAppTarget true is a construct's prop: Sidecars.configure() sets the app's target itself. Remove it here",
    );
    expect(() => new WithLogAgent(chart, 'logs', { workload: kplusWorkload(chart, 'Deployment'), overrideAppTarget: 'yes' as any })).toThrow(/overrideAppTarget/);
  });
});
