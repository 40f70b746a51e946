/**
 * Layer 3 glue: every way the library changes a cdk8s object's output, one per kind of object
 * (a method patched into a cdk8s class showed in every user's stack trace). No other file of src/
 * overrides, assigns or redefines a `toJson()` (test/no-patch.test.ts), and no cdk8s class is patched.
 *
 * | object | created by | its hook |
 * |---|---|---|
 * | a workload (its pod template gets the sidecars) | the user | `hookToJson`, from `WorkloadBinding` (binding.ts) |
 * | a Service given to `WithEnvoy.exposeVia()` (an `ApiObject`) | the user | `appendServicePort` (`hookToJson`) |
 * | an agent's ConfigMap | the library | `AgentConfigMap` (a subclass) |
 * | `NativeSidecarGuard`'s policy and its binding | the library | `TargetVersionedApiObject` (a subclass) |
 *
 * An object the library creates is an instance of a subclass of `ApiObject` whose `toJson()` does
 * the work. An object the user created has its own `toJson()` wrapped on the instance (`hookToJson`,
 * once per object), because what cdk8s offers does not reach the output: a JSON patch (and a
 * resolver) is applied inside the generated class's `toJson()` BEFORE it filters the result by its
 * schema, and the filter drops what the library adds (a `KubeDeployment` of cdk8s-plus-27's
 * imports drops `initContainers[].restartPolicy`, cdk8s#2172; a `KubeService` drops a numeric
 * `targetPort`, which its `toJson_ServicePort` reads as `targetPort?.value`); a `Lazy` value can
 * only be given in the props, when the user creates the object.
 */
import { ApiObject, ApiObjectProps } from 'cdk8s';
import { Construct } from 'constructs';
import { Json } from '../private/json';
import { setOwn, sortedKeys } from '../private/order';

/**
 * Makes `emit` the `toJson()` of `obj`, an object the user created (a workload or a Service);
 * `emit` is given the object's own `toJson()`, which is returned as well. Called at most once per
 * object (each caller keeps its state on the object and hooks it once): the only instance hook.
 * @internal
 */
export function hookToJson(obj: ApiObject, emit: (own: () => Json) => Json): () => Json {
  const own: () => Json = obj.toJson.bind(obj);
  Object.defineProperty(obj, 'toJson', { value: () => emit(own), configurable: true, writable: true });
  return own;
}

/** The ports `appendServicePort` added to a Service (one symbol for every copy of the library loaded). */
const EXTRA_PORTS = Symbol.for('cdk8s-sidecars.service-ports');

/**
 * Appends `port` to `spec.ports` of the Service `obj`, an `ApiObject` the user created (e.g. a
 * `KubeService`), whenever it is synthesized: after its own `toJson()` (its patches applied and
 * its schema filter run, which would drop a numeric `targetPort`), after its own ports and the
 * ones added before, in the order added. A cdk8s-plus Service gets its ports through its own
 * `bind()` instead (src/service-port.ts).
 * @internal
 */
export function appendServicePort(obj: ApiObject, port: Json): void {
  let added: Json[] | undefined = (obj as any)[EXTRA_PORTS];
  if (!added) {
    const ports: Json[] = [];
    added = ports;
    (obj as any)[EXTRA_PORTS] = ports;
    hookToJson(obj, own => {
      const json = own();
      json.spec = { ...(json.spec ?? {}), ports: [...(json.spec?.ports ?? []), ...ports] };
      return json;
    });
  }
  added.push(port);
}

/**
 * The ConfigMap that holds a sidecar's generated config, created by its construct in the
 * workload's namespace. A JSON patch of the workload's `/metadata/namespace` moves the pod at
 * synthesis, so the ConfigMap is emitted in the namespace the workload is emitted in
 * (`emittedNamespace()`, asked at each `toJson()`; its metadata's keys then sorted), or the pod
 * could not mount it.
 * @internal
 */
export class AgentConfigMap extends ApiObject {
  constructor(
    scope: Construct, id: string, namespace: string | undefined, data: Record<string, string>,
    private readonly workload: { emittedNamespace(): string | undefined },
  ) {
    super(scope, id, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: namespace ? { namespace } : {},
      data,
    });
  }

  public toJson(): any {
    const json = super.toJson();
    const emitted = this.workload.emittedNamespace();
    if (emitted === json.metadata?.namespace) return json;
    const metadata: Record<string, unknown> = {};
    const given = { ...json.metadata, namespace: emitted };
    for (const k of sortedKeys(given)) if (given[k] !== undefined) setOwn(metadata, k, given[k]);
    return { ...json, metadata };
  }
}

/**
 * An `ApiObject` whose `apiVersion` is decided at synthesis by `version()` (the target is read
 * then): `NativeSidecarGuard`'s policy and binding. The emitted `apiVersion` is `version()`'s,
 * whatever the props or a JSON patch say (`apiVersion` of the object stays the props' one).
 * @internal
 */
export class TargetVersionedApiObject extends ApiObject {
  constructor(scope: Construct, id: string, private readonly version: () => string, props: ApiObjectProps) {
    super(scope, id, props);
  }

  public toJson(): any {
    return { ...super.toJson(), apiVersion: this.version() };
  }
}

