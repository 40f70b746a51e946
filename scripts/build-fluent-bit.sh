#!/usr/bin/env bash
# Builds the Fluent Bit binary that `npm run test:agents` runs (FLUENT_BIT=OUT/bin/fluent-bit).
#
#   scripts/build-fluent-bit.sh SRC OUT
#
# SRC: a Fluent Bit source tree at the tag src/facts/images.ts pins, e.g.
#   git clone --depth 1 --branch v5.1.1 https://github.com/fluent/fluent-bit.git SRC
# OUT: an empty or earlier build directory (outside this clone: never commit it).
#
# Debian's build packages (Debian 12):
#   apt-get install -y cmake make gcc g++ flex bison pkg-config libyaml-dev libssl-dev zlib1g-dev libsqlite3-dev
#
# Only the plugins the library renders are built (tail, with its multiline.parser, record_modifier, stdout,
# forward, http, loki, es, opensearch, and storage_backlog, which resends filesystem chunks
# after a restart): every other input, filter, output and processor is
# switched off, as are LuaJIT, WASM, Kafka, Zig, the profiles signal, the examples, the shared
# library and the tests, which takes the build from about an hour to a few minutes on 2 cores.
# SQLite comes from Debian (libsqlite3-dev) when the tree's amalgamation is missing.
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 SRC OUT  (SRC: a fluent-bit source tree at the pinned tag; OUT: a build directory)" >&2
  exit 2
fi
src=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
[ -f "$src/CMakeLists.txt" ] || { echo "$src has no CMakeLists.txt: not a fluent-bit source tree" >&2; exit 2; }

# Every plugin option of the tree (cmake/plugins_options.cmake), off unless the library renders it.
keep=' FLB_IN_TAIL FLB_IN_STORAGE_BACKLOG FLB_FILTER_RECORD_MODIFIER FLB_OUT_STDOUT FLB_OUT_FORWARD FLB_OUT_HTTP FLB_OUT_LOKI FLB_OUT_ES FLB_OUT_OPENSEARCH '
flags=()
for opt in $(grep -oE 'DEFINE_OPTION\(FLB_[A-Z0-9_]+' "$src/cmake/plugins_options.cmake" | sed 's/DEFINE_OPTION(//'); do
  case "$keep" in
    *" $opt "*) flags+=("-D$opt=On") ;;
    *) flags+=("-D$opt=Off") ;;
  esac
done

sqlite=()
if [ ! -f "$src"/lib/sqlite-amalgamation-*/sqlite3.c ]; then
  sqlite=(-DFLB_PREFER_SYSTEM_LIB_SQLITE=On)
fi

cd "$out"
cmake "$src" \
  -DCMAKE_BUILD_TYPE=Release -DFLB_RELEASE=On -DFLB_DEBUG=Off \
  -DFLB_TLS=On -DFLB_SQLDB=On -DFLB_HTTP_SERVER=On -DFLB_LOG_NO_CONTROL_CHARS=On \
  -DFLB_LUAJIT=Off -DFLB_WASM=Off -DFLB_KAFKA=Off -DFLB_ZIG=Off -DFLB_PROFILES=Off \
  -DFLB_EXAMPLES=Off -DFLB_SHARED_LIB=Off -DFLB_BACKTRACE=Off -DFLB_CHUNK_TRACE=Off \
  -DFLB_TESTS_RUNTIME=Off -DFLB_TESTS_INTERNAL=Off \
  "${sqlite[@]}" "${flags[@]}"
nice -n 10 make -j"${JOBS:-2}" fluent-bit-bin
"$out/bin/fluent-bit" --version
