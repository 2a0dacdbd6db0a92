import { childConfig, serveParent } from './lib/child-endpoint.js';
import { ReplayUpstream } from './lib/replay-upstream.js';

/** The replay of the simulated upstream (`lib/replay-upstream.ts`) in its own process, for throughput runs. */
async function main(): Promise<void> {
  const { origin } = childConfig<{ origin: string }>();
  const replay = new ReplayUpstream(origin);
  const { url } = await replay.listen(0, '127.0.0.1');
  serveParent(url, { stats: () => replay.stats }, () => replay.close());
}

main().catch((err: unknown) => {
  console.error('bench replay upstream failed to start:', err);
  process.exit(1);
});
