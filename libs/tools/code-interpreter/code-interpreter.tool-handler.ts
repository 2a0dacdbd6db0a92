import {
  type DiscoveryContext,
  type DiscoveryResult,
  firstOfferedToolChoice,
  type GatewayCall,
  type HistoryContext,
  type JsonObject,
  type ModelItem,
  type NormalizedTool,
  type PublicItem,
  type ToolHandler,
  ToolHandlerProvider,
  type ToolStatus,
  codeExecutionRefusal,
  GATEWAY_CONFIG,
  type GatewayConfig,
  InvalidRequestError,
  NotFoundError,
} from '#tool-sdk/index.js';
import { Inject, Injectable } from '@nestjs/common';
import { CODE_INTERPRETER_FUNCTION, codeOf } from './code-interpreter-call.js';
import { type CodeInterpreterParams, validateCodeInterpreterDeclaration } from './code-interpreter-declaration.js';
import { containerFileError } from './containers/container-errors.js';
import { type Container, ContainerStore } from './containers/container-store.service.js';
import { CODE_INTERPRETER_FILE_SOURCE, type CodeInterpreterFileSource } from './files/file-source.interface.js';
import { copyInputFiles } from './files/input-files.js';
import { SANDBOX_BACKEND, type SandboxBackend } from './sandbox/sandbox-backend.interface.js';
import { CODE_INTERPRETER } from './code-interpreter.tool-type.js';

interface Discovered {
  containerId: string;
}

/**
 * `code_interpreter`: gateway-owned. The model sees one function taking
 * `code`; calls run in the request's container.
 *
 * Which container: an explicit id must name a live one of the request's
 * owner (404 otherwise);
 * `auto` reuses the container of the latest `code_interpreter_call` in the
 * conversation's history while it lives, so files and variables carry over
 * between turns of one conversation, and creates a new one otherwise.
 * `file_ids`, and the conversation's `input_file` parts, are copied in once
 * per container (`files/input-files.ts`). Containers belong to the
 * request's owner: another key's container, named or found in history, is
 * not there for this one.
 */
@Injectable()
@ToolHandlerProvider({ type: CODE_INTERPRETER })
export class CodeInterpreterToolHandler implements ToolHandler<CodeInterpreterParams, Discovered, CodeInterpreterParams> {
  readonly type = CODE_INTERPRETER;
  readonly gatewayOwned = true;
  readonly historyItemTypes = ['code_interpreter_call'];
  readonly itemIdPrefix = 'ci';
  readonly toolChoice = firstOfferedToolChoice(CODE_INTERPRETER, [CODE_INTERPRETER]);

  /** Why code execution is off on this gateway (listening beyond loopback without credentials), or null. */
  private readonly refusal: string | null;

  constructor(
    private readonly containers: ContainerStore,
    @Inject(CODE_INTERPRETER_FILE_SOURCE) private readonly files: CodeInterpreterFileSource,
    @Inject(SANDBOX_BACKEND) private readonly backend: SandboxBackend,
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
  ) {
    this.refusal = codeExecutionRefusal(config);
  }

  /** The start-up summary: off and why, or the backend and the boundary its containers get (each limit the host lacks named). */
  describe(): ToolStatus {
    if (this.refusal) return { runs: false, detail: `off: ${this.refusal}` };
    const boundary = this.backend.boundary;
    return { runs: true, detail: `runs in the gateway (${this.backend.name} sandbox${boundary ? `; ${boundary.describe()}` : ''})` };
  }

  validate(decl: JsonObject, path: string): CodeInterpreterParams {
    // Refused before anything starts: no container, no interpreter. The reason names no address: the caller reached it.
    if (this.refusal) {
      throw new InvalidRequestError(
        `${path}.type "code_interpreter" is turned off on this gateway: it accepts requests without an API key, so it does not run code. The operator can set API keys or allow it explicitly.`,
        `${path}.type`,
        'tool_disabled',
      );
    }
    return validateCodeInterpreterDeclaration(decl, path);
  }

