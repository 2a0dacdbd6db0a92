import type { JsonObject } from '#tool-sdk/items.js';
import type { BackgroundEvent, BackgroundRun } from '../background-store.interface.js';

/** The final event an expired run gets: one past the last it had, so followers see it end in order. */
export function expiryEvent(
  run: BackgroundRun,
  fail: (run: BackgroundRun) => { response: JsonObject; event: JsonObject },
): {
  response: JsonObject;
  event: BackgroundEvent;
} {
  const { response, event } = fail(run);
  const sequence = run.lastSequence + 1;
  return { response, event: { sequence, event: { ...event, sequence_number: sequence } } };
}

/** Notification channel name (PostgreSQL) and event name (in-process). */
export const BACKGROUND_CHANNEL = 'switchyard_background';
