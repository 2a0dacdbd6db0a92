import type { IncomingHttpHeaders } from 'node:http';

export type ReasoningEventNames = 'openai' | 'openresponses';

/**
 * The reasoning event names a request's client reads, when the deployment
 * leaves the choice to the client (`server.reasoningEvents: auto`).
 *
 * The `openai` SDKs' stream helper (`responses.stream()`, and whatever is
 * built on it: the Agents SDK, LangChain) throws on an event it does not
 * know, and knows only `response.reasoning_text.*`; Codex reads those too.
 * Every other client gets the Open Responses specification's
 * `response.reasoning.*`, which its compliance suite requires. The SDKs
 * declare themselves: every Stainless-built SDK sends `x-stainless-lang`
 * (also from a browser, where it cannot set `User-Agent`) and a
 * `User-Agent` of `OpenAI/<lang> <version>`; Codex's starts with `codex`.
 */
export function reasoningEventsFor(headers: IncomingHttpHeaders): ReasoningEventNames {
  const agent = headers['user-agent'] ?? '';
  if (/^(OpenAI\/|codex)/i.test(agent)) return 'openai';
  // The Anthropic SDK is Stainless-built too, but it never reads Responses events.
  if (headers['x-stainless-lang'] !== undefined && !/^Anthropic\//i.test(agent)) return 'openai';
  return 'openresponses';
}
