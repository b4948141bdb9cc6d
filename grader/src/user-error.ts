/**
 * Errors a person can act on, as opposed to bugs. A command line prints such
 * an error's message (no stack trace: it says what was wrong and what to do)
 * and exits with its `exitCode`; anything else is printed with its stack and
 * exits with 2.
 */

/** An error the user can fix: a bad argument, a missing folder, an invalid manifest. */
export class UserError extends Error {
  override name = 'UserError';
  /** What the command line exits with: 2 when the command could not run, 1 when it ran and found a problem. */
  readonly exitCode: 1 | 2 = 2;
}

/** A command line that cannot be understood. */
export class UsageError extends UserError {
  override name = 'UsageError';
}
