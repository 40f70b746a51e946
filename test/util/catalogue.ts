/**
 * The harness of the refusal catalogues (test/bad-input.test.ts: every mistake a user can make;
 * test/bad-types.test.ts: what a JavaScript caller can pass): a case builds an app, and its
 * program (build, then `app.synth()` into a fresh directory) must fail with one message line
 * holding the construct (its path), the bad value and the fix, in that order, and write nothing.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { ApiObject, App, Chart } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { rawWorkload } from './fixtures';
import { SidecarError } from '../../src/private/errors';

/** The environment variable the constructs read their target from. */
export const ENV = 'CDK8S_SIDECARS_KUBERNETES_VERSION';

/** Each test of the file runs without the caller's CDK8S_SIDECARS_KUBERNETES_VERSION (restored after the file). */
export function withoutVersionEnv(): void {
  const saved = process.env[ENV];
  beforeEach(() => { delete process.env[ENV]; });
  afterAll(() => { if (saved !== undefined) process.env[ENV] = saved; else delete process.env[ENV]; });
}

export const ENDPOINT = 'otel-collector.observability:4317';
export const USER = { user: 1000, group: 1000 };
export const APP = { name: 'app', image: 'ghcr.io/example/app:1.0.0', ports: [{ containerPort: 8080 }] };

/** What a case gets to build its app with. */
export interface Ctx {
  readonly app: App;
  readonly chart: Chart;
  /** A cdk8s-plus Deployment 'web' (named 'web') with an app container 'app' on port 8080. */
  deployment(props?: Partial<kplus.DeploymentProps>): kplus.Deployment;
  /** A raw Deployment (or `kind`) ApiObject 'raw' with the given pod spec. */
  raw(podSpec: any, kind?: string): ApiObject;
}

export interface Case {
  readonly name: string;
  readonly build: (ctx: Ctx) => void;
  /** Substrings one message line must contain, in this order: the construct (path), the bad value, the fix. */
  readonly message: string[];
}

export function ctx(app: App, chart: Chart): Ctx {
  return {
    app,
    chart,
    deployment: (props = {}) => new kplus.Deployment(chart, 'web', {
      metadata: { name: 'web' },
      containers: [{ name: 'app', image: 'ghcr.io/example/app:1.0.0', portNumber: 8080, securityContext: USER }],
      ...props,
    }),
    raw: (podSpec, kind = 'Deployment') => rawWorkload(chart, 'raw', podSpec, kind),
  };
}

/** `parts` occur in `line` in this order. */
export function inOrder(line: string, parts: string[]): boolean {
  let at = 0;
  for (const part of parts) {
    const i = line.indexOf(part, at);
    if (i < 0) return false;
    at = i + part.length;
  }
  return true;
}

/**
 * An error the library raises for bad input: a SidecarError (src/private/errors.ts), or the plain
 * Error in which cdk8s gathers the validation errors of a synthesis ("Validation failed with the
 * following errors: ...", each line a message of the engine naming its construct), or the
 * engine's errors of one workload as `toJson()` throws them ('cdk8s-sidecars: ...'). Never a
 * TypeError, RangeError or URIError from deep inside.
 */
export function isLibraryError(e: unknown): boolean {
  if (e instanceof SidecarError) return true;
  return e instanceof Error && e.constructor === Error &&
    (e.message.startsWith('Validation failed with the following errors:') || e.message.startsWith('cdk8s-sidecars: '));
}

/**
 * Runs one case as the user's program: it must fail, one line of the message must hold
 * `c.message` in order, and the output directory stays empty. With `plainError`, the error must
 * also be the library's SidecarError (never a TypeError, RangeError or URIError).
 */
export function expectRefused(c: Case, options: { tmpPrefix: string; plainError?: boolean }): void {
  const outdir = fs.mkdtempSync(path.join(os.tmpdir(), options.tmpPrefix));
  try {
    const app = new App({ outdir });
    const chart = new Chart(app, 'test');
    let message: string | undefined;
    let error: unknown;
    try {
      c.build(ctx(app, chart));
      app.synth();
    } catch (e) {
      error = e;
      message = (e as Error).message;
    }
    expect(message).toBeDefined();
    if (options.plainError && !isLibraryError(error)) throw new Error(`not the library's error: ${(error as Error).constructor?.name}: ${message}`);
    if (!message!.split('\n').some(line => inOrder(line, c.message))) {
      throw new Error(`no error line holds, in this order, ${c.message.map(p => `"${p}"`).join(', ')}:\n${message}`);
    }
    expect(fs.readdirSync(outdir)).toEqual([]);
  } finally {
    fs.rmSync(outdir, { recursive: true, force: true });
  }
}
