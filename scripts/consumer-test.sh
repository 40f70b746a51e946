#!/usr/bin/env bash
# Consumer test: installs the package as users get it (the jsii-pacmak JS tarball a release
# publishes, with the README's install command) into a fresh cdk8s TypeScript app (strict, the `cdk8s init typescript-app` tsconfig),
# type-checks and runs it. A broken `main`/`types`, a missing file, a runtime dependency that is
# only a devDependency, or a file that should not ship makes it fail.
#
#   bash scripts/consumer-test.sh        (run by `npm test` as the `test:consumer` task)
#
# Needs the npm registry (it installs cdk8s, cdk8s-plus-27, constructs, typescript, @types/node).
# KEEP_CONSUMER_TEST=1 keeps the temporary directory.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
WORK=$(mktemp -d "${TMPDIR:-/tmp}/cdk8s-sidecars-consumer.XXXXXX")
cleanup() {
  local status=$?
  if [ "$status" -ne 0 ] || [ -n "${KEEP_CONSUMER_TEST:-}" ]; then
    echo "consumer test: work directory kept: $WORK" >&2
  else
    rm -rf "$WORK"
  fi
}
trap cleanup EXIT
step() { echo "consumer test [${SECONDS}s]: $*"; }

# 1. Build what ships, from the current sources (a stale lib/ would test old code):
#    lib/ and .jsii (jsii), API.md (jsii-docgen), as `projen build` does.
step "compiling with jsii, generating API.md"
npx jsii --silence-warnings=reserved-word
npx jsii-docgen -o API.md

# 2. The tarball holds only what a consumer needs.
step "checking the file list of npm pack"
npm pack --dry-run --json --ignore-scripts > "$WORK/pack.json"
node - "$WORK/pack.json" <<'EOF'
const pack = JSON.parse(require('fs').readFileSync(process.argv[2], 'utf8'))[0];
const files = pack.files.map((f) => f.path).sort();
const allowed = /^(package\.json|README\.md|LICENSE|API\.md|\.jsii|lib\/.+\.(js|d\.ts))$/;
const required = ['package.json', 'README.md', 'LICENSE', 'API.md', '.jsii', 'lib/index.js', 'lib/index.d.ts'];
const unexpected = files.filter((f) => !allowed.test(f));
const missing = required.filter((f) => !files.includes(f));
const pkg = require(require('path').resolve('package.json'));
const entry = [pkg.main, pkg.types].filter((f) => !files.includes(f));
if (unexpected.length || missing.length || entry.length) {
  console.error(`npm pack: unexpected files: ${JSON.stringify(unexpected)}; missing: ${JSON.stringify(missing)}; ` +
    `main/types not in the tarball: ${JSON.stringify(entry)}. Adjust the npmignore in .projenrc.ts.`);
  process.exit(1);
}
console.log(`  ${pack.filename}: ${files.length} files, ${pack.size} bytes`);
EOF

