/**
 * What kube-score still says about the library's containers, on purpose: each is a design choice
 * with its reason in docs/security.md ("What the linters say"), whose table the linter tests check
 * against this list. Anything else the library adds, or hides, fails `npm run test:linters`.
 *
 * None is silenced with a `kube-score/ignore` annotation: kube-score reads it per object and
 * check (scorecard/enabled.go, v1.20.0), so it would also hide the same check's findings about the
 * app's own containers.
 */
export interface DesignChoice {
  /** kube-score's check id. */
  readonly check: string;
  /** The comment's summary, as kube-score writes it. */
  readonly summary: string;
  /** The library's containers it may name ('' for the pod). */
  readonly containers: readonly string[];
  /** The heading of docs/security.md's section that gives the reason. */
  readonly doc: string;
}

/**
 * The library's containers (their default names), and the WithSidecar container of the
 * library-only app (./library-app.ts), whose defaults (pull policy, resources) are the library's.
 */
export const LIBRARY_CONTAINERS = ['envoy', 'tracer', 'log-agent', 'sidecar-tools', 'cloud-sql-proxy'] as const;

const ALL = LIBRARY_CONTAINERS;

export const DESIGN_CHOICES: readonly DesignChoice[] = [
  {
    check: 'container-ephemeral-storage-request-and-limit',
    summary: 'Ephemeral Storage limit is not set',
    containers: ALL,
    doc: 'An ephemeral-storage request, never a limit',
  },
  {
    check: 'container-ephemeral-storage-request-and-limit',
    summary: 'Ephemeral Storage request is not set',
    containers: ['envoy', 'tracer', 'cloud-sql-proxy'],
    doc: 'An ephemeral-storage request, never a limit',
  },
  {
    check: 'container-image-pull-policy',
    summary: 'ImagePullPolicy is not set to Always',
    containers: ALL,
    doc: 'imagePullPolicy IfNotPresent for a pinned tag',
  },
  {
    check: 'container-security-context-user-group-id',
    summary: 'The container is running with a low user ID',
    containers: ['log-agent'],
    doc: "Fluentd runs as its image's user, 999",
  },
  {
    check: 'container-security-context-user-group-id',
    summary: 'The container running with a low group ID',
    containers: ['log-agent'],
    doc: "Fluentd runs as its image's user, 999",
  },
  {
    check: 'pod-probes-identical',
    summary: 'Container has the same readiness and liveness probe',
    containers: [''],
    doc: "Envoy's readiness and liveness ask the same endpoint",
  },
];

/**
 * Findings about the app that disappear from kube-score's report once the library's containers are
 * in the pod (kube-score's `pod-probes` asks for one probe of each kind per pod, whichever
 * container has it: score/probes/probes.go, v1.20.0), with what the library says instead.
 */
export interface HiddenFinding {
  readonly check: string;
  readonly summary: string;
  /** The warning the library prints instead (a part of it), or none, with the reason in `doc`. */
  readonly warning?: string;
  /** The heading of docs/security.md's section that gives the reason. */
  readonly doc: string;
}

export const HIDDEN_FINDINGS: readonly HiddenFinding[] = [
  {
    check: 'pod-probes',
    summary: 'Container is missing a readinessProbe',
    warning: 'has a readinessProbe, and Envoy\'s readiness',
    doc: 'What the library hides, and says instead',
  },
  {
    check: 'pod-probes',
    summary: 'Container is missing a livenessProbe',
    doc: 'What the library hides, and says instead',
  },
];
