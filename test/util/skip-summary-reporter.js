/**
 * A jest reporter (package.json jest.reporters, from .projenrc.ts): one summary line at the end
 * of the run for every skip noted with test/util/skips.ts `noteSkipped` (the tests that need a
 * program this machine lacks), grouped by reason. The notes go through a file named in the
 * environment, which the test workers inherit (they are started after the reporters), and the
 * file is removed at the end.
 */
const fs = require('fs');
const os = require('os');
const path = require('path');

const ENV = 'CDK8S_SIDECARS_SKIPS_FILE';

class SkipSummaryReporter {
  constructor() {
    this.file = path.join(os.tmpdir(), `cdk8s-sidecars-skips-${process.pid}-${Date.now()}.jsonl`);
    process.env[ENV] = this.file;
  }

  onRunComplete() {
    let lines = [];
    try {
      lines = fs.readFileSync(this.file, 'utf8').split('\n').filter(l => l !== '').map(l => JSON.parse(l));
    } catch {
      return;
    } finally {
      fs.rmSync(this.file, { force: true });
    }
    const byReason = new Map();
    for (const { file, reason } of lines) {
      const files = byReason.get(reason) ?? new Set();
      files.add(file);
      byReason.set(reason, files);
    }
    const parts = [...byReason].map(([reason, files]) => `${[...files].sort().join(', ')}: ${reason}`);
    process.stderr.write(`Skipped (${lines.length} note(s); CI=true fails instead): ${parts.join('; ')}\n`);
  }
}

module.exports = SkipSummaryReporter;
