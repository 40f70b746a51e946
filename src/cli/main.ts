#!/usr/bin/env node
/**
 * The `cdk8s-sidecars` command (package.json `bin`). Not part of the library's API (not exported
 * from src/index.ts): a thin layer over the library for manifests that do not come from a cdk8s
 * app. docs/cli.md documents each subcommand with the same text as `--help` (test/cli.test.ts
 * checks that they match).
 *
 * Exit codes: 0 fine (warnings only); 1 errors in the input (check), a cluster or kubectl error,
 * a failed render; 2 bad usage or a bad render config.
 */
import * as fs from 'fs';
import * as path from 'path';
import { parseArgs } from 'util';
import type { Duration } from 'cdk8s';
import type { CheckResult } from './check';
import { ConfigError } from './errors';
import { CommandError, STDIN, UsageError, expandInputs } from './io';
import { decodeInput, escapeLine, readStdinBounded } from './reader';
import { resolveCliTarget } from './target-options';
import type { TimelineExtras } from './timeline';
import { UnknownRuleError, parseRuleList } from '../engine/check-rules';
import { Where } from '../private/errors';

/* eslint-disable @typescript-eslint/no-require-imports */
// Each command loads the modules it runs, when it runs: `check` does not load cdk8s and the
// constructs (`render` and `timeline` do) nor child_process (`target`), a tenth of its start-up.
const commands = {
  check: () => require('./check') as typeof import('./check'),
  cluster: () => require('./cluster') as typeof import('./cluster'),
  policy: () => require('./policy') as typeof import('./policy'),
  render: () => require('./render') as typeof import('./render'),
  renderConfig: () => require('./render-config') as typeof import('./render-config'),
  reportFormats: () => require('./report-formats') as typeof import('./report-formats'),
  timeline: () => require('./timeline') as typeof import('./timeline'),
};
/* eslint-enable @typescript-eslint/no-require-imports */

const TARGET_HELP = `  --kubernetes-version V  the lowest version of the cluster's API server and kubelets
                          (1.29, v1.29 or 1.29.3; with a patch, the known bugs of that patch
                          release are checked too); default: $CDK8S_SIDECARS_KUBERNETES_VERSION
  --gate                  the SidecarContainers feature gate is on (only matters for 1.28);
                          default: $CDK8S_SIDECARS_SIDECAR_CONTAINERS_GATE, else off`;

