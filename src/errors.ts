/**
 * The public way to recognise the library's refusals of bad input, in every jsii language (as
 * aws-cdk-lib's `Errors.isValidationError`). The error class itself stays internal
 * (src/private/errors.ts): jsii hands Python, Java and Go an exception that holds the message
 * only, so these functions also take that message.
 */
import { isSidecarErrorObject, refusalsIn, ruleIdsIn } from './private/errors';

/** What `Errors.refusalOf` finds in an error. */
export interface SidecarRefusal {
  /**
   * The library's refusals the error holds, each a whole message (where, the bad value, what to do).
   * One for an error the library threw; cdk8s' validation gathers those of several workloads
   * into one error.
   */
  readonly messages: string[];

  /**
   * The ids of `cdk8s-sidecars check`'s rules the refusals are about (`CS001`..., docs/cli.md,
   * "Rules"), each once, in the order found; empty where no rule of `check` covers them (a bad
   * prop).
   */
  readonly ruleIds: string[];
}

/**
 * Tells the library's refusals (bad props, options or files, and what synthesis finds wrong with
 * a pod) from any other error.
 *
 * In TypeScript pass the caught error. In Python, Java and Go pass its message (`str(e)`,
 * `e.getMessage()`, the recovered panic's `Error()`): jsii's exceptions in those languages hold
 * the JavaScript error's message only. A refusal is recognised in the process that made it (the
 * library remembers its last 1000 refusals), also inside cdk8s' "Validation failed" error that
 * gathers them at `app.synth()`.
 *
 * @example
 * try {
 *   app.synth();
 * } catch (e) {
 *   if (!Errors.isSidecarError(e)) throw e;
 *   console.error(Errors.refusalOf(e)?.ruleIds);
 * }
 */
export class Errors {
  /**
   * Whether `error` is, or holds, a refusal of this library.
   * @param error the caught error, or its message (a string)
   */
  public static isSidecarError(error: any): boolean {
    return Errors.refusalOf(error) !== undefined;
  }

  /**
   * The refusals `error` holds and the rule ids they share with `check`, or undefined when it
   * holds none (an error of another library, or a bug).
   * @param error the caught error, or its message (a string)
   */
  public static refusalOf(error: any): SidecarRefusal | undefined {
    if (isSidecarErrorObject(error)) return { messages: [error.message], ruleIds: ruleIdsIn(error.message) };
    const text = typeof error === 'string' ? error : typeof error?.message === 'string' ? error.message : undefined;
    if (text === undefined || text === '') return undefined;
    const messages = refusalsIn(text);
    if (messages.length === 0) return undefined;
    return { messages, ruleIds: ruleIdsIn(messages.join('\n')) };
  }

  private constructor() {}
}
