import { Component, ReleasableCommits, cdk8s, javascript, release } from 'projen';

const project = new cdk8s.ConstructLibraryCdk8s({
  name: 'cdk8s-sidecars',
  description:
    'Log agent (Fluent Bit), Envoy proxy and OpenTelemetry tracer sidecars for cdk8s workloads, ' +
    'in the native (restartPolicy: Always) or legacy layout chosen from the target Kubernetes version. ' +
    'For cdk8s-plus-27 to cdk8s-plus-34 workloads or plain ApiObjects: needs only cdk8s and constructs.',
  author: 'cdk8s-sidecars maintainers',
  authorAddress: 'maintainers@cdk8s-sidecars.dev',
  repositoryUrl: 'https://github.com/cdk8s-sidecars/cdk8s-sidecars.git',
  keywords: [
    'cdk8s', 'kubernetes', 'sidecar', 'native-sidecar', 'fluent-bit', 'envoy', 'opentelemetry',
    // The cdk8s-plus majors whose workloads, Services, Secrets and resources the API takes (README:
    // "cdk8s-plus majors"); none of them is a dependency.
    'cdk8s-plus', 'cdk8s-plus-27', 'cdk8s-plus-28', 'cdk8s-plus-29', 'cdk8s-plus-30', 'cdk8s-plus-31',
    'cdk8s-plus-32', 'cdk8s-plus-33', 'cdk8s-plus-34',
  ],
  defaultReleaseBranch: 'main',
  packageManager: javascript.NodePackageManager.NPM,
  projenrcTs: true,
  // jsii and jsii-rosetta need Node >= 20.16.0 (their `engines`); the rest of the toolchain less.
  minNodeVersion: '20.16.0',

  // Toolchain (see SIDECARS.md §8 in the team's facts sheet)
  cdk8sVersion: '2.70.106',
  constructsVersion: '10.3.0',
  jsiiVersion: '~6.0.0',
  // Source maps in lib/*.js.map, not inline: an inline map (base64, with the sources) tripled each
  // file that every `require()` of the library reads and compiles (issue 50: the import's share).
  // Stack frames still name src/*.ts under `--enable-source-maps` or ts-node (see below).
  tsconfig: { compilerOptions: { inlineSourceMap: false, inlineSources: false, sourceMap: true } },

  // No cdk8s-plus at all at runtime (issue 20): the API takes workloads, Services, Secret
  // references and resources of any cdk8s-plus major by shape (src/resources.ts,
  // src/secret-ref.ts, src/service-port.ts), so a cdk8s-plus-34 app installs no cdk8s-plus-27, and
  // jsii-pacmak's Python/Java/Go/.NET packages do not require it either. The peer dependencies
  // are the ones projen adds: cdk8s and constructs.
  devDeps: [
    // The tests build workloads with every cdk8s-plus major; cdk8s-plus-27 at the lowest version
    // the library supports.
    'cdk8s-plus-27@2.9.5',
    '@types/node@^20',
    'ajv@^8.17.1',
    'yaml@^2.6.0',
    'fast-check@^4.0.0',
    // The Envoy config check (test/util/envoy-proto.ts): @grpc/grpc-js-xds vendors Envoy's .proto
    // files, protobufjs parses them, @bufbuild/protobuf's fromJson is the strict proto3 JSON parser.
    '@grpc/grpc-js-xds@^1.14.1',
    'protobufjs@^7.4.0',
    '@bufbuild/protobuf@^2.17.0',
    'smol-toml@^1.3.0',
    'cdk8s-cli@^2.200.0',
    // `check --output sarif` is validated against the OASIS SARIF 2.1.0 JSON schema (draft-04, with
    // `format`s) and `--output junit` against the Jenkins xUnit plugin's JUnit XSD with libxml2
    // (compiled to WebAssembly, no native build): test/cli-pipeline.test.ts.
    'ajv-draft-04@^1.0.0',
    'ajv-formats@^3.0.1',
    'xmllint-wasm@^5.0.0',
    // CEL evaluator (CommonJS build) for the NativeSidecarGuard's expressions (test/guard.test.ts)
    '@bufbuild/cel@^0.6.1',
    // The strict per-release schemas of the tests (test/util/k8s-schema.ts) are built from the
    // jsii assemblies (.jsii) of these packages: cdk8s-plus-XX types every object of Kubernetes
    // 1.XX (cdk8s-plus-27 gives 1.27). Never imported by src/; test/kplus-majors.test.ts builds
    // the same workloads with each of them.
    'cdk8s-plus-28@^2.5.6',
    'cdk8s-plus-29@^2.6.0',
    'cdk8s-plus-30@^2.4.10',
    'cdk8s-plus-31@^2.6.43',
    'cdk8s-plus-32@^2.5.92',
    'cdk8s-plus-33@^2.5.57',
    'cdk8s-plus-34@^2.0.54',
  ],

  // Snapshots must be able to fail: `test` runs `jest --ci`, `test:update` rewrites on purpose.
  jestOptions: {
    updateSnapshot: javascript.UpdateSnapshot.NEVER,
    jestConfig: {
      testMatch: ['<rootDir>/test/**/*.test.ts'],
      // projen adds `src/**/*.spec.ts` to testMatch, which matches src/engine/spec.ts (no tests:
      // jest fails the run). Tests live in test/ only.
      testPathIgnorePatterns: ['/node_modules/', '<rootDir>/src/'],
      // .compat/ holds the API baseline's package.json (same name as ours: a haste collision)
      modulePathIgnorePatterns: ['<rootDir>/.compat/'],
      coveragePathIgnorePatterns: ['/node_modules/'],
      collectCoverage: false,
      testTimeout: 120_000,
      // `npm test` prints no [cdk8s-sidecars] WARNING lines: the tests read them (issue 27);
      // Testing.app()'s output directories are removed after each file (issue 36)
      setupFilesAfterEnv: ['<rootDir>/test/util/quiet-warnings.ts', '<rootDir>/test/util/test-setup.ts'],
    },
  },

  // The other jsii languages (issue 30): jsii-pacmak builds a Python wheel, a Java (Maven) jar
  // and a Go module from the assembly; `npm run test:bindings` uses each in a real cdk8s app of
  // that language (scripts/bindings-test.sh). Names follow cdk8s' own packages.
  publishToPypi: { distName: 'cdk8s-sidecars', module: 'cdk8s_sidecars' },
  publishToMaven: {
    javaPackage: 'dev.cdk8s.sidecars',
    mavenGroupId: 'dev.cdk8s-sidecars',
    mavenArtifactId: 'cdk8s-sidecars',
    // Maven Central through the Central Portal (OSSRH's successor)
    mavenServerId: 'central-ossrh',
  },
  publishToGo: { moduleName: 'github.com/cdk8s-sidecars/cdk8s-sidecars-go' },

  // Releases (issue 40; CONTRIBUTING.md "Releases"): versions 0.x until the API is declared
  // stable (majorVersion 0: a breaking change bumps the minor, a feature or a fix the patch), from
  // conventional commits on main. The release workflow bumps, builds every artifact (npm, PyPI,
  // Maven, Go), publishes each and a GitHub release with the notes of the commits, then prepends
  // those notes to CHANGELOG.md with projen's own changelog step (`release:changelog`, below).
  // Only feat and fix commits (and breaking ones) make a release: the changelog commit does not.
  github: true,
  release: true,
  majorVersion: 0,
  releaseTrigger: release.ReleaseTrigger.continuous(),
  releasableCommits: ReleasableCommits.featuresAndFixes(),
  // the first release (no tag yet) is 0.1.0, not 0.0.0; after it, the commits decide
  nextVersionCommand: 'test -n "$LATEST_TAG" || echo 0.1.0',
  workflowNodeVersion: '22.x',
  // The tests read manifests with the API server's YAML reader (Go and Debian's sources of
  // sigs.k8s.io/yaml) and run hooks under busybox; under CI=true they fail without them (.ci/run
  // installs the same). The GitHub runner has Go, python3 and procps.
  workflowBootstrapSteps: [{
    name: 'Debian packages of the tests (CONTRIBUTING.md)',
    run: 'sudo apt-get update -qq && sudo apt-get install -y -qq --no-install-recommends golang-k8s-sigs-yaml-dev busybox',
  }],
  // Dependency upgrades stay a person's decision (the pins above are deliberate): no upgrade workflow.
  depsUpgrade: false,
  pullRequestTemplate: false,
  githubOptions: { mergify: false },
  gitignore: ['/examples/dist/', '/.bench/', '/.consumer-test/'],
});

