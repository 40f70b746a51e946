/**
 * The target of `check` and `timeline`: `--kubernetes-version` (or the environment variable the
 * constructs read) and `--gate`, checked as the constructs check them.
 */
import { UsageError } from './io';
import { SidecarError, Where } from '../private/errors';
import { KubeVersion } from '../target/capabilities';
import { KUBERNETES_VERSION_ENV, assembleTarget } from '../target/resolver';

export interface CliTarget {
  readonly version: KubeVersion;
  /** as given: `1.29` or `1.29.3` */
  readonly raw: string;
  readonly gate: boolean;
}

export function resolveCliTarget(flagVersion: string | undefined, flagGate: boolean | undefined): CliTarget {
  // The one assembly of a target (src/target/resolver.ts): the flag, then the environment; nothing set is an error.
  const { version, raw, gate } = assembleTarget({
    version: flagVersion,
    gate: flagGate,
    where: new Where('--kubernetes-version'),
    fail: (e: SidecarError) => new UsageError(e.text),
    failGiven: (e: SidecarError) => new UsageError(e.message),
    unset: () => new UsageError(`--kubernetes-version is required (or set ${KUBERNETES_VERSION_ENV}; \`cdk8s-sidecars target\` prints it for a cluster)`),
    versionName: '--kubernetes-version',
    gateName: '--gate',
  });
  return { version, raw, gate };
}
