/**
 * Envoy's shutdown model (envoyproxy/envoy v1.36.4, unchanged in the 1.37 line as far as its docs say: the source at 1.37 could not be fetched), beside its bootstrap renderer.
 */
import { ShutdownModel, shutdownModel } from './shutdown-model';

/**
 * Envoy's shutdown:
 * - Before SIGTERM (the `preStop` hook, in both layouts, from the pod's termination on):
 *   `/healthcheck/fail` and `/drain_listeners?inboundonly&graceful` drain the pod-facing
 *   listeners for `drainTime` (at most `appShutdownTime`), while the app shuts down.
 * - Reads and flushes nothing of its own after SIGTERM: the handler calls `shutdown()`, which
 *   exits the main dispatcher loop and closes the listeners and connections at once
 *   (`source/server/server.cc`, `RunHelper`: "caught SIGTERM").
 * - Bound: a second to exit.
 */
export function envoyShutdown(): ShutdownModel {
  return shutdownModel([['exit (no drain after SIGTERM; it ran in preStop)', 1]], 0);
}