// One line for the tests skipped for a missing program, not a stack-framed warning per file (issue 36).
project.jest?.addReporter(new javascript.JestReporter('<rootDir>/test/util/skip-summary-reporter.js'));

// The `cdk8s-sidecars` command (issue 29, docs/cli.md): check, target, timeline, render. Not part of
// the jsii API (src/cli/ is not exported from src/index.ts); the package's `bin`.
project.addBins({ 'cdk8s-sidecars': 'lib/cli/main.js' });

// After jsii: the public modules a plain synthesis does not use load on first use (issue 50:
// the import's share; scripts/lazy-index.js, test/lazy-index.test.ts).
project.compileTask.exec('node scripts/lazy-index.js');

// The test task: the jsii assembly first (test/render-config.test.ts and test/no-raw-errors.test.ts read
// the constructs' props from .jsii, which a fresh clone does not have; scripts/prepack.js's rule skips
// the compile when lib/ and .jsii are newer than src/), then jest (snapshots can fail), eslint, then
// the example app must compile.
project.testTask.reset();
project.testTask.spawn(project.compileTask, { condition: 'node scripts/prepack.js' });
project.testTask.exec('jest --ci', { receiveArgs: true });
// `npm test` (and CI) must never rewrite files: it lints with the `eslint` task's patterns and
// settings but without `--fix` (`npm run eslint` still fixes, for the developer).
// (Its command is copied at synthesis, once every lint pattern is in, the projenrc files' too.)
const eslintTask = project.tasks.tryFind('eslint')!;
const eslintCheck = project.addTask('eslint:check', {
  description: 'Runs eslint without --fix (what `npm test` runs: a check never rewrites files)',
  env: eslintTask.envVars,
});
project.testTask.spawn(eslintCheck);
new (class extends Component {
  public preSynthesize(): void {
    eslintCheck.reset();
    eslintCheck.execArgs((eslintTask.steps[0].execArgs ?? []).filter(a => a !== '--fix' && a !== '$@'));
  }
})(project);
project.testTask.exec('tsc --project examples/tsconfig.json');
// jest transpiles the tests without checking their types (ts-jest, isolatedModules): the type-check of
// test/ is its own step, so that a type error in a test (an import that is not used, an option of the
// wrong shape the test then silently does not use) fails `npm test`. test/tsconfig.types.json is the
// jest tsconfig without isolatedModules, with `cdk8s-sidecars` (the bindings' TypeScript twins) mapped
// to src/; bench/apps.ts, which the benchmark tests import, reads lib/, hence the compile first.
const testTypes = project.addTask('test:types', {
  description: 'Type-checks test/ (tsc --noEmit): jest only transpiles it',
});
testTypes.spawn(project.compileTask, { condition: 'node scripts/prepack.js' });
testTypes.exec('tsc --noEmit --project test/tsconfig.types.json');
project.testTask.spawn(testTypes);
// Every TypeScript snippet of README.md, CONTRIBUTING.md, docs/*.md and the TSDoc @examples (what
// API.md shows) type-checks against the library (scripts/check-snippets.ts; fragments that are
// not meant to compile say so with ```ts nocompile). A snippet that does not compile fails the build.
const snippets = project.addTask('test:snippets', {
  description: 'Type-checks every TypeScript snippet of the README, docs/ and the TSDoc examples against the library',
  exec: 'ts-node --transpile-only --project projenrc/tsconfig.json scripts/check-snippets.ts',
});
project.testTask.spawn(snippets);
// The README's default-image table is written from the agents' registry (scripts/readme-images.ts);
// test/images.test.ts fails when it differs.
project.addTask('docs:images', {
  description: "Writes the README's default-image table from the registry of the agents (Images._all)",
  exec: 'ts-node --transpile-only --project projenrc/tsconfig.json scripts/readme-images.ts',
});
// Rewriting snapshots is a separate, deliberate command (it also writes new ones).
project.tasks.tryFind('test:update')?.reset('jest -u --ci=false', { receiveArgs: true });
project.eslint?.addLintPattern('examples');

