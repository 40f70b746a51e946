/**
 * Statements of the documentation that the output contradicted (issue 48 point 6), now generated
 * from the code or checked against it, as the snippets test does for code: a change of the output
 * that the docs do not follow fails here, with the text to paste.
 *
 * - docs/target.md: what each agent gets at shutdown in each layout (a `preStop`, a wrapper that
 *   holds SIGTERM back), between the `stop-handling` markers, generated from synthesized pods.
 * - docs/envoy.md: Envoy's probes, between the `envoy-probes` markers, from the synthesized container.
 * - every page: the jsii languages it names are those package.json builds (no .NET, no NuGet).
 */
import { App, Chart } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { LogAgent, Sidecars, WithEnvoy, WithLogAgent, WithTracer } from '../src';
import { withoutVersionEnv } from './util/catalogue';
import { readDoc } from './util/docs';
import { markdownFiles } from './util/snippets';

withoutVersionEnv();

type Agent = [label: string, container: string, attach: (chart: Chart, w: kplus.Deployment) => void];
const AGENTS: Agent[] = [
  ['Fluent Bit (`WithLogAgent`, the default)', 'log-agent', (c, w) => new WithLogAgent(c, 's', { workload: w, agent: LogAgent.fluentBit() })],
  ['Vector', 'log-agent', (c, w) => new WithLogAgent(c, 's', { workload: w, agent: LogAgent.vector() })],
  ['Fluentd', 'log-agent', (c, w) => new WithLogAgent(c, 's', { workload: w, agent: LogAgent.fluentd() })],
  ['Envoy (`WithEnvoy`)', 'envoy', (c, w) => new WithEnvoy(c, 's', { workload: w, appPort: 8080 })],
  ['OpenTelemetry Collector (`WithTracer`)', 'tracer', (c, w) => new WithTracer(c, 's', { workload: w, exporterEndpoint: 'otel-collector.observability:4317' })],
];

function containerOf(version: string, attach: Agent[2], name: string): any {
  const app = new App();
  Sidecars.configure(app, { kubernetesVersion: version });
  const chart = new Chart(app, 'c');
  const w = new kplus.Deployment(chart, 'w', { containers: [{ name: 'app', image: 'ghcr.io/example/app:1.0.0', ports: [{ number: 8080 }] }] });
  attach(chart, w);
  const spec = chart.toJson().find((o: any) => o.kind === 'Deployment').spec.template.spec;
  return [...spec.initContainers ?? [], ...spec.containers].find((c: any) => c.name === name);
}

/** A preStop hook in words. */
function preStopText(c: any): string {
  const h = c.lifecycle?.preStop;
  if (!h) return 'none';
  if (h.sleep) return `sleep ${h.sleep.seconds} s`;
  const cmd: string[] = h.exec?.command ?? [];
  const sleep = cmd.length === 3 && /busybox$/.test(cmd[0]) && cmd[1] === 'sleep' ? cmd[2] : undefined;
  if (sleep) return `sleep ${sleep} s (busybox)`;
  const posts = (cmd.join(' ').match(/http:\/\/127\.0\.0\.1:\d+\/[\w?_/]+/g) ?? []).map(u => `POST ${u.replace(/^http:\/\/127\.0\.0\.1:\d+/, '')}`);
  const wait = /sleep (\d+)/.exec(cmd.join(' '));
  return [...posts, ...(wait ? [`then a wait of up to ${wait[1]} s`] : [])].join(', ') || 'a script';
}

/** Whether the agent runs under the wrapper that holds its SIGTERM back, and for how long. */
function wrapperText(c: any): string {
  const script: string = c.command?.[0]?.endsWith('busybox') && c.command[1] === 'sh' ? c.command[3] ?? '' : '';
  if (!script.includes("trap 't=1' TERM")) return 'no';
  const hold = /busybox sleep (\d+)/.exec(script);
  return `yes: SIGTERM held ${hold ? hold[1] : '?'} s while it keeps reading`;
}

/** The table docs/target.md shows between its `stop-handling` markers. */
function stopTable(): string {
  const rows = AGENTS.map(([label, name, attach]) => {
    const legacy = containerOf('1.27', attach, name);
    const native = containerOf('1.29', attach, name);
    return `| ${label} | ${preStopText(legacy)} | ${preStopText(native)} | ${wrapperText(native)} |`;
  });
  return [
    '| agent | legacy (1.27) `preStop` | native (1.29+) `preStop` | native: wrapper |',
    '|---|---|---|---|',
    ...rows,
  ].join('\n');
}

function between(file: string, marker: string): string | undefined {
  const m = new RegExp(`<!-- ${marker} -->\\n([\\s\\S]*?)\\n<!-- /${marker} -->`).exec(readDoc(file));
  return m?.[1];
}

test('docs/target.md: what each agent gets at shutdown, per layout, as synthesized (default appShutdownTime 10 s)', () => {
  const table = stopTable();
  // the statements of issue 48: native Fluent Bit and Vector get no preStop; both run under the wrapper (Fluent Bit: issue 51)
  expect(table).toMatch(/\| Fluent Bit [^\n]*\| sleep 12 s \(busybox\) \| none \| yes: SIGTERM held 2 s while it keeps reading \|/);
  expect(table).toMatch(/\| Vector \| sleep 13 s \(busybox\) \| none \| yes: SIGTERM held 3 s while it keeps reading \|/);
  expect(between('docs/target.md', 'stop-handling')).toBe(table);
});

test('docs/envoy.md: the probes Envoy has, as synthesized, in both layouts', () => {
  const probes = (v: string) => Object.keys(containerOf(v, AGENTS[3][2], 'envoy')).filter(k => k.endsWith('Probe')).sort();
  expect(probes('1.27')).toEqual(probes('1.29'));
  expect(between('docs/envoy.md', 'envoy-probes')).toBe(`Envoy has ${probes('1.29').map(p => `a \`${p}\``).join(', ')} in both layouts.`);
  // the sentences issue 48 found wrong
  const doc = readDoc('docs/envoy.md', true);
  expect(doc).not.toContain('No liveness probe on Envoy');
  expect(doc).not.toContain('no Envoy binary runs in the tests');
});

test('every page names only the jsii languages package.json builds', () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const targets = Object.keys(require('../package.json').jsii.targets);
  expect(targets.sort()).toEqual(['go', 'java', 'python']);
  const named: Record<string, RegExp> = { dotnet: /\.NET\b|NuGet|\bC#/ };
  const wrong = markdownFiles().flatMap(f => Object.entries(named).filter(([t, re]) => !targets.includes(t) && re.test(readDoc(f))).map(([t]) => `${f}: ${t}`));
  expect(wrong).toEqual([]);
});
