/**
 * What an agent does between SIGTERM and its exit, as data: the model each agent's renderer
 * writes down beside its config (taken from the agent's own shutdown code at the pinned tag),
 * and that the engine budgets (`ShutdownSpec`).
 */

/** One agent's shutdown, with the timeouts the library sets. All times in whole seconds. */
export interface ShutdownModel {
  /**
   * The most the agent can take from SIGTERM to its exit: the stop time the engine budgets.
   * The sum of `terms`.
   */
  readonly stopSeconds: number;
  /**
   * How long the agent must keep reading after the app's last write before it gets SIGTERM: 0
   * for an agent that reads its inputs to the end at shutdown; the polling or scanning delay
   * for an agent that stops reading at SIGTERM.
   */
  readonly readAfterAppExitSeconds: number;
  /** How `stopSeconds` is made up: [what, seconds], in order. */
  readonly terms: ReadonlyArray<readonly [string, number]>;
  /**
   * The agent can be `readAfterAppExitSeconds` behind the app's last write at any moment (it
   * polls its files, or finds a new file only at its next scan) and reads nothing more after
   * SIGTERM, so in the native layout too it must get SIGTERM that long after the app's exit. Not
   * an agent that reads every file to its end at shutdown (each agent's config.ts says which).
   */
  readonly holdSigtermInNative?: boolean;
}

/** A model from its terms (the stop time is their sum, rounded up to whole seconds). */
export function shutdownModel(terms: Array<readonly [string, number]>, readAfterAppExitSeconds: number, holdSigtermInNative = false): ShutdownModel {
  return {
    stopSeconds: Math.ceil(terms.reduce((acc, [, s]) => acc + s, 0)),
    readAfterAppExitSeconds,
    terms,
    ...(holdSigtermInNative ? { holdSigtermInNative } : {}),
  };
}
