/**
 * Tests that need a program the machine may lack (busybox, Go, python3, unprivileged namespaces)
 * skip without it, except under CI=true. Each skip is noted here; `npm test` prints one summary
 * line for all of them at the end of the run (test/util/skip-summary-reporter.js) instead of a
 * stack-framed console warning per test file. Outside that reporter (a jest run with another
 * config), the note is printed as a warning.
 */
import * as fs from 'fs';
import * as path from 'path';

export const SKIPS_FILE_ENV = 'CDK8S_SIDECARS_SKIPS_FILE';

export function noteSkipped(reason: string): void {
  const file = process.env[SKIPS_FILE_ENV];
  const testPath: string | undefined = (globalThis as any).expect?.getState?.().testPath;
  const where = testPath ? path.relative(path.resolve(__dirname, '..', '..'), testPath) : '?';
  if (file) {
    fs.appendFileSync(file, `${JSON.stringify({ file: where, reason })}\n`);
  } else {
    // eslint-disable-next-line no-console
    console.warn(`skipped in ${where}: ${reason}`);
  }
}
