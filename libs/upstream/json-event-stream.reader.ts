import { createParser } from 'eventsource-parser';
import type { JsonObject } from '#tool-sdk/items.js';
import { UpstreamUnavailableError } from '#tool-sdk/errors.js';
import type { UpstreamBody } from './http-transport.js';
import { isJsonObject } from './wire-values.js';

/** One SSE line may not grow past this; protects memory against a runaway upstream. */
const MAX_EVENT_CHARS = 16 * 1024 * 1024;

export interface JsonEventStreamEnd {
  /** The stream carried the OpenAI `[DONE]` sentinel. */
  sawDone: boolean;
  /** `onEvent` asked to stop (a terminal event arrived). */
  stopped: boolean;
}

/**
 * Reads an SSE body whose `data:` fields are JSON objects, as both dialects
 * send them. The event type lives in the JSON (vLLM omits `event:` lines), so
 * the SSE `event` field is ignored. `onEvent` returns `true` once it has seen
 * a terminal event: the rest of the body is then drained, not parsed. `parse`
 * reads one event's data (a dialect may leave out what it never looks at).
 */
export function readJsonEventStream(
  body: UpstreamBody,
  onEvent: (event: JsonObject) => boolean | void,
  parse: (data: string) => unknown = JSON.parse,
): Promise<JsonEventStreamEnd> {
  const end: JsonEventStreamEnd = { sawDone: false, stopped: false };
  const malformed = (detail: string): UpstreamUnavailableError =>
    new UpstreamUnavailableError(`The model server sent a malformed stream event: ${detail}`, 'upstream_stream_error').withDetail(`upstream ${body.url}`);

  const parser = createParser({
    maxBufferSize: MAX_EVENT_CHARS,
    onEvent(message) {
      if (end.sawDone || end.stopped) return;
      const data = message.data.trim();
      if (data === '') return;
      if (data === '[DONE]') {
        end.sawDone = true;
        body.release();
        return;
      }
      let event: unknown;
      try {
        event = parse(data);
      } catch {
        throw malformed(preview(data));
      }
      if (!isJsonObject(event)) throw malformed(preview(data));
      if (onEvent(event) === true) {
        end.stopped = true;
        body.release();
      }
    },
    onError(error) {
      // Unknown SSE fields are ignored as the SSE spec says; an oversized line is not survivable.
      if (error.type === 'max-buffer-size-exceeded') throw malformed('event exceeds the size limit');
    },
  });

  // A promise chain rather than an async function, whose suspended frame a stream would hold while it runs.
  return body
    .text((chunk) => {
      if (!end.sawDone && !end.stopped) parser.feed(chunk);
    })
    .then(() => end);
}

function preview(data: string): string {
  return data.length > 120 ? `${data.slice(0, 120)}…` : data;
}
