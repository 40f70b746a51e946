import { Size } from 'cdk8s';
import { checkSize, describeValue, quantity } from './bind/checks';
import { SIDECAR_RESOURCE_BOUND } from './facts/pod-defaults';
import { Where } from './private/errors';
import { Json } from './private/json';
import { KeyMemo, deepFreeze } from './private/memo';

/**
 * A CPU quantity, e.g. `{ amount: '250m' }`.
 *
 * `Cpu.millis(250)` / `Cpu.units(1)` of any cdk8s-plus major (27 and later) is one (its `amount`
 * is the quantity), so TypeScript users of cdk8s-plus pass theirs as it is.
 */
export interface CpuQuantity {
  /** The Kubernetes quantity: whole millicores (`'250m'`) or cores (`'1'`, `'0.5'`). */
  readonly amount: string;
}

/** CPU request and limit of a sidecar container. */
export interface SidecarCpuResources {
  /**
   * The CPU the scheduler reserves for the sidecar.
   * @default - the agent's own default
   */
  readonly request?: CpuQuantity;
  /**
   * The CPU the sidecar may use at most.
   * @default - the agent's own default
   */
  readonly limit?: CpuQuantity;
}

/** Request and limit of a size resource (memory, ephemeral storage), in whole mebibytes. */
export interface SidecarSizeResources {
  /**
   * What the scheduler reserves for the sidecar.
   * @default - the agent's own default (memory; ephemeral storage: a log agent's disk buffer, none for the others)
   */
  readonly request?: Size;
  /**
   * What the sidecar may use at most.
   * @default - the agent's own default (memory); none (ephemeral storage)
   */
  readonly limit?: Size;
}

/**
 * Resource requests and limits of a sidecar container.
 *
 * The library's own type, with the shape of cdk8s-plus' `ContainerResources`: the
 * `ContainerResources` of every cdk8s-plus major (27 to 34) is one, so TypeScript users of
 * cdk8s-plus pass `{ cpu: { request: kplus.Cpu.millis(100) }, memory: { limit: Size.mebibytes(128) } }`
 * as before, with the cdk8s-plus major they use. Users of other jsii languages build it from
 * `CpuQuantity` and cdk8s `Size`.
 */
export interface SidecarResources {
  /**
   * CPU request and limit.
   * @default - the agent's own default
   */
  readonly cpu?: SidecarCpuResources;
  /**
   * Memory request and limit (whole mebibytes).
   * @default - the agent's own default
   */
  readonly memory?: SidecarSizeResources;
  /**
   * Ephemeral storage (the container's writable layer, logs and emptyDir volumes not backed by
   * memory) request and limit (whole mebibytes). A log agent requests what it buffers on the pod's
   * disk by default and sets no limit: a limit on one container is also the whole pod's limit when
   * the app's containers set none, and exceeding it evicts the pod at once (docs/log-agents.md,
   * "Disk: an ephemeral-storage request, no limit").
   * @default - a log agent: a request of its disk buffer; the other sidecars: none
   */
  readonly ephemeralStorage?: SidecarSizeResources;
}

/** The agent's default requests and limits. @internal */
export interface DefaultResources {
  readonly cpuRequest: string;
  readonly cpuLimit: string;
  readonly memoryRequest: string;
  readonly memoryLimit: string;
  /**
   * The agent's ephemeral-storage request (`'260Mi'`), sized from what it keeps on the pod's disk;
   * never a limit (docs/log-agents.md, "Disk: an ephemeral-storage request, no limit").
   */
  readonly ephemeralStorageRequest?: string;
}

/**
 * The container's `resources`: the given requests and limits, the agent's defaults for CPU and
 * memory. Throws (naming `who`) on a size that is not whole mebibytes, a CPU amount that is
 * not a quantity, or a request above its limit.
 * @internal
 */
export function renderResources(who: Where, r: SidecarResources | undefined, defaults: DefaultResources): Json {
  // Without the prop, the agent's defaults alone: one frozen result per distinct defaults (every
  // input is in the key), shared by the sidecars of an app. A throw is not kept.
  if (r === undefined) {
    return defaultsRendered.get([defaults.cpuRequest, defaults.cpuLimit, defaults.memoryRequest, defaults.memoryLimit, defaults.ephemeralStorageRequest ?? ''],
      () => deepFreeze(render(who, r, defaults)));
  }
  return render(who, r, defaults);
}

const defaultsRendered = new KeyMemo<Json>();

