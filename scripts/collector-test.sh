#!/usr/bin/env bash
# The real-collector test (`npm run test:collector`): builds otelcol and the OTLP test tool
# (scripts/build-otelcol.sh, cached), then runs test/collector/otelcol.real-test.ts with them.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
OTELCOL_DIR=$(bash scripts/build-otelcol.sh)
export OTELCOL_DIR
echo "test:collector: otelcol ready in $((SECONDS - start)) s: $OTELCOL_DIR"
npx jest --ci --testMatch '<rootDir>/test/collector/*.real-test.ts'
echo "test:collector: done in $((SECONDS - start)) s"
