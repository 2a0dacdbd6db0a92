import { Inject, Injectable, Logger } from '@nestjs/common';
import { GATEWAY_CONFIG, GatewayConfig } from '#config/gateway-config.js';
import { GatewayExecutorProvider } from '#core/handlers/tool-handler.decorators.js';
import type { ExecutionContext, GatewayCall, GatewayCallResult, GatewayEventPlan, GatewayExecutor, ToolOutput } from '#core/handlers/tool-handler.interface.js';
import type { PublicItem } from '#core/protocol/items.js';
import { ToolType } from '#src/tool-contract.js';
import { OUTPUTS_INCLUDE, codeOf, containerFileCitations, imageMediaType, publicOutputs, type CodeInterpreterCallData } from './code-interpreter-call.js';
import type { CodeInterpreterParams } from './code-interpreter-declaration.js';
import { CODE_INTERPRETER_SETTINGS, type CodeInterpreterSettings } from './config/code-interpreter-settings.js';
import { ContainerStore } from './containers/container-store.service.js';
import { SANDBOX_BACKEND, type SandboxBackend, type SandboxRunResult } from './sandbox/sandbox-backend.interface.js';

/** Images larger than this are linked (container file content) rather than inlined as data URLs. */
const INLINE_IMAGE_BYTES = 1024 * 1024;

/**
 * Room in the gateway's deadline for waiting on a free interpreter and for
 * a cold start (seconds of WASM compilation on a busy machine). The code's
 * own time limit starts when it starts running.
 */
const START_ALLOWANCE_MS = 60_000;

function failed(message: string, data: CodeInterpreterCallData): ToolOutput {
  return { text: JSON.stringify({ status: 'failed', error: message }), isError: true, data };
}

function logsOf(r: SandboxRunResult): string {
  let logs = r.stdout + r.stderr;
  if (r.outputTruncated) logs += '\n[output truncated: the program printed more than the sandbox keeps]\n';
  return logs;
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
@GatewayExecutorProvider({ type: ToolType.CodeInterpreter })
export class CodeInterpreterExecutor implements GatewayExecutor<CodeInterpreterParams> {
  readonly type = ToolType.CodeInterpreter;
  private readonly logger = new Logger('CodeInterpreter');

  constructor(
    private readonly containers: ContainerStore,
    @Inject(SANDBOX_BACKEND) private readonly backend: SandboxBackend,
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
    if (this.config.tools.timeoutMsByType?.[ToolType.CodeInterpreter] !== undefined) return undefined;
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
    const container = this.containers.get(containerId);
    if (!container) return failed('The container of this conversation has expired; its files are gone.', data);
    if (container.calls >= this.settings.maxCallsPerContainer) {
      return failed(`This conversation has used its ${this.settings.maxCallsPerContainer} code runs.`, data);
    }
    container.calls++;
    this.containers.touch(container);
    // What the run may add: the container's room and its owner's, whichever is less.
    const held = [...container.files.values()].reduce((n, f) => n + f.bytes, 0);
    const room = Math.max(0, Math.min(this.settings.maxContainerBytes - held, (await this.containers.ownerRoom(container.owner)).room));
    const result = await this.backend.run({
      session: container.id,
      workspaceDir: container.dir,
      code,
      signal: ctx.signal,
      limits: {
        timeoutMs: this.settings.timeoutMs,
        graceMs: this.settings.graceMs,
        memoryLimitMb: this.settings.memoryLimitMb,
        maxOutputBytes: this.settings.maxOutputBytes,
        maxFileBytes: Math.min(this.settings.maxFileBytesPerCall, room),
        maxWorkspaceBytes: held + room,
      },
    });
    this.containers.touch(container);
    const recorded = await this.containers.recordChanges(container, result.changedFiles);
    data.logs = logsOf(result);
    data.files = recorded.files.map((f) => ({ fileId: f.id, path: `/mnt/data/${f.path}` }));
    for (const f of recorded.files) {
      const media = imageMediaType(f.path);
      if (!media) continue;
      // Replaced by a link since the run (a background process of the program): not shown.
      const inline = f.bytes <= INLINE_IMAGE_BYTES ? await this.containers.content(container, f).catch(() => undefined) : undefined;
      if (f.bytes <= INLINE_IMAGE_BYTES && !inline) continue;
      const url = inline ? `data:${media};base64,${inline.toString('base64')}` : `/v1/containers/${container.id}/files/${f.id}/content`;
      data.images.push({ fileId: f.id, url });
    }
    if (!['ok', 'error'].includes(result.status) && !ctx.signal.aborted) {
      this.logger.warn(`request ${ctx.requestId}: code run ended with ${result.status} in ${container.id}`);
    }
    const notes: string[] = [];
    if (result.message) notes.push(result.message);
    if (result.filesTruncated) notes.push(`Some files were not kept: one run may write at most ${this.settings.maxFileBytesPerCall} bytes.`);
    if (recorded.refused.length) notes.push(`Not kept (the container or its owner's quota is full): ${recorded.refused.map((p) => `/mnt/data/${p}`).join(', ')}.`);
    // A run whose files did not fit is a failed call: the model must not take them for written.
    const overQuota = recorded.refused.length > 0 || (result.filesTruncated && room < this.settings.maxFileBytesPerCall);
    const status = overQuota ? 'failed' : result.status === 'ok' ? 'ok' : result.status === 'error' ? 'error' : 'failed';
    const text = JSON.stringify({
      status,
      logs: data.logs,
      ...(data.files.length ? { files: data.files.map((f) => ({ file_id: f.fileId, path: f.path })) } : {}),
      ...(notes.length ? { note: notes.join(' ') } : {}),
    });
    // A program that raised still ran: its traceback is the answer the model
    // needs. Only a run the sandbox had to stop is a failed call.
    return { text, data, isError: status === 'failed' };
  }

  planEvents(call: GatewayCall, params: CodeInterpreterParams): GatewayEventPlan {
    const code = codeOf(call.arguments);
    return {
      startedItem: { type: 'code_interpreter_call', id: call.itemId, status: 'in_progress', code: '', container_id: params.containerId ?? '', outputs: null },
      beforeExecute: [
        { type: 'response.code_interpreter_call.in_progress' },
        { type: 'response.code_interpreter_call_code.delta', delta: code },
        { type: 'response.code_interpreter_call_code.done', code },
        { type: 'response.code_interpreter_call.interpreting' },
      ],
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