// The layers of src/ (CONTRIBUTING.md, "Where things go"), lowest first: private/ (pure helpers),
// target/, facts/, engine/, bind/ (the one place that touches cdk8s objects), agents/ (one folder per
// agent and the registry), the public constructs at src/'s top level, cli/. A file imports only from
// its own layer and the ones below it; private/ to engine/ never import cdk8s or constructs, nor does
// agents/ but for each agent's public face (`agent.ts`: its options, which take cdk8s Durations) and
// the registry. test/layers.test.ts proves the rule fires.
const LAYERS = ['private', 'target', 'facts', 'engine', 'bind', 'agents'];
const PUBLIC_FACES = ['src/agents/*/agent.ts', 'src/agents/registry.ts'];
project.eslint?.addRules({
  'import/no-restricted-paths': ['error', {
    zones: [
      ...LAYERS.map((layer, i) => ({
        target: `./src/${layer}`,
        from: './src',
        except: LAYERS.slice(0, i + 1).map(l => `./${l}`),
        message: `src/${layer}/ imports only from ${LAYERS.slice(0, i + 1).map(l => `src/${l}/`).join(', ')} (the layers at or below it)`,
      })),
      {
        target: './src/*.ts',
        from: './src/cli',
        message: 'the public constructs never import the CLI (src/cli/ is the top layer)',
      },
    ],
  }],
});
// Rules over all of src/ that were tests over its text, so that a refactor changes code, not a test
// (test/typed-errors.test.ts and test/one-of-each.test.ts prove they fire):
// - bad input is refused with a SidecarError (`where.error(problem, value, fix)`) and a broken
//   invariant of the library with `internalError(...)` (src/private/errors.ts holds the one plain
//   Error: its own override below); a check names its place with a Where;
// - the environment is read in src/target/resolver.ts only, where the target is assembled; the
//   other uses (the CLI passes it on to kubectl and reads KUBECTL, the reader swaps it around the
//   yaml parser) carry an eslint-disable comment with their reason.
const PLAIN_ERROR_SYNTAX = ['NewExpression', 'CallExpression'].map(call => ({
  selector: `${call}[callee.name='Error']`,
  message: 'src/ throws a SidecarError for bad input (`where.error(problem, value, fix)`, src/private/errors.ts) and internalError(...) for a bug of the library, never a plain Error',
}));
// import('cdk8s') and require('constructs/...') below src/bind/, which no-restricted-imports does not see
const DYNAMIC_IMPORT_SYNTAX = ['ImportExpression[source.value', "CallExpression[callee.name='require'][arguments.0.value"].map(at => ({
  selector: `${at}=/^(cdk8s|constructs)($|[^-a-z0-9])/]`,
  message: 'no dynamic import or require of cdk8s or constructs below src/bind/: cdk8s objects are touched only in src/bind/ and the constructs',
}));
const SRC_SYNTAX = [
  ...PLAIN_ERROR_SYNTAX,
  ...["Identifier[name='who']", "TSPropertySignature[key.name='who']", "PropertyDefinition[key.name='who']"].map(at => ({
    selector: `${at} > TSTypeAnnotation > TSStringKeyword`,
    message: 'a check names its place with a Where (src/private/errors.ts), not a `who: string`',
  })),
];
project.eslint?.addOverride({
  files: ['src/**/*.ts'],
  rules: {
    'no-restricted-syntax': ['error', ...SRC_SYNTAX],
    // a function a reader takes in at once: longer ones are split by the steps a reader would name
    'max-lines-per-function': ['error', { max: 80 }],
    'no-restricted-properties': ['error', {
      object: 'process',
      property: 'env',
      message: 'the environment is read in src/target/resolver.ts only (targetOptions / the target\'s assembly): take it from there, or pass it in',
    }],
  },
});
project.eslint?.addOverride({ files: ['src/target/resolver.ts'], rules: { 'no-restricted-properties': 'off' } });
project.eslint?.addOverride({
  files: LAYERS.filter(l => l !== 'bind').map(l => `src/${l}/**/*.ts`),
  excludedFiles: PUBLIC_FACES,
  rules: {
    'no-restricted-imports': ['error', {
      paths: ['cdk8s', 'constructs'].map(name => ({
        name,
        message: 'src/private/, target/, facts/, engine/ and agents/ (but its agent.ts faces and registry) are plain TypeScript over plain JSON: cdk8s objects are touched only in src/bind/ and the constructs',
      })),
      patterns: [
        { group: ['cdk8s-plus-*'], message: 'no cdk8s-plus below src/bind/' },
        { group: ['cdk8s/*', 'constructs/*'], message: 'no cdk8s or constructs module below src/bind/: cdk8s objects are touched only in src/bind/ and the constructs' },
      ],
    }],
    // the dynamic imports, with the rules of all of src/ (an override's rule replaces the one before it)
    'no-restricted-syntax': ['error', ...SRC_SYNTAX, ...DYNAMIC_IMPORT_SYNTAX],
  },
});
// internalError() itself: the one plain Error of src/ (the other rules of the file kept)
project.eslint?.addOverride({
  files: ['src/private/errors.ts'],
  rules: { 'no-restricted-syntax': ['error', ...SRC_SYNTAX.filter(r => !PLAIN_ERROR_SYNTAX.includes(r)), ...DYNAMIC_IMPORT_SYNTAX] },
});
// The example app is a user's app, built on cdk8s-plus-27 (a devDependency of the library, not a peer).
project.eslint?.allowDevDeps('examples/**');

