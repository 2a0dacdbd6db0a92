import { ContextLengthExceededError, UpstreamHttpError } from '#tool-sdk/errors.js';
import { parseRelayRequest } from './relay-request.js';
import { asRouteError, refittedAfterRefusal } from './relay.service.js';

const chat = (extra: Record<string, unknown>) => parseRelayRequest('/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'hi' }], ...extra }, undefined);
const budgetRefusal = (asked: number, contextLength: number, inputTokens: number) =>
  new ContextLengthExceededError(`'max_tokens' is too large: ${asked}.`, 400, { outputTokens: asked, contextLength, inputTokens });

describe('refittedAfterRefusal', () => {
  it("sends the field the client used with what the server's count leaves", () => {
    expect(refittedAfterRefusal(chat({ max_tokens: 32000 }), budgetRefusal(32000, 8192, 7003))?.body.max_tokens).toBe(1189);
    expect(refittedAfterRefusal(chat({ max_completion_tokens: 32000, max_tokens: 5 }), budgetRefusal(32000, 8192, 7003))?.body).toMatchObject({
      max_completion_tokens: 1189,
      max_tokens: 5,
    });
  });

  it('leaves the refusal standing below the useful floor, for a prompt alone, without a budget, and for other errors', () => {
    expect(refittedAfterRefusal(chat({ max_tokens: 32000 }), budgetRefusal(32000, 8192, 8003))).toBeNull();
    const promptAlone = new ContextLengthExceededError('too long', 400, { outputTokens: null, contextLength: 8192, inputTokens: 9003 });
    expect(refittedAfterRefusal(chat({ max_tokens: 32000 }), promptAlone)).toBeNull();
    expect(refittedAfterRefusal(chat({}), budgetRefusal(32000, 8192, 7003))).toBeNull();
    expect(refittedAfterRefusal(chat({ max_tokens: 32000 }), new UpstreamHttpError('bad', 400))).toBeNull();
  });
});

describe('asRouteError', () => {
  it("names the route's prompt field in a context overflow, keeping the server's status and words", () => {
    const routed = asRouteError('/chat/completions', budgetRefusal(32000, 8192, 8003).withDetail('upstream POST x answered 400')) as UpstreamHttpError;
    expect(routed).toMatchObject({
      upstreamStatus: 400,
      code: 'context_length_exceeded',
      param: 'messages',
      message: "'max_tokens' is too large: 32000.",
      detail: 'upstream POST x answered 400',
    });
    expect((asRouteError('/completions', budgetRefusal(1, 2, 3)) as UpstreamHttpError).param).toBe('prompt');
  });

  it('leaves any other error as it is', () => {
    const other = new UpstreamHttpError('bad temperature', 422, undefined, { code: 'upstream_422', param: 'temperature' });
    expect(asRouteError('/chat/completions', other)).toBe(other);
  });
});
