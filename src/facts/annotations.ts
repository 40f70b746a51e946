/** The annotations the library writes on the pods it emits, for the checks that run after it. */

/**
 * The pod-template annotation listing the init containers the library emitted as native
 * sidecars (comma-separated, in `initContainers` order), for `NativeSidecarGuard` to check
 * after every mutating webhook has run. Written only in the native layout.
 */
export const NATIVE_SIDECARS_ANNOTATION = 'sidecars.cdk8s.io/native-sidecars';
