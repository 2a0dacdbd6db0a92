import type { AbortLike } from '#core/protocol/cancellation.js';
import type { ModelEvent, ModelRequest } from '#core/protocol/model-events.js';
import { UpstreamUnavailableError } from '#tool-sdk/errors.js';
import { TransportDialectClient, isJsonBody } from './dialect-client.base.js';
import type { InferOptions } from '#core/upstream/upstream-client.interface.js';
import { readJsonEventStream } from './json-event-stream.reader.js';
import { ResponsesEventDecoder } from './responses-event.decoder.js';
import { toResponsesRequest } from './responses-request.mapper.js';
import { isJsonObject } from './wire-values.js';
import { parseBytesWithoutEchoedTools, parseWithoutEchoedTools } from './echoed-tools.js';

const parseEvent = (data: string) => parseWithoutEchoedTools(data, 'event');

/** An upstream that speaks `POST /responses` itself (vLLM). */
export class ResponsesDialectClient extends TransportDialectClient {
  readonly dialect = 'responses' as const;

  protected async run(request: ModelRequest, signal: AbortLike, emit: (event: ModelEvent) => void, options: InferOptions): Promise<void> {
    const body = await this.transport.open({
      method: 'POST',
      path: '/responses',
      body: toResponsesRequest(request, this.upstream.defaultModel),
      signal,
      flow: options.flow,
      headers: options.context?.headers,
      accept: request.stream ? 'text/event-stream' : 'application/json',
    });
    const decoder = new ResponsesEventDecoder(emit, body.url);
    if (request.stream && !isJsonBody(body.contentType)) {
      // Returned, not awaited: this function's frame is not held for as long as the stream runs.
      return readJsonEventStream(body, (event) => decoder.push(event), parseEvent).then(() => decoder.end());
    }
    const response = await body.json(parseBytesWithoutEchoedTools);
    if (!isJsonObject(response)) {
      throw new UpstreamUnavailableError('The model server answered with JSON that is not a response object.', 'upstream_bad_response').withDetail(`upstream ${body.url}`);
    }
    decoder.decodeResponse(response);
  }
}