// The consumer test: the `npm pack` tarball, installed with the README's command into a fresh
// strict cdk8s TypeScript app, type-checks and synthesizes (needs the npm registry).
const consumerTest = project.addTask('test:consumer', {
  description: 'Packs the library, installs the tarball into a fresh cdk8s TypeScript app (strict), type-checks and synthesizes it',
  exec: 'bash scripts/consumer-test.sh',
});
project.testTask.spawn(consumerTest);

// The API compatibility check (issue 40): jsii-diff compares the public API as compiled now (.jsii,
// which the consumer test above has just compiled) with the committed assembly of the last release,
// .compat/.jsii, and fails `npm test` on a breaking change to a stable API (a removed prop, a
// narrowed type, ...). A deliberate break is a `feat!:` commit that refreshes the baseline
// (`npm run compat:baseline`); the baseline is refreshed at each release (CONTRIBUTING.md, "Releases").
const compat = project.tasks.tryFind('compat')!;
compat.reset('jsii-diff .compat . --keys --error-on prod', { name: 'compat' });
compat.description = 'Fails on a breaking change of the public API against the last release (.compat/.jsii, jsii-diff)';
project.testTask.spawn(compat);
project.gitignore.include('/.compat/.jsii');
const compatBaseline = project.addTask('compat:baseline', {
  description: 'Compiles, then records the public API as it is now in .compat/ (the baseline of `compat`): at each release',
});
compatBaseline.spawn(project.compileTask);
compatBaseline.exec('node scripts/compat-baseline.js');