export const HELP: Record<string, { usage: string; text: string }> = {
  check: {
    usage: 'cdk8s-sidecars check [FILE|DIR|-]... [--kubernetes-version V] [--gate] [--output text|json|sarif|junit] [--ignore RULE]... [--allow-empty]',
    text: `Checks every object of every YAML file (multi-document) for the target cluster: the API
server's rules for pod specs, the fields the target release does not know (a native sidecar
on 1.27, ...), a Job's podFailurePolicy against its native sidecars and the known bugs of the
target's patch release; then, as SidecarValidation.addTo does for an app, each Service's named
targetPort and each HPA's requests against the workloads of its namespace in all the files
given. A directory is walked: every
.yaml and .yml file below it (not in .git or node_modules), sorted by code point. - reads stdin.
Input without a single object (empty stdin, an empty directory) is an error: an upstream step
(helm template, kustomize build) probably failed.

Options:
${TARGET_HELP}
  --output FORMAT         text for people (default), json (one document), sarif (SARIF 2.1.0,
                          for code scanning) or junit (JUnit XML, one test case per object)
  --ignore RULE           silence a rule for this run: its id or name (CS001 or
                          native-sidecar-below-1.29; repeat it or separate with commas); per
                          object: the annotation sidecars.cdk8s.io/check-ignore: "CS001,CS022"
  --allow-empty           input without objects is fine (exit 0)
  --version               the version of cdk8s-sidecars
  -h, --help              this text

Exit status: 0 no errors (warnings are printed), 1 errors or no objects, 2 bad usage.`,
  },
  target: {
    usage: 'cdk8s-sidecars target [--context C] [--with-patch] [--api-server-only]',
    text: `Reads the target from a cluster with your kubectl (kubectl version, get nodes,
get --raw /metrics, get mutatingwebhookconfigurations) and prints on stdout
  CDK8S_SIDECARS_KUBERNETES_VERSION=1.NN   the lowest of the API server and every kubelet
  CDK8S_SIDECARS_SIDECAR_CONTAINERS_GATE=true|false   where the API server's metrics are readable
for export $(cdk8s-sidecars target) or >> "$GITHUB_ENV". The versions read and the risks
(version skew, webhooks that rewrite pods, the gate) go to stderr.

Options:
  --context C             the kubeconfig context (kubectl --context C)
  --with-patch            print 1.NN.P, the lowest patch release (the known-bug checks use it)
  --api-server-only       use the API server's version when the nodes cannot be listed
  --version               the version of cdk8s-sidecars
  -h, --help              this text

Environment: KUBECTL, the kubectl binary (default: kubectl on the PATH).
Exit status: 0 printed, 1 kubectl failed or the cluster is unreachable, 2 bad usage.`,
  },
  timeline: {
    usage: 'cdk8s-sidecars timeline FILE|DIR|-... [--kubernetes-version V] [--gate] [--app-shutdown-time D] [--stop-time NAME=D]... [--legacy-sidecar NAME]...',
    text: `Prints the start/stop timeline of each workload of the files (the library's
SidecarTimeline): when each container starts and stops on the target cluster.

Options:
${TARGET_HELP}
  --app-shutdown-time D   how long the app containers take from SIGTERM to their exit
                          (10s, 500ms, 2m; default: the pod template's
                          sidecars.cdk8s.io/app-shutdown-time, which cdk8s-sidecars
                          writes, else 10s)
  --stop-time NAME=D      how long container NAME takes from SIGTERM to its exit (repeat it;
                          default: the pod template's sidecars.cdk8s.io/stop-times, which
                          cdk8s-sidecars writes; a sidecar without either is taken to run
                          until it is killed)
  --legacy-sidecar NAME   a container of spec.containers that is a sidecar (repeat it)
  --version               the version of cdk8s-sidecars
  -h, --help              this text

Exit status: 0 printed, 1 a file error or a workload the timeline refuses, 2 bad usage.`,
  },
  render: {
    usage: 'cdk8s-sidecars render --config FILE',
    text: `A Helm post-renderer: reads manifests on stdin and writes them on stdout with the
sidecars of the config added, as the library's constructs add them in a cdk8s app.
Helm 3 runs the command by its path:
  helm install web ./chart --post-renderer "$(npm root)/.bin/cdk8s-sidecars" \\
    --post-renderer-args render --post-renderer-args --config=sidecars.yaml
Helm 4 runs the package's postrenderer/v1 plugin by its name, installed once:
  helm plugin install "$(npm root)/cdk8s-sidecars/helm-plugins/cdk8s-sidecars"
  helm install web ./chart --post-renderer cdk8s-sidecars \\
    --post-renderer-args --config=sidecars.yaml
Objects the config does not select pass through; the output is the input's objects in their
order, then the new ones (the agents' ConfigMaps). The config (YAML) names the target
(kubernetesVersion, default $CDK8S_SIDECARS_KUBERNETES_VERSION; one is required) and, under
workloads, what to select (kind, name, namespace, matchLabels) and the sidecars to add
(logAgent, envoy, tracer, adopt, sidecars: the constructs' props). See docs/cli.md.

Options:
  --config FILE           the config (required)
  --version               the version of cdk8s-sidecars
  -h, --help              this text

Exit status: 0 rendered, 1 the constructs refused the input, 2 bad usage or a bad config
(the message names the key).`,
  },
  policy: {
    usage: 'cdk8s-sidecars policy --config FILE',
    text: `Writes the sidecars of one entry of a render config as a MutatingAdmissionPolicy
(Kubernetes 1.36+; 1.34-1.35 with allowBetaApi), its binding and the agents' ConfigMaps in
each namespace, for kubectl apply or GitOps: every new pod of the namespaces gets the sidecars
at admission, as render gives them to a chart's workloads. The config's admission key says
where: namespaces (required), workload (the index of the workloads entry whose sidecars, when
there are several), podLabels, matchConditions, name, failurePolicy (Fail or Ignore),
allowBetaApi. See docs/admission.md.

Options:
  --config FILE           the config (required)
  --version               the version of cdk8s-sidecars
  -h, --help              this text

Exit status: 0 written, 1 the constructs refused the config's sidecars, 2 bad usage or a bad
config (the message names the key).`,
  },
};

const TOP_HELP = `Usage: cdk8s-sidecars <command> [options]

Commands:
  check     check manifests for a target cluster (native sidecars, the API server's rules, known bugs)
  target    read the target (CDK8S_SIDECARS_KUBERNETES_VERSION=...) from a cluster with kubectl
  timeline  print the start/stop timeline of each workload
  render    add sidecars to manifests on stdin (a Helm post-renderer)
  policy    write the sidecars of a render config as a MutatingAdmissionPolicy (no webhook)

Run 'cdk8s-sidecars <command> --help' for a command's options, '--version' for the version.
Docs: docs/cli.md.`;

/** The --help text of a command, as docs/cli.md shows it. */
export function helpText(command: string): string {
  const h = HELP[command];
  return `Usage: ${h.usage}\n\n${h.text}\n`;
}

interface Parsed {
  readonly values: Record<string, string | boolean | string[] | undefined>;
  readonly positionals: string[];
}

