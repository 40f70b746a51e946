/**
 * A Secret, by name (in the workload's namespace).
 *
 * Every cdk8s-plus `ISecret` (a `kplus.Secret`, or `kplus.Secret.fromSecretName(scope, id, name)`)
 * of any major is one.
 */
export interface SecretReference {
  /** The Secret's name (a DNS subdomain). */
  readonly name: string;
}

/**
 * A value in a Secret: the key `key` of the Secret `secret`. It reaches the agent as an
 * environment variable (`valueFrom.secretKeyRef`), or, for an agent that reads its secrets from
 * files, as a file of a read-only Secret volume; never through its ConfigMap.
 *
 * The library's own type, with the shape of cdk8s-plus' `SecretValue`: the `SecretValue` of every
 * cdk8s-plus major (27 to 34) is one, so TypeScript users pass
 * `{ secret: kplus.Secret.fromSecretName(this, 'creds', 'log-creds'), key: 'password' }` with the
 * cdk8s-plus major they use; without cdk8s-plus (or in another jsii language) pass
 * `{ secret: { name: 'log-creds' }, key: 'password' }`.
 */
export interface SecretKeyReference {
  /** The Secret. */
  readonly secret: SecretReference;
  /** The key of the Secret's data that holds the value. */
  readonly key: string;
}
