import type { AbortLike } from '#core/protocol/cancellation.js';
import type { ModelEvent, ModelRequest } from '#core/protocol/model-events.js';
import { UpstreamUnavailableError } from '#tool-sdk/errors.js';
import { ChatCompletionDecoder } from './chat-completion.decoder.js';
import { toChatCompletionRequest } from './chat-request.mapper.js';
import { TransportDialectClient, isJsonBody } from './dialect-client.base.js';
import type { InferOptions } from '#core/upstream/upstream-client.interface.js';
import { readJsonEventStream } from './json-event-stream.reader.js';
import { isJsonObject } from './wire-values.js';

/** An upstream that speaks `POST /chat/completions` (SGLang, llama.cpp server, Ollama, TGI, vLLM). */
export class ChatDialectClient extends TransportDialectClient {
  readonly dialect = 'chat' as const;

  protected async run(request: ModelRequest, signal: AbortLike, emit: (event: ModelEvent) => void, options: InferOptions): Promise<void> {
    const body = await this.transport.open({
      method: 'POST',
      path: '/chat/completions',
      body: toChatCompletionRequest(request, { defaultModel: this.upstream.defaultModel, toolOutputMedia: this.upstream.chatToolOutputMedia }),
      signal,
      flow: options.flow,
      headers: options.context?.headers,
      accept: request.stream ? 'text/event-stream' : 'application/json',
    });

    if (request.stream && !isJsonBody(body.contentType)) {
      const decoder = new ChatCompletionDecoder(emit, body.url, true);
      // Returned, not awaited: this function's frame is not held for as long as the stream runs.
      return readJsonEventStream(body, (chunk) => decoder.push(chunk)).then(({ sawDone }) => {
        // Every server in this family ends with `[DONE]`; a body that just stops
        // is accepted only when a choice already said why it finished.
        if (!sawDone && !decoder.sawFinishReason) {
          throw new UpstreamUnavailableError('The model server ended the stream before the completion finished.', 'upstream_stream_error').withDetail(`upstream ${body.url}`);
        }
        decoder.end();
      });
    }

    const completion = await body.json();
    if (!isJsonObject(completion)) {
      throw new UpstreamUnavailableError('The model server answered with JSON that is not a completion.', 'upstream_bad_response').withDetail(`upstream ${body.url}`);
    }
    const decoder = new ChatCompletionDecoder(emit, body.url, false);
    decoder.push(completion);
    decoder.end();
  }
}