// A package that cannot be packed wrong (issue 40): `npm pack` and `npm publish` run `prepack`,
// which compiles first when lib/ or .jsii is missing or older than src/ (scripts/prepack.js decides;
// a fresh clone packed before any compile installed a package without lib/index.js).
const prepack = project.addTask('prepack', {
  description: 'Compiles before npm pack / npm publish when lib/ or .jsii is missing or older than src/ (scripts/prepack.js)',
});
prepack.spawn(project.compileTask, { condition: 'node scripts/prepack.js' });

// The project-level changelog (issue 40): the release task writes the notes of the release from the
// conventional commits since the last one (dist/changelog.md, projen's bump); after the packages are
// published, the release workflow's GitHub job prepends them to CHANGELOG.md with projen's own step
// (release/update-changelog: it commits `chore(release): <version>`, which makes no release) and
// pushes that commit to main.
const releaseChangelog = project.addTask('release:changelog', {
  description: 'Prepends the notes of the release (dist/changelog.md) to CHANGELOG.md and commits it (projen release/update-changelog)',
  env: { CHANGELOG: 'dist/changelog.md', VERSION_FILE: 'dist/version.txt', PROJECT_CHANGELOG_FILE: 'CHANGELOG.md' },
});
releaseChangelog.builtin('release/update-changelog');
project.release!.publisher.addGitHubPostPublishingSteps(
  {
    name: 'Check out main for the changelog',
    uses: 'actions/checkout@v5',
    with: { 'ref': 'main', 'path': '.repo', 'fetch-depth': 0 },
  },
  {
    name: 'Prepend the release notes to CHANGELOG.md, record the API baseline, push',
    if: '${{ !inputs.dry_run }}',
    run: [
      'mkdir -p .repo/dist && cp dist/changelog.md dist/version.txt .repo/dist/',
      'cd .repo',
      'git config user.name "github-actions[bot]"',
      'git config user.email "41898282+github-actions[bot]@users.noreply.github.com"',
      'npm ci --ignore-scripts',
      'npx projen release:changelog',
      // the API of this release becomes the baseline of the compatibility check
      'npx projen compat:baseline',
      'git add .compat',
      'git diff --cached --quiet || git commit -m "chore(release): API baseline of $(cat dist/version.txt)"',
      'git push origin HEAD:main',
    ].join('\n'),
  },
);

