#!/usr/bin/env bash
# Builds the Vector binary that `npm run test:agents` runs (test/agents/vector.agent-test.ts) and
# puts it where the test finds it: ~/.cache/cdk8s-sidecars/vector/<version>/vector
# (CDK8S_SIDECARS_CACHE moves the cache; VECTOR=/path/to/vector names any other binary).
#
#   scripts/build-vector.sh SRC
#
# SRC: a Vector source tree at the tag the library pins (Images.VECTOR), e.g.
#   git clone --depth 1 --branch v0.57.0 https://github.com/vectordotdev/vector.git SRC
# (outside this clone: never commit it). Needs rustup (the tree's rust-toolchain.toml names the
# toolchain; rustup installs it; where rustup cannot download, name an installed one of that release:
# RUSTUP_TOOLCHAIN=1.95.0 for the tree's `1.95`), protoc (Debian: protobuf-compiler), a C compiler, cmake and perl.
# The tree's Cargo.lock takes a few crates (vrl, tracing-tower, heim, ntapi) from GitHub: cargo
# fetches them itself where GitHub is reachable; elsewhere point cargo at local copies
# (`[patch."https://github.com/..."]` in the tree's Cargo.toml) before running this.
#
# Only the components the library writes are built (a debug build without debug info: the agent
# test checks what Vector reads and sends, not its speed): about 600 crates, 7 min on an idle
# 2-CPU machine (2026-12-07), hours when it is loaded.
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 SRC  (SRC: a vector source tree at the pinned tag)" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")/.." && pwd)
src=$(cd "$1" && pwd)
[ -f "$src/Cargo.toml" ] && grep -q '^name = "vector"' "$src/Cargo.toml" || { echo "$src is not a vector source tree" >&2; exit 2; }

version=$(grep -rhoE 'timberio/vector:[0-9]+\.[0-9]+\.[0-9]+' "$here/src" | head -1 | cut -d: -f2)
tree=$(sed -nE 's/^version = "([0-9.]+)"$/\1/p' "$src/Cargo.toml" | head -1)
[ -n "$version" ] || { echo "cannot find timberio/vector:<version> under src/" >&2; exit 2; }
[ "$tree" = "$version" ] || { echo "$src is Vector $tree; the library pins $version (git checkout v$version)" >&2; exit 2; }

# The components the library renders (src/agents/vector/): `api` because the config says
# `api.enabled: false` (Vector refuses the key without the feature); `vrl-functions-env` for the
# transform's get_env_var!; the `directory` secret backend is always built.
features=api,sources-file,sources-http_server,transforms-remap,vrl-functions-env
features+=,sinks-console,sinks-http,sinks-loki,sinks-elasticsearch,sinks-blackhole,sinks-socket

cd "$src"
# --cap-lints: the tree's .cargo/config.toml denies warnings, which a newer rustc can raise in deps.
RUSTFLAGS=--cap-lints=warn CARGO_PROFILE_DEV_DEBUG=0 \
  nice -n 10 cargo build -j "${JOBS:-2}" --bin vector --no-default-features --features "$features"

cache=${CDK8S_SIDECARS_CACHE:-$HOME/.cache/cdk8s-sidecars}/vector/$version
mkdir -p "$cache"
cp "$src/target/debug/vector" "$cache/vector.tmp"
mv "$cache/vector.tmp" "$cache/vector"
"$cache/vector" --version
echo "built $cache/vector"
