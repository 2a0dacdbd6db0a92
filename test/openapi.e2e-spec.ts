import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import OpenAI, { toFile } from 'openai';
import { OPEN_RESPONSES_SCHEMAS, OPEN_RESPONSES_VERSION } from '#openapi/openresponses-schemas.js';
import { type GatewayStack, startStack } from './support/gateway-harness.js';
import { OpenResponsesValidator } from './support/openresponses-validator.js';

type Schema = Record<string, any>;

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const reference = JSON.parse(readFileSync(resolve(process.cwd(), '../shared/reference/openresponses-openapi.json'), 'utf8')) as Schema;

/** Fields of OpenAI's create-response body that the Open Responses spec does not describe, accepted here on purpose. */
const OPENAI_ONLY_FIELDS = ['user', 'generate', 'conversation', 'prompt'];

function deref(schema: Schema): Schema {
  return typeof schema.$ref === 'string' ? deref(reference.components.schemas[schema.$ref.split('/').pop()!]) : schema;
}

/** The JSON types a reference schema allows, through its anyOf / oneOf / allOf members and references. */
function referenceTypes(schema: Schema): Set<string> {
  const s = deref(schema);
  const members = [...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])] as Schema[];
  const own = [s.type].flat().filter(Boolean) as string[];
  if (s.enum) own.push(...new Set((s.enum as unknown[]).map((v) => (v === null ? 'null' : typeof v))));
  if (s.properties && own.length === 0) own.push('object');
  return new Set([...own, ...members.flatMap((m) => [...referenceTypes(m)])]);
}

