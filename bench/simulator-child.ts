import { SimulatedUpstream, type SimulatedUpstreamOptions } from '../apps/simulator/src/simulated-upstream.js';
import { childConfig, serveParent } from './lib/child-endpoint.js';

/** The simulated upstream in its own process, for the benchmark. */
async function main(): Promise<void> {
  const simulator = new SimulatedUpstream(childConfig<SimulatedUpstreamOptions>());
  const { url } = await simulator.listen(0, '127.0.0.1');
  serveParent(url, { stats: () => simulator.stats }, () => simulator.close());
}

main().catch((err: unknown) => {
  console.error('bench simulator failed to start:', err);
  process.exit(1);
});
