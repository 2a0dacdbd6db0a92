import type { Subscription } from 'rxjs';
import type { GatewayCall, GatewayCallResult, GatewayEventPlan } from '../handlers/tool-handler.interface.js';
import type { FunctionCallItem } from '../protocol/items.js';
import type { ToolEntry } from '../registry/tool-registry.js';
import type { RoundExecution } from './gateway-scheduler.service.js';

/** One gateway call as it moves through a batch: started publicly, executed, finished in model order. */
export interface CallSlot {
  call: GatewayCall;
  entry: ToolEntry;
  plan?: GatewayEventPlan;
  /** -1 for a call refused before it started (no public item). */
  outputIndex: number;
  modelCall: FunctionCallItem | null;
  result?: GatewayCallResult;
}

/** The gateway calls of one round (or of one set of approvals), and their in-order completion. */
export class CallBatch {
  readonly slots: CallSlot[] = [];
  private nextToFinish = 0;
  private readonly subscription: Subscription;
  private settled = false;

  constructor(
    private readonly execution: RoundExecution,
    private readonly finishSlot: (slot: CallSlot) => void,
  ) {
    this.subscription = execution.results.subscribe(({ slot, result }) => {
      this.slots[slot].result = result;
      this.flush();
    });
  }

  add(slot: CallSlot): void {
    const index = this.slots.push(slot) - 1;
    this.execution.submit({ slot: index, call: slot.call, entry: slot.entry });
  }

  /** A slot that never runs (refused by a limit): it keeps its place, its result already known. */
  addRefused(slot: CallSlot): void {
    this.slots.push(slot);
  }

  /** Public completion follows model call order, whatever order the calls finish in. */
  private flush(): void {
    while (this.nextToFinish < this.slots.length && this.slots[this.nextToFinish].result) {
      this.finishSlot(this.slots[this.nextToFinish++]);
    }
  }

  async settle(): Promise<void> {
    this.execution.close();
    await this.execution.done;
    this.flush();
    this.settled = true;
    this.subscription.unsubscribe();
  }

  /** Stops every call still running; a no-op once the batch settled. */
  cancel(): void {
    if (this.settled) return;
    this.settled = true;
    this.subscription.unsubscribe();
    this.execution.cancel();
  }
}
