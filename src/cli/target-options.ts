/**
 * The target of `check` and `timeline`: `--kubernetes-version` (or the environment variable the
 * constructs read) and `--gate`, checked as the constructs check them.
 */
import { KUBERNETES_VERSION_ENV, SIDECAR_CONTAINERS_GATE_ENV, checkVersion } from '../settings';
import { UsageError } from './io';
import { KubeVersion } from '../target/capabilities';

export interface CliTarget {
  readonly version: KubeVersion;
  /** as given: `1.29` or `1.29.3` */
  readonly raw: string;
  readonly gate: boolean;
}

export function resolveCliTarget(flagVersion: string | undefined, flagGate: boolean | undefined): CliTarget {
  const fromEnv = process.env[KUBERNETES_VERSION_ENV];
  const raw = flagVersion ?? (fromEnv !== undefined && fromEnv.trim() !== '' ? fromEnv : undefined);
  if (raw === undefined) {
    throw new UsageError(`--kubernetes-version is required (or set ${KUBERNETES_VERSION_ENV}; \`cdk8s-sidecars target\` prints it for a cluster)`);
  }
  const who = flagVersion !== undefined ? '--kubernetes-version' : `environment variable ${KUBERNETES_VERSION_ENV}`;
  let version: KubeVersion;
  try {
    version = checkVersion(who, raw);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  let gate = flagGate ?? false;
  if (flagGate === undefined) {
    const env = process.env[SIDECAR_CONTAINERS_GATE_ENV];
    if (env !== undefined && env !== 'true' && env !== 'false') {
      throw new UsageError(`environment variable ${SIDECAR_CONTAINERS_GATE_ENV} is '${env}'; use 'true' or 'false'`);
    }
    gate = env === 'true';
  }
  return { version, raw, gate };
}
