import { newId } from '#tool-sdk/ids.js';
import type { ContentPart, JsonObject, PublicItem } from '#tool-sdk/items.js';
import type { ThinkingSigner } from '../thinking/thinking-signer.js';
import { arrayAt, invalid, isObject, objectAt, present, stringAt } from './request-fields.js';

export interface MappedHistory {
  items: PublicItem[];
  /** Text of the `system` entries that open the conversation: they join the top-level `system`. */
  leadingSystem: string[];
  /** Text of the `system` entries after the last message, or between a user turn and the answer to it: they join the instructions too. */
  trailingSystem: string[];
}

/**
 * Anthropic `messages` → Responses input items. A message's blocks keep
 * their order: runs of text and images become one message item, and each
 * tool block becomes its own item where it stood (`tool_use` →
 * `function_call` with the block id as `call_id`, `tool_result` →
 * `function_call_output`, `thinking` → `reasoning`, a gateway-run
 * `mcp_tool_use` with its `mcp_tool_result` → `mcp_call`, which the MCP
 * module shows the model as a call and its output).
 *
 * `system` entries inside `messages` are folded: most chat templates accept
 * a system message only first (several raise on any other position), so the
 * entries that open the conversation join the top-level system prompt and
 * later ones become a note in the next user turn (after its tool results,
 * which must follow the calls they answer).
 *
 * Entries after the last message (Claude Code 2.1.3xx ends every request
 * with one) have no next user turn. Appended as a user message they would
 * be what the model answers, break templates that insist on alternating
 * roles, and change place on the next request, where the client's next turn
 * follows them. They join the instructions instead, and so does an entry
 * that stands between a user turn and the assistant's answer to it: that is
 * where a note sent last stays in the client's history (Claude Code 2.1.197
 * keeps it there on every later request), so it was in the instructions
 * when the model answered and stays there. Moved into the next user turn it
 * would land behind the tool output of that answer, where the model reads
 * it as the latest thing said, and the prompt would change between rounds.
 */
export function mapMessageHistory(value: unknown, signer: ThinkingSigner): MappedHistory {
  const messages = arrayAt(value, 'messages');
  if (messages.length === 0) invalid('messages', 'must contain at least one message.');
  const items: PublicItem[] = [];
  const leadingSystem: string[] = [];
  const answeredNotes: string[] = [];
  let pendingSystem: ContentPart[] = [];
  let pendingTexts: string[] = [];
  let lastRole: unknown;
  messages.forEach((raw, i) => {
    const path = `messages.${i}`;
    const message = objectAt(raw, path);
    const role = message.role;
    if (role !== 'user' && role !== 'assistant' && role !== 'system') invalid(`${path}.role`, 'must be "user", "assistant" or "system".');
    if (role === 'system') {
      const texts = typeof message.content === 'string' ? [message.content] : arrayAt(message.content, `${path}.content`).map((b, j) => textBlock(b, `${path}.content.${j}`));
      if (items.length === 0) leadingSystem.push(...texts);
      else if (lastRole === 'user' && nextRole(messages, i) !== 'user') answeredNotes.push(...texts);
      else {
        pendingSystem.push(...texts.map((text): ContentPart => ({ type: 'input_text', text: systemNote(text) })));
        pendingTexts.push(...texts);
      }
      return;
    }
    lastRole = role;
    if (role === 'user') {
      const blocks = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : arrayAt(message.content, `${path}.content`);
      items.push(...userItems(blocks, `${path}.content`, pendingSystem));
      pendingSystem = [];
      pendingTexts = [];
      return;
    }
    // An assistant turn between a system entry and the next user turn leaves the note for that turn.
    if (typeof message.content === 'string') {
      items.push(messageItem('assistant', [{ type: 'output_text', text: message.content }]));
      return;
    }
    items.push(...assistantItems(arrayAt(message.content, `${path}.content`), `${path}.content`, signer));
  });
  return { items, leadingSystem, trailingSystem: [...answeredNotes, ...pendingTexts] };
}

/** The role of the next entry that is not a `system` one, if any. */
function nextRole(messages: unknown[], i: number): unknown {
  for (let j = i + 1; j < messages.length; j++) {
    const role = (messages[j] as { role?: unknown } | null)?.role;
    if (role !== 'system') return role;
  }
  return undefined;
}

function systemNote(text: string): string {
  return `<system-reminder>\n${text}\n</system-reminder>`;
}

function messageItem(role: 'user' | 'assistant' | 'system', parts: ContentPart[]): PublicItem {
  const content = role === 'assistant' ? parts.map((p) => ({ ...p, annotations: [] })) : parts;
  return { type: 'message', id: newId('msg'), role, content } as PublicItem;
}

/**
 * Text and image parts gathered into one message item until a tool block
 * interrupts the run (`flush`), so blocks keep their order around it.
 */
function messageRun(role: 'user' | 'assistant', items: PublicItem[]): { add(part: ContentPart): void; flush(): void } {
  let parts: ContentPart[] = [];
  return {
    add: (part) => void parts.push(part),
    flush: () => {
      if (parts.length > 0) items.push(messageItem(role, parts));
      parts = [];
    },
  };
}

