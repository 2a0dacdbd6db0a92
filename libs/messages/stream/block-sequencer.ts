import type { AnthropicStreamEvent, BlockDelta, ContentBlock } from './anthropic-events.js';

/** One content block on its way out: started, fed deltas, stopped. */
export interface BlockLane {
  readonly block: ContentBlock;
  index: number;
  closed: boolean;
  pending: BlockDelta[];
}

/**
 * Anthropic streams content blocks strictly one after another (start,
 * deltas, stop, then the next), with indexes in start order. Responses items
 * may overlap: a gateway call's result lands while the next message is
 * still streaming. A block that opens while another is live waits, its
 * deltas buffered, and follows as soon as the live one stops.
 */
export class BlockSequencer {
  private nextIndex = 0;
  private live: BlockLane | null = null;
  private readonly waiting: BlockLane[] = [];

  constructor(private readonly out: (event: AnthropicStreamEvent) => void) {}

  open(block: ContentBlock): BlockLane {
    const lane: BlockLane = { block, index: -1, closed: false, pending: [] };
    this.waiting.push(lane);
    this.promote();
    return lane;
  }

  delta(lane: BlockLane, delta: BlockDelta): void {
    if (lane.closed) return;
    if (lane === this.live) this.out({ type: 'content_block_delta', index: lane.index, delta });
    else lane.pending.push(delta);
  }

  close(lane: BlockLane): void {
    if (lane.closed) return;
    lane.closed = true;
    if (lane !== this.live) return;
    this.out({ type: 'content_block_stop', index: lane.index });
    this.live = null;
    this.promote();
  }

  /** Ends every block still open or waiting, in order (the message is ending). */
  closeAll(): void {
    // Closing the live block promotes the next waiting one, so this walks them all.
    while (this.live) this.close(this.live);
  }

  private promote(): void {
    while (!this.live && this.waiting.length > 0) {
      const lane = this.waiting.shift()!;
      lane.index = this.nextIndex++;
      this.out({ type: 'content_block_start', index: lane.index, content_block: lane.block });
      for (const delta of lane.pending) this.out({ type: 'content_block_delta', index: lane.index, delta });
      lane.pending = [];
      if (lane.closed) this.out({ type: 'content_block_stop', index: lane.index });
      else this.live = lane;
    }
  }
}
