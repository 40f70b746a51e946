/** The annotations the library writes on the pods it emits, for the checks that run after it. */

/**
 * The pod-template annotation listing the init containers the library emitted as native
 * sidecars (comma-separated, in `initContainers` order), for `NativeSidecarGuard` to check
 * after every mutating webhook has run. Written only in the native layout.
 */
export const NATIVE_SIDECARS_ANNOTATION = 'sidecars.cdk8s.io/native-sidecars';

/**
 * The pod template annotation in which the library records how long each of its sidecars takes
 * from SIGTERM to its exit (docs/shutdown.md, "What the manifest records"): `name=Ns` entries in
 * the pod's order, comma-separated, e.g. `log-agent=7s,envoy=20s`. `SidecarTimeline.ofManifest`
 * and `cdk8s-sidecars timeline` read it, so the library's own output is timed as the library
 * planned it (no sidecar shown as killed for want of a stop time); a container it names that sits
 * in spec.containers is a legacy sidecar.
 */
export const STOP_TIMES_ANNOTATION = 'sidecars.cdk8s.io/stop-times';

/**
 * The pod template annotation in which the library records the app's budget it placed the
 * sidecars by (docs/shutdown.md, "What the manifest records"): the app containers' time from
 * SIGTERM to their exit, `appShutdownTime` or what the binding inferred from the manifest, as
 * `Ns` (e.g. `20s`). `SidecarTimeline.ofManifest` and `cdk8s-sidecars timeline` read it where no
 * `appShutdownTime` is given, so the library's own output is timed with the app's real budget
 * instead of the default 10 s. Written beside STOP_TIMES_ANNOTATION.
 */
export const APP_SHUTDOWN_ANNOTATION = 'sidecars.cdk8s.io/app-shutdown-time';

// The check of NATIVE_SIDECARS_ANNOTATION that NativeSidecarGuard's ValidatingAdmissionPolicy runs
// (CEL) after every mutating webhook.

/** `',' + <marker> + ','` contains `',' + c.name + ','`: standard CEL only (no strings extension). */
const MARKER = `object.metadata.annotations['${NATIVE_SIDECARS_ANNOTATION}']`;
const MARKED = `(',' + ${MARKER} + ',').contains(',' + c.name + ',')`;
const KEEPS_ALWAYS = "(has(c.restartPolicy) && c.restartPolicy == 'Always')";

/**
 * The policy's validation: a pod passes unless an init container named in the marker
 * annotation lacks `restartPolicy: Always`. Absent annotations, marker or init containers pass.
 */
export const GUARD_EXPRESSION =
  `!has(object.metadata.annotations) || !('${NATIVE_SIDECARS_ANNOTATION}' in object.metadata.annotations) || ` +
  `!has(object.spec.initContainers) || object.spec.initContainers.all(c, !${MARKED} || ${KEEPS_ALWAYS})`;

/**
 * The rejection message, naming the first stripped container (evaluated only when the
 * validation fails, so the filtered list is never empty).
 */
export const GUARD_MESSAGE_EXPRESSION =
  `'init container \\'' + object.spec.initContainers.filter(c, ${MARKED} && !${KEEPS_ALWAYS})[0].name + ` +
  `'\\' was emitted by cdk8s-sidecars as a native sidecar (annotation ${NATIVE_SIDECARS_ANNOTATION}) but arrived without ` +
  'restartPolicy: Always: a mutating webhook or controller built against an older Kubernetes client dropped the field, ' +
  "and the pod would hang in Init or lose its sidecar. Update or exclude that webhook, or synthesize for the legacy layout.'";

/** The static message, used where the message expression cannot be evaluated. */
export const GUARD_MESSAGE =
  `An init container listed in the pod annotation ${NATIVE_SIDECARS_ANNOTATION} arrived without restartPolicy: Always ` +
  '(a mutating webhook or controller built against an older Kubernetes client dropped it); the pod would hang in Init.';
