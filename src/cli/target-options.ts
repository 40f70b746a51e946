/**
 * The target of `check` and `timeline`: `--kubernetes-version` (or the environment variable the
 * constructs read) and `--gate`, checked as the constructs check them.
 */
import { UsageError } from './io';
import { KubeVersion } from '../target/capabilities';
import { KUBERNETES_VERSION_ENV, checkVersion, targetGate, targetVersion } from '../target/resolver';

export interface CliTarget {
  readonly version: KubeVersion;
  /** as given: `1.29` or `1.29.3` */
  readonly raw: string;
  readonly gate: boolean;
}

export function resolveCliTarget(flagVersion: string | undefined, flagGate: boolean | undefined): CliTarget {
  // The one reader of the sources (src/target/resolver.ts): the flag, then the environment.
  const reading = { fail: (problem: string) => new UsageError(problem), versionFallback: '--kubernetes-version', gateFallback: '--gate or the default false' };
  const given = { version: flagVersion, gate: flagGate };
  const found = targetVersion(given, reading);
  if (found === undefined) {
    throw new UsageError(`--kubernetes-version is required (or set ${KUBERNETES_VERSION_ENV}; \`cdk8s-sidecars target\` prints it for a cluster)`);
  }
  const raw = found.raw;
  let version: KubeVersion;
  try {
    // (a version from the environment was checked by the resolver, which names the variable)
    version = checkVersion('--kubernetes-version', raw);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const gate = targetGate(given, reading) ?? false;
  return { version, raw, gate };
}
