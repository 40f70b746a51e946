/**
 * The liveness probe of the library's agents: one timing for every agent, an endpoint per agent
 * (beside each renderer). What it is for: a native sidecar whose process hangs (deadlocked,
 * stopped, stuck in the kernel) keeps running for ever: the kubelet restarts it only on a
 * liveness failure. What it must never do: restart a healthy agent while its backend is down,
 * since a restart only loses what the agent holds in memory and does not bring the backend back.
 *
 * The kubelet, per probe (kubernetes pkg/kubelet/prober/worker.go `doProbe`, and
 * pkg/probe/http/http.go `DoHTTPProbe`, read at kubernetes/kubernetes 00421113 and 00bc6256):
 * - an HTTP GET to the pod IP, with an `http.Client` timeout of `timeoutSeconds`; a status from
 *   200 to 399 is a success, anything else (no answer in time, a refused connection) a failure;
 * - every `periodSeconds`; the container is killed and restarted after `failureThreshold`
 *   failures in a row (one success resets the count);
 * - liveness starts only once the startup probe has passed, and stops when the pod is being
 *   deleted (`DeletionTimestamp` set: "setting probe result to success"), so a shutdown that
 *   makes the endpoint fail (Envoy's `/healthcheck/fail`) is never a restart.
 *
 * The timing: a restart after 6 failures 10 s apart, each allowed 5 s: an agent that does not
 * answer for a whole minute (50 s of failures at the least, 65 s at the most) is restarted. What
 * does not restart it: a garbage collection pause (Go's and Ruby's are well below a second), a
 * flush blocked on a slow backend (every endpoint here is served by a thread of its own, and the
 * library's network timeouts are 5 s to 15 s), CPU throttling at the agent's limit (CFS periods of
 * 100 ms), a node under load answering in a few seconds instead of milliseconds (5 s, not the
 * kubelet's default 1 s). The figures measured with the real programs are in docs/log-agents.md
 * and docs/tracer.md.
 * @internal
 */
export interface LivenessTiming {
  readonly periodSeconds: number;
  readonly timeoutSeconds: number;
  readonly failureThreshold: number;
}

/** @internal */
export const AGENT_LIVENESS: LivenessTiming = Object.freeze({ periodSeconds: 10, timeoutSeconds: 5, failureThreshold: 6 });
