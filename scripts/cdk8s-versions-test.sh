#!/usr/bin/env bash
# The synthesis tests against the oldest cdk8s and constructs of the peer ranges (package.json
# peerDependencies) and the newest the npm registry serves in them: the binding uses documented
# cdk8s API only (src/bind/binding.ts, AppState), and this shows that the output, the errors and
# the warnings do not depend on the release. Each release is installed with npm, once, into
# ${CDK8S_SIDECARS_CACHE:-~/.cache/cdk8s-sidecars}/npm/<package>@<version> (not into the project's
# dependencies) and put in place of the project's with jest's moduleNameMapper, for every module
# that requires it (cdk8s-plus too).
#
#   bash scripts/cdk8s-versions-test.sh                                  (oldest, then newest)
#   CDK8S_SIDECARS_PEERS="2.70.106:10.3.0 2.70.106:10.8.1" bash scripts/cdk8s-versions-test.sh
#
# Not in `npm test` (it needs the registry once per release); .ci/run calls it. About 2-3 min per
# pair on 2 loaded vCPUs (installs are a few MB: cdk8s bundles its dependencies).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
CACHE=${CDK8S_SIDECARS_CACHE:-$HOME/.cache/cdk8s-sidecars}/npm

range() { node -p "require('./package.json').peerDependencies['$1']"; }
# the newest version the registry serves in a range
newest() { npm view "$1@$2" version --json | node -e "const v = JSON.parse(require('fs').readFileSync(0, 'utf8')); console.log([].concat(v).pop())"; }

if [ -z "${CDK8S_SIDECARS_PEERS:-}" ]; then
  CDK8S_RANGE=$(range cdk8s)
  CONSTRUCTS_RANGE=$(range constructs)
  # the peer ranges are ^major.minor.patch (test/cdk8s-version.test.ts checks it): the floor is the oldest
  OLDEST="${CDK8S_RANGE#^}:${CONSTRUCTS_RANGE#^}"
  NEWEST="$(newest cdk8s "$CDK8S_RANGE"):$(newest constructs "$CONSTRUCTS_RANGE")"
  CDK8S_SIDECARS_PEERS=$(printf '%s\n%s\n' "$OLDEST" "$NEWEST" | awk '!seen[$0]++' | tr '\n' ' ')
  echo "cdk8s versions test: peer ranges cdk8s $CDK8S_RANGE, constructs $CONSTRUCTS_RANGE: oldest $OLDEST, newest on the registry $NEWEST"
fi

# Installs $1@$2 into the cache (once) and prints its directory.
install_peer() {
  local dir="$CACHE/$1@$2"
  if [ ! -f "$dir/node_modules/$1/package.json" ]; then
    echo "cdk8s versions test: npm install $1@$2 into $dir" >&2
    mkdir -p "$dir"
    (cd "$dir" && echo '{"private":true}' > package.json \
      && npm install --no-save --no-package-lock --no-audit --no-fund --ignore-scripts --legacy-peer-deps "$1@$2" > install.log 2>&1) \
      || { cat "$dir/install.log" >&2; exit 1; }
  fi
  echo "$dir/node_modules/$1"
}

# The tests that synthesize apps: the binding's one render per synthesis, warnings, errors, and
# every snapshot of a synthesized manifest.
TESTS=(
  test/cdk8s-version.test.ts test/binding.test.ts test/synth-warnings.test.ts test/errors.test.ts test/target.test.ts
  test/with-log-agent.test.ts test/with-envoy.test.ts test/with-tracer.test.ts test/log-agents.test.ts test/injectors.test.ts
  test/exit-with-app.test.ts test/app-stdout.test.ts test/sidecar-injection-policy.test.ts test/bad-input.test.ts
  test/no-patch.test.ts test/warnings-print.test.ts
)
CONFIGS=$(mktemp -d "${TMPDIR:-/tmp}/cdk8s-versions.XXXXXX")
trap 'rm -rf "$CONFIGS"' EXIT
FAILED=0
for pair in $CDK8S_SIDECARS_PEERS; do
  v=${pair%%:*}
  cv=${pair#*:}
  cdk8s=$(install_peer cdk8s "$v")
  constructs=$(install_peer constructs "$cv")
  config="$CONFIGS/jest.config.$v-$cv.json"
  node - "$ROOT" "$cdk8s" "$constructs" > "$config" <<'JS'
const [root, cdk8s, constructs] = process.argv.slice(2);
const base = require(`${root}/package.json`).jest;
console.log(JSON.stringify({
  ...base,
  rootDir: root,
  reporters: ['default'],
  moduleNameMapper: {
    ...(base.moduleNameMapper ?? {}),
    '^cdk8s$': cdk8s,
    '^cdk8s/(.*)$': `${cdk8s}/$1`,
    '^constructs$': constructs,
    '^constructs/(.*)$': `${constructs}/$1`,
  },
}));
JS
  echo "cdk8s versions test: cdk8s $v, constructs $cv: ${#TESTS[@]} test files"
  if CDK8S_SIDECARS_EXPECT_CDK8S="$v" CDK8S_SIDECARS_EXPECT_CONSTRUCTS="$cv" npx jest --config "$config" --ci "${TESTS[@]}"; then
    echo "cdk8s versions test: cdk8s $v, constructs $cv passed"
  else
    echo "cdk8s versions test: FAILED with cdk8s $v, constructs $cv" >&2
    FAILED=$((FAILED + 1))
  fi
done
[ "$FAILED" -eq 0 ]
