import { Injectable, Logger } from '@nestjs/common';
import {
  type ExecutionContext,
  type GatewayCall,
  type GatewayCallResult,
  type GatewayEventPlan,
  type GatewayExecutor,
  GatewayExecutorProvider,
  type PublicItem,
  type ToolOutput,
} from '#tool-sdk/index.js';
import { McpConnectError, McpConnectionLostError, McpConnectionPool } from './mcp-connection-pool.service.js';
import { mcpFailureDetail, mcpFailureVerdict } from './mcp-failure.js';
import { checkedCallResult } from './mcp-call-result.js';
import { McpHttpTransport } from './mcp-http.transport.js';
import { callItem, finishedCallItem, toToolOutput } from './mcp-items.js';
import { loadedMcpSdk } from './mcp-sdk.js';
import type { McpExecutionParams } from './mcp.tool-handler.js';
import { MCP } from './mcp.tool-type.js';

const DEADLINE_GRACE_MS = 1_000;

/**
 * The SDK's own timer for a call: past the deadline by the grace, rounded up
 * to a whole second. Node keeps one list per timer duration, and a duration
 * no other timer has makes (and then drops) a list of its own, as the
 * milliseconds left before each call's deadline would for nearly every call.
 */
export function backstopMs(deadline: number, now = Date.now()): number {
  return Math.ceil(Math.max(1, deadline - now) / 1_000) * 1_000 + DEADLINE_GRACE_MS;
}

function parseArguments(raw: string): Record<string, unknown> | string {
  if (raw.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(raw);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    return 'The arguments must be a JSON object.';
  } catch {
    return 'The arguments are not valid JSON.';
  }
}

/**
 * Runs MCP tool calls (`tools/call`) on the pooled connection of the tool's
 * server, and shapes their public `mcp_call` lifecycle.
 */
@Injectable()
@GatewayExecutorProvider({ type: MCP })
export class McpGatewayExecutor implements GatewayExecutor<McpExecutionParams> {
  readonly type = MCP;
  private readonly logger = new Logger('McpCalls');

  constructor(private readonly pool: McpConnectionPool) {}

  /** MCP servers answer requests independently; JSON-RPC ids keep overlapping calls apart. */
  supportsParallelExecution(): boolean {
    return true;
  }

  async execute(call: GatewayCall, params: McpExecutionParams, ctx: ExecutionContext): Promise<ToolOutput> {
    const args = parseArguments(call.arguments);
    if (typeof args === 'string') return { isError: true, text: `${args} The call to "${params.toolName}" was not sent.` };
    try {
      const result = await this.pool.use(
        params.target,
        ctx.signal,
        (client, signal, connection) => {
          // Over streamable HTTP the call's answer is read by the gateway itself (`McpHttpTransport.request`),
          // held to what the SDK's client holds it to (`checkedCallResult`). The scheduler aborts the signal at
          // the deadline, which ends the exchange and tells the server (notifications/cancelled).
          const sdk = loadedMcpSdk();
          if (connection.transport instanceof McpHttpTransport && sdk && !params.taskRequired) {
            return connection.transport
              .request('tools/call', { name: params.toolName, arguments: args }, signal)
              .then((answer) => checkedCallResult(answer, params, connection.schemas, sdk));
          }
          // `undefined`: the SDK's default result schema (CallToolResultSchema), so that no SDK value is imported here.
          return client.callTool({ name: params.toolName, arguments: args }, undefined, {
            // The SDK's own timer is a backstop set just past the deadline, so that the
            // scheduler's timeout, not a race between two timers, decides the outcome.
            signal,
            timeout: backstopMs(ctx.deadline),
          });
        },
        // The call's signal is its own: a lost connection aborts it, rather than a signal linked to it.
        { ownSignal: ctx.abort },
      );
      return toToolOutput(result as Record<string, unknown>);
    } catch (err) {
      return { isError: true, text: this.describeFailure(err, params) };
    }
  }

  planEvents(call: GatewayCall, params: McpExecutionParams): GatewayEventPlan {
    return {
      startedItem: callItem(call, params.serverLabel, params.toolName, { arguments: '', output: null, error: null, status: 'in_progress' }),
      beforeExecute: [
        { type: 'response.mcp_call.in_progress' },
        { type: 'response.mcp_call_arguments.delta', delta: call.arguments },
        { type: 'response.mcp_call_arguments.done', arguments: call.arguments },
      ],
      afterExecute: (result) => [{ type: result.status === 'completed' ? 'response.mcp_call.completed' : 'response.mcp_call.failed' }],
    };
  }

  publicOutput(result: GatewayCallResult, params: McpExecutionParams): PublicItem {
    return finishedCallItem(result, params.serverLabel, params.toolName);
  }

  /** A failed call as the model (and so the tenant) reads it; the log keeps the address and the transport's words. */
  private describeFailure(err: unknown, params: McpExecutionParams): string {
    const { target, toolName } = params;
    if (err instanceof McpConnectionLostError || err instanceof McpConnectError) return target.redact(err.message);
    // Only the SDK makes an McpError: with the SDK not loaded, `err` is none.
    const sdk = loadedMcpSdk();
    if (sdk && err instanceof sdk.McpError) {
      if (err.code === sdk.ErrorCode.ConnectionClosed) return `The connection to MCP server ${target.publicName()} closed during the call to "${toolName}".`;
      if (err.code === sdk.ErrorCode.RequestTimeout) return `The call to "${toolName}" on MCP server ${target.publicName()} timed out.`;
      // A JSON-RPC error the server answered: its own words.
      return target.redact(`MCP server ${target.publicName()} refused the call to "${toolName}": ${err.message}`);
    }
    this.logger.warn(`call to "${toolName}" failed: ${mcpFailureDetail(target, err)}`);
    const verdict = mcpFailureVerdict(err);
    return `The call to "${toolName}" on MCP server ${target.publicName()} failed: ${verdict === 'unreachable' ? 'the server is unreachable' : 'the server did not answer over MCP'}.`;
  }
}
