/** The brand every copy of the library puts on its SidecarErrors (a registered symbol: one for all copies). */
const SIDECAR_ERROR = Symbol.for('cdk8s-sidecars.SidecarError');

/**
 * The library's one error for bad input, and the one place its message is built. Every check of a
 * prop, an option or a file's value throws a `SidecarError` that names where the value was given
 * (`WithEnvoy 'app/web/envoy'`, `LogOutput.loki()`), holds the value itself, says what is
 * wrong with it (the problem, which shows the value) and what to do (the fix):
 *
 *     <where>: <problem><sep><fix>.
 *
 * An error raised below the constructs (an agent's config renderer, which knows the value but not
 * the construct) has no `where` yet and no final '.': the construct that called the renderer
 * places it with `Where.place(e)`.
 *
 * Kept internal (not in API.md): jsii cannot hand a class extending Error to the other languages,
 * as aws-cdk-lib keeps its ValidationError internal. Users recognise it with the public
 * `Errors.isSidecarError` (src/errors.ts), in every language: each one made is recorded
 * (`recordRefusals`). Errors that are not about input (a broken invariant of the library itself)
 * stay plain `Error`s, each listed in test/typed-errors.test.ts.
 * @internal
 */
export class SidecarError extends Error {
  /**
   * What joins the problem to the fix: '; ' (the default), ', ' before an example ('e.g. ...'),
   * '. ' before a new sentence, ': ' before a consequence, ' ' where the fix ends the sentence
   * ('must be made with' + 'SidecarCheck.http()').
   */
  public static readonly SEPARATORS = ['; ', ', ', '. ', ': ', ' '] as const;

  /** The class's name, as a stack trace shows it (`SidecarError: WithEnvoy 'app/web/envoy': ...`). */
  public name = 'SidecarError';

  /** Where the value was given: a construct (`WithEnvoy 'app/web/envoy'`), a factory, a file; '' until placed. */
  public readonly where: string;
  /** The bad value as it was given (not a copy: the message shows it). */
  public readonly value: unknown;
  /** What is wrong, naming the prop and showing the value (`appPort 80 is below 1024, ...`). */
  public readonly problem: string;
  /** What to do (`use a port from 1024 up`). */
  public readonly fix: string;
  /** What joins problem and fix in the message. */
  public readonly sep: SidecarErrorSeparator;

  public constructor(details: SidecarErrorDetails) {
    super(sidecarErrorMessage(details));
    recordRefusals([this.message]);
    this.where = details.where ?? '';
    this.value = details.value;
    this.problem = details.problem;
    this.fix = details.fix;
    this.sep = details.sep ?? '; ';
    // the brand isSidecarErrorObject() reads, on the instance (not enumerable: no JSON shows it)
    Object.defineProperty(this, SIDECAR_ERROR, { value: true });
  }

  /**
   * The message as a whole sentence, for a caller that puts its own name in front (the CLI): the
   * message of a placed error, and `<problem><sep><fix>.` for one without a place.
   */
  public get text(): string {
    return this.where ? this.message : `${this.message}.`;
  }

  /**
   * This error placed at `where`: an error without a place gets it, a placed one is nested in it
   * (`<where>: environment variable ...: <problem>`, for the reader of a variable).
   */
  public placedAt(where: string): SidecarError {
    return new SidecarError({ where: this.where ? `${where}: ${this.where}` : where, value: this.value, problem: this.problem, fix: this.fix, sep: this.sep });
  }
}

/** How `SidecarError` joins the problem to the fix. */
export type SidecarErrorSeparator = typeof SidecarError.SEPARATORS[number];

/** The fields of a `SidecarError`. */
export interface SidecarErrorDetails {
  /** Where the value was given; left out by a layer that does not know (the caller places it). */
  readonly where?: string;
  /** The bad value itself (`undefined` for a value that is missing). */
  readonly value: unknown;
  /** What is wrong, naming the prop and showing the value. */
  readonly problem: string;
  /** What to do about it. */
  readonly fix: string;
  /** What joins problem and fix; '; ' when left out. */
  readonly sep?: SidecarErrorSeparator;
}