function render(who: Where, r: SidecarResources | undefined, defaults: DefaultResources): Json {
  const size = (s: Size | undefined, prop: string, fallback: string | undefined): string | undefined => {
    if (s === undefined) return fallback;
    checkSize(who, `resources.${prop}`, s, 'Size.mebibytes(64)');
    try {
      return `${s.toMebibytes()}Mi`;
    } catch {
      throw who.error(`resources.${prop} ${s.toKibibytes()}Ki is not a whole number of mebibytes`, s, 'use e.g. Size.mebibytes(64)');
    }
  };
  const cpu = (c: CpuQuantity | undefined, prop: string, fallback: string): string => {
    if (c === undefined) return fallback;
    const amount = c?.amount;
    if (typeof amount === 'string' && /^-\d/.test(amount)) {
      throw who.error(`resources.cpu.${prop} ${describeValue(amount)} is negative, which the API server rejects ("must be greater than or equal to 0")`,
        c, "give a CPU amount of 0 or more, e.g. { amount: '250m' } or cdk8s-plus Cpu.millis(250)");
    }
    if (typeof amount !== 'string' || !CPU.test(amount)) {
      // what the user gave: the amount when there is one, else the value itself (a Lazy has no amount: not "undefined")
      const given = typeof amount === 'string' ? describeValue(amount) : describeValue(c);
      const token = c !== null && typeof c === 'object' && (typeof (c as any).produce === 'function' || typeof (c as any).resolve === 'function');
      throw who.error(`resources.cpu.${prop} ${given} is not a CPU quantity` +
        `${token ? ' (a Lazy or token cannot be read when the construct is made; give the value itself)' : ''}`,
      c, "use e.g. { amount: '250m' } or cdk8s-plus Cpu.millis(250)");
    }
    return amount;
  };
  const limits: Record<string, string> = {
    cpu: cpu(r?.cpu?.limit, 'limit', defaults.cpuLimit),
    memory: size(r?.memory?.limit, 'memory.limit', defaults.memoryLimit)!,
  };
  const requests: Record<string, string> = {
    cpu: cpu(r?.cpu?.request, 'request', defaults.cpuRequest),
    memory: size(r?.memory?.request, 'memory.request', defaults.memoryRequest)!,
  };
  const storageLimit = size(r?.ephemeralStorage?.limit, 'ephemeralStorage.limit', undefined);
  const storageRequest = size(r?.ephemeralStorage?.request, 'ephemeralStorage.request', defaults.ephemeralStorageRequest);
  if (storageLimit !== undefined) limits['ephemeral-storage'] = storageLimit;
  if (storageRequest !== undefined) requests['ephemeral-storage'] = storageRequest;

  // The API server rejects a request above its limit, also when one of them is the default
  // (kubernetes pkg/apis/core/validation/validation.go, ValidateResourceRequirements: "must be
  // less than or equal to <resource> limit"). A storage request without a limit is fine.
  const given: Record<string, { request?: unknown; limit?: unknown } | undefined> = {
    'cpu': r?.cpu, 'memory': r?.memory, 'ephemeral-storage': r?.ephemeralStorage,
  };
  const propOf: Record<string, string> = { 'cpu': 'cpu', 'memory': 'memory', 'ephemeral-storage': 'ephemeralStorage' };
  for (const resource of ['cpu', 'memory', 'ephemeral-storage']) {
    const request = requests[resource];
    const limit = limits[resource];
    if (request === undefined || limit === undefined) continue;
    if (quantity(request) > quantity(limit)) {
      const dflt = (x: unknown) => (x === undefined ? ' (the default)' : '');
      const prop = propOf[resource];
      throw who.error(
        `resources.${prop} request ${request}${dflt(given[resource]?.request)} is above the limit ${limit}${dflt(given[resource]?.limit)}, ` +
        'which the API server rejects',
        given[resource], `set resources.${prop}.limit to at least ${request}, or a smaller resources.${prop}.request`,
      );
    }
  }
  return { limits, requests };
}


/**
 * Warnings for a rendered `resources` whose CPU or memory request or limit is above
 * `SIDECAR_RESOURCE_BOUND` (src/facts/pod-defaults.ts), naming `who` and the field.
 * @internal
 */
export function resourceWarnings(who: Where, resources: Json | undefined): string[] {
  const out: string[] = [];
  for (const part of ['requests', 'limits'] as const) {
    const values = resources?.[part] ?? {};
    const prop = part === 'requests' ? 'request' : 'limit';
    const cpu = typeof values.cpu === 'string' ? quantity(values.cpu) / 1000 : NaN;
    if (cpu > SIDECAR_RESOURCE_BOUND.cpuCores) {
      out.push(`${who}: resources.cpu.${prop} ${values.cpu} is ${cpu} CPUs, above ${SIDECAR_RESOURCE_BOUND.cpuCores} CPUs, more than a node of the ` +
        'usual machine types offers one pod (the pod stays Pending where no node has it); if you meant millicores, use ' +
        `{ amount: '${values.cpu}m' } (Cpu.millis)`);
    }
    const mib = typeof values.memory === 'string' ? quantity(values.memory) : NaN;
    if (mib > SIDECAR_RESOURCE_BOUND.memoryMiB) {
      out.push(`${who}: resources.memory.${prop} ${values.memory} is ${Math.round(mib / 1024 * 10) / 10} GiB, above ` +
        `${SIDECAR_RESOURCE_BOUND.memoryMiB / 1024} GiB, more than a node of the usual machine types offers one pod (the pod stays Pending ` +
        'where no node has it); check the unit (Size.mebibytes, not gibibytes or tebibytes)');
    }
  }
  return out;
}

/**
 * A CPU quantity as cdk8s-plus writes it (`Cpu.millis(250)` -> '250m', `Cpu.units(0.5)` -> '0.5'):
 * a decimal number, in cores or with the `m` (milli) suffix.
 */
const CPU = /^\d+(\.\d+)?m?$/;
