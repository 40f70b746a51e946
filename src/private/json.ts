/** Plain JSON, the vocabulary of every layer below the constructs (no cdk8s types). */

/** A plain JSON object (a Kubernetes container, volume, probe, ...). */
export type Json = { [key: string]: any };