function textBlock(raw: unknown, path: string): string {
  const block = objectAt(raw, path);
  if (block.type !== 'text') invalid(`${path}.type`, 'must be "text".');
  return stringAt(block.text, `${path}.text`);
}

function blockType(block: JsonObject, path: string): string {
  return stringAt(block.type, `${path}.type`);
}

function userItems(blocks: unknown[], path: string, systemNotes: ContentPart[]): PublicItem[] {
  const items: PublicItem[] = [];
  const { add, flush } = messageRun('user', items);
  let notes = systemNotes;
  const addNotes = (): void => {
    notes.forEach(add);
    notes = [];
  };
  blocks.forEach((raw, j) => {
    const at = `${path}.${j}`;
    const block = objectAt(raw, at);
    const type = blockType(block, at);
    switch (type) {
      case 'text':
        addNotes();
        add({ type: 'input_text', text: stringAt(block.text, `${at}.text`) });
        return;
      case 'image':
        addNotes();
        add(imagePart(block, at));
        return;
      case 'tool_result':
        flush();
        items.push({
          type: 'function_call_output',
          id: newId('fco'),
          call_id: stringAt(block.tool_use_id, `${at}.tool_use_id`, { nonEmpty: true }),
          output: toolResultOutput(block, at),
        });
        return;
      case 'document':
      case 'search_result':
        invalid(`${at}.type`, `"${type}" blocks are not supported by this gateway; send the text as a text block.`, 'unsupported_parameter');
      // falls through (invalid throws)
      default:
        invalid(`${at}.type`, `"${type}" is not a content block type this gateway accepts in a user message.`);
    }
  });
  addNotes();
  flush();
  return items;
}

function assistantItems(blocks: unknown[], path: string, signer: ThinkingSigner): PublicItem[] {
  const items: PublicItem[] = [];
  const { add, flush } = messageRun('assistant', items);
  const mcpResults = new Map<string, JsonObject>();
  const searchResults = new Map<string, JsonObject>();
  for (const raw of blocks) {
    if (isObject(raw) && raw.type === 'mcp_tool_result' && typeof raw.tool_use_id === 'string') mcpResults.set(raw.tool_use_id, raw);
    if (isObject(raw) && raw.type === 'web_search_tool_result' && typeof raw.tool_use_id === 'string') searchResults.set(raw.tool_use_id, raw);
  }
  blocks.forEach((raw, j) => {
    const at = `${path}.${j}`;
    const block = objectAt(raw, at);
    const type = blockType(block, at);
    switch (type) {
      case 'text':
        add({ type: 'output_text', text: stringAt(block.text, `${at}.text`) });
        return;
      case 'thinking': {
        const thinking = stringAt(block.thinking, `${at}.thinking`);
        if (!thinkingTrusted(thinking, block, at, signer)) return;
        flush();
        items.push({ type: 'reasoning', id: newId('rs'), summary: [], content: [{ type: 'reasoning_text', text: thinking }] });
        return;
      }
      case 'redacted_thinking':
        // Encrypted by Anthropic for Anthropic's models: nothing here can read it.
        return;
      case 'tool_use':
        flush();
        items.push({
          type: 'function_call',
          id: newId('fc'),
          call_id: stringAt(block.id, `${at}.id`, { nonEmpty: true }),
          name: stringAt(block.name, `${at}.name`, { nonEmpty: true }),
          arguments: JSON.stringify(objectAt(block.input, `${at}.input`)),
        });
        return;
      case 'mcp_tool_use': {
        flush();
        const id = stringAt(block.id, `${at}.id`, { nonEmpty: true });
        const result = mcpResults.get(id);
        const text = result ? toolResultText(result.content, `${at}`) : '';
        const failed = result?.is_error === true;
        items.push({
          type: 'mcp_call',
          id,
          server_label: stringAt(block.server_name, `${at}.server_name`, { nonEmpty: true }),
          name: stringAt(block.name, `${at}.name`, { nonEmpty: true }),
          arguments: JSON.stringify(objectAt(block.input, `${at}.input`)),
          output: failed ? null : text,
          error: failed ? text : null,
          status: failed ? 'failed' : 'completed',
        });
        return;
      }
      case 'mcp_tool_result':
      case 'web_search_tool_result':
        // Folded into its mcp_tool_use / server_tool_use.
        return;
      case 'server_tool_use':
        flush();
        items.push(webSearchCall(block, searchResults.get(stringAt(block.id, `${at}.id`, { nonEmpty: true })), at));
        return;
      default:
        invalid(`${at}.type`, `"${type}" is not a content block type this gateway accepts in an assistant message.`);
    }
  });
  flush();
  return items;
}

/**
 * A server web search the gateway ran on an earlier turn, sent back as
 * Anthropic's blocks: the `web_search_call` it was, with the pages it found
 * as sources. The web_search module replays it to the model as its call and
 * a note that the results were not kept (their content never left the
 * gateway; `encrypted_content` is empty).
 */
