import { cdk8s, javascript } from 'projen';

const project = new cdk8s.ConstructLibraryCdk8s({
  name: 'cdk8s-sidecars',
  description:
    'Log agent (Fluent Bit), Envoy proxy and OpenTelemetry tracer sidecars for cdk8s workloads, ' +
    'in the native (restartPolicy: Always) or legacy layout chosen from the target Kubernetes version.',
  author: 'cdk8s-sidecars maintainers',
  authorAddress: 'maintainers@cdk8s-sidecars.dev',
  repositoryUrl: 'https://github.com/cdk8s-sidecars/cdk8s-sidecars.git',
  keywords: ['cdk8s', 'kubernetes', 'sidecar', 'native-sidecar', 'fluent-bit', 'envoy', 'opentelemetry'],
  defaultReleaseBranch: 'main',
  packageManager: javascript.NodePackageManager.NPM,
  projenrcTs: true,

  // Toolchain (see ../shared/SIDECARS.md §8)
  cdk8sVersion: '2.70.106',
  constructsVersion: '10.3.0',
  jsiiVersion: '~6.0.0',

  peerDeps: ['cdk8s-plus-27@^2.9.5'],
  devDeps: [
    '@types/node@^20',
    'ajv@^8.17.1',
    'yaml@^2.6.0',
    'fast-check@^4.0.0',
    '@grpc/grpc-js-xds@^1.14.1',
    'protobufjs@^7.4.0',
    'smol-toml@^1.3.0',
    'cdk8s-cli@^2.200.0',
  ],

  // Snapshots must be able to fail: `test` runs `jest --ci`, `test:update` rewrites on purpose.
  jestOptions: {
    updateSnapshot: javascript.UpdateSnapshot.NEVER,
    jestConfig: {
      testMatch: ['<rootDir>/test/**/*.test.ts'],
      // projen adds `src/**/*.spec.ts` to testMatch, which matches src/engine/spec.ts (no tests:
      // jest fails the run). Tests live in test/ only.
      testPathIgnorePatterns: ['/node_modules/', '<rootDir>/src/'],
      coveragePathIgnorePatterns: ['/node_modules/'],
      collectCoverage: false,
      testTimeout: 120_000,
    },
  },

  github: false,
  release: false,
  gitignore: ['/examples/dist/', '/.bench/', '/.consumer-test/'],
});

// The test task: jest (snapshots can fail), eslint, then the example app must compile.
project.testTask.reset('jest --ci', { receiveArgs: true });
project.testTask.spawn(project.tasks.tryFind('eslint')!);
project.testTask.exec('tsc --project examples/tsconfig.json');
// Rewriting snapshots is a separate, deliberate command (it also writes new ones).
project.tasks.tryFind('test:update')?.reset('jest -u --ci=false', { receiveArgs: true });
project.eslint?.addLintPattern('examples');

// The consumer test: the `npm pack` tarball, installed with the README's command into a fresh
// strict cdk8s TypeScript app, type-checks and synthesizes (needs the npm registry).
const consumerTest = project.addTask('test:consumer', {
  description: 'Packs the library, installs the tarball into a fresh cdk8s TypeScript app (strict), type-checks and synthesizes it',
  exec: 'bash scripts/consumer-test.sh',
});
project.testTask.spawn(consumerTest);

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
const bench = project.addTask('bench', {
  description: 'Benchmarks synthesis (100/500/2000 Deployments with all three sidecars, both layouts) and import time against hand-written cdk8s-plus-27; writes figures and verdicts into bench/README.md',
});
bench.spawn(project.compileTask);
bench.exec('tsc --project bench/tsconfig.json');
bench.exec('node --expose-gc .bench/bench.js', { receiveArgs: true });

for (const pattern of ['/examples/', '/bench/', '/.bench/', '/.ci/', '/scripts/', '/.consumer-test/']) {
  project.addPackageIgnore(pattern);
}

project.synth();
