import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import OpenAI from 'openai';
import { SimulatedUpstream } from '../../simulator/src/simulated-upstream.js';
import { loadGatewayConfig } from '#src/gateway-config.loader.js';
import { redactUrl } from '#config/url-redaction.js';
import { GatewayModule } from '#src/gateway.module.js';
import { configureGatewayApp } from '#src/configure-app.js';
import { startOrdersMcpServer } from './orders-mcp.server.js';

/**
 * `npm run demo`: the gateway's main job end to end. It starts the gateway
 * (and, when no UPSTREAM_URL is configured, the simulated upstream standing in
 * for vLLM), sends one example conversation through it with the official
 * `openai` client, prints it, and keeps serving until interrupted.
 */
const weatherTool = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Get the current weather for a city.',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  strict: true,
};

function lookUpWeather(city: string): string {
  return JSON.stringify({ city, temperature_c: 18, sky: 'light clouds' });
}

async function main(): Promise<void> {
  let simulator: SimulatedUpstream | undefined;
  const env = { ...process.env };
  if (!env.UPSTREAM_URL) {
    simulator = new SimulatedUpstream({ reasoning: true, tokenDelayMs: 15 });
    const { url } = await simulator.listen(Number(env.SIM_PORT ?? 8000), '127.0.0.1');
    env.UPSTREAM_URL = url;
    console.log(`SIMULATED upstream (a stand-in for vLLM, not a real model) at ${url}`);
  }
  // An MCP server the gateway itself will discover and call (a gateway-owned tool).
  const orders = await startOrdersMcpServer();
  // The request log would interleave with the transcript printed here; REQUEST_LOG=true shows it anyway.
  const config = loadGatewayConfig({ env: { STORAGE_DRIVER: 'memory', REQUEST_LOG: 'false', MCP_ALLOWED_HOSTS: orders.hostPort, ...env } });
  const app = await NestFactory.create(GatewayModule.forRoot({ config }), { bodyParser: false, logger: ['error', 'warn'] });
  configureGatewayApp(app, { standalone: true });
  await app.listen(config.server.port, config.server.host);
  const base = `http://127.0.0.1:${config.server.port}/v1`;
  console.log(`Switchyard gateway at ${base} → upstream ${redactUrl(config.upstream.baseUrl)} (${config.upstream.dialect})\n`);

  const client = new OpenAI({ baseURL: base, apiKey: env.OPENAI_API_KEY ?? 'sk-demo' });
  const model = env.DEMO_MODEL ?? (await client.models.list()).data[0]?.id ?? 'default';
  const question = 'What is the weather in Paris right now? Use the get_weather tool.';
  console.log(`user> ${question}`);

  const first = await client.responses.create({ model, input: question, tools: [weatherTool], store: false });
  const call = first.output.find((item) => item.type === 'function_call');
  const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: question }];
  if (call && call.type === 'function_call') {
    console.log(`model> calls ${call.name}(${call.arguments})`);
    const { city } = JSON.parse(call.arguments) as { city: string };
    const output = lookUpWeather(city);
    console.log(`tool> ${output}`);
    input.push(call, { type: 'function_call_output', call_id: call.call_id, output });
  } else {
    console.log(`model> ${first.output_text}`);
  }

  process.stdout.write('model> ');
  const stream = await client.responses.create({ model, input, tools: [weatherTool], stream: true, store: false });
  for await (const event of stream) {
    if (event.type === 'response.output_text.delta') process.stdout.write(event.delta);
    if (event.type === 'response.completed') {
      console.log(`\n\n(${event.response.usage?.total_tokens ?? 0} tokens, status ${event.response.status})`);
    }
  }

  // A gateway-owned tool: the client declares the MCP server; the gateway lists
  // its tools, runs the model's call and feeds the result back, in one request.
  const orderQuestion = 'Where is my order ORD-1234? Look up the order status.';
  console.log(`\nuser> ${orderQuestion}`);
  const answer = await client.responses.create({
    model,
    input: orderQuestion,
    tools: [{ type: 'mcp', server_label: 'orders', server_url: orders.url, require_approval: 'never' }],
    store: false,
  });
  for (const item of answer.output) {
    if (item.type === 'mcp_list_tools') console.log(`gateway> listed ${item.server_label}: ${item.tools.map((t) => t.name).join(', ')}`);
    if (item.type === 'mcp_call') console.log(`gateway> ran ${item.server_label}.${item.name}(${item.arguments}) → ${item.output ?? item.error}`);
  }
  console.log(`model> ${answer.output_text}`);
  console.log(`\nStill serving at ${base}; press Ctrl+C to stop.`);

  const stop = async () => {
    await app.close();
    await simulator?.close();
    await orders.close();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
