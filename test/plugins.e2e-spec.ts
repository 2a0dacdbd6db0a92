import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { INestApplication } from '@nestjs/common';
import OpenAI from 'openai';
import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import { startGateway } from '../apps/gateway/src/gateway-app.js';
import { loadPlugins } from '../apps/gateway/src/plugins.js';
import { tempDir } from './support/temp-dir.js';

const here = dirname(fileURLToPath(import.meta.url));
const DICE = resolve(here, '../apps/example/src/plugin.ts');
const fixture = (name: string) => join(here, 'support/plugins', name);

/** The shipped gateway's boot, in process: plugins named by flag, loaded, checked, listed, and served. */
describe('plugins of the shipped gateway', () => {
  let simulator: SimulatedUpstream;
  let upstream: string;
  const lines: string[] = [];
  const out = { isTTY: false, write: (line: string) => lines.push(line) };
  const env = () => ({
    UPSTREAM_URL: upstream,
    HOST: '127.0.0.1',
    PORT: '0',
    STORAGE_DRIVER: 'memory',
    WORKERS: '1',
    REQUEST_LOG: 'false',
    SWITCHYARD_DATA_DIR: tempDir('sy-plugins-'),
  });

  beforeAll(async () => {
    simulator = new SimulatedUpstream();
    upstream = (await simulator.listen(0, '127.0.0.1')).url;
  });

  afterAll(async () => {
    await simulator?.close();
  });

  describe('with the example dice plugin', () => {
    let app: INestApplication;
    let openai: OpenAI;

    beforeAll(async () => {
      const started = await startGateway({ env: env(), out, plugins: [DICE] });
      app = started!.app;
      openai = new OpenAI({ baseURL: `${started!.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    });

    afterAll(async () => {
      await app?.close();
    });

    it('lists the plugin and its tool type in the start-up summary', () => {
      const summary = JSON.parse(lines.find((l) => l.includes('"msg":"listening"'))!);
      expect(summary.plugins).toEqual([{ name: 'dice', from: DICE, tool_types: ['dice (gateway)'] }]);
    });

    it("serves a request through the plugin's tool", async () => {
      const response = await openai.responses.create({ model: 'm', input: 'Roll [[call roll_dice {"count": 2}]]', tools: [{ type: 'dice', sides: 6 } as never] });
      expect(response.output[0]).toMatchObject({ type: 'dice_call', status: 'completed', output: expect.stringMatching(/^rolled \d, \d on d6$/) });
    });

    it('refuses a type no loaded module handles with a 400 naming it', async () => {
      const err = await openai.responses
        .create({ model: 'm', input: 'hi', tools: [{ type: 'coin' } as never] })
        .catch((e: unknown) => e as { status: number; error: { param: string; message: string } });
      expect(err).toMatchObject({
        status: 400,
        error: { param: 'tools[0].type', message: expect.stringContaining('"coin" is not available on this gateway: no loaded tool module handles it') },
      });
      expect((err as { error: { message: string } }).error.message).toContain('dice');
    });
  });

  it('refuses a handler that lacks its decorator, naming it and the fix', async () => {
    await expect(startGateway({ env: env(), out, plugins: [fixture('untagged-handler.plugin.ts')] })).rejects.toMatchObject({
      exitCode: 1,
      message: expect.stringContaining('ForgottenHandler is shaped like a ToolHandler for "forgotten" but is not tagged: add @ToolHandlerProvider({ type: \'forgotten\' })'),
    });
  });

  it('refuses a broken plugin with one line naming it, exit code 2', async () => {
    await expect(loadPlugins([fixture('empty.plugin.ts')])).rejects.toMatchObject({
      exitCode: 2,
      message: `Cannot load plugin "${fixture('empty.plugin.ts')}" (setting plugins, variable SWITCHYARD_PLUGINS, flag --plugin): it exports no plugin: export default definePlugin({ toolModules: [YourToolModule] }) (from switchyard-gateway).`,
    });
    await expect(loadPlugins([fixture('throwing.plugin.ts')])).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringMatching(/importing it failed: the plugin could not find its model file$/),
    });
    await expect(loadPlugins(['switchyard-no-such-plugin'], tmpdir())).rejects.toMatchObject({ message: expect.stringContaining('not installed where the gateway runs') });
  });
});
