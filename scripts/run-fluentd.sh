#!/usr/bin/env bash
# Runs Fluentd from a source tree with Debian's Ruby and Debian's gems, no Bundler:
#   scripts/run-fluentd.sh SRC -- fluentd-args...
# SRC is a Fluentd source tree at the pinned tag (CONTRIBUTING.md, "The real agents"), e.g.
#   git clone --depth 1 --branch v1.19.3 https://github.com/fluent/fluentd SRC
# The Debian packages (bookworm) it needs:
#   apt-get install ruby ruby-msgpack ruby-yajl ruby-cool.io ruby-serverengine ruby-http-parser.rb \
#     ruby-sigdump ruby-tzinfo ruby-strptime ruby-webrick ruby-concurrent ruby-csv
# zstd-ruby is not packaged: scripts/fluentd-shims/zstd-ruby.rb stands in for it (Fluentd loads it
# at start but uses it only for `compress zstd`, which the library never sets). Debian's Ruby is
# 3.1; Fluentd 1.19's gemspec asks for 3.2 but the code paths the library's configs use run on 3.1
# (the harness runs every config variant, test/agents/fluentd.agent-test.ts).
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: $0 FLUENTD_SOURCE_TREE -- fluentd-arguments..." >&2
  exit 2
fi
SRC=$1
shift
if [ "${1:-}" = "--" ]; then shift; fi
if [ ! -f "$SRC/bin/fluentd" ] || [ ! -d "$SRC/lib/fluent" ]; then
  echo "$0: $SRC is not a Fluentd source tree (no bin/fluentd, lib/fluent)" >&2
  exit 2
fi
HERE=$(cd "$(dirname "$0")" && pwd)
# Through the environment, not ruby's -I/-r: the supervisor spawns its worker as
# `ruby bin/fluentd --under-supervisor` (lib/fluent/supervisor.rb), which inherits the environment.
export RUBYLIB="$HERE/fluentd-shims:$SRC/lib${RUBYLIB:+:$RUBYLIB}"
export RUBYOPT="-rdebian-compat${RUBYOPT:+ $RUBYOPT}"
exec ruby "$SRC/bin/fluentd" "$@"