/** The message of a `SidecarError`: the only place one is written. */
function sidecarErrorMessage(d: SidecarErrorDetails): string {
  if (d.where === SYNTHESIS) return `${SYNTHESIS}: ${d.problem}`;
  const body = d.fix === '' ? d.problem : `${d.problem}${d.sep ?? '; '}${d.fix}`;
  return d.where ? `${d.where}: ${body}.` : body;
}

/** The `where` of a refusal found at synthesis, whose problems are whole messages already. */
const SYNTHESIS = 'cdk8s-sidecars';

/**
 * The error a workload's `toJson()` throws for the refusals its render found (each a whole message
 * of the engine: where, value and fix, with the rule id `check` shares where one exists), one a
 * line under 'cdk8s-sidecars:', as cdk8s' validation gathers the same messages.
 */
export function synthesisError(messages: readonly string[]): SidecarError {
  return new SidecarError({ where: SYNTHESIS, value: undefined, problem: messages.join('\n'), fix: '' });
}

/**
 * The refusals the library made in this process (SidecarErrors and the messages its validations
 * hand cdk8s), newest last, at most REFUSALS_KEPT: how `Errors.isSidecarError` recognises one from
 * its message alone, which is all that crosses from JavaScript to Python, Java or Go (jsii hands
 * them an exception that holds the message). One store for every copy of the library loaded.
 */
const REFUSALS: Map<string, true> = (globalThis as any)[Symbol.for('cdk8s-sidecars.refusals')] ??= new Map<string, true>();
const REFUSALS_KEPT = 1000;

/** Records `messages` as refusals of the library, and returns them (for a validation's return). */
export function recordRefusals<T extends readonly string[]>(messages: T): T {
  for (const m of messages) {
    if (m === '') continue;
    REFUSALS.delete(m);
    REFUSALS.set(m, true);
    if (REFUSALS.size > REFUSALS_KEPT) REFUSALS.delete(REFUSALS.keys().next().value!);
  }
  return messages;
}

/** The recorded refusals whose message `text` holds (the longest of nested ones only), in the order `text` holds them. */
export function refusalsIn(text: string): string[] {
  const found = [...REFUSALS.keys()].filter(m => text.includes(m));
  return found
    .filter(m => !found.some(o => o !== m && o.includes(m)))
    .sort((a, b) => text.indexOf(a) - text.indexOf(b));
}

/** Whether `e` is a SidecarError of any copy of the library (by its brand, not `instanceof`). */
export function isSidecarErrorObject(e: unknown): e is SidecarError {
  return typeof e === 'object' && e !== null && (e as any)[SIDECAR_ERROR] === true;
}


/** The ids of `check`'s rules (`[CS004 container-restart-policy]` as messages end with them) in `text`, each once. */
export function ruleIdsIn(text: string): string[] {
  return [...new Set([...text.matchAll(/\[(CS\d{3}) [a-z0-9.-]+\]/g)].map(m => m[1]))];
}

/**
 * Where a value was given, as messages name it: a construct (`WithEnvoy 'app/web/envoy'`), a
 * factory (`LogOutput.loki()`), a config file. Passed to every check instead of a string, so
 * a check can only throw a `SidecarError` placed here.
 * @internal
 */
export class Where {
  public constructor(public readonly text: string) {}

  /** The error for `value`, given here: `problem` shows it, `fix` says what to do. */
  public error(problem: string, value: unknown, fix: string, sep?: SidecarErrorSeparator): SidecarError {
    return new SidecarError({ where: this.text, value, problem, fix, sep });
  }

  /**
   * An error raised below the constructs, placed here: an unplaced `SidecarError` gets this
   * `where` (and its final '.'); anything else is returned as it is.
   */
  public place(e: unknown): unknown {
    return e instanceof SidecarError && e.where === '' ? e.placedAt(this.text) : e;
  }

  /** The text, for warnings and notes that name the place. */
  public toString(): string {
    return this.text;
  }
}

/**
 * A broken invariant of the library itself (a bug, not bad input): a plain Error, made here so
 * that the lint rule (no-restricted-syntax, .projenrc.ts) can tell it from an input check left untyped.
 */
export function internalError(message: string): Error {
  return new Error(message);
}