# The tarball a release publishes: jsii-pacmak's JS target (what `projen package:js` builds into
# dist/js/). It must hold exactly the files checked above.
step "packaging the JS target with jsii-pacmak"
npx jsii-pacmak --target js --outdir "$WORK/dist" > "$WORK/pacmak.log" 2>&1 || { cat "$WORK/pacmak.log" >&2; exit 1; }
TARBALL=$(ls "$WORK"/dist/js/*.tgz)
node - "$WORK/pack.json" "$TARBALL" <<'EOF2'
const { execFileSync } = require('child_process');
const [packJson, tarball] = process.argv.slice(2);
const expected = JSON.parse(require('fs').readFileSync(packJson, 'utf8'))[0].files.map((f) => f.path).sort();
const actual = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).split('\n').filter(Boolean)
  .map((f) => f.replace(/^package\//, '')).sort();
if (JSON.stringify(actual) !== JSON.stringify(expected)) {
  console.error(`jsii-pacmak tarball ${tarball} differs from npm pack: ${JSON.stringify(actual)}`);
  process.exit(1);
}
EOF2

# 3. A fresh cdk8s TypeScript app, as `cdk8s init typescript-app` makes it (strict tsconfig,
#    TypeScript 5.9), that installs the package with the README's command.
step "creating a cdk8s app in $WORK/app"
APP="$WORK/app"
mkdir -p "$APP"
cp "$ROOT/node_modules/cdk8s-cli/templates/typescript-app/tsconfig.json" "$APP/tsconfig.json"
cat > "$APP/package.json" <<'EOF'
{
  "name": "consumer-app",
  "version": "1.0.0",
  "private": true,
  "license": "Apache-2.0",
  "devDependencies": {
    "@types/node": "^20",
    "typescript": "5.9.x"
  }
}
EOF
cat > "$APP/cdk8s.yaml" <<'EOF'
language: typescript
app: node main.js
EOF
cat > "$APP/main.ts" <<'EOF'
import { App, Chart } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { LogOutput, SidecarLayout, WithEnvoy, WithLogAgent, WithTracer } from 'cdk8s-sidecars';

const app = new App({ outdir: 'dist' });
const chart = new Chart(app, 'consumer');
const web = new kplus.Deployment(chart, 'web', {
  metadata: { name: 'web' },
  containers: [{ name: 'web', image: 'ghcr.io/example/web:1.0.0', args: ['--listen=127.0.0.1:8080'] }],
});
const logs: WithLogAgent = new WithLogAgent(chart, 'logs', { workload: web, output: LogOutput.stdout() });
new WithTracer(chart, 'tracer', { workload: web, exporterEndpoint: 'otel-collector.observability:4317', exporterTls: false });
new WithEnvoy(chart, 'envoy', { workload: web, appPort: 8080 });
const layout: SidecarLayout = logs.layout;
console.log(`layout=${layout} target=${logs.targetVersion}`);
app.synth();
EOF

step "installing the tarball and its peers (npm install cdk8s-sidecars cdk8s cdk8s-plus-27 constructs)"
# --omit=optional: cdk8s-plus-27's optional `backport` dependency is not needed to synthesize.
(cd "$APP" && npm install --no-audit --no-fund --omit=optional --loglevel=error \
  "$TARBALL" cdk8s cdk8s-plus-27 constructs)

# 4. Type-check (strict, every .d.ts included: no skipLibCheck) and run it, per cluster.
step "type-checking (strict; CommonJS as generated by cdk8s init, then node16 resolution)"
(cd "$APP" && npx tsc && npx tsc --noEmit --module node16 --moduleResolution node16)

step "synthesizing for a 1.27 and a 1.29 cluster"
check_output() { # <version> <expected layout>
  (cd "$APP" && rm -rf dist && CDK8S_SIDECARS_KUBERNETES_VERSION="$1" node main.js | tee "$WORK/out-$1.txt")
  grep -qx "layout=$2 target=$1" "$WORK/out-$1.txt"
  (cd "$APP" && node - "$2" <<'EOF'
const { Yaml } = require('cdk8s');
const expected = process.argv[2];
const objects = Yaml.load('dist/consumer.k8s.yaml');
const d = objects.find((o) => o.kind === 'Deployment');
const spec = d.spec.template.spec;
const names = (cs) => (cs ?? []).map((c) => c.name);
const sidecars = ['log-agent', 'tracer', 'envoy'];
const fail = (msg) => { console.error(`consumer output (${expected}): ${msg}\n${JSON.stringify(spec, null, 2)}`); process.exit(1); };
if (expected === 'NATIVE') {
  const init = (spec.initContainers ?? []).filter((c) => sidecars.includes(c.name));
  if (init.length !== 3 || init.some((c) => c.restartPolicy !== 'Always')) fail('expected 3 native sidecars (initContainers with restartPolicy Always)');
  if (JSON.stringify(names(spec.containers)) !== '["web"]') fail('expected containers: [web]');
} else {
  if (!sidecars.every((s) => names(spec.containers).includes(s))) fail('expected the sidecars in containers');
  if ([...spec.containers, ...(spec.initContainers ?? [])].some((c) => 'restartPolicy' in c)) fail('no container may have restartPolicy');
}
console.log(`  ${objects.length} objects; Deployment initContainers ${JSON.stringify(names(spec.initContainers))}, containers ${JSON.stringify(names(spec.containers))}`);
EOF
  )
}
check_output 1.27 LEGACY
check_output 1.29 NATIVE

# 5. ES module consumers get the named exports too.
step "importing from an ES module"
(cd "$APP" && node --input-type=module -e "
import { WithLogAgent, WithEnvoy, WithTracer, Sidecars } from 'cdk8s-sidecars';
for (const x of [WithLogAgent, WithEnvoy, WithTracer, Sidecars]) if (typeof x !== 'function') throw new Error('missing export');
")

step "passed"
