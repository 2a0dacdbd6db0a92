// Prints one plain closing line, "N passed, N failed, N skipped", after
// Jest's own summary, so any tool reading the end of the log can count tests.
export default class PlainSummaryReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    process.stdout.write(`\njest: ${results.numPassedTests} passed, ${results.numFailedTests} failed, ${skipped} skipped\n`);
  }
}
