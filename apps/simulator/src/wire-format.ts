import { randomBytes } from 'node:crypto';

/** One SSE event as a dialect produces it; the server decides framing, pacing and faults. */
export interface SseFrame {
  /** Event type, written as an `event:` line only when that option is on (Responses only). */
  readonly event: string;
  readonly data: string;
  /** Carries model output (a delta): paced by time-to-first-token and the per-token delay. */
  readonly token: boolean;
  /** Ends the response normally; the `truncate` fault stops right before the first such frame. */
  readonly terminal: boolean;
}

export function frame(event: string, payload: unknown, token = false, terminal = false): SseFrame {
  return { event, data: typeof payload === 'string' ? payload : JSON.stringify(payload), token, terminal };
}

/** Ids are the only random part of a response: vLLM's are random too, and they must not collide. */
export function hexId(length = 16): string {
  return randomBytes(Math.ceil(length / 2))
    .toString('hex')
    .slice(0, length);
}

export function unixSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
