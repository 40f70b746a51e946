/**
 * Which pods a Service sends traffic to (core/v1 `ServiceSpec.selector`): the pods in its
 * namespace whose labels hold every key of the selector with the same value. A Service without a
 * selector (or with an empty one) selects no pods: its endpoints are managed by hand.
 */
import { Json } from '../private/json';

/** Whether `selector` (a Service's `spec.selector`) selects any pod: false without one or with an empty one. */
export function selectsPods(selector: unknown): selector is Record<string, unknown> {
  return !!selector && typeof selector === 'object' && Object.keys(selector).length > 0;
}

/** Whether `selector` (a Service's `spec.selector`) selects pods with these labels. */
export function selectorSelects(selector: unknown, labels: { readonly [key: string]: unknown } | undefined): boolean {
  if (!selectsPods(selector)) return false;
  return Object.entries(selector).every(([k, v]) => labels?.[k] === v);
}

/** Whether `service` (plain JSON) selects the pods of a workload in `namespace` with these pod labels. */
export function serviceSelects(service: Json, namespace: string | undefined, labels: { readonly [key: string]: unknown } | undefined): boolean {
  if ((service?.metadata?.namespace ?? '') !== (namespace ?? '')) return false;
  return selectorSelects(service?.spec?.selector, labels);
}