function parse(args: string[], options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean }>): Parsed {
  try {
    const r = parseArgs({ args, options: { ...options, help: { type: 'boolean', short: 'h' }, version: { type: 'boolean' } }, allowPositionals: true, strict: true });
    return { values: r.values as Parsed['values'], positionals: r.positionals };
  } catch (e) {
    throw new UsageError((e as Error).message.split('\n')[0]);
  }
}

/** The commands, by name: each parses its own arguments and returns the exit code. */
const COMMANDS: Record<string, (args: string[], command: string) => number> = {
  check: runCheck,
  target: runTarget,
  timeline: runTimeline,
  render: runRender,
  policy: runPolicy,
};

function run(argv: string[]): number {
  const [command, ...args] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(TOP_HELP + '\n');
    return command === undefined ? 2 : 0;
  }
  if (command === '--version' || command === 'version') return version();
  if (!(command in HELP)) throw new UsageError(`unknown command '${command}'`);
  const usage = (e: UsageError) => {
    process.stderr.write(`cdk8s-sidecars ${command}: ${e.message}\nUsage: ${HELP[command].usage}\nRun 'cdk8s-sidecars ${command} --help' for more.\n`);
    return 2;
  };
  try {
    return Object.prototype.hasOwnProperty.call(COMMANDS, command) ? COMMANDS[command](args, command) : 0;
  } catch (e) {
    if (e instanceof UsageError) return usage(e);
    if (e instanceof ConfigError) {
      process.stderr.write(`cdk8s-sidecars ${command}: config error: ${e.message}\n`);
      return 2;
    }
    if (e instanceof CommandError) {
      // control characters escaped (names and file names in messages are escaped where they are made)
      process.stderr.write(`cdk8s-sidecars ${command}: ${e.message.split('\n').map(escapeLine).join('\n')}\n`);
      return 1;
    }
    throw e;
  }
}

/** `check`: the files' findings in the chosen format; 1 when one is an error or nothing was read. */
function runCheck(args: string[], command: string): number {
  const { values, positionals } = parse(args, {
    'kubernetes-version': { type: 'string' },
    'gate': { type: 'boolean' },
    'output': { type: 'string' },
    'ignore': { type: 'string', multiple: true },
    'allow-empty': { type: 'boolean' },
  });
  if (values.help) return help(command);
  if (values.version) return version();
  const output = (values.output as string | undefined) ?? 'text';
  const { checkFiles, formatHuman, formatJson } = commands.check();
  const formats: Record<string, (r: CheckResult) => string> = {
    text: formatHuman,
    json: formatJson,
    sarif: r => commands.reportFormats().formatSarif(r, packageVersion()),
    junit: r => commands.reportFormats().formatJunit(r),
  };
  if (!(output in formats)) throw new UsageError(`--output '${output}': use text, json, sarif or junit`);
  let ignore: Set<string>;
  try {
    ignore = parseRuleList((values.ignore as string[] | undefined) ?? [], new Where('--ignore'));
  } catch (e) {
    if (e instanceof UnknownRuleError) throw new UsageError(e.message);
    throw e;
  }
  if (positionals.length === 0) throw new UsageError(`no input: give files, directories or ${STDIN} for stdin`);
  const target = resolveCliTarget(values['kubernetes-version'] as string | undefined, values.gate as boolean | undefined);
  const files = expandInputs(positionals);
  const result = checkFiles(files, target, { ignore });
  process.stdout.write(formats[output](result));
  if (result.kubernetesObjects === 0 && !values['allow-empty']) {
    process.stderr.write(`cdk8s-sidecars check: no Kubernetes object in the input (${emptyInput(positionals, files)}): ` +
      'nothing was checked. If an upstream step (helm template, kustomize build) failed, fix it; if no objects is expected, pass --allow-empty.\n');
    return 1;
  }
  return result.findings.some(f => f.level === 'error') ? 1 : 0;
}

/** `target`: the cluster's target as environment lines (stdout) and what was read (stderr). */
function runTarget(args: string[], command: string): number {
  const { values, positionals } = parse(args, {
    'context': { type: 'string' }, 'with-patch': { type: 'boolean' }, 'api-server-only': { type: 'boolean' },
  });
  if (values.help) return help(command);
  if (values.version) return version();
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  const report = commands.cluster().readCluster({
    context: values.context as string | undefined,
    withPatch: values['with-patch'] as boolean | undefined,
    apiServerOnly: values['api-server-only'] as boolean | undefined,
  });
  process.stderr.write(report.notes.map(n => `# ${n}\n`).join(''));
  process.stdout.write(report.env.map(l => `${l}\n`).join(''));
  return 0;
}

