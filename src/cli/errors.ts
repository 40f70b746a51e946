/** The command's error classes (src/cli/main.ts maps them to exit codes). */

/** A bad command line: the caller prints the usage line and exits 2. */
export class UsageError extends Error {}

/** An error of the user's input or environment (a file, the cluster): exit 1. */
export class CommandError extends Error {}

/** A bad render config: exit 2, with the path of the bad key (src/cli/render-config.ts throws it). */
export class ConfigError extends Error {
  constructor(public readonly keyPath: string, message: string) {
    super(`${keyPath}: ${message}`);
  }
}