/** Every route's document against the routes themselves, the Responses surface against the Open Responses spec. */
describe('the OpenAPI document', () => {
  let stack: GatewayStack;
  let base: string;
  let doc: Schema;

  beforeAll(async () => {
    stack = await startStack();
    base = stack.url.replace(/\/v1$/, '');
    const res = await fetch(`${base}/openapi.json`);
    expect(res.status).toBe(200);
    doc = (await res.json()) as Schema;
  });

  afterAll(async () => {
    await stack?.close();
  });

  it('is OpenAPI 3.1 and lists the routes of every surface', () => {
    expect(doc.openapi).toBe('3.1.0');
    const operations = Object.entries(doc.paths as Schema).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
    expect(operations).toEqual(
      expect.arrayContaining([
        'POST /v1/responses',
        'GET /v1/responses/{id}',
        'GET /v1/responses/{id}/input_items',
        'POST /v1/conversations',
        'GET /v1/models',
        'POST /v1/messages',
        'POST /v1/files',
        'POST /v1/vector_stores',
        'GET /health',
        'GET /ready',
        'GET /openapi.json',
      ]),
    );
    expect(new Set(operations).size).toBe(operations.length);
    for (const [path, ops] of Object.entries(doc.paths as Schema)) {
      // Each surface's own envelope: Anthropic's on /v1/messages, OpenAI's everywhere else.
      const envelope = path.startsWith('/v1/messages') ? 'AnthropicErrorEnvelope' : 'ErrorEnvelope';
      for (const op of Object.values(ops as Schema)) {
        expect(op.responses.default.content['application/json'].schema).toEqual({ $ref: `#/components/schemas/${envelope}` });
        // And a success answer with its schema.
        expect(Object.keys(op.responses).filter((status) => /^2\d\d$/.test(status))).toHaveLength(1);
      }
    }
  });

  it('names only routes the gateway serves: each one answers, none with "no route"', async () => {
    for (const [path, ops] of Object.entries(doc.paths as Schema)) {
      for (const method of Object.keys(ops)) {
        const url = `${base}${path.replace(/\{\w+\}/g, 'doc_check_missing')}`;
        const body = ['post', 'put', 'patch'].includes(method) ? '{}' : undefined;
        const res = await fetch(url, { method: method.toUpperCase(), headers: body ? { 'content-type': 'application/json' } : {}, body, signal: AbortSignal.timeout(10_000) });
        const text = await res.text();
        expect({ route: `${method} ${path}`, noRoute: /No route for|is not a route/.test(text) }).toEqual({ route: `${method} ${path}`, noRoute: false });
      }
    }
  });

  it("describes POST /v1/responses's body with the Open Responses spec's fields and types", () => {
    const ours = doc.paths['/v1/responses'].post.requestBody.content['application/json'].schema as Schema;
    const theirs = reference.components.schemas.CreateResponseBody.properties as Schema;
    const names = Object.keys(ours.properties);
    expect(names.filter((n) => !(n in theirs) && !OPENAI_ONLY_FIELDS.includes(n))).toEqual([]);
    // The spec's fields the gateway takes are all there.
    expect(Object.keys(theirs).filter((n) => !names.includes(n))).toEqual([]);
    for (const name of names.filter((n) => n in theirs)) {
      const allowed = referenceTypes(theirs[name]);
      const declared = [ours.properties[name].type].flat().filter(Boolean) as string[];
      // The gateway takes null for every optional field (as OpenAI does); the spec does not say so for all of them.
      const stray = declared.filter((t) => t !== 'null' && !allowed.has(t) && !(t === 'integer' && allowed.has('number')));
      expect({ field: name, stray }).toEqual({ field: name, stray: [] });
    }
  });

  it('says the bounds the route enforces: one past each documented bound is a 400 naming the field', async () => {
    const properties = doc.paths['/v1/responses'].post.requestBody.content['application/json'].schema.properties as Schema;
    const bounded = Object.entries(properties).filter(([, s]) => typeof s.maximum === 'number');
    expect(bounded.map(([name]) => name)).toEqual(expect.arrayContaining(['temperature', 'top_p', 'top_logprobs']));
    for (const [name, schema] of bounded) {
      const res = await fetch(`${base}/v1/responses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', input: 'hi', [name]: schema.maximum + 1 }),
      });
      expect({ name, status: res.status, param: ((await res.json()) as Schema).error?.param }).toEqual({ name, status: 400, param: name });
    }
  });

  it("a response the route returns is the spec's ResponseResource", async () => {
    const response = await stack.openai.responses.create({ model: 'm', input: '[[say hello]]' });
    expect(response.output_text).toBe('hello');
    expect(() => new OpenResponsesValidator().assertResponse(response)).not.toThrow();
  });
});

/** One answer a route gave, as the client received it. */
interface Answer {
  method: string;
  path: string;
  status: number;
  type: string;
  body: unknown;
}

/** Every `$ref` of a document schema, pointed into the document as Ajv holds it. */
function intoDocument(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(intoDocument);
  if (!schema || typeof schema !== 'object') return schema;
  return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, k === '$ref' && typeof v === 'string' ? `doc${v}` : intoDocument(v)]));
}

/**
 * The document's answers against the routes' real ones: every operation is
 * called for real (the official `openai` and Anthropic clients, or plain
 * HTTP for the rest), every answer recorded on the wire and validated against
 * the schema the document gives for its status, the error envelope included.
 */
describe("the OpenAPI document's answers", () => {
  const ADMIN = 'sk-openapi-admin';
  let stack: GatewayStack;
  let base: string;
  let doc: Schema;
  let dataDir: string;
  const answers: Answer[] = [];

  /** fetch that keeps a copy of every answer. */
  const recording: typeof fetch = async (input, init) => {
    const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
    const res = await fetch(input, init);
    const type = res.headers.get('content-type') ?? '';
    const copy = res.clone();
    const body = type.includes('json') ? await copy.json() : await copy.text();
    // Only the gateway's answers (a client may fetch a `data:` URL of its own).
    if (res.url.startsWith(base)) answers.push({ method, path: new URL(res.url).pathname, status: res.status, type, body });
    return res;
  };
  const call = (path: string, init: RequestInit = {}) =>
    recording(`${base}${path}`, { ...init, headers: { authorization: `Bearer ${ADMIN}`, ...(init.body ? { 'content-type': 'application/json' } : {}), ...(init.headers ?? {}) } });

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'openapi-containers-'));
    stack = await startStack({
      config: {
        auth: { apiKeys: [ADMIN] },
        usage: { adminKeys: [ADMIN] },
        console: { enabled: true },
        codeInterpreter: { backend: 'pyodide', dataDir, warmWorkers: 0 },
        fileSearch: { ingestion: { pollMs: 50 } },
      },
    });
    base = stack.url.replace(/\/v1$/, '');
    doc = (await (await fetch(`${base}/openapi.json`, { headers: { authorization: `Bearer ${ADMIN}` } })).json()) as Schema;
  });

  afterAll(async () => {
    await stack?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('every operation answers as documented, on success and on error', async () => {
    const client = new OpenAI({ baseURL: stack.url, apiKey: ADMIN, maxRetries: 0, timeout: 20_000, fetch: recording });
    const anthropic = new Anthropic({ baseURL: base, apiKey: ADMIN, maxRetries: 0, timeout: 20_000, fetch: recording });
    const tools = [{ type: 'function' as const, name: 'lookup', parameters: { type: 'object', properties: {} }, strict: false }];

    // Responses.
    const plain = await client.responses.create({ model: 'm', input: '[[say hello]]' });
    await client.responses.create({ model: 'm', input: '[[call lookup {"q":1}]]', tools });
    await client.responses.retrieve(plain.id);
    await client.responses.inputItems.list(plain.id);
    await client.responses.inputTokens.count({ model: 'm', input: 'count me' });
    await client.responses.compact({ model: 'm', input: [{ role: 'user', content: 'hello' }] });
    const slow = await client.responses.create({ model: 'm', input: '[[delay ttft=5000]] [[say later]]', background: true });
    await client.responses.cancel(slow.id);
    await client.responses.delete(plain.id);
    // Conversations.
    const conversation = await client.conversations.create({ metadata: { a: '1' }, items: [{ type: 'message', role: 'user', content: 'hi' }] });
    await client.conversations.retrieve(conversation.id);
    await client.conversations.update(conversation.id, { metadata: { a: '2' } });
    const added = await client.conversations.items.create(conversation.id, { items: [{ type: 'message', role: 'user', content: 'more' }] });
    await client.conversations.items.list(conversation.id);
    await client.conversations.items.retrieve(added.data[0].id!, { conversation_id: conversation.id });
    await client.conversations.items.delete(added.data[0].id!, { conversation_id: conversation.id });
    await client.conversations.delete(conversation.id);
    // Files and vector stores.
    const file = await client.files.create({ file: await toFile(Buffer.from('the gateway keeps vector stores'), 'notes.txt'), purpose: 'assistants' });
    const second = await client.files.create({ file: await toFile(Buffer.from('a second file'), 'more.txt'), purpose: 'assistants' });
    await client.files.list();
    await client.files.retrieve(file.id);
    await (await client.files.content(file.id)).text();
    const store = await client.vectorStores.create({ name: 'docs' });
    await client.vectorStores.list();
    await client.vectorStores.retrieve(store.id);
    await client.vectorStores.update(store.id, { name: 'docs 2' });
    await client.vectorStores.files.createAndPoll(store.id, { file_id: file.id }, { pollIntervalMs: 50 });
    await client.vectorStores.files.list(store.id);
    await client.vectorStores.files.update(file.id, { vector_store_id: store.id, attributes: { kind: 'note' } });
    await client.vectorStores.files.content(file.id, { vector_store_id: store.id });
    await client.vectorStores.search(store.id, { query: 'vector stores' });
    const batch = await client.vectorStores.fileBatches.create(store.id, { file_ids: [second.id] });
    await client.vectorStores.fileBatches.retrieve(batch.id, { vector_store_id: store.id });
    await client.vectorStores.fileBatches.listFiles(batch.id, { vector_store_id: store.id });
    await client.vectorStores.fileBatches.cancel(batch.id, { vector_store_id: store.id });
    await client.vectorStores.files.delete(file.id, { vector_store_id: store.id });
    await client.vectorStores.delete(store.id);
    // Containers.
    const box = await client.containers.create({ name: 'box' });
    await client.containers.list();
    await client.containers.retrieve(box.id);
    const boxFile = await client.containers.files.create(box.id, { file: await toFile(Buffer.from('a,b\n'), 'in.csv') });
    await client.containers.files.list(box.id);
    await client.containers.files.retrieve(boxFile.id, { container_id: box.id });
    await (await client.containers.files.content.retrieve(boxFile.id, { container_id: box.id })).text();
    await client.containers.files.delete(boxFile.id, { container_id: box.id });
    await client.containers.delete(box.id);
    // Batches and the pass-through routes.
    const line = { custom_id: 'one', method: 'POST', url: '/v1/chat/completions', body: { model: 'm', messages: [{ role: 'user', content: '[[delay ttft=3000]] hi' }] } };
    const input = await client.files.create({ file: await toFile(Buffer.from(`${JSON.stringify(line)}\n`), 'requests.jsonl'), purpose: 'batch' });
    const job = await client.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await client.batches.list();
    await client.batches.retrieve(job.id);
    // Still running (the upstream waits 3 s before it answers): the cancel is taken.
    await client.batches.cancel(job.id);
    await client.files.delete(second.id);
    await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: '[[say hi]]' }] });
    await client.completions.create({ model: 'm', prompt: 'hello' });
    await client.embeddings.create({ model: 'switchyard-sim', input: 'embed me', encoding_format: 'float' });
    await client.models.list();
    // Messages, Anthropic's client.
    await anthropic.messages.create({ model: 'm', max_tokens: 64, messages: [{ role: 'user', content: '[[say hi]]' }] });
    await anthropic.messages.countTokens({ model: 'm', messages: [{ role: 'user', content: 'count me' }] });
    // The rest over plain HTTP.
    for (const path of ['/health', '/ready', '/metrics', '/openapi.json', '/v1/usage', '/console', '/console/assets/console.js']) await call(path);
    await client.responses.create({ model: 'm', input: '[[say stored]]', conversation: (await client.conversations.create({})).id });
    const listed = (await (await call('/console/api/responses')).json()) as { data: Array<{ id: string }> };
    await call(`/console/api/responses/${listed.data[0].id}`);
    await call(`/console/api/responses/${listed.data[0].id}/timeline`);
    await call('/console/api/stats?range=1h');
    const conversations = (await (await call('/console/api/conversations')).json()) as { data: Array<{ id: string }> };
    await call(`/console/api/conversations/${conversations.data[0].id}`);
    for (const path of ['/console/api/background', '/console/api/sections', '/console/api/usage', '/console/api/sections/containers']) await call(path);
    const again = await client.vectorStores.create({ name: 'console' });
    await call(`/console/api/sections/vector_stores/${again.id}`);
    await call(`/console/api/sections/vector_stores/${again.id}/files`);
    await call('/console/api/sections/vector_stores');
    // Errors: a missing record, a bad field, a wrong key, on each surface.
    for (const path of [
      '/v1/responses/resp_missing',
      '/v1/conversations/conv_missing',
      '/v1/files/file_missing',
      '/v1/vector_stores/vs_missing',
      '/v1/containers/cntr_missing',
      '/console/api/responses/resp_missing',
    ]) {
      await call(path);
    }
    await call('/v1/responses', { method: 'POST', body: JSON.stringify({ model: 'm', input: 'hi', temperature: 9 }) });
    await call('/v1/messages', { method: 'POST', body: JSON.stringify({ model: 'm' }) });
    await call('/console/api/responses', { headers: { authorization: 'Bearer sk-wrong' } });

    const ajv = new Ajv({ strict: false, allErrors: true, discriminator: false });
    addFormats(ajv);
    ajv.addSchema({ $id: 'doc', components: doc.components });
    const operations = Object.entries(doc.paths as Schema).flatMap(([template, ops]) =>
      Object.entries(ops as Schema).map(([method, op]) => ({
        key: `${method.toUpperCase()} ${template}`,
        method: method.toUpperCase(),
        pattern: new RegExp(`^${template.replace(/\{\w+\}/g, '[^/]+')}$`),
        params: (template.match(/\{/g) ?? []).length,
        op: op as Schema,
      })),
    );
    const answered = new Set<string>();
    const problems: string[] = [];
    for (const answer of answers) {
      // The literal route wins over a parameter (`/v1/responses/compact` over `/v1/responses/{id}`).
      const operation = operations.filter((o) => o.method === answer.method && o.pattern.test(answer.path)).sort((a, b) => a.params - b.params)[0];
      if (!operation) {
        problems.push(`${answer.method} ${answer.path}: no documented operation`);
        continue;
      }
      const ok = answer.status < 300;
      const documented = ok ? operation.op.responses[String(answer.status)] : operation.op.responses.default;
      if (!documented) {
        problems.push(`${operation.key}: answered ${answer.status}, documented ${Object.keys(operation.op.responses).join(', ')}`);
        continue;
      }
      const mediaType = answer.type.split(';')[0].trim();
      const content = documented.content?.[mediaType];
      if (!content) {
        problems.push(`${operation.key} ${answer.status}: answered ${mediaType}, documented ${Object.keys(documented.content ?? {}).join(', ')}`);
        continue;
      }
      const validate = ajv.compile(intoDocument(content.schema) as object);
      if (!validate(answer.body))
        problems.push(`${operation.key} ${answer.status}: ${ajv.errorsText(validate.errors?.slice(0, 3))} in ${JSON.stringify(answer.body).slice(0, 300)}`);
      if (ok) answered.add(operation.key);
    }
    expect(problems).toEqual([]);
    // Every documented operation was seen answering with success (and so validated).
    expect(operations.map((o) => o.key).filter((key) => !answered.has(key))).toEqual([]);
    // The check can fail: an answer missing a required field, or of another object type, does not validate.
    const created = answers.find((a) => a.method === 'POST' && a.path === '/v1/responses' && a.status === 200)!.body as Schema;
    const responseSchema = ajv.compile(intoDocument(doc.paths['/v1/responses'].post.responses['200'].content['application/json'].schema) as object);
    expect([responseSchema(created), responseSchema({ ...created, output: undefined }), responseSchema({ ...created, status: 7 })]).toEqual([true, false, false]);
    const conversationSchema = ajv.compile(intoDocument(doc.paths['/v1/conversations/{id}'].get.responses['200'].content['application/json'].schema) as object);
    expect(conversationSchema({ id: 'conv_1', object: 'response', created_at: 1, metadata: {} })).toBe(false);
    // The errors checked above are envelopes of both kinds.
    expect(answers.filter((a) => a.status >= 400).map((a) => a.status)).toEqual(expect.arrayContaining([400, 401, 404]));
  }, 120_000);

  it('carries the Open Responses schemas exactly as the reference spec has them', () => {
    const vendored = OPEN_RESPONSES_SCHEMAS;
    const names = Object.keys(vendored);
    expect(names).toEqual(expect.arrayContaining(['ResponseResource', 'CompactResource', 'ItemField']));
    // Rerun scripts/vendor-openresponses.mjs when the reference moves.
    for (const name of names) expect({ name, schema: vendored[name] }).toEqual({ name, schema: reference.components.schemas[name] });
    expect(OPEN_RESPONSES_VERSION).toBe(reference.info.version);
  });
});
