#!/usr/bin/env bash
# The real-collector test (`npm run test:collector`): builds otelcol and the OTLP test tool
# (scripts/build-otelcol.sh, cached), then runs test/collector/otelcol.real-test.ts with them, and
# the log agent's collector (`build-otelcol.sh logs`) with test/agents/otel-collector.agent-test.ts.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
OTELCOL_DIR=$(bash scripts/build-otelcol.sh)
export OTELCOL_DIR
echo "test:collector: otelcol ready in $((SECONDS - start)) s: $OTELCOL_DIR"
npx jest --ci --testMatch '<rootDir>/test/collector/*.real-test.ts'
# the log agent (LogAgent.otelCollector()): the collector of its image's components
OTELCOL_LOGS=$(bash scripts/build-otelcol.sh logs)/otelcol
export OTELCOL_LOGS
npx jest --ci --runInBand --testMatch '<rootDir>/test/agents/otel-collector.agent-test.ts' --testTimeout 900000
echo "test:collector: done in $((SECONDS - start)) s"
