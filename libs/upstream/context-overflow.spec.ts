import { ContextLengthExceededError } from '#tool-sdk/errors.js';
import { contextOverflowError } from './context-overflow.js';
import { toErrorEnvelope } from '#edge/errors/error-envelope.js';

describe("vLLM's context refusals", () => {
  it('reads the figures of each wording vLLM uses, with the OpenAI code and param', () => {
    const alone = contextOverflowError(
      "This model's maximum context length is 32768 tokens. However, your request has 33012 input tokens. Please reduce the length of the input messages.",
      400,
    );
    expect(alone).toBeInstanceOf(ContextLengthExceededError);
    expect(alone?.overflow).toEqual({ contextLength: 32768, inputTokens: 33012, outputTokens: null });
    expect(toErrorEnvelope(alone)).toMatchObject({ status: 400, body: { error: { code: 'context_length_exceeded', param: 'input', type: 'invalid_request_error' } } });

    const budget = contextOverflowError(
      "'max_tokens' or 'max_completion_tokens' is too large: 32000. This model's maximum context length is 32768 tokens and your request has 14873 input tokens (32000 > 32768 - 14873).",
      400,
    );
    expect(budget?.overflow).toEqual({ contextLength: 32768, inputTokens: 14873, outputTokens: 32000 });

    const older = contextOverflowError(
      "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (1000 in the messages, 4000 in the completion). Please reduce the length of the messages or completion.",
      400,
    );
    expect(older?.overflow).toEqual({ contextLength: 4096, inputTokens: 1000, outputTokens: 4000 });
  });

  it('leaves every other refusal as it was', () => {
    expect(contextOverflowError('The model `x` does not exist.', 404)).toBeNull();
    expect(contextOverflowError('temperature must be at most 2', 400)).toBeNull();
  });
});
