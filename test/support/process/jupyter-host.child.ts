import { DEFAULT_CODE_INTERPRETER_SETTINGS } from '#tools/code-interpreter/config/code-interpreter-settings.js';
import { JupyterHost } from '#tools/code-interpreter/sandbox/kernel/jupyter-host.js';

/**
 * Run through the test loader: starts the kernel backend's Jupyter Server as
 * a gateway process would, prints its pid and the host's directory as JSON once it answers, and stays
 * up until it is killed, so that a test can kill it the way a crash would.
 */
const host = new JupyterHost({ ...DEFAULT_CODE_INTERPRETER_SETTINGS, backend: 'kernel' });
await host.endpoint();
process.stdout.write(`${JSON.stringify({ server: host.pid, root: host.root })}\n`);
setInterval(() => undefined, 60_000);