/** `timeline`: each workload's start and stop, second by second. */
function runTimeline(args: string[], command: string): number {
  const { values, positionals } = parse(args, {
    'kubernetes-version': { type: 'string' },
    'gate': { type: 'boolean' },
    'app-shutdown-time': { type: 'string' },
    'stop-time': { type: 'string', multiple: true },
    'legacy-sidecar': { type: 'string', multiple: true },
  });
  if (values.help) return help(command);
  if (values.version) return version();
  if (positionals.length === 0) throw new UsageError(`no input: give files, directories or ${STDIN} for stdin`);
  const target = resolveCliTarget(values['kubernetes-version'] as string | undefined, values.gate as boolean | undefined);
  const extras = timelineExtras(values);
  process.stdout.write(commands.timeline().timelines(expandInputs(positionals), target, extras));
  return 0;
}

/** `render`: the manifests on stdin with the config's sidecars. */
function runRender(args: string[], command: string): number {
  const { values, positionals } = parse(args, { config: { type: 'string' } });
  if (values.help) return help(command);
  if (values.version) return version();
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}' (the manifests come on stdin)`);
  if (values.config === undefined) throw new UsageError('--config is required');
  const { loadRenderConfig, render } = commands.render();
  const config = loadRenderConfig(values.config as string);
  process.stdout.write(render(decodeInput(readStdinBounded(), 'stdin'), config, values.config as string));
  return 0;
}

/** `policy`: the admission policy that adds the config's sidecars. */
function runPolicy(args: string[], command: string): number {
  const { values, positionals } = parse(args, { config: { type: 'string' } });
  if (values.help) return help(command);
  if (values.version) return version();
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  if (values.config === undefined) throw new UsageError('--config is required');
  const config = commands.render().loadRenderConfig(values.config as string);
  process.stdout.write(commands.policy().policy(config, values.config as string));
  return 0;
}

/** The timeline's --app-shutdown-time, --stop-time NAME=D and --legacy-sidecar NAME. */
function timelineExtras(values: Parsed['values']): TimelineExtras {
  const flagDuration = (flag: string, v: string) => {
    try {
      return commands.renderConfig().duration(v, flag);
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
  };
  const stopTimes: Record<string, Duration> = {};
  for (const s of (values['stop-time'] as string[] | undefined) ?? []) {
    const m = /^([^=]+)=(.+)$/.exec(s);
    if (!m) throw new UsageError(`--stop-time '${s}': use NAME=DURATION, e.g. log-agent=5s`);
    stopTimes[m[1]] = flagDuration(`--stop-time ${m[1]}`, m[2]);
  }
  const app = values['app-shutdown-time'] as string | undefined;
  const legacy = values['legacy-sidecar'] as string[] | undefined;
  return {
    ...(app !== undefined ? { appShutdownTime: flagDuration('--app-shutdown-time', app) } : {}),
    ...(Object.keys(stopTimes).length > 0 ? { stopTimes } : {}),
    ...(legacy !== undefined ? { legacySidecars: legacy } : {}),
  };
}

/** What the input was, for the empty-input error: stdin, the directories with no YAML file, or the files read. */
function emptyInput(args: readonly string[], files: readonly string[]): string {
  if (args.length === 1 && args[0] === STDIN) return 'stdin was empty or held only empty documents';
  const dirs = args.filter(a => a !== STDIN && isDirectory(a));
  if (files.length === 0) return `${dirs.length === 1 ? `directory ${dirs[0]} holds` : 'the directories hold'} no .yaml or .yml file`;
  return `${files.length} file(s) read, each empty or holding only empty documents`;
}

function isDirectory(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The package's version: the `version` of the package.json above this file (lib/cli/main.js in
 * the package, src/cli/main.ts in the repository).
 */
export function packageVersion(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      const pkg = JSON.parse(fs.readFileSync(file, 'utf8'));
      if (pkg.name === 'cdk8s-sidecars' && typeof pkg.version === 'string') return pkg.version;
    }
    if (path.dirname(dir) === dir) throw new CommandError(`cannot find the package.json of cdk8s-sidecars above ${__dirname}`);
  }
}

function version(): number {
  process.stdout.write(`cdk8s-sidecars ${packageVersion()}\n`);
  return 0;
}

function help(command: string): number {
  process.stdout.write(helpText(command));
  return 0;
}

/**
 * The command: runs `argv` (the arguments after the program's name), writes to stdout and
 * stderr, and returns the exit code (0, 1 for a problem found or an input error, 2 for a bad
 * command line). What the bin runs; test/cli.test.ts calls it in-process.
 */
export function main(argv: string[]): number {
  try {
    return run(argv);
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`cdk8s-sidecars: ${e.message}\n${TOP_HELP}\n`);
      return 2;
    }
    process.stderr.write(`cdk8s-sidecars: internal error: ${(e as Error).stack ?? e}\n`);
    return 1;
  }
}

if (require.main === module) {
  process.exitCode = main(process.argv.slice(2));
}
