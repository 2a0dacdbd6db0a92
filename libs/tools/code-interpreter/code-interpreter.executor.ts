import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  type ExecutionContext,
  GATEWAY_CONFIG,
  type GatewayCall,
  type GatewayCallResult,
  GatewayConfig,
  type GatewayEventPlan,
  type GatewayExecutor,
  GatewayExecutorProvider,
  type PublicItem,
  type ToolOutput,
  type ArgumentStream,
  type PlannedEvent,
} from '#tool-sdk/index.js';
import { OUTPUTS_INCLUDE, codeOf, containerFileCitations, publicOutputs, type CodeInterpreterCallData } from './code-interpreter-call.js';
import type { CodeInterpreterParams } from './code-interpreter-declaration.js';
import { CODE_INTERPRETER_SETTINGS, type CodeInterpreterSettings } from './config/code-interpreter-settings.js';
import type { RunOutcome } from './containers/container-run.js';
import { ContainerGoneError, ContainerStore } from './containers/container-store.service.js';
import { CODE_INTERPRETER } from './code-interpreter.tool-type.js';

/**
 * Room in the gateway's deadline for waiting on a free interpreter and for
 * a cold start (seconds of WASM compilation on a busy machine). The code's
 * own time limit starts when it starts running.
 */
const START_ALLOWANCE_MS = 60_000;

function failed(message: string, data: CodeInterpreterCallData): ToolOutput {
  return { text: JSON.stringify({ status: 'failed', error: message }), isError: true, data };
}

/**
 * Runs `code_interpreter` calls in the request's container and shapes the
 * public `code_interpreter_call` lifecycle: `output_item.added` →
 * `.in_progress` → `_code.delta` → `_code.done` → `.interpreting` → (run) →
 * `.completed` → `output_item.done`. As for web search there is no `.failed`
 * event in OpenAI's set: a failed run ends with `.completed` too, and the
 * item's `status: "failed"` says how it went.
 *
 * The model reads the logs, how the run ended, and the files it wrote (with
 * their container file ids); a timeout, memory exhaustion or crash is a
 * failed call with a sentence saying what happened, never a gateway error.
 */
@Injectable()
@GatewayExecutorProvider({ type: CODE_INTERPRETER })
export class CodeInterpreterExecutor implements GatewayExecutor<CodeInterpreterParams> {
  readonly type = CODE_INTERPRETER;
  private readonly logger = new Logger('CodeInterpreter');

  constructor(
    private readonly containers: ContainerStore,
    @Inject(CODE_INTERPRETER_SETTINGS) private readonly settings: CodeInterpreterSettings,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  /**
   * The sandbox enforces its own wall time and reports it to the model; the
   * gateway's deadline sits after the sandbox's hard kill (plus the start
   * allowance) so that it only fires if the sandbox itself is stuck. An operator's explicit
   * `tools.timeoutMsByType.code_interpreter` still wins.
   */
  timeoutMs(): number | undefined {
    if (this.config.tools.timeoutMsByType?.[CODE_INTERPRETER] !== undefined) return undefined;
    return this.settings.timeoutMs + this.settings.graceMs + START_ALLOWANCE_MS;
  }

  /** Where the answer names a file the code wrote, it cites it (`container_file_citation`). */
  annotateText(text: string, results: readonly GatewayCallResult[]): Array<Record<string, unknown>> {
    const calls = results.map((r) => r.output.data as CodeInterpreterCallData | undefined).filter((d): d is CodeInterpreterCallData => !!d?.files.length);
    return containerFileCitations(text, calls);
  }

  async execute(call: GatewayCall, params: CodeInterpreterParams, ctx: ExecutionContext): Promise<ToolOutput> {
    const code = codeOf(call.arguments);
    const containerId = params.containerId ?? '';
    const data: CodeInterpreterCallData = { code, containerId, logs: '', images: [], files: [] };
    if (!code.trim()) return failed('No code given; call code_interpreter with {"code": "..."}.', data);
    const container = await this.containers.get(containerId);
    if (!container) return failed('The container of this conversation has expired; its files are gone.', data);
    let outcome: RunOutcome;
    try {
      // On the container's home, wherever this request landed.
      outcome = await this.containers.run(container, code, ctx.signal);
    } catch (err) {
      if (err instanceof ContainerGoneError) return failed('The container of this conversation has expired; its files are gone.', data);
      throw err;
    }
    data.logs = outcome.logs;
    data.files = outcome.files;
    data.images = outcome.images;
    if (!['ok', 'error'].includes(outcome.sandboxStatus) && !ctx.signal.aborted) {
      this.logger.warn(`request ${ctx.requestId}: code run ended with ${outcome.sandboxStatus} in ${container.id}`);
    }
    const text = JSON.stringify({
      status: outcome.status,
      logs: data.logs,
      ...(data.files.length ? { files: data.files.map((f) => ({ file_id: f.fileId, path: f.path })) } : {}),
      ...(outcome.notes.length ? { note: outcome.notes.join(' ') } : {}),
    });
    // A program that raised still ran: its traceback is the answer the model
    // needs. Only a run the sandbox had to stop is a failed call.
    return { text, data, isError: outcome.status === 'failed' };
  }

  /** The code streams as the model writes it, as OpenAI's does: `{"code": "..."}` decoded piece by piece. */
  streamArguments(): ArgumentStream {
    return {
      field: 'code',
      opening: [{ type: 'response.code_interpreter_call.in_progress' }],
      delta: 'response.code_interpreter_call_code.delta',
      done: 'response.code_interpreter_call_code.done',
    };
  }

  planEvents(call: GatewayCall, params: CodeInterpreterParams, ctx: { streamed?: boolean } = {}): GatewayEventPlan {
    const code = codeOf(call.arguments);
    // Streamed: `in_progress`, the code's deltas and its `.done` were sent while the model wrote it.
    const opening: PlannedEvent[] = ctx.streamed
      ? []
      : [
          { type: 'response.code_interpreter_call.in_progress' },
          { type: 'response.code_interpreter_call_code.delta', delta: code },
          { type: 'response.code_interpreter_call_code.done', code },
        ];
    return {
      startedItem: { type: 'code_interpreter_call', id: call.itemId, status: 'in_progress', code: '', container_id: params.containerId ?? '', outputs: null },
      beforeExecute: [...opening, { type: 'response.code_interpreter_call.interpreting' }],
      afterExecute: () => [{ type: 'response.code_interpreter_call.completed' }],
    };
  }

  publicOutput(result: GatewayCallResult, params: CodeInterpreterParams, ctx: { include: readonly string[] }): PublicItem {
    const data = result.output.data as CodeInterpreterCallData | undefined;
    return {
      type: 'code_interpreter_call',
      id: result.call.itemId,
      status: result.status === 'completed' ? 'completed' : 'failed',
      code: data?.code ?? codeOf(result.call.arguments),
      container_id: params.containerId ?? '',
      outputs: ctx.include.includes(OUTPUTS_INCLUDE) ? publicOutputs(data) : null,
    };
  }
}