// The property tests' full runs (issue 36): `npm test` runs a third of each property's runs
// (test/property.test.ts runsOf); this runs all of them, about 1000 cases; `.ci/run` runs it after `npm test`.
project.addTask('test:property', {
  description: 'Runs the property tests with their full number of runs (npm test runs a third of them)',
  env: { FC_FULL: '1' },
  exec: 'jest --ci test/property.test.ts',
  receiveArgs: true,
});

// The real OpenTelemetry Collector (issue 30): scripts/build-otelcol.sh builds otelcol of the
// pinned release with the Collector Builder (cached in ~/.cache/cdk8s-sidecars/otelcol), then
// test/collector/otelcol.real-test.ts validates every WithTracer config with it and runs it against an
// OTLP sink on loopback; then the log agent's collector (`build-otelcol.sh logs`) runs
// test/agents/otel-collector.agent-test.ts. Needs Go and the Go module proxy; `.ci/run` runs it after `npm test`.
project.addTask('test:collector', {
  description: 'Builds the real otelcol (Collector Builder, pinned release, cached) and runs every WithTracer config and LogAgent.otelCollector() through it',
  exec: 'bash scripts/collector-test.sh',
});

// The other jsii languages (issue 30): jsii-pacmak's Python wheel, Java jar and Go module, each
// used by a cdk8s app of that language for 1.27 and 1.29 and compared byte for byte with the same
// app in TypeScript (scripts/bindings-test.sh, test/bindings/; docs/bindings.md).
project.addTask('test:bindings', {
  description: 'Builds the Python, Java and Go bindings with jsii-pacmak and runs a cdk8s app in each language against them (same bytes as TypeScript)',
  exec: 'bash scripts/bindings-test.sh',
});
// The synthesis tests against the oldest cdk8s of the peer range and the newest the npm registry
// serves (scripts/cdk8s-versions-test.sh: each installed under node_modules/.cache, put in place with
// jest's moduleNameMapper): the binding uses documented cdk8s API only. Needs the registry.
project.addTask('test:cdk8s-versions', {
  description: 'Runs the synthesis tests against the oldest cdk8s of the peer range and the newest on the npm registry',
  exec: 'bash scripts/cdk8s-versions-test.sh',
});
// The Kubernetes API types of every release (issue 30): test/k8s-api/decode.real-test.ts decodes what
// the tests synthesize with k8s.io/api of each release, strictly (scripts/build-k8s-decoders.sh).
project.addTask('test:k8s-api', {
  description: 'Builds the strict k8s.io/api decoder of every release (1.27 to the newest) and decodes the example app, the snapshots and a sample of the property generator',
  exec: 'bash scripts/k8s-api-test.sh',
});