function webSearchCall(block: JsonObject, result: JsonObject | undefined, at: string): PublicItem {
  if (block.name !== 'web_search') invalid(`${at}.name`, '"web_search" is the only server tool this gateway runs.');
  const input = objectAt(block.input, `${at}.input`);
  const action: JsonObject = { type: 'search', query: typeof input.query === 'string' ? input.query : '' };
  const pages = result && Array.isArray(result.content) ? result.content.filter(isObject) : [];
  action.sources = pages.filter((p) => typeof p.url === 'string').map((p) => ({ type: 'url', url: p.url as string }));
  const failed = result !== undefined && !Array.isArray(result.content);
  return { type: 'web_search_call', id: stringAt(block.id, `${at}.id`, { nonEmpty: true }), status: failed ? 'failed' : 'completed', action };
}

/**
 * With a signing key, thinking comes back to the model only with the
 * signature the gateway gave it. A block without one, or with one that does
 * not verify (changed text, or a signature from another provider when a
 * session moved here mid-conversation), is left out: the model is never
 * shown reasoning it cannot be shown to have written, and the turn goes on
 * rather than failing on history the client cannot repair. Without a key
 * every block is passed on as it stands: nothing could tell a real one from
 * a forged one.
 */
function thinkingTrusted(thinking: string, block: JsonObject, path: string, signer: ThinkingSigner): boolean {
  if (!signer.enabled) return true;
  const signature = present(block.signature) ? stringAt(block.signature, `${path}.signature`) : '';
  return signature !== '' && signer.verify(thinking, signature);
}

function imagePart(block: JsonObject, path: string): ContentPart {
  const source = objectAt(block.source, `${path}.source`);
  if (source.type === 'base64') {
    const mediaType = stringAt(source.media_type, `${path}.source.media_type`, { nonEmpty: true });
    const data = stringAt(source.data, `${path}.source.data`, { nonEmpty: true });
    return { type: 'input_image', image_url: `data:${mediaType};base64,${data}`, detail: 'auto' };
  }
  if (source.type === 'url') return { type: 'input_image', image_url: stringAt(source.url, `${path}.source.url`, { nonEmpty: true }), detail: 'auto' };
  invalid(`${path}.source.type`, 'must be "base64" or "url".');
}

/**
 * A document a tool returned (Claude Code's `Read` of a PDF): an `input_file`
 * whose text the gateway extracts as it does for a message's files, or its
 * text as given.
 */
function documentPart(block: JsonObject, path: string): ContentPart {
  const source = objectAt(block.source, `${path}.source`);
  const title = typeof block.title === 'string' && block.title ? block.title : 'document';
  if (source.type === 'text') return { type: 'input_text', text: `<file name="${title.replace(/"/g, "'")}">\n${stringAt(source.data, `${path}.source.data`)}\n</file>` };
  if (source.type === 'base64') {
    const mediaType = stringAt(source.media_type, `${path}.source.media_type`, { nonEmpty: true });
    const data = stringAt(source.data, `${path}.source.data`, { nonEmpty: true });
    const filename = mediaType === 'application/pdf' && !/\.pdf$/i.test(title) ? `${title}.pdf` : title;
    return { type: 'input_file', filename, file_data: `data:${mediaType};base64,${data}` };
  }
  invalid(`${path}.source.type`, 'must be "base64" or "text" in a tool result.');
}

/**
 * A tool result's content: a string, or text, image and document blocks. Images stay
 * as parts (the model sees what the gateway can pass on); `is_error` is
 * spelled out, since a function output has no error flag.
 */
function toolResultOutput(block: JsonObject, path: string): string | ContentPart[] {
  const failed = present(block.is_error) && block.is_error === true;
  const prefix = failed ? 'Error: ' : '';
  const content = block.content;
  if (!present(content)) return prefix;
  if (typeof content === 'string') return prefix + content;
  const parts: ContentPart[] = arrayAt(content, `${path}.content`).map((raw, k) => {
    const at = `${path}.content.${k}`;
    const part = objectAt(raw, at);
    if (part.type === 'text') return { type: 'input_text', text: stringAt(part.text, `${at}.text`) };
    if (part.type === 'image') return imagePart(part, at);
    if (part.type === 'document') return documentPart(part, at);
    // A tool search result: the named deferred tool is now among the model's tools (`mapTools`).
    if (part.type === 'tool_reference') return { type: 'input_text', text: `Tool loaded: ${stringAt(part.tool_name, `${at}.tool_name`, { nonEmpty: true })}` };
    invalid(`${at}.type`, 'must be "text", "image", "document" or "tool_reference".');
  });
  if (parts.every((p) => p.type === 'input_text')) return prefix + parts.map((p) => (p as { text: string }).text).join('\n');
  return failed ? [{ type: 'input_text', text: prefix.trim() }, ...parts] : parts;
}

function toolResultText(content: unknown, path: string): string {
  if (!present(content)) return '';
  if (typeof content === 'string') return content;
  return arrayAt(content, `${path}.content`)
    .map((raw) => (isObject(raw) && typeof raw.text === 'string' ? raw.text : ''))
    .join('\n');
}
