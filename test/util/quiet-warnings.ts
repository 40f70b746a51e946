/**
 * Issue 27 point 8: `npm test` prints no `[cdk8s-sidecars] WARNING` lines. The library prints each
 * warning to stderr once per synthesis (src/warnings.ts); under jest those lines are kept here instead of
 * printed: the tests read the warnings they expect with `SidecarWarnings.of(...)`, and the tests of
 * the printing itself spy on `process.stderr.write`, which takes the place of this wrapper.
 * `CDK8S_SIDECARS_TEST_WARNINGS=print npx jest ...` prints them as a user would see them.
 * (Loaded by jest's setupFilesAfterEnv, .projenrc.ts.)
 */
const PREFIX = '[cdk8s-sidecars] WARNING: ';
/** The notice of a synthesis without a target (src/target/resolver.ts DEFAULT_TARGET_NOTICE), kept the same way. */
const NOTICE = '[cdk8s-sidecars] NOTICE: ';
const original = process.stderr.write.bind(process.stderr);
const kept: string[] = [];
(globalThis as any).__cdk8sSidecarsPrintedWarnings = kept;
process.stderr.write = ((chunk: unknown, ...rest: unknown[]) => {
  if (process.env.CDK8S_SIDECARS_TEST_WARNINGS !== 'print' && typeof chunk === 'string' && (chunk.startsWith(PREFIX) || chunk.startsWith(NOTICE))) {
    kept.push(chunk);
    return true;
  }
  return (original as any)(chunk, ...rest);
}) as typeof process.stderr.write;