  async discover(p: CodeInterpreterParams, ctx: DiscoveryContext): Promise<DiscoveryResult<Discovered>> {
    // Interpreters start when code_interpreter is first declared, not at
    // boot: a gateway whose clients never use it never pays for them.
    void this.backend.warmUp?.().catch(() => undefined);
    if (p.container.kind === 'id') {
      const found = await this.containers.owned(p.container.id, ctx.owner ?? null);
      if (!found) throw new NotFoundError(`Container '${p.container.id}' not found or expired.`, 'container_not_found', `${p.path}.container`);
      return { state: { containerId: found.id } };
    }
    const owner = ctx.owner ?? null;
    const container =
      (await this.fromHistory(ctx.history, owner)) ??
      (await this.containers.create({ owner, memoryLimit: p.container.memoryLimit }).catch((err: unknown) => {
        throw containerFileError(err, `${p.path}.container`) ?? err;
      }));
    await this.copyFiles(container, p, owner);
    // The conversation's `input_file` parts go in too, as OpenAI places them in an `auto` container.
    await copyInputFiles(this.containers, this.files, container, ctx.history, owner).catch((err: unknown) => {
      throw containerFileError(err, `${p.path}.container`) ?? err;
    });
    return { state: { containerId: container.id } };
  }

  normalize(p: CodeInterpreterParams, discovered: Discovered | undefined): NormalizedTool<CodeInterpreterParams>[] {
    return [
      {
        fn: {
          type: 'function',
          name: CODE_INTERPRETER_FUNCTION,
          description:
            `Run Python 3 code in a sandbox and see its output. ${this.backend.capabilities} ` +
            'Files are in /mnt/data: read the files the user provided there, and save files you produce (CSV, PNG, ...) ' +
            'there to hand them to the user. The value of the last expression is printed. There is no network access.',
          parameters: {
            type: 'object',
            properties: { code: { type: 'string', description: 'The Python program to run.' } },
            required: ['code'],
            additionalProperties: false,
          },
        },
        toolName: CODE_INTERPRETER_FUNCTION,
        executionParams: { ...p, containerId: discovered?.containerId } satisfies CodeInterpreterParams,
      },
    ];
  }

  publicDeclaration(p: CodeInterpreterParams, decl: JsonObject): JsonObject {
    return { type: 'code_interpreter', container: decl.container ?? null };
  }

  unboundCallItem(call: GatewayCall, error: { code: string; message: string }): PublicItem {
    return { type: 'code_interpreter_call', id: call.itemId, status: 'failed', code: codeOf(call.arguments), container_id: '', outputs: null, error: error.message };
  }

  /** An item from history, as the model saw it: its code, and its logs when the client kept them. */
  toModelItems(item: PublicItem, ctx: HistoryContext): ModelItem[] {
    const it = item as JsonObject;
    const callId = String(it.id);
    const outputs = Array.isArray(it.outputs) ? (it.outputs as JsonObject[]) : null;
    const logs =
      outputs
        ?.filter((o) => o?.type === 'logs')
        .map((o) => String(o.logs ?? ''))
        .join('') ?? null;
    const output =
      it.status === 'failed'
        ? { status: 'failed', logs: logs ?? '' }
        : logs !== null
          ? { status: 'ok', logs }
          : { status: 'ok', note: 'The output of this earlier run was not kept; files it wrote are still in /mnt/data while the container lives.' };
    return [
      {
        type: 'function_call',
        call_id: callId,
        name: ctx.modelNameFor(CODE_INTERPRETER_FUNCTION) ?? CODE_INTERPRETER_FUNCTION,
        arguments: JSON.stringify({ code: it.code ?? '' }),
      },
      { type: 'function_call_output', call_id: callId, output: JSON.stringify(output) },
    ];
  }

  private async fromHistory(history: readonly PublicItem[], owner: string | null): Promise<Container | undefined> {
    for (let i = history.length - 1; i >= 0; i--) {
      const it = history[i] as JsonObject;
      if (it?.type !== 'code_interpreter_call' || typeof it.container_id !== 'string') continue;
      const c = await this.containers.owned(it.container_id, owner);
      if (c) return c;
    }
    return undefined;
  }

  private async copyFiles(c: Container, p: CodeInterpreterParams, owner: string | null): Promise<void> {
    if (p.container.kind !== 'auto' || p.container.fileIds.length === 0) return;
    // Recorded with the container (not in this process): a later turn may land on another one.
    const done = new Set(c.copiedFileIds);
    for (const [i, id] of p.container.fileIds.entries()) {
      if (done.has(id)) continue;
      const param = `${p.path}.container.file_ids[${i}]`;
      try {
        const file = await this.files.read(id, { owner });
        if (!file) throw new NotFoundError(`No file with id '${id}'.`, 'file_not_found', param);
        await this.containers.addFile(c, file.filename, file.data, id);
      } catch (err) {
        throw containerFileError(err, param) ?? err;
      }
      done.add(id);
    }
  }
}
