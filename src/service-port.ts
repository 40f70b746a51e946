import { ApiObject } from 'cdk8s';
import { IConstruct } from 'constructs';
import { appFact } from './bind/binding';
import { appendServicePort } from './bind/hooks';
import { Where } from './private/errors';
import { Json } from './private/json';

/**
 * A Service port, in the shape of cdk8s-plus' `ServicePort`: the value of `servicePort()` goes
 * into `ports` of a `Service` of every cdk8s-plus major (27 to 34) as it is.
 *
 * It has no `protocol` (a cdk8s-plus `Protocol` is an enum of each major's own, which no type of
 * this library can be): the port is TCP, Kubernetes' default for a Service port.
 */
export interface SidecarServicePort {
  /** The Service's port. */
  readonly port: number;
  /**
   * The name of the Service port.
   * @default - none
   */
  readonly name?: string;
  /**
   * The node port.
   * @default - allocated by Kubernetes when the Service type needs one
   */
  readonly nodePort?: number;
  /**
   * The container port the Service sends the traffic to.
   * @default - `port`
   */
  readonly targetPort?: number;
}

const SERVICE_MANIFESTS = Symbol('cdk8s-sidecars.service-manifests');

/**
 * The manifest of the Service `obj` (its `toJson()`), read only: rendered once per synthesis for
 * the library's reads of it (the check of `exposeVia()`'s ports, and `WithEnvoy`'s look-up of the
 * app's Services), as the app's other facts are (`appFact`). Before the app's first validation,
 * rendered afresh each time. A `toJson()` that throws is not kept: the next read renders (and
 * throws) again.
 * @internal
 */
export function serviceManifest(obj: ApiObject): Json {
  const rendered = appFact(obj, SERVICE_MANIFESTS, () => new Map<ApiObject, Json>());
  const kept = rendered.get(obj);
  if (kept !== undefined) return kept;
  const json = obj.toJson();
  rendered.set(obj, json);
  return json;
}

const CHECKED = Symbol.for('cdk8s-sidecars.service-ports-checked');

/**
 * True the first time it is called for `obj`: the caller registers the check of its ports
 * (once per Service, however many ports are added to it).
 * @internal
 */
export function claimServicePortCheck(obj: ApiObject): boolean {
  if ((obj as any)[CHECKED]) return false;
  (obj as any)[CHECKED] = true;
  return true;
}

/**
 * The `ApiObject` of kind Service behind `service`: a cdk8s-plus Service of any major, or an
 * `ApiObject` (e.g. a `KubeService`). Throws a message naming `who` and what is accepted.
 * @internal
 */
export function serviceApiObject(who: Where, service: IConstruct): ApiObject {
  let obj: ApiObject | undefined;
  if (ApiObject.isApiObject(service)) {
    obj = service;
  } else {
    try {
      obj = ApiObject.of(service);
    } catch {
      obj = undefined;
    }
  }
  if (!obj || obj.kind !== 'Service' || obj.apiVersion !== 'v1') {
    const what = obj ? `a ${obj.apiVersion} ${obj.kind}` : 'neither a cdk8s-plus Service nor a cdk8s ApiObject';
    throw who.error(`'${service.node.path}' is ${what}`, service, 'pass a cdk8s-plus Service (any major) or a v1 Service ApiObject (e.g. a KubeService)');
  }
  return obj;
}

/**
 * Adds `port` (TCP) to `service`. A cdk8s-plus Service (any major) gets it through its own
 * `bind()`, so it renders the port with its others; a raw ApiObject gets it appended to
 * `spec.ports` of its manifest (after its patches), whenever it is synthesized (`appendServicePort`,
 * src/bind/hooks.ts).
 * @internal
 */
export function addServicePort(who: Where, service: IConstruct, port: SidecarServicePort): ApiObject {
  const obj = serviceApiObject(who, service);
  const { port: number, ...options } = port;
  if (!ApiObject.isApiObject(service) && typeof (service as any).bind === 'function') {
    // cdk8s-plus-27..34 Service.bind(port: number, options?: ServiceBindOptions); Protocol.TCP is 'TCP'.
    (service as any).bind(number, { ...options, protocol: 'TCP' });
    return obj;
  }
  appendServicePort(obj, JSON.parse(JSON.stringify({ name: port.name, nodePort: port.nodePort, port: number, protocol: 'TCP', targetPort: port.targetPort })));
  return obj;
}

/**
 * What the API server rejects in a Service's ports: ServicePort.name "must have unique names ...
 * Optional if only one ServicePort is defined" (the core/v1 API reference, e.g. the field's doc
 * in cdk8s-plus-27's lib/imports/k8s.d.ts), and the same port and protocol twice
 * (kubernetes pkg/apis/core/validation/validation.go, ValidateService: "Duplicate value").
 * @internal
 */
export function checkServicePorts(who: Where, obj: ApiObject): string[] {
  const spec = serviceManifest(obj)?.spec;
  const ports: Json[] = spec?.ports ?? [];
  const errors: string[] = [];
  // A type left out is ClusterIP (the API server's defaulting, pkg/apis/core/v1/defaults.go SetDefaults_Service),
  // and a ClusterIP Service may not have a nodePort (pkg/apis/core/validation/validation.go validateService,
  // v1.35.0 line 6675: "may not be used when `type` is 'ClusterIP'").
  const type = spec?.type ?? 'ClusterIP';
  if (type === 'ClusterIP') {
    ports.forEach((p, i) => {
      if (p.nodePort !== undefined && p.nodePort !== 0) {
        errors.push(`${who}: Service '${obj.node.path}' spec.ports[${i}] has nodePort ${p.nodePort}, but the Service is of type ClusterIP` +
          `${spec?.type === undefined ? ' (no type: ClusterIP is the default)' : ''}, which the API server rejects ("may not be used when ` +
          "`type` is 'ClusterIP'\"); leave nodePort out of exposeVia(), or make the Service a NodePort or LoadBalancer one " +
          '(cdk8s-plus: type: kplus.ServiceType.NODE_PORT).');
      }
    });
  }
  const names = new Map<string, number>();
  const numbers = new Map<string, number>();
  ports.forEach((p, i) => {
    const at = `Service '${obj.node.path}' spec.ports[${i}]`;
    if (p.name !== undefined) {
      const first = names.get(p.name);
      if (first !== undefined) errors.push(`${who}: ${at} has the name '${p.name}' of spec.ports[${first}]; the API server rejects duplicate port names. Give exposeVia() another name.`);
      else names.set(p.name, i);
    } else if (ports.length > 1) {
      errors.push(`${who}: ${at} (port ${p.port}) has no name; the API server requires a name on every port of a Service with more than one. Name it.`);
    }
    const key = `${p.port}/${p.protocol ?? 'TCP'}`;
    const first = numbers.get(key);
    if (first !== undefined) errors.push(`${who}: ${at} is port ${key}, as is spec.ports[${first}]; the API server rejects duplicate ports. Give exposeVia() another port.`);
    else numbers.set(key, i);
  });
  return errors;
}
