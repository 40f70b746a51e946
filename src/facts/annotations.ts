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
