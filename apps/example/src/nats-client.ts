import { Logger } from '@nestjs/common';
import { ClientProxyFactory, Transport } from '@nestjs/microservices';
import { lastValueFrom, toArray } from 'rxjs';
import { loadGatewayConfig, readTransportsSettings } from 'switchyard-gateway';
import { SwitchyardRpcClient } from 'switchyard-gateway/microservice';

/**
 * Calls the gateway as a microservice over NATS: streams one response and
 * prints one JSON line with the event types and the final response.
 * `NATS_URL=nats://127.0.0.1:4222 node nats-client.js "Roll three dice"`.
 */
async function main(): Promise<void> {
  // stdout carries the one JSON line; the client's connection notices are not wanted there.
  Logger.overrideLogger(['error', 'warn']);
  const config = loadGatewayConfig({ env: process.env });
  const transports = readTransportsSettings(config);
  if (!transports.natsUrl) throw new Error('Set NATS_URL to the broker the gateway listens on.');
  const proxy = ClientProxyFactory.create({ transport: Transport.NATS, options: { servers: [transports.natsUrl] } });
  const gateway = new SwitchyardRpcClient(proxy, { prefix: transports.patternPrefix });
  try {
    const input = process.argv.slice(2).join(' ') || 'Roll two dice for me [[call roll_dice {"count": 2}]]';
    const events = await lastValueFrom(gateway.stream({ model: config.upstream.defaultModel ?? 'example', input, tools: [{ type: 'dice', sides: 6 }] }).pipe(toArray()));
    const final = events.at(-1);
    console.log(JSON.stringify({ types: events.map((e) => e.type), response: final?.response }));
  } finally {
    await proxy.close();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
