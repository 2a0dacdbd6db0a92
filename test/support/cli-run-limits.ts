/**
 * How long a coding-agent CLI run (Codex, Claude Code) may take in the suite.
 * A run starts a large binary and makes two or more model requests, which on a
 * busy machine outlasts Jest's 20 s default. A test given up on while its CLI
 * still runs would let that run's late requests land in the next test's
 * recording, so the CLI is killed first (`CLI_KILL_MS`) and the test waits
 * longer than that (`CLI_TEST_MS`): a slow run fails alone, as itself.
 */
export const CLI_KILL_MS = 120_000;
export const CLI_TEST_MS = CLI_KILL_MS + 30_000;