// The real agents (issue 25): every config variant the library emits, run by the agent's own
// binary against a sink on loopback (test/agents/*.agent-test.ts, one module per agent). Not part
// of `test`: it needs the binaries (FLUENT_BIT=/path/to/fluent-bit, built by
// scripts/build-fluent-bit.sh) and says "skipped: ..." without them.
project.addTask('test:agents', {
  description: 'Runs the real log agents (FLUENT_BIT=/path/to/fluent-bit, ...) on every config variant: dry-run, a loopback sink, shutdown, outage and restart',
  exec: "jest --ci --runInBand --testMatch '<rootDir>/test/agents/**/*.agent-test.ts' --testTimeout 900000",
  receiveArgs: true,
});

// The real Helm 3 and Helm 4 (issue 46): scripts/build-helm.sh builds helm of the pinned releases
// from the Go module proxy (cached in ~/.cache/cdk8s-sidecars/helm/<version>/helm); `test:helm`
// runs `helm template` on examples/chart with the post-renderer through both (Helm 3 by path, Helm
// 4 through the plugin of helm-plugins/cdk8s-sidecars, installed into temporary Helm homes) and
// compares with `helm template | cdk8s-sidecars render` (test/helm/*.helm-test.ts). Without the
// binaries it skips with one line; under CI=true it fails only with CDK8S_SIDECARS_HELM_REQUIRED=1.
project.addTask('helm:build', {
  description: 'Builds helm v3 and v4 of the pinned releases from the Go module proxy into ~/.cache/cdk8s-sidecars/helm (niced; cached)',
  exec: 'bash scripts/build-helm.sh all',
});
const helmTest = project.addTask('test:helm', {
  description: 'Runs examples/chart through the real Helm 3 (--post-renderer PATH) and Helm 4 (the postrenderer/v1 plugin) and compares with `helm template | cdk8s-sidecars render`',
});
helmTest.spawn(project.compileTask, { condition: 'node scripts/prepack.js' });
helmTest.exec("jest --ci --runInBand --testMatch '<rootDir>/test/helm/**/*.helm-test.ts' --testTimeout 300000", { receiveArgs: true });

// The Helm 4 plugin's version is the package's: written after each bump and unbump of a release
// (scripts/helm-plugin-version.js; test/helm-plugin.test.ts checks that they agree).
for (const name of ['bump', 'unbump']) {
  project.tasks.tryFind(name)?.exec('node scripts/helm-plugin-version.js');
}

// The example app, synthesized by the real cdk8s CLI once per cluster.
const clusters: Array<[string, string]> = [['cluster-1.27', '1.27'], ['cluster-1.29', '1.29']];
const synthExample = project.addTask('synth:example', {
  description: 'Synthesizes examples/ with the cdk8s CLI for a 1.27 (legacy) and a 1.29 (native) cluster into examples/dist/<cluster>/',
  cwd: 'examples',
});
synthExample.exec('rm -rf dist');
for (const [dir, version] of clusters) {
  synthExample.exec(`cdk8s synth --check-upgrade false --output dist/${dir}`, { env: { CDK8S_SIDECARS_KUBERNETES_VERSION: version } });
}

// The synthesis benchmark (issue 8): the library against the same sidecars written by hand with
// cdk8s-plus-27, on the compiled library (lib/, what consumers load). Not part of `test`. It
// writes its figures and verdicts into bench/README.md (issue 17: never typed in by hand).
// A real one-node Kubernetes per release (issue 34): test/cluster/*.cluster-test.ts start a cluster
// of every release built by scripts/cluster/build-kubernetes.sh (cached in ~/.cache/cdk8s-sidecars),
// run the library's synthesized manifests on it unmodified and write docs/proof.md. Needs root (network,
// PID and mount namespaces, cgroups). Not part of `npm test` (docs/proof.md, CONTRIBUTING.md).
const clusterTest = project.addTask('test:cluster', {
  description: 'Runs the library\'s manifests on a real one-node cluster of every built release (scripts/cluster/), measures shutdown and admission, writes docs/proof.md',
});
clusterTest.spawn(project.tasks.tryFind('synth:example')!);
clusterTest.exec("jest --ci --runInBand --testMatch '<rootDir>/test/cluster/**/*.cluster-test.ts' --testTimeout 1800000", { receiveArgs: true });

