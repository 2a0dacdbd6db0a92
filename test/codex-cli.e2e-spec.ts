import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { CodexHome, agentMessages, threadOf, type CodexRun } from './support/codex/codex-cli.js';
import { RecordingProxy } from './support/recording-proxy.js';
import { CLI_TEST_MS } from './support/cli-run-limits.js';

/**
 * The Codex CLI itself (`@openai/codex`, its `codex exec` binary) against the
 * gateway and the simulated upstream, configured as the README says. A
 * recording pass-through between them keeps what Codex put on the wire.
 * With a model from its catalog Codex sends what it sends OpenAI: `store:
 * false` with `include: ["reasoning.encrypted_content"]`, images with
 * `detail: "original"`, `service_tier` and efforts past `high`.
 */
const KEY = 'codex-cli-test-key-0123456789';
/** A 1x1 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

describe('Codex CLI (codex exec) through the gateway', () => {
  let stack: GatewayStack;
  let proxy: RecordingProxy;
  let codex: CodexHome;

  beforeAll(async () => {
    stack = await startStack({ simulator: { reasoning: true }, config: { state: { compactionKey: KEY } } });
    proxy = await RecordingProxy.start(stack.url);
    codex = new CodexHome(proxy.url, 'gpt-5.5');
    writeFileSync(join(codex.workdir, 'pic.png'), PNG);
  });
  afterAll(async () => {
    codex?.close();
    await proxy?.close();
    await stack?.close();
  });

  /** Runs Codex and returns the run with the bodies it sent in that run. */
  async function exec(run: () => Promise<CodexRun>): Promise<{ run: CodexRun; sent: any[]; upstream: any[] }> {
    const [sentBefore, upstreamBefore] = [proxy.responses.length, stack.simulator.requests.length];
    const result = await run();
    return { run: result, sent: proxy.responses.slice(sentBefore), upstream: stack.simulator.requests.slice(upstreamBefore).map((r) => r.body as any) };
  }
  const turnFailed = (run: CodexRun) => run.events.filter((e) => e.type === 'turn.failed' || e.type === 'error').map((e) => e.message ?? e.error?.message);

  it(
    'runs a shell tool loop with store:false, and its reasoning comes back to the model from encrypted_content',
    async () => {
      const { run, sent, upstream } = await exec(() => codex.exec('Run it. [[call exec_command {"cmd":"echo hello-from-shell"}]]'));
      expect(turnFailed(run)).toEqual([]);
      expect(run.code).toBe(0);
      expect(agentMessages(run)).toEqual([expect.stringContaining('hello-from-shell')]);
      expect(sent).toHaveLength(2);
      expect(sent[0]).toMatchObject({ store: false, include: ['reasoning.encrypted_content'] });
      // Codex sent the reasoning back with the gateway's encrypted token, beside the call and its output.
      const reasoning = sent[1].input.find((i: any) => i.type === 'reasoning');
      expect(reasoning.encrypted_content).toMatch(/^syr1\./);
      expect(sent[1].input.map((i: any) => i.type).slice(-3)).toEqual(['reasoning', 'function_call', 'function_call_output']);
      const seen = upstream.at(-1).input.find((i: any) => i.type === 'reasoning');
      expect(seen.content).toEqual([{ type: 'reasoning_text', text: 'The user wants: Run it. I should call exec_command.' }]);
    },
    CLI_TEST_MS,
  );

  it(
    'sends an image with detail "original", answered, and resumes the session that replays it',
    async () => {
      const first = await exec(() => codex.exec('Look. [[say I see it.]]', ['-i', join(codex.workdir, 'pic.png')]));
      expect(turnFailed(first.run)).toEqual([]);
      expect(agentMessages(first.run)).toEqual(['I see it.']);
      const image = (sent: any[]) => sent[0].input.flatMap((i: any) => (Array.isArray(i.content) ? i.content : [])).find((p: any) => p.type === 'input_image');
      expect(image(first.sent)).toMatchObject({ detail: 'original' });

      const resumed = await exec(() => codex.resume(threadOf(first.run), 'Still there? [[say Still here.]]'));
      expect(turnFailed(resumed.run)).toEqual([]);
      expect(agentMessages(resumed.run)).toEqual(['Still here.']);
      // The replayed history carries the same image, detail and all.
      expect(image(resumed.sent)).toMatchObject({ detail: 'original' });
      expect(JSON.stringify(resumed.upstream.at(-1).input)).toContain('data:image/png;base64,');
    },
    CLI_TEST_MS,
  );

  it.each([
    ['fast', 'priority', 'xhigh'],
    ['flex', 'flex', 'max'],
  ])(
    'service_tier "%s" (sent as %s) with effort %s is served, the upstream asked for the nearest effort it has',
    async (tier, sentTier, effort) => {
      const { run, sent, upstream } = await exec(() => codex.exec('Quick. [[say ok]]', ['-c', `service_tier="${tier}"`, '-c', `model_reasoning_effort="${effort}"`]));
      expect(turnFailed(run)).toEqual([]);
      expect(agentMessages(run)).toEqual(['ok']);
      expect(sent[0]).toMatchObject({ service_tier: sentTier, reasoning: { effort } });
      expect(upstream[0].reasoning).toMatchObject({ effort: 'high' });
    },
    CLI_TEST_MS,
  );

  it(
    'a prompt past the context window gets Codex’s own context-window answer (context_length_exceeded), not a generic failure',
    async () => {
      const { run, sent, upstream } = await exec(() => codex.exec('-', [], { stdin: `${'x '.repeat(80_000)} [[say too long]]` }));
      expect(sent).toHaveLength(1);
      // The upstream refused it as too long for its context (as vLLM does); Codex read the gateway's context_length_exceeded.
      expect(upstream).toHaveLength(1);
      expect(turnFailed(run)).toContain("Codex ran out of room in the model's context window. Start a new thread or clear earlier history before retrying.");
    },
    CLI_TEST_MS,
  );
});
