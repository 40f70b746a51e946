/**
 * Layer 2: the API server's semantic rules for a pod spec (SIDECARS.md §4) and the fields a
 * target release does not know. Schemas check shape only; these are the rules they miss.
 */
import { capabilities } from '../target';
import { Json } from './spec';

/** What the rules need to know about the target. */
export interface RuleTarget {
  /** Kubernetes minor version (1.x). */
  readonly minor: number;
  /** The SidecarContainers gate is on (only matters for 1.28). */
  readonly gate: boolean;
}

const PROBES_AND_HOOKS = ['lifecycle', 'livenessProbe', 'readinessProbe', 'startupProbe'];

/**
 * Checks a final pod spec. Returns one message per violation; `where` names the workload.
 */
export function checkPodSpec(spec: Json, target: RuleTarget, where: string): string[] {
  const errors: string[] = [];
  const init: Json[] = spec.initContainers ?? [];
  const containers: Json[] = spec.containers ?? [];
  const caps = capabilities(target.minor, target.gate);
  const nativeKnown = caps.nativeSidecars;

  for (const c of init) {
    const at = `${where}: init container '${c.name}'`;
    if (c.restartPolicy !== undefined) {
      if (c.restartPolicy !== 'Always') {
        errors.push(`${at} has restartPolicy '${c.restartPolicy}': only 'Always' is allowed on init containers.`);
      } else if (!nativeKnown) {
        errors.push(
          `${at} has restartPolicy 'Always', which Kubernetes 1.${target.minor} ` +
          `${target.minor === 28 ? 'drops without the SidecarContainers feature gate' : 'does not know (the field is dropped or rejected)'}: ` +
          'the pod would hang in Init. Target 1.29+ or use the legacy layout.',
        );
      }
    }
    if (c.restartPolicy !== 'Always') {
      for (const field of PROBES_AND_HOOKS) {
        if (c[field] !== undefined) {
          errors.push(`${at} sets ${field}, which is forbidden on init containers without restartPolicy 'Always'.`);
        }
      }
    }
    if (c.resizePolicy !== undefined) {
      errors.push(`${at} sets resizePolicy, which must not be set on init containers.`);
    }
  }

  for (const c of containers) {
    if (c.restartPolicy !== undefined) {
      errors.push(
        `${where}: container '${c.name}' sets restartPolicy '${c.restartPolicy}': ` +
        'restartPolicy may not be set for non-init containers.',
      );
    }
  }

  for (const c of [...init, ...containers]) {
    for (const hook of ['preStop', 'postStart']) {
      const sleep = c.lifecycle?.[hook]?.sleep;
      if (sleep !== undefined && caps.sleepAction && sleep.seconds === 0 && !caps.sleepZero) {
        errors.push(
          `${where}: container '${c.name}' has a ${hook} sleep of 0 seconds, which Kubernetes 1.${target.minor} ` +
          'rejects (allowed from 1.33). Sleep at least 1 second or drop the hook.',
        );
      }
      if (sleep !== undefined && !caps.sleepAction) {
        errors.push(
          `${where}: container '${c.name}' uses the ${hook} sleep action, which Kubernetes 1.${target.minor} ` +
          'does not have (beta from 1.30). Use an exec hook or target 1.30+.',
        );
      }
    }
  }

  const names = new Map<string, number>();
  for (const c of [...init, ...containers]) names.set(c.name, (names.get(c.name) ?? 0) + 1);
  for (const [name, count] of names) {
    if (count > 1) {
      errors.push(`${where}: container name '${name}' is used ${count} times; names must be unique across initContainers and containers.`);
    }
  }

  const volumes = new Map<string, number>();
  for (const v of spec.volumes ?? []) volumes.set(v.name, (volumes.get(v.name) ?? 0) + 1);
  for (const [name, count] of volumes) {
    if (count > 1) errors.push(`${where}: volume name '${name}' is used ${count} times; volume names must be unique.`);
  }
  for (const c of [...init, ...containers]) {
    for (const m of c.volumeMounts ?? []) {
      if (!volumes.has(m.name)) {
        errors.push(`${where}: container '${c.name}' mounts volume '${m.name}', which is not a volume of the pod.`);
      }
    }
  }

  const hostPorts = new Map<string, string>();
  for (const c of [...init, ...containers]) {
    for (const p of c.ports ?? []) {
      if (p.hostPort === undefined) continue;
      const key = `${p.hostPort}/${p.protocol ?? 'TCP'}`;
      const first = hostPorts.get(key);
      if (first !== undefined) {
        errors.push(`${where}: hostPort ${key} is used by both '${first}' and '${c.name}'.`);
      } else {
        hostPorts.set(key, c.name);
      }
    }
  }
  return errors;
}
