import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { ClaudeCodeHome, type ClaudeRun } from './support/claude-code/claude-code-cli.js';
import { RecordingProxy } from './support/recording-proxy.js';
import { CLI_TEST_MS } from './support/cli-run-limits.js';

/**
 * Claude Code itself (`@anthropic-ai/claude-code` 2.1.197, the newest whose
 * package accepts Node 20; `claude -p`) against the gateway's Messages API
 * and the simulated upstream, with its default tools. A recording
 * pass-through keeps what Claude Code sent. Claude Code puts a `system`
 * entry after the user's prompt and keeps it there on every later request
 * of the turn, opens its system prompt with a per-session billing line, asks
 * for 32000 output tokens, and acts on `Prompt is too long`.
 */
const MODEL = 'switchyard-sim';
/** The simulated upstream's context length (`maxModelLen`). */
const CONTEXT = 32_768;

describe('Claude Code CLI (claude -p) through the gateway', () => {
  let stack: GatewayStack;
  let proxy: RecordingProxy;
  let claude: ClaudeCodeHome;

  beforeAll(async () => {
    stack = await startStack({ simulator: { reasoning: true, maxModelLen: CONTEXT } });
    proxy = await RecordingProxy.start(stack.url);
    claude = new ClaudeCodeHome(proxy.url.replace(/\/v1$/, ''), MODEL);
  });
  afterAll(async () => {
    claude?.close();
    await proxy?.close();
    await stack?.close();
  });

  async function print(...args: Parameters<ClaudeCodeHome['print']>): Promise<{ run: ClaudeRun; sent: any[]; upstream: any[]; tokenized: number }> {
    const [sentBefore, upstreamBefore, tokenizeBefore] = [proxy.messages.length, stack.simulator.requests.length, stack.simulator.tokenizeRequests.length];
    const run = await claude.print(...args);
    return {
      run,
      sent: proxy.messages.slice(sentBefore),
      upstream: stack.simulator.requests.slice(upstreamBefore).map((r) => r.body as any),
      tokenized: stack.simulator.tokenizeRequests.length - tokenizeBefore,
    };
  }
  /** The upstream history with ids dropped, each item as text: what must not change from one round to the next. */
  const history = (body: any): string[] => body.input.map(({ id: _id, ...rest }: any) => JSON.stringify(rest).replace(/"(call_id|id)":"[^"]*"/g, '"$1":"x"'));

  it(
    'runs a Bash tool loop; the system note after the prompt stays in the instructions on both rounds, never a turn the model answers',
    async () => {
      const { run, sent, upstream } = await print('Run it. [[call Bash {"command":"echo hello-from-bash","description":"Print a greeting"}]]', { allowedTools: ['Bash'] });
      expect(run.result).toMatchObject({ subtype: 'success', is_error: false, result: 'Based on the tool result: hello-from-bash' });
      expect(sent).toHaveLength(2);
      // What Claude Code sent: the note right after the prompt, kept in place on the second request, the tool result after it.
      expect(sent[0].messages.map((m: any) => m.role)).toEqual(['user', 'system']);
      expect(sent[1].messages.map((m: any) => m.role)).toEqual(['user', 'system', 'assistant', 'user']);
      const note = typeof sent[0].messages[1].content === 'string' ? sent[0].messages[1].content : sent[0].messages[1].content[0].text;

      expect(upstream).toHaveLength(2);
      for (const body of upstream) {
        expect(body.instructions).toContain(note.slice(0, 60));
        expect(body.input.some((i: any) => i.role === 'system' || JSON.stringify(i).includes(note.slice(0, 60)))).toBe(false);
      }
      // One prompt prefix across rounds: same instructions, the first round's history the start of the second's.
      expect(upstream[1].instructions).toBe(upstream[0].instructions);
      expect(history(upstream[1]).slice(0, history(upstream[0]).length)).toEqual(history(upstream[0]));
      expect(upstream[1].input.at(-1)).toMatchObject({ type: 'function_call_output', output: 'hello-from-bash' });
    },
    CLI_TEST_MS,
  );

  it(
    'keeps the per-session billing line from the model, and counts the prompt with the upstream to fit the 32000-token budget',
    async () => {
      const { run, sent, upstream, tokenized } = await print('Say hi. [[say hi]]');
      expect(run.result).toMatchObject({ subtype: 'success', result: 'hi' });
      expect(JSON.stringify(sent[0].system)).toContain('x-anthropic-billing-header: cc_version=');
      expect(upstream[0].instructions).not.toContain('x-anthropic-billing-header');
      expect(upstream[0].instructions.startsWith("You are a Claude agent, built on Anthropic's Claude Agent SDK.")).toBe(true);
      // 32000 asked, the prompt counted by the upstream's /tokenize: the budget is what the context leaves, far above one token.
      expect(sent[0].max_tokens).toBe(32_000);
      expect(tokenized).toBeGreaterThan(0);
      expect(upstream[0].max_output_tokens).toBeGreaterThanOrEqual(1024);
      expect(upstream[0].max_output_tokens).toBeLessThan(32_000);
      // message_start and message_delta carried real counts: Claude Code's own usage shows them.
      expect(run.result.usage.input_tokens).toBeGreaterThan(1000);
    },
    CLI_TEST_MS,
  );

  it(
    'the upstream refusing the budget (prompt + max_tokens > context) comes back as "N + M > L", and Claude Code retries with one that fits',
    async () => {
      // vLLM's refusal, as a model server without /tokenize (the gateway cannot fit the budget) answers; once, so the retry is served.
      const refusal =
        "'max_tokens' or 'max_completion_tokens' is too large: 32000. This model's maximum context length is 32768 tokens and your request has 20000 input tokens (32000 > 32768 - 20000).";
      const { run, sent } = await print(`Size? [[fault status=400 message=${JSON.stringify(refusal)} times=1]] [[say fits]]`);
      expect(run.result).toMatchObject({ subtype: 'success', is_error: false, result: 'fits' });
      expect(sent.map((b) => b.max_tokens)).toEqual([32_000, expect.any(Number)]);
      // Claude Code read the three figures: its retry asks for less than the 12768 the context leaves.
      expect(sent[1].max_tokens).toBeLessThanOrEqual(32_768 - 20_000);
      expect(sent[1].max_tokens).toBeGreaterThan(1000);
    },
    CLI_TEST_MS,
  );

  it(
    'a prompt past the context gets Claude Code’s own "Prompt is too long" handling, with the numbers it parses',
    async () => {
      const { run, sent } = await print('', { stdin: `${'x '.repeat(60_000)} [[say too long]]` });
      expect(sent).toHaveLength(1);
      expect(run.result).toMatchObject({ is_error: true, api_error_status: 400, terminal_reason: 'prompt_too_long' });
      expect(run.result.result).toMatch(new RegExp(`^Prompt is too long · the request is ~\\d+ tokens \\(limit ${CONTEXT}\\)`));
    },
    CLI_TEST_MS,
  );
});
