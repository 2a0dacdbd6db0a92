import { type Observable, concat, concatMap, defer, from, of } from 'rxjs';
import type { AnyToolHandler, ApprovalVerdict } from '#tool-sdk/contract/index.js';
import type { PublicItem } from '#tool-sdk/items.js';
import { GatewayCallBatch } from './gateway-call-batch.js';
import type { ScheduledCall } from './gateway-scheduler.service.js';
import type { ApprovalSlot } from './history-to-model.js';
import type { RunContext } from './run-context.js';
import { withApprovalOutputs, type RunState } from './run-state.js';
import type { EventInit } from './response-events.js';

/** What answering the approvals emits: the approved calls' public events, then the state they leave. */
export type ApprovalsValue = EventInit | ApprovalsEnd;

export interface ApprovalsEnd {
  readonly type: 'approvals.end';
  readonly state: RunState;
}

/**
 * Answers approval items before the first round, through each tool module's
 * approval contract: approved calls run now (with their public lifecycle),
 * denied ones tell the model so. Either way the output lands where the
 * answer stood in the input. A call that fails to start stops the ones
 * already running, like a cancel: both are the batch's unsubscription.
 */
export function answerApprovals$(ctx: RunContext, state: RunState, approvals: readonly ApprovalSlot[]): Observable<ApprovalsValue> {
  return defer(() => {
    const verdicts = verdictsOf(ctx, approvals, [...ctx.prior.publicItems, ...ctx.request.input]);
    const live = approvals.filter((approval) => verdicts.get(approval)!.kind !== 'settled');
    if (live.length === 0) return of<ApprovalsValue>({ type: 'approvals.end', state });
    const batch = new GatewayCallBatch(ctx, state.calls);
    const running = new Map<ApprovalSlot, number>();
    // The calls' public starts are emitted as values ahead of what the scheduler runs.
    const start = (approval: ApprovalSlot): Array<ScheduledCall | EventInit> => {
      const verdict = verdicts.get(approval)!;
      if (verdict.kind !== 'approved') return [];
      const { index, scheduled, events } = batch.startApproved(verdict.entry, approval.answer.requestId, verdict.arguments);
      running.set(approval, index);
      return [...events, scheduled];
    };
    const answered = () =>
      live.map((approval) => {
        const verdict = verdicts.get(approval)!;
        const index = running.get(approval);
        return { approval, output: index !== undefined ? batch.outputOf(index) : verdict.kind === 'denied' ? verdict.output : '' };
      });
    // Each call starts as the previous one went to the scheduler, as the model's calls do in a round.
    return concat(
      from(live).pipe(concatMap(start), batch.execute()),
      defer(() => of<ApprovalsEnd>({ type: 'approvals.end', state: withApprovalOutputs(state, answered(), batch.count) })),
    );
  });
}

/** One verdict per answer, each module deciding its own answers in their given order. */
function verdictsOf(ctx: RunContext, approvals: readonly ApprovalSlot[], conversation: readonly PublicItem[]): Map<ApprovalSlot, ApprovalVerdict> {
  const byHandler = new Map<AnyToolHandler, ApprovalSlot[]>();
  for (const approval of approvals) byHandler.set(approval.handler, [...(byHandler.get(approval.handler) ?? []), approval]);
  const verdicts = new Map<ApprovalSlot, ApprovalVerdict>();
  const entries = [...ctx.registry.all()];
  for (const [handler, own] of byHandler) {
    const decided = handler.approvals!.resolve(
      own.map((approval) => approval.answer),
      { conversation, entries },
    );
    own.forEach((approval, i) => verdicts.set(approval, decided[i]));
  }
  return verdicts;
}