// The pipeline linters (issue 46): kubeconform -strict and kube-score, built from the Go module proxy
// at pinned versions (scripts/build-linters.sh, cached in ~/.cache/cdk8s-sidecars/linters), run over
// the example app and a library-only app (test/linters/*.linter-test.ts, which the test task's
// testMatch does not take); docs/security.md "What the linters say". `.ci/run` runs it after `npm test`.
const lintersTest = project.addTask('test:linters', {
  description: 'Builds kubeconform and kube-score (pinned, cached) and runs them over the example app and each construct alone: 0 kubeconform errors, only the documented kube-score findings',
});
lintersTest.spawn(synthExample);
lintersTest.exec('bash scripts/build-linters.sh');
lintersTest.exec("jest --ci --testMatch '<rootDir>/test/linters/**/*.linter-test.ts'", { receiveArgs: true });

const bench = project.addTask('bench', {
  description: 'Benchmarks synthesis (100/500/1000/2000 Deployments with all three sidecars and a Service, also with an HPA, both layouts), import time and `cdk8s-sidecars check` against hand-written cdk8s-plus-27; writes figures and verdicts into bench/README.md',
});
bench.spawn(project.compileTask);
bench.exec('tsc --project bench/tsconfig.json');
bench.exec('node --expose-gc .bench/bench.js', { receiveArgs: true });

// What the package ships besides lib/ and .jsii (issue 27, point 8; the consumer test checks the
// file list, the stack frames and the links):
// - src/: jsii compiles with source maps (lib/*.js.map, tsconfig.json: sourceMap) that name src/*.ts, so
//   under `node --enable-source-maps` or ts-node (what `cdk8s synth` runs) an error's frames name
//   node_modules/cdk8s-sidecars/src/*.ts. Shipped, those frames open the very file and line
//   (test/package-files.test.ts).
// - helm-plugins/cdk8s-sidecars/: the Helm 4 postrenderer/v1 plugin (plugin.yaml and render.js, which
//   runs lib/cli/main.js), installed with `helm plugin install` from node_modules (docs/cli.md).
// - docs/: the README links docs/*.md relatively; npmjs.com resolves such links against the
//   `repository` field (github.com/.../blob/HEAD/docs/...), the installed package only if they ship.
//   The README's links to development files (CONTRIBUTING.md, test/, bench/) are absolute links
//   into the repository, which stays the home of examples/, bench/, scripts/ and CONTRIBUTING.md.
project.npmignore?.removePatterns('/src/');
// .compat/ (the API baseline) and CHANGELOG.md (the release notes are the GitHub release's) stay in the repository.
for (const pattern of ['/examples/', '/bench/', '/.bench/', '/.ci/', '/scripts/', '/.consumer-test/', '/CONTRIBUTING.md', '/.compat/', '/CHANGELOG.md']) {
  project.addPackageIgnore(pattern);
}

// npm 11.16+ warns about (npm 12 skips) dependency install scripts that package.json `allowScripts`
// does not cover, on every install. None of these is needed (the tests pass
// without them): record the denial so `npm ci` is quiet. @parcel/watcher (jest-haste-map, optional)
// would build a native file watcher from source when no prebuilt one fits, backport (an optional
// dependency of cdk8s-plus-XX) runs its own post-install step, protobufjs checks the version
// scheme of its dependents.
project.package.addField('allowScripts', { '@parcel/watcher': false, 'backport': false, 'protobufjs': false });

// jsii prints a large end-of-life banner on Node 20 (EOL 2026-04-30) on every run (the
// consumer test runs jsii, jsii-docgen and jsii-pacmak). Node 20 still builds and tests the
// project (README: Quick start); the banner stays for any other unsupported version.
project.tasks.addEnvironment('JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION', '20');

project.synth();
