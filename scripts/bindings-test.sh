#!/usr/bin/env bash
# The bindings test (`npm run test:bindings`, issue 30): jsii-pacmak builds the Python wheel, the
# Java jar and the Go module of the library; a small cdk8s app in each language
# (test/bindings/python/app.py, test/bindings/java, test/bindings/go) uses WithLogAgent, WithTracer,
# WithEnvoy and WithSidecar on cdk8s-plus-27 workloads, is synthesized for a legacy (1.27) and a
# native (1.29) target, and must write the same bytes as its TypeScript twin
# (test/bindings/ts/app.ts). The README's Python and Java quick starts are the files
# test/bindings/python/quickstart.py and test/bindings/java/src/main/java/bindings/QuickStart.java
# verbatim (checked here), and they too must write what the TypeScript quick start writes. Each
# language also recognises the library's refusals with its Errors class (errors.py, ErrorsCheck.java, errors.go).
#
#   bash scripts/bindings-test.sh                 (all three languages)
#   BINDINGS_LANGUAGES="python java" bash scripts/bindings-test.sh
#
# Needs: Python 3 with venv and PyPI; a JDK 17+ with Maven and Maven Central; Go 1.25+ and the Go
# module proxy. A missing tool skips its language with a note (fails under CI=true).
# Where each language's cdk8s comes from (checked 2026-12-01 on this project's machines):
# - Python: the PyPI packages cdk8s 2.70.106, cdk8s-plus-27 2.9.5, constructs 10.3.0.
# - Java: Maven Central serves software.constructs:constructs 10.3.0, but org.cdk8s:cdk8s only up to
#   2.70.47 (below the library's peer range ^2.70.106) and no org.cdk8s:cdk8s-plus-27 at all; the
#   Go module proxy answers 403 for github.com/cdk8s-team/*. So the Java and Go packages of cdk8s
#   and cdk8s-plus-27 are built here by the same jsii-pacmak from the npm packages
#   (node_modules/cdk8s, node_modules/cdk8s-plus-27), which is how cdk8s-team publishes them.
# Caches: pip (~/.cache/pip), a venv and the Java packages of cdk8s/cdk8s-plus-27 in
# ~/.cache/cdk8s-sidecars/bindings (keyed by their versions and jsii-pacmak's), Maven (~/.m2),
# Go (its module and build caches). KEEP_BINDINGS_TEST=1 keeps the work directory.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
LANGUAGES=${BINDINGS_LANGUAGES:-python java go}
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/cdk8s-sidecars/bindings
WORK=$(mktemp -d "${TMPDIR:-/tmp}/cdk8s-sidecars-bindings.XXXXXX")
cleanup() {
  local status=$?
  if [ "$status" -ne 0 ] || [ -n "${KEEP_BINDINGS_TEST:-}" ]; then echo "bindings test: work directory kept: $WORK" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20
T0=$SECONDS
step() { echo "bindings test [$((SECONDS - T0))s]: $*"; }
version() { node -p "require('./node_modules/$1/package.json').version"; }
CDK8S=$(version cdk8s); KPLUS=$(version cdk8s-plus-27); CONSTRUCTS=$(version constructs); PACMAK=$(version jsii-pacmak)
FAILED=0
PASSED=0
SKIPPED=0

# A missing toolchain: say how to get it and skip, but fail under CI=true.
need() { # <language> <command...>
  local lang=$1; shift
  for cmd in "$@"; do
    if ! command -v "$cmd" > /dev/null; then
      if [ "${CI:-}" = "true" ]; then echo "bindings test: $lang needs '$cmd' (CONTRIBUTING.md: Bindings); missing under CI=true" >&2; exit 1; fi
      echo "bindings test: SKIPPED $lang: '$cmd' is not installed (CONTRIBUTING.md: Bindings says what each language needs)" >&2
      SKIPPED=$((SKIPPED + 1))
      return 1
    fi
  done
}

# <label> <expected file> <actual file>: byte for byte.
compare() {
  if cmp -s "$2" "$3"; then
    echo "  same bytes: $1 ($(wc -c < "$3") bytes)"
    PASSED=$((PASSED + 1))
  else
    echo "bindings test: FAILED $1: the output differs from the TypeScript app's ($2 vs $3):" >&2
    diff -u "$2" "$3" | head -60 >&2 || true
    FAILED=$((FAILED + 1))
  fi
}

# <language> <command...>: the language's check that Errors recognises the library's refusals from
# the message its exception holds (test/bindings/python/errors.py and its Java and Go twins).
errors_check() {
  local lang=$1; shift
  if "$@" > "$WORK/$lang-errors.log" 2>&1; then
    echo "  $(tail -1 "$WORK/$lang-errors.log")"
    PASSED=$((PASSED + 1))
  else
    echo "bindings test: FAILED $lang errors check:" >&2
    cat "$WORK/$lang-errors.log" >&2
    FAILED=$((FAILED + 1))
  fi
}

# 1. What ships, from the current sources: lib/ and .jsii.
step "compiling with jsii"
npx jsii --silence-warnings=reserved-word

# 2. The TypeScript twins (the library as TypeScript users load it: lib/, by its package name).
mkdir -p "$WORK/node_path" "$WORK/out"
ln -s "$ROOT" "$WORK/node_path/cdk8s-sidecars"
run_ts() { # <outdir> <version> <file>
  CDK8S_OUTDIR="$1" CDK8S_SIDECARS_KUBERNETES_VERSION="$2" NODE_PATH="$WORK/node_path" \
    npx ts-node --transpile-only --project projenrc/tsconfig.json "$3" > /dev/null
}
VERSIONS="1.27 1.29"
step "synthesizing the TypeScript app for $VERSIONS and the quick start"
for v in $VERSIONS; do run_ts "$WORK/out/ts-$v" "$v" test/bindings/ts/app.ts; done
run_ts "$WORK/out/ts-quickstart" 1.29 test/bindings/ts/quickstart.ts
# The two targets really differ (the target reached the library): legacy has no native sidecar.
node - "$WORK/out" <<'EOF'
const { Yaml } = require('cdk8s');
const [out] = process.argv.slice(2);
const natives = (v) => Yaml.load(`${out}/ts-${v}/bindings.k8s.yaml`).flatMap((o) => {
  const spec = o.spec?.jobTemplate?.spec.template.spec ?? o.spec?.template?.spec;
  return (spec?.initContainers ?? []).filter((c) => c.restartPolicy === 'Always').map((c) => `${o.kind}/${c.name}`);
});
const legacy = natives('1.27'), native = natives('1.29');
if (legacy.length !== 0 || native.length !== 4) {
  console.error(`TypeScript app: expected no native sidecar on 1.27 and 4 on 1.29, got ${JSON.stringify({ legacy, native })}`);
  process.exit(1);
}
console.log(`  TypeScript app: 1.27 legacy, 1.29 native (${native.join(', ')})`);
EOF

# 3. The README's Python and Java quick starts are the test files, verbatim.
step "checking the README's Python and Java quick starts against test/bindings"
node - <<'EOF'
const fs = require('fs');
const readme = fs.readFileSync('README.md', 'utf8');
const block = (lang) => { const m = new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(readme); return m && m[1]; };
for (const [lang, file] of [['python', 'test/bindings/python/quickstart.py'], ['java', 'test/bindings/java/src/main/java/bindings/QuickStart.java']]) {
  if (block(lang) !== fs.readFileSync(file, 'utf8')) {
    console.error(`README.md: the first \`\`\`${lang} block is not ${file} verbatim; copy the file into the README (or the README into the file).`);
    process.exit(1);
  }
}
EOF

# 3b. The README's install blocks (## Install): the pip requirements are what the Python step
# installs (the wheel found in jsii-pacmak's output instead of PyPI), the Maven coordinates are
# test/bindings/java's dependency, the Go module is test/bindings/go's require. npm's block is the
# consumer test's (scripts/consumer-test.sh); test/readme-install.test.ts checks the names too.
step "checking the README's install blocks against the packages and test/bindings"
PIP_REQUIREMENTS=$(node scripts/readme-install.js)
step "  pip install $PIP_REQUIREMENTS (the README's line)"

# 4. Each language.
lang_python() {
  need Python python3 || return 0
  step "python: jsii-pacmak --targets python"
  local t=$SECONDS
  npx jsii-pacmak --targets python --outdir "$WORK/dist" > "$WORK/pacmak-python.log" 2>&1 || { cat "$WORK/pacmak-python.log" >&2; return 1; }
  local venv="$CACHE/venv-$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')-cdk8s-$CDK8S-plus27-$KPLUS"
  # (a venv cannot be moved: it is made in place, and marked complete once its packages are in)
  if [ ! -f "$venv/.complete" ]; then
    step "python: a venv with cdk8s==$CDK8S cdk8s-plus-27==$KPLUS constructs==$CONSTRUCTS from PyPI ($venv)"
    rm -rf "$venv" && python3 -m venv "$venv" || return 1
    "$venv/bin/pip" install --quiet --disable-pip-version-check "cdk8s==$CDK8S" "cdk8s-plus-27==$KPLUS" "constructs==$CONSTRUCTS" || return 1
    touch "$venv/.complete"
  fi
  # the README's `pip install` line, with the built wheel standing in for PyPI's (the others are in the venv)
  "$venv/bin/pip" uninstall --quiet --yes cdk8s-sidecars > /dev/null 2>&1 || true
  # shellcheck disable=SC2086
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-index --find-links "$WORK/dist/python" $PIP_REQUIREMENTS || return 1
  step "python: running test/bindings/python/app.py for $VERSIONS and the quick start"
  for v in $VERSIONS; do
    CDK8S_OUTDIR="$WORK/out/python-$v" CDK8S_SIDECARS_KUBERNETES_VERSION=$v "$venv/bin/python" test/bindings/python/app.py > "$WORK/python-$v.log" 2>&1 \
      || { cat "$WORK/python-$v.log" >&2; return 1; }
    compare "python app, $v" "$WORK/out/ts-$v/bindings.k8s.yaml" "$WORK/out/python-$v/bindings.k8s.yaml"
  done
  CDK8S_OUTDIR="$WORK/out/python-quickstart" "$venv/bin/python" test/bindings/python/quickstart.py > "$WORK/python-quickstart.log" 2>&1 \
    || { cat "$WORK/python-quickstart.log" >&2; return 1; }
  compare "python quick start" "$WORK/out/ts-quickstart/shop.k8s.yaml" "$WORK/out/python-quickstart/shop.k8s.yaml"
  errors_check python "$venv/bin/python" test/bindings/python/errors.py
  step "python: done in $((SECONDS - t)) s"
}

lang_java() {
  need Java java mvn || return 0
  local t=$SECONDS
  local deps="$CACHE/java-cdk8s-$CDK8S-plus27-$KPLUS-pacmak-$PACMAK"
  if [ ! -d "$deps/java" ]; then
    step "java: jsii-pacmak --targets java for cdk8s $CDK8S and cdk8s-plus-27 $KPLUS (once; cached in $deps)"
    rm -rf "$deps.tmp"
    npx jsii-pacmak --targets java --outdir "$deps.tmp" node_modules/cdk8s node_modules/cdk8s-plus-27 > "$WORK/pacmak-java-deps.log" 2>&1 \
      || { cat "$WORK/pacmak-java-deps.log" >&2; return 1; }
    mkdir -p "$deps" && mv "$deps.tmp/java" "$deps/java" && rm -rf "$deps.tmp" || return 1
  fi
  # jsii-pacmak adds its output directory's java/ (a Maven repository) to the repositories of
  # the build; the cdk8s jars there satisfy the library's pom (org.cdk8s:cdk8s [2.70.106,3.0.0)).
  mkdir -p "$WORK/dist/java" && cp -r "$deps/java/." "$WORK/dist/java/" || return 1
  step "java: jsii-pacmak --targets java"
  npx jsii-pacmak --targets java --outdir "$WORK/dist" > "$WORK/pacmak-java.log" 2>&1 || { cat "$WORK/pacmak-java.log" >&2; return 1; }
  # Maven keeps what it resolved in its local repository, and every build of the library is
  # version 0.0.0: drop the copy of an earlier run, or the app would use the old jar (it did).
  local m2
  m2=$(mvn --quiet --batch-mode help:evaluate -Dexpression=settings.localRepository -DforceStdout 2> /dev/null | sed 's/\x1b\[[0-9;]*m//g') || return 1
  [ -d "$m2" ] || { echo "bindings test: Maven's local repository '$m2' not found" >&2; return 1; }
  rm -rf "$m2/dev/cdk8s-sidecars/cdk8s-sidecars"
  step "java: compiling test/bindings/java with Maven (-Xlint:all -Werror)"
  cp -r test/bindings/java "$WORK/java" || return 1
  (cd "$WORK/java" && mvn --quiet --batch-mode -Dbindings.repo="file://$WORK/dist/java" -Dcdk8s.version="$CDK8S" -Dcdk8s-plus-27.version="$KPLUS" \
    compile dependency:build-classpath -Dmdep.outputFile="$WORK/java/classpath.txt") > "$WORK/mvn.log" 2>&1 || { cat "$WORK/mvn.log" >&2; return 1; }
  local cp="$WORK/java/target/classes:$(cat "$WORK/java/classpath.txt")"
  step "java: running bindings.App for $VERSIONS and bindings.QuickStart"
  for v in $VERSIONS; do
    CDK8S_OUTDIR="$WORK/out/java-$v" CDK8S_SIDECARS_KUBERNETES_VERSION=$v java -cp "$cp" bindings.App > "$WORK/java-$v.log" 2>&1 || { cat "$WORK/java-$v.log" >&2; return 1; }
    compare "java app, $v" "$WORK/out/ts-$v/bindings.k8s.yaml" "$WORK/out/java-$v/bindings.k8s.yaml"
  done
  CDK8S_OUTDIR="$WORK/out/java-quickstart" java -cp "$cp" bindings.QuickStart > "$WORK/java-quickstart.log" 2>&1 || { cat "$WORK/java-quickstart.log" >&2; return 1; }
  compare "java quick start" "$WORK/out/ts-quickstart/shop.k8s.yaml" "$WORK/out/java-quickstart/shop.k8s.yaml"
  errors_check java java -cp "$cp" bindings.ErrorsCheck
  step "java: done in $((SECONDS - t)) s"
}

lang_go() {
  need Go go || return 0
  local t=$SECONDS
  step "go: jsii-pacmak --targets go for cdk8s, cdk8s-plus-27 and the library"
  npx jsii-pacmak --targets go --outdir "$WORK/dist" node_modules/cdk8s node_modules/cdk8s-plus-27 . > "$WORK/pacmak-go.log" 2>&1 \
    || { cat "$WORK/pacmak-go.log" >&2; return 1; }
  cp -r test/bindings/go "$WORK/go" || return 1
  local d="$WORK/dist/go"
  (cd "$WORK/go" && go mod edit \
    -replace "github.com/cdk8s-sidecars/cdk8s-sidecars-go/cdk8ssidecars=$d/cdk8ssidecars" \
    -replace "github.com/cdk8s-team/cdk8s-core-go/cdk8s/v2=$d/cdk8s" \
    -replace "github.com/cdk8s-team/cdk8s-plus-go/cdk8splus27/v2=$d/cdk8splus27" \
    && go mod tidy > /dev/null 2>&1 && go vet . && go build -o app .) > "$WORK/go-build.log" 2>&1 || { cat "$WORK/go-build.log" >&2; return 1; }
  step "go: running test/bindings/go for $VERSIONS"
  for v in $VERSIONS; do
    CDK8S_OUTDIR="$WORK/out/go-$v" CDK8S_SIDECARS_KUBERNETES_VERSION=$v "$WORK/go/app" > "$WORK/go-$v.log" 2>&1 || { cat "$WORK/go-$v.log" >&2; return 1; }
    compare "go app, $v" "$WORK/out/ts-$v/bindings.k8s.yaml" "$WORK/out/go-$v/bindings.k8s.yaml"
  done
  errors_check go "$WORK/go/app" errors
  step "go: done in $((SECONDS - t)) s"
}

for lang in $LANGUAGES; do
  "lang_$lang" || { echo "bindings test: FAILED $lang (see above)" >&2; FAILED=$((FAILED + 1)); }
done
step "$PASSED passed, $FAILED failed, $SKIPPED skipped"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
