#!/usr/bin/env bash
# Consumer test: installs the package as users get it (the jsii-pacmak JS tarball a release
# publishes, with the README's install command) into a fresh cdk8s TypeScript app (strict, the `cdk8s init typescript-app` tsconfig),
# type-checks and runs it. A broken `main`/`types`, a missing file, a runtime dependency that is
# only a devDependency, or a file that should not ship makes it fail.
#
#   bash scripts/consumer-test.sh        (run by `npm test` as the `test:consumer` task)
#
# Needs the npm registry (it installs cdk8s, cdk8s-plus-27, cdk8s-plus-34, constructs, typescript,
# @types/node; npm's cache serves what it has).
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

# No cdk8s-plus at runtime nor in the types (issue 20): no require/import of it in lib/ (a
# type-only import would still be in a .d.ts), and the jsii assembly (which jsii-pacmak turns into
# the Python/Java/Go/.NET dependencies) names only cdk8s and constructs.
step "checking that lib/ and .jsii do not depend on cdk8s-plus"
node - <<'EOF'
const fs = require('fs');
const path = require('path');
const walk = (d) => fs.readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(d, e.name)) : [path.join(d, e.name)]));
const uses = walk('lib').filter((f) => /\.(js|d\.ts)$/.test(f))
  .filter((f) => /(require\(|from |import\()\s*['"]cdk8s-plus-\d+/.test(fs.readFileSync(f, 'utf8')));
const deps = Object.keys(JSON.parse(fs.readFileSync('.jsii', 'utf8')).dependencies ?? {}).sort();
if (uses.length || JSON.stringify(deps) !== '["cdk8s","constructs"]') {
  console.error(`cdk8s-plus in the package: files ${JSON.stringify(uses)}; jsii dependencies ${JSON.stringify(deps)}`);
  process.exit(1);
}
EOF

# 2. The tarball holds only what a consumer needs.
step "checking the file list of npm pack"
npm pack --dry-run --json --ignore-scripts > "$WORK/pack.json"
node - "$WORK/pack.json" <<'EOF'
const pack = JSON.parse(require('fs').readFileSync(process.argv[2], 'utf8'))[0];
const files = pack.files.map((f) => f.path).sort();
// src/*.ts: what the source maps (lib/*.js.map, out of line: the import's share) name; docs/*.md: what the README links (.projenrc.ts)
// helm-plugins/cdk8s-sidecars/: the Helm 4 post-renderer plugin (docs/cli.md)
const allowed = /^(package\.json|README\.md|LICENSE|API\.md|\.jsii|lib\/.+\.(js|js\.map|d\.ts)|src\/.+\.ts|docs\/[^/]+\.md|helm-plugins\/cdk8s-sidecars\/(plugin\.yaml|render\.js))$/;
const required = ['package.json', 'README.md', 'LICENSE', 'API.md', '.jsii', 'lib/index.js', 'lib/index.js.map', 'lib/index.d.ts', 'src/index.ts', 'docs/target.md',
  'helm-plugins/cdk8s-sidecars/plugin.yaml', 'helm-plugins/cdk8s-sidecars/render.js'];
const unexpected = files.filter((f) => !allowed.test(f));
const missing = required.filter((f) => !files.includes(f));
const pkg = require(require('path').resolve('package.json'));
const entry = [pkg.main, pkg.types, ...Object.values(pkg.bin ?? {})].filter((f) => !files.includes(f));
if (unexpected.length || missing.length || entry.length) {
  console.error(`npm pack: unexpected files: ${JSON.stringify(unexpected)}; missing: ${JSON.stringify(missing)}; ` +
    `main/types/bin not in the tarball: ${JSON.stringify(entry)}. Adjust the npmignore in .projenrc.ts.`);
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

# 3. Two fresh cdk8s TypeScript apps, as `cdk8s init typescript-app` makes them (strict tsconfig,
#    TypeScript 5.9), that install the package with the README's command: one on cdk8s-plus-27
#    (today's API as it was), one on the newest cdk8s-plus major (34) that must not get
#    cdk8s-plus-27 at all (issue 20). Both install the same tarball; npm's cache serves the second.
new_app() { # <dir>; main.ts from stdin
  mkdir -p "$1"
  cp "$ROOT/node_modules/cdk8s-cli/templates/typescript-app/tsconfig.json" "$1/tsconfig.json"
  cat > "$1/package.json" <<'EOF'
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
  printf 'language: typescript\napp: node main.js\n' > "$1/cdk8s.yaml"
  cat > "$1/main.ts"
}

APP="$WORK/app"
step "creating a cdk8s-plus-27 app in $APP"
new_app "$APP" <<'EOF'
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

# The cdk8s-plus-34 app: every construct, the major's own Secret references, resources and
# Services (servicePort() and exposeVia()), no casts.
APP34="$WORK/app34"
step "creating a cdk8s-plus-34 app in $APP34"
new_app "$APP34" <<'EOF'
import { App, Chart, Size } from 'cdk8s';
import * as kplus from 'cdk8s-plus-34';
import {
  LogAgent, LogOutput, Mesh, NativeSidecarGuard, SidecarLayout, WithEnvoy, WithLogAgent, WithMeshProxy, WithTracer,
} from 'cdk8s-sidecars';

const app = new App({ outdir: 'dist' });
const chart = new Chart(app, 'consumer', { namespace: 'shop' });
const web = new kplus.Deployment(chart, 'web', {
  metadata: { name: 'web' },
  containers: [{ name: 'web', image: 'ghcr.io/example/web:1.0.0', args: ['--listen=127.0.0.1:8080'], ports: [{ number: 8080 }] }],
});
const creds = kplus.Secret.fromSecretName(chart, 'creds', 'log-creds');
const password: kplus.SecretValue = { secret: creds, key: 'password' };
const resources: kplus.ContainerResources = {
  cpu: { request: kplus.Cpu.millis(50), limit: kplus.Cpu.millis(500) },
  memory: { request: Size.mebibytes(48), limit: Size.mebibytes(128) },
};
const logs: WithLogAgent = new WithLogAgent(chart, 'logs', {
  workload: web,
  agent: LogAgent.fluentBit(),
  resources,
  output: LogOutput.http({ host: 'logs.example.com', basicAuth: { username: { secret: creds, key: 'user' }, password } }),
});
new WithTracer(chart, 'tracer', {
  workload: web,
  exporterEndpoint: 'otel-collector.observability:4317',
  exporterTls: false,
  exporterHeaders: { authorization: { secret: kplus.Secret.fromSecretName(chart, 'otel', 'otel-auth'), key: 'token' } },
});
const envoy = new WithEnvoy(chart, 'envoy', { workload: web, appPort: 8080, tls: { secret: { name: 'web-tls' } } });
new kplus.Service(chart, 'web-svc', { metadata: { name: 'web' }, selector: web, ports: [envoy.servicePort()] });
const internal = new kplus.Service(chart, 'web-internal', {
  metadata: { name: 'web-internal' }, selector: web, ports: [{ name: 'metrics', port: 9090 }],
});
envoy.exposeVia(internal, { name: 'https-internal', port: 8443 });

// A mesh-injected workload, and the admission guard where the cluster has the v1 policy API (1.30+).
const api = new kplus.Deployment(chart, 'api', {
  metadata: { name: 'api' },
  containers: [{ name: 'api', image: 'ghcr.io/example/api:1.0.0', ports: [{ number: 9000 }] }],
});
new WithMeshProxy(chart, 'mesh', { workload: api, mesh: Mesh.ISTIO });
if (Number(logs.targetVersion.split('.')[1]) >= 30) new NativeSidecarGuard(chart, 'guard', { namespaces: ['shop'] });

const layout: SidecarLayout = logs.layout;
console.log(`layout=${layout} target=${logs.targetVersion}`);
app.synth();
EOF

install_app() { # <dir> <cdk8s-plus package>
  # --omit=optional: cdk8s-plus' optional `backport` dependency is not needed to synthesize.
  (cd "$1" && npm install --no-audit --no-fund --prefer-offline --omit=optional --loglevel=error \
    "$TARBALL" cdk8s "$2" constructs)
}
step "installing the tarball and its peers (npm install cdk8s-sidecars cdk8s cdk8s-plus-27 constructs)"
install_app "$APP" cdk8s-plus-27
step "installing the tarball and its peers into the cdk8s-plus-34 app (npm install cdk8s-sidecars cdk8s cdk8s-plus-34 constructs)"
install_app "$APP34" cdk8s-plus-34
step "checking that the cdk8s-plus-34 app has no cdk8s-plus-27 (nor any other cdk8s-plus major)"
(cd "$APP34" && node - <<'EOF'
const fs = require('fs');
const lock = JSON.parse(fs.readFileSync('package-lock.json', 'utf8'));
const plus = Object.keys(lock.packages).filter((p) => /(^|\/)node_modules\/cdk8s-plus-\d+$/.test(p));
if (JSON.stringify(plus) !== '["node_modules/cdk8s-plus-34"]' || fs.existsSync('node_modules/cdk8s-plus-27')) {
  console.error(`cdk8s-plus-34 app: expected only node_modules/cdk8s-plus-34, got ${JSON.stringify(plus)}`);
  process.exit(1);
}
const peers = JSON.parse(fs.readFileSync('node_modules/cdk8s-sidecars/package.json', 'utf8')).peerDependencies;
console.log(`  cdk8s-plus packages: ${plus.join(', ')}; cdk8s-sidecars peers: ${Object.keys(peers).join(', ')}`);
EOF
)

# 4. Type-check (strict, every .d.ts included: no skipLibCheck) and run them, per cluster.
step "type-checking both apps (strict; CommonJS as generated by cdk8s init, then node16 resolution)"
for dir in "$APP" "$APP34"; do
  (cd "$dir" && npx tsc && npx tsc --noEmit --module node16 --moduleResolution node16)
done

check_output() { # <app dir> <version> <expected layout>
  (cd "$1" && rm -rf dist && CDK8S_SIDECARS_KUBERNETES_VERSION="$2" node main.js | tee "$1/out-$2.txt")
  grep -qx "layout=$3 target=$2" "$1/out-$2.txt"
  (cd "$1" && node - "$3" <<'EOF'
const { Yaml } = require('cdk8s');
const expected = process.argv[2];
const objects = Yaml.load('dist/consumer.k8s.yaml');
const d = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'web');
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
// The cdk8s-plus-34 app's Services (servicePort() and exposeVia()) and Secret references.
const service = (name) => objects.find((o) => o.kind === 'Service' && o.metadata.name === name);
if (service('web')) {
  const ports = (name) => JSON.stringify(service(name).spec.ports);
  if (ports('web') !== JSON.stringify([{ name: 'https', port: 443, targetPort: 8443 }])) fail(`Service web ports ${ports('web')}`);
  const internal = [{ name: 'metrics', port: 9090 }, { name: 'https-internal', port: 8443, protocol: 'TCP', targetPort: 8443 }];
  if (ports('web-internal') !== JSON.stringify(internal)) fail(`Service web-internal ports ${ports('web-internal')}`);
  const env = [...spec.containers, ...(spec.initContainers ?? [])].flatMap((c) => c.env ?? []);
  const refs = env.filter((e) => e.valueFrom?.secretKeyRef).map((e) => `${e.valueFrom.secretKeyRef.name}/${e.valueFrom.secretKeyRef.key}`).sort();
  if (JSON.stringify(refs) !== '["log-creds/password","log-creds/user","otel-auth/token"]') fail(`secretKeyRefs ${JSON.stringify(refs)}`);
}
console.log(`  ${objects.length} objects; Deployment initContainers ${JSON.stringify(names(spec.initContainers))}, containers ${JSON.stringify(names(spec.containers))}`);
EOF
  )
}
step "synthesizing the cdk8s-plus-27 app for a 1.27 and a 1.29 cluster"
check_output "$APP" 1.27 LEGACY
check_output "$APP" 1.29 NATIVE
step "synthesizing the cdk8s-plus-34 app for a 1.27 and a 1.34 cluster"
check_output "$APP34" 1.27 LEGACY
check_output "$APP34" 1.34 NATIVE

# 5. What a user of the installed package reads: an error's stack frames (with and without source
#    maps) name files of the tarball, and every link of the README and docs/ resolves in it.
step "checking an error's stack frames and the README's and docs' links in the installed package"
npx ts-node --transpile-only --project projenrc/tsconfig.json scripts/installed-package-check.ts "$APP" "$WORK/pack.json"

# 6. ES module consumers get the named exports too.
step "importing from an ES module"
(cd "$APP" && node --input-type=module -e "
import { WithLogAgent, WithEnvoy, WithTracer, Sidecars } from 'cdk8s-sidecars';
for (const x of [WithLogAgent, WithEnvoy, WithTracer, Sidecars]) if (typeof x !== 'function') throw new Error('missing export');
")

# 7. The `cdk8s-sidecars` command (issue 29, docs/cli.md) from the installed tarball: its `bin`.
step "running npx cdk8s-sidecars check|target|timeline|render from the tarball"
(cd "$APP" && {
  cat > native.yaml <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata: { name: api }
spec:
  selector: { matchLabels: { app: api } }
  template:
    metadata: { labels: { app: api } }
    spec:
      initContainers: [{ name: proxy, image: ghcr.io/example/proxy:1.0.0, restartPolicy: Always }]
      containers: [{ name: api, image: ghcr.io/example/api:1.0.0 }]
EOF
  # a native sidecar is an error on 1.27 (exit 1) and fine on 1.29 (exit 0); no input is bad usage (exit 2)
  status=0; npx --no-install cdk8s-sidecars check native.yaml --kubernetes-version 1.27 > check-1.27.txt || status=$?
  { [ "$status" -eq 1 ] && grep -q "Kubernetes 1.27 does not know" check-1.27.txt; } || { cat check-1.27.txt; echo "check on 1.27: exit $status" >&2; exit 1; }
  npx --no-install cdk8s-sidecars check native.yaml --kubernetes-version 1.29 > /dev/null
  status=0; npx --no-install cdk8s-sidecars check > /dev/null 2>&1 || status=$?
  [ "$status" -eq 2 ] || { echo "check without input: exit $status, expected 2" >&2; exit 1; }
  # target, through the fake kubectl of the tests (recorded outputs of a GKE cluster)
  target=$(KUBECTL="$ROOT/test/fixtures/cli/kubectl/kubectl" FAKE_KUBECTL_CLUSTER="$ROOT/test/fixtures/cli/kubectl/gke" \
    npx --no-install cdk8s-sidecars target 2>/dev/null)
  [ "$target" = "$(printf 'CDK8S_SIDECARS_KUBERNETES_VERSION=1.30\nCDK8S_SIDECARS_SIDECAR_CONTAINERS_GATE=true')" ] || { echo "target printed: $target" >&2; exit 1; }
  # timeline: the SidecarTimeline of each workload
  npx --no-install cdk8s-sidecars timeline native.yaml --kubernetes-version 1.29 --stop-time proxy=2s > timeline.txt
  grep -q "^native.yaml (document 1): Deployment api$" timeline.txt && grep -q "proxy .*native sidecar" timeline.txt \
    || { cat timeline.txt; echo "timeline: unexpected output" >&2; exit 1; }
  # render: the example chart's helm template output with the example config
  npx --no-install cdk8s-sidecars render --config "$ROOT/examples/chart/sidecars.yaml" < "$ROOT/test/fixtures/cli/chart/helm-template.yaml" > rendered.yaml
  node -e "
const objects = require('cdk8s').Yaml.load('rendered.yaml');
const kinds = objects.map((o) => o.kind).join(',');
const init = objects[1].spec.template.spec.initContainers.filter((c) => c.restartPolicy === 'Always').map((c) => c.name).join(',');
if (kinds !== 'Service,Deployment,CronJob,ConfigMap,ConfigMap,ConfigMap' || init !== 'log-agent,tracer,envoy') {
  console.error('render: kinds ' + kinds + ', native sidecars ' + init);
  process.exit(1);
}
console.log('  render: ' + objects.length + ' objects; Deployment native sidecars ' + init);
"
  # the Helm 4 plugin's program, as Helm 4 runs it (node ${HELM_PLUGIN_DIR}/render.js --post-renderer-args...),
  # from the installed package: the same bytes as the bin's render
  node node_modules/cdk8s-sidecars/helm-plugins/cdk8s-sidecars/render.js --config="$ROOT/examples/chart/sidecars.yaml" \
    < "$ROOT/test/fixtures/cli/chart/helm-template.yaml" > plugin-rendered.yaml
  cmp rendered.yaml plugin-rendered.yaml || { echo "the Helm 4 plugin's render.js wrote other bytes than cdk8s-sidecars render" >&2; exit 1; }
  echo "  helm-plugins/cdk8s-sidecars/render.js: the same output as cdk8s-sidecars render"
})

step "passed"
