// The error class alone (no config or summary code), for the primary of worker mode, which loads little.
/** A start-up failure in the words an operator needs: what, which setting, and the fix. */
export class StartupError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}
