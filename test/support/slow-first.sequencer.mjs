// Jest orders a run by the timings of the last one, and a fresh checkout (CI)
// has none, so it falls back to file size: the slowest files, which are small
// (a 10,000-file growth test, the entry points, the package install), then
// start last and one worker runs them alone while the other idles. These go
// first; everything else keeps Jest's own order.
import Sequencer from '@jest/test-sequencer';

const SLOW_FIRST = [
  'test/package.e2e-spec.ts',
  'libs/tools/code-interpreter/sandbox/kernel/kernel-sandbox.backend.spec.ts',
  'test/entry-points.e2e-spec.ts',
  'test/broker-scale.e2e-spec.ts',
  'libs/tools/code-interpreter/sandbox/pyodide/pyodide-sandbox.backend.spec.ts',
  'test/code-interpreter-kernel.e2e-spec.ts',
  'test/code-interpreter.e2e-spec.ts',
  'test/code-interpreter-jupyter.e2e-spec.ts',
  'test/image-assumptions.e2e-spec.ts',
  'test/operator-errors.e2e-spec.ts',
  'libs/tools/code-interpreter/sandbox/cpython/cpython-sandbox.backend.spec.ts',
  'test/sandbox-growth.e2e-spec.ts',
  'test/file-search-jobs.e2e-spec.ts',
  'test/file-search-api.e2e-spec.ts',
  'test/graceful-drain.e2e-spec.ts',
  'test/containers-many-processes.e2e-spec.ts',
  'libs/tools/file-search/storage/file-search.store.spec.ts',
  'test/workers-shared.e2e-spec.ts',
  'test/backpressure.e2e-spec.ts',
  'test/ingestion-event-loop.e2e-spec.ts',
  'test/usage-prometheus.e2e-spec.ts',
  'test/primary-modules.e2e-spec.ts',
  'test/batches.e2e-spec.ts',
  'test/openapi.e2e-spec.ts',
];

export default class SlowFirstSequencer extends Sequencer {
  sort(tests) {
    const rank = (test) => {
      const i = SLOW_FIRST.findIndex((suffix) => test.path.endsWith(suffix));
      return i === -1 ? SLOW_FIRST.length : i;
    };
    const ordered = super.sort(tests);
    return [...ordered].sort((a, b) => rank(a) - rank(b));
  }
}
