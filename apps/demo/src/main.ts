import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import OpenAI from 'openai';
import { SimulatedUpstream } from '../../simulator/src/simulated-upstream.js';
import { loadGatewayConfig } from '#src/gateway-config.loader.js';
import { redactUrl } from '#config/url-redaction.js';
import { codeExecutionRefusal } from '#config/exposure.js';
import { GatewayModule } from '#src/gateway.module.js';
import { configureGatewayApp } from '#src/configure-app.js';
import { gatewayHttpAdapter } from '#src/gateway-http-adapter.js';
import { startOrdersMcpServer } from './orders-mcp.server.js';

/**
 * `npm run demo`: the gateway's main job end to end. It starts the gateway
 * (and, when no UPSTREAM_URL is configured, the simulated upstream standing in
 * for vLLM), sends one example conversation through it with the official
 * `openai` client, prints it, and keeps serving until interrupted.
 *
 * Variables: PORT (the gateway, 8080), SIM_PORT (the simulated upstream,
 * 8000; unused with UPSTREAM_URL), UPSTREAM_URL, DEMO_MODEL, and every
 * gateway setting's variable.
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

/** A start-up failure already said in one line naming its variable; printed without a stack. */
class DemoStartError extends Error {}

/**
 * Runs `listen`, turning a busy or forbidden port into one line that names
 * the variable choosing it, as the gateway itself does.
 */
async function listenOn<T>(what: string, port: number, variable: string, listen: () => Promise<T>): Promise<T> {
  try {
    return await listen();
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'EADDRINUSE') {
      throw new DemoStartError(`Port ${port} (${what}, variable ${variable}) is already in use: stop the process holding it or choose another port, e.g. ${variable}=${port + 1}.`);
    }
    if (code === 'EACCES') throw new DemoStartError(`Not allowed to listen on port ${port} (${what}, variable ${variable}): ports below 1024 need privileges.`);
    throw err;
  }
}

async function main(): Promise<void> {
  let simulator: SimulatedUpstream | undefined;
  const env = { ...process.env };
  if (!env.UPSTREAM_URL) {
    const simulated = new SimulatedUpstream({ reasoning: true, tokenDelayMs: 15 });
    const simPort = Number(env.SIM_PORT ?? 8000);
    const { url } = await listenOn('the simulated upstream', simPort, 'SIM_PORT', () => simulated.listen(simPort, '127.0.0.1'));
    simulator = simulated;
    env.UPSTREAM_URL = url;
    console.log(`SIMULATED upstream (a stand-in for vLLM, not a real model) at ${url}`);
  }
  // An MCP server the gateway itself will discover and call (a gateway-owned tool), on a free port.
  const orders = await startOrdersMcpServer();
  console.log(`MCP server "orders" (a demo tool server the gateway calls) at ${orders.url}`);
  // The request log would interleave with the transcript printed here; REQUEST_LOG=true shows it anyway.
  const config = loadGatewayConfig({ env: { STORAGE_DRIVER: 'memory', REQUEST_LOG: 'false', MCP_ALLOWED_HOSTS: orders.hostPort, ...env } });
  const codeOff = codeExecutionRefusal(config);
  if (codeOff) console.warn(`code execution is off: ${codeOff}`);
  const app = await NestFactory.create(GatewayModule.forRoot({ config }), gatewayHttpAdapter(), { bodyParser: false, logger: ['error', 'warn'] });
  configureGatewayApp(app, { standalone: true });
  try {
    await listenOn('the gateway', config.server.port, 'PORT', () => app.listen(config.server.port, config.server.host));
  } catch (err) {
    await Promise.all([app.close(), simulator?.close(), orders.close()]);
    throw err;
  }
  const base = `http://127.0.0.1:${config.server.port}/v1`;
  const upstream = `${redactUrl(config.upstream.baseUrl)} (${config.upstream.dialect})`;
  console.log(`Switchyard gateway at ${base} → upstream ${upstream}\n`);

  const client = new OpenAI({ baseURL: base, apiKey: env.OPENAI_API_KEY ?? 'sk-demo', maxRetries: 0 });
  let model: string;
  try {
    model = await converse(client, env.DEMO_MODEL, orders.url);
  } catch (err) {
    await Promise.all([app.close(), simulator?.close(), orders.close()]);
    // The usual cause is the upstream: say which one, and the settings that choose it.
    throw new DemoStartError(
      `The demo's requests through the gateway failed (${requestFailure(err)}). The upstream is ${upstream}: check that UPSTREAM_URL names a running server and that UPSTREAM_DIALECT matches what it serves (chat for Ollama, llama.cpp or TGI).`,
    );
  }
  console.log(`\nStill serving at ${base}; press Ctrl+C to stop. Model "${model}". Try:`);
  console.log(`  curl ${base}/responses -H 'content-type: application/json' -d '${JSON.stringify({ model, input: 'Say hello.' })}'`);

  const stop = async () => {
    await app.close();
    await simulator?.close();
    await orders.close();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

/** What went wrong with a request, in one line: the status and the error envelope's message, or the connection's. */
function requestFailure(err: unknown): string {
  if (err instanceof OpenAI.APIError && err.status !== undefined) return `${err.status}: ${err.message.replace(/^\d+\s*/, '')}`;
  return err instanceof Error ? err.message.split('\n')[0] : String(err);
}

/** The example conversation: a client tool round, a streamed answer, then a gateway-owned MCP call. Returns the model it used. */
async function converse(client: OpenAI, demoModel: string | undefined, ordersUrl: string): Promise<string> {
  const model = demoModel ?? (await client.models.list()).data[0]?.id ?? 'default';
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
    tools: [{ type: 'mcp', server_label: 'orders', server_url: ordersUrl, require_approval: 'never' }],
    store: false,
  });
  for (const item of answer.output) {
    if (item.type === 'mcp_list_tools') console.log(`gateway> listed ${item.server_label}: ${item.tools.map((t) => t.name).join(', ')}`);
    if (item.type === 'mcp_call') console.log(`gateway> ran ${item.server_label}.${item.name}(${item.arguments}) → ${item.output ?? item.error}`);
  }
  console.log(`model> ${answer.output_text}`);
  return model;
}

main().catch((err) => {
  if (err instanceof DemoStartError) console.error(err.message);
  else console.error(err);
  process.exit(1);
});
