/**
 * The kubelet's liveness prober, written from the kubelet's code, NOT from the library's probe
 * settings: what the tests use to tell whether the kubelet would restart a container.
 *
 * Sources (kubernetes/kubernetes):
 * - `pkg/kubelet/prober/worker.go` `run` / `doProbe` (read at commit 00421113): one worker per
 *   container and probe, woken by a ticker every `periodSeconds` (a probe that takes longer than
 *   a period makes the ticker drop the ticks in between); liveness is not probed before the
 *   container has started (its startup probe passed), nor once the pod is being deleted. Each
 *   result extends a run of equal results (`resultRun`) or starts a new one; a run of
 *   `failureThreshold` failures sets the result to Failure: the kubelet kills the container and
 *   restarts it, and the worker waits for the new container.
 * - `pkg/probe/http/http.go` `DoHTTPProbe` (read at commit 00bc6256): a GET through an
 *   `http.Client` whose `Timeout` is `timeoutSeconds` (the whole exchange, body included); a
 *   status from 200 to 399 is Success; an error (refused, reset, timed out) or any other status is
 *   Failure.
 */
import * as http from 'http';

/** The fields of a Kubernetes probe that the prober reads (defaults as in the API: 10 s, 1 s, 3). */
export interface ProbeTiming {
  readonly periodSeconds?: number;
  readonly timeoutSeconds?: number;
  readonly failureThreshold?: number;
}

const timing = (p: ProbeTiming) => ({ period: p.periodSeconds ?? 10, timeout: p.timeoutSeconds ?? 1, threshold: p.failureThreshold ?? 3 });

/** The counting of `doProbe`: feed it each probe's result; it says when the kubelet kills the container. */
export class LivenessWorker {
  private lastResult?: boolean;
  private resultRun = 0;
  constructor(private readonly probe: ProbeTiming) {}

  /** One probe's result; true when the kubelet now restarts the container. */
  public record(success: boolean): boolean {
    if (this.lastResult === success) {
      this.resultRun++;
    } else {
      this.lastResult = success;
      this.resultRun = 1;
    }
    if (!success && this.resultRun >= timing(this.probe).threshold) {
      this.resultRun = 0;
      return true;
    }
    return false;
  }
}

/** How the container answers a GET at time `t` (seconds): its status and how long it takes, or undefined for no answer at all. */
export type Answer = (t: number) => { readonly status: number; readonly seconds: number } | undefined;

/**
 * The kubelet's liveness probing of a container that started at 0 (its startup probe passed),
 * simulated up to `horizonSeconds`: the time the kubelet decides to restart it, or undefined.
 */
export function simulateLiveness(probe: ProbeTiming, answer: Answer, horizonSeconds: number): number | undefined {
  const { period, timeout } = timing(probe);
  const worker = new LivenessWorker(probe);
  let t = 0;
  while (t <= horizonSeconds) {
    const a = answer(t);
    const ok = a !== undefined && a.seconds < timeout && a.status >= 200 && a.status < 400;
    const took = a === undefined ? timeout : Math.min(a.seconds, timeout);
    if (worker.record(ok)) return t + took;
    // the next tick: the ticker's ticks that fell inside the probe are dropped
    t += period * Math.max(1, Math.ceil(took / period));
  }
  return undefined;
}

/** One probe as `DoHTTPProbe` makes it: success for 200-399 within `timeoutSeconds`. */
export function httpGetProbe(url: string, timeoutSeconds: number): Promise<{ ok: boolean; status?: number; error?: string; seconds: number }> {
  const t0 = Date.now();
  return new Promise(resolve => {
    let done = false;
    const finish = (r: { ok: boolean; status?: number; error?: string }) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve({ ...r, seconds: (Date.now() - t0) / 1000 });
    };
    // the client's Timeout covers the connection, the request and reading the body
    const req = http.get(url, { agent: false }, res => {
      res.on('data', () => undefined);
      res.on('end', () => {
        const status = res.statusCode ?? 0;
        finish({ ok: status >= 200 && status < 400, status });
      });
      res.on('error', e => finish({ ok: false, error: e.message }));
    });
    const timer = setTimeout(() => {
      req.destroy();
      finish({ ok: false, error: `timeout after ${timeoutSeconds} s` });
    }, timeoutSeconds * 1000);
    req.on('error', e => finish({ ok: false, error: e.message }));
  });
}

/** What the kubelet's liveness worker saw in a real run. */
export interface LivenessRun {
  /** Every probe: seconds from the start, its result. */
  readonly probes: Array<{ at: number; ok: boolean; status?: number; error?: string }>;
  /** Seconds from the start until the kubelet would have restarted the container, if it would. */
  readonly restartAfter?: number;
}

/**
 * The kubelet's liveness worker against a real endpoint, in real time, for `seconds` (or until
 * it would restart the container): a GET every `periodSeconds` with the probe's timeout.
 */
export async function watchLiveness(url: string, probe: ProbeTiming, seconds: number): Promise<LivenessRun> {
  const { period, timeout } = timing(probe);
  const worker = new LivenessWorker(probe);
  const probes: LivenessRun['probes'] = [];
  const t0 = Date.now();
  let next = t0;
  while (Date.now() - t0 <= seconds * 1000) {
    const at = (Date.now() - t0) / 1000;
    const r = await httpGetProbe(url, timeout);
    probes.push({ at, ok: r.ok, status: r.status, error: r.error });
    if (worker.record(r.ok)) return { probes, restartAfter: (Date.now() - t0) / 1000 };
    next += period * 1000;
    while (next < Date.now()) next += period * 1000;
    const wait = next - Date.now();
    if (Date.now() - t0 + wait > seconds * 1000) break;
    await new Promise(resolve => setTimeout(resolve, wait));
  }
  return { probes };
}
