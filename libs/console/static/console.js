// The Switchyard console: plain DOM, no build step. Every value from the
// gateway is tenant text and goes into the page as text (textContent, never
// HTML), so stored markup shows as the characters it is.

const KEY_STORAGE = 'switchyard.console.key';
const PAGE_SIZE = 20;

const $ = (id) => document.getElementById(id);

/** An element with attributes and children; strings become text nodes. */
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (name === 'onclick') node.addEventListener('click', value);
    else if (value !== undefined && value !== null) node.setAttribute(name, String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const key = () => sessionStorage.getItem(KEY_STORAGE) ?? '';

function status(text, isError = false) {
  const s = $('status');
  s.textContent = text;
  s.className = isError ? 'error' : '';
}

/** A JSON call with the administrator key; an error envelope becomes a thrown message. */
async function call(path, init = {}) {
  const res = await fetch(path, { ...init, headers: { ...(init.headers ?? {}), authorization: `Bearer ${key()}` } });
  const body = await res.json().catch(() => null);
  if (!res.ok) {
    const message = body?.error?.message ?? `HTTP ${res.status}`;
    const error = new Error(`${res.status}: ${message}`);
    error.status = res.status;
    throw error;
  }
  return body;
}

const when = (seconds) => (typeof seconds === 'number' && seconds > 0 ? new Date(seconds * 1000).toISOString().replace('.000Z', 'Z') : '');
const json = (value) => el('pre', { class: 'json' }, JSON.stringify(value, null, 2));
const owner = (value) => (value === null || value === undefined ? 'no key' : `${String(value).slice(0, 12)}…`);

/** A paged table: `columns` are [title, row => text]; a click on a row calls `open(row)`. */
async function pagedTable(title, path, columns, open) {
  const view = $('view');
  view.replaceChildren(el('h2', {}, title));
  const tbody = el('tbody', { 'data-list': path });
  const more = el('button', { type: 'button', 'data-more': path, hidden: '' }, 'More');
  view.append(
    el(
      'table',
      {},
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          columns.map(([name]) => el('th', {}, name)),
        ),
      ),
      tbody,
    ),
    more,
  );
  let after;
  const load = async () => {
    const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
    if (after) query.set('after', after);
    const page = await call(`${path}?${query}`);
    for (const row of page.data) {
      const tr = el(
        'tr',
        { class: open ? 'row' : '', 'data-id': row.id },
        columns.map(([, cell]) => el('td', {}, cell(row))),
      );
      if (open) tr.addEventListener('click', () => guarded(() => open(row)));
      tbody.append(tr);
    }
    if (page.data.length === 0 && !after) tbody.append(el('tr', {}, el('td', { colspan: columns.length, class: 'muted' }, 'Nothing stored.')));
    after = page.last_id;
    more.hidden = !page.has_more;
  };
  more.addEventListener('click', () => guarded(load));
  await load();
}

const TOOL_CALL = /_call$/;

/** One item (input or output) as a card: tool calls show their name and arguments first. */
function itemCard(item) {
  const kind = String(item.type ?? 'item');
  const card = el('div', { class: TOOL_CALL.test(kind) ? 'item tool-call' : 'item', 'data-item-type': kind });
  const heading = [kind, item.role ? ` (${item.role})` : '', item.name ? `: ${item.namespace ? `${item.namespace}.` : ''}${item.name}` : ''].join('');
  card.append(el('h4', {}, heading));
  const text = Array.isArray(item.content) ? item.content.map((part) => part.text ?? part.refusal ?? '').join('') : typeof item.content === 'string' ? item.content : '';
  if (text) card.append(el('div', { class: 'text' }, text));
  if (typeof item.arguments === 'string') card.append(el('div', { class: 'arguments' }, 'arguments: ', el('code', {}, item.arguments)));
  if (typeof item.output === 'string') card.append(el('div', { class: 'output' }, 'output: ', el('code', {}, item.output)));
  const details = el('details', {}, el('summary', {}, 'JSON'), json(item));
  card.append(details);
  return card;
}

async function showResponse(row) {
  const r = await call(`/console/api/responses/${encodeURIComponent(row.id)}`);
  const output = Array.isArray(r.response.output) ? r.response.output : [];
  $('view').replaceChildren(
    el('h2', {}, `Response ${r.id}`),
    el('p', { class: 'muted' }, `owner ${owner(r.owner)} · ${when(r.created_at)} · ${r.response.status ?? ''} · model ${r.response.model ?? ''}`),
    r.previous_response_id ? el('p', {}, 'previous: ', el('code', {}, r.previous_response_id)) : null,
    el('h3', {}, 'Input items'),
    el('div', { id: 'input-items' }, r.input_items.map(itemCard)),
    el('h3', {}, 'Output items'),
    el('div', { id: 'output-items' }, output.map(itemCard)),
    el('h3', {}, 'Tools'),
    json(r.tools),
    el('details', {}, el('summary', {}, 'Whole response'), json(r.response)),
  );
}

async function showConversation(row) {
  const c = await call(`/console/api/conversations/${encodeURIComponent(row.id)}?limit=100`);
  $('view').replaceChildren(
    el('h2', {}, `Conversation ${c.id}`),
    el('p', { class: 'muted' }, `owner ${owner(c.owner)} · ${when(c.created_at)}`),
    json(c.metadata),
    el('h3', {}, 'Items'),
    el('div', { id: 'conversation-items' }, c.items.data.map(itemCard)),
    c.items.has_more ? el('p', { class: 'muted' }, 'First 100 items shown.') : null,
  );
}

async function showSectionRecord(section, row) {
  const [record, files] = await Promise.all([
    call(`/console/api/sections/${encodeURIComponent(section.name)}/${encodeURIComponent(row.id)}`),
    call(`/console/api/sections/${encodeURIComponent(section.name)}/${encodeURIComponent(row.id)}/files?limit=100`),
  ]);
  $('view').replaceChildren(
    el('h2', {}, `${section.title}: ${record.name ?? record.id}`),
    json(record),
    el('h3', {}, 'Files'),
    el(
      'table',
      { id: 'section-files' },
      el(
        'tbody',
        {},
        files.data.length === 0
          ? el('tr', {}, el('td', { class: 'muted' }, 'No files.'))
          : files.data.map((f) => el('tr', {}, el('td', {}, f.id), el('td', {}, f.path ?? f.status ?? ''), el('td', {}, String(f.bytes ?? f.usage_bytes ?? '')))),
      ),
    ),
  );
}

async function showUsage() {
  const usage = await call('/console/api/usage?bucket_width=1d&group_by=owner,model');
  const rows = usage.data.flatMap((bucket) => bucket.results.map((r) => ({ ...r, start: bucket.start_time })));
  $('view').replaceChildren(
    el('h2', {}, 'Usage (last days, every owner)'),
    el(
      'table',
      { id: 'usage' },
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          ['day', 'owner', 'model', 'requests', 'input tokens', 'output tokens'].map((h) => el('th', {}, h)),
        ),
      ),
      el(
        'tbody',
        {},
        rows.length === 0
          ? el('tr', {}, el('td', { colspan: 6, class: 'muted' }, 'No usage recorded.'))
          : rows.map((r) =>
              el(
                'tr',
                {},
                el('td', {}, when(r.start).slice(0, 10)),
                el('td', {}, owner(r.owner)),
                el('td', {}, r.model ?? ''),
                el('td', {}, r.num_model_requests),
                el('td', {}, r.input_tokens),
                el('td', {}, r.output_tokens),
              ),
            ),
      ),
    ),
  );
}

function showTestRequest() {
  const model = el('input', { id: 'test-model', name: 'model', value: sessionStorage.getItem('switchyard.console.model') ?? '', placeholder: 'model' });
  const input = el('textarea', { id: 'test-input', name: 'input', placeholder: 'input' });
  const out = el('div', { id: 'test-output' });
  const form = el(
    'form',
    { class: 'test', id: 'test-form' },
    el('label', {}, 'Model ', model),
    el('label', {}, 'Input ', input),
    el('button', { type: 'submit', id: 'test-send' }, 'Send to /v1/responses'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    guarded(async () => {
      sessionStorage.setItem('switchyard.console.model', model.value);
      out.replaceChildren(el('p', { class: 'muted' }, 'Waiting for the model…'));
      const r = await call('/v1/responses', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: model.value, input: input.value }) });
      const text = (r.output ?? [])
        .filter((i) => i.type === 'message')
        .flatMap((i) => i.content ?? [])
        .map((p) => p.text ?? '')
        .join('');
      out.replaceChildren(
        el('h3', {}, `${r.id} · ${r.status}`),
        el('div', { id: 'test-output-text' }, text),
        (r.output ?? []).map(itemCard),
        el('details', {}, el('summary', {}, 'Whole response'), json(r)),
      );
    });
  });
  $('view').replaceChildren(el('h2', {}, 'Test request'), form, out);
}

/** Runs one view change; a failure shows in the status line (a 401 asks for the key again). */
async function guarded(action) {
  status('');
  try {
    await action();
  } catch (error) {
    status(error.message, true);
    if (error.status === 401) $('nav').hidden = true;
  }
}

const SECTIONS = [
  [
    'responses',
    'Responses',
    () =>
      pagedTable(
        'Stored responses',
        '/console/api/responses',
        [
          ['id', (r) => r.id],
          ['created', (r) => when(r.created_at)],
          ['owner', (r) => owner(r.owner)],
          ['model', (r) => r.model ?? ''],
          ['status', (r) => r.status],
          ['output', (r) => r.output_types.join(', ')],
          ['text', (r) => r.output_text],
        ],
        showResponse,
      ),
  ],
  [
    'conversations',
    'Conversations',
    () =>
      pagedTable(
        'Conversations',
        '/console/api/conversations',
        [
          ['id', (r) => r.id],
          ['created', (r) => when(r.created_at)],
          ['owner', (r) => owner(r.owner)],
          ['metadata', (r) => JSON.stringify(r.metadata)],
        ],
        showConversation,
      ),
  ],
  [
    'background',
    'Background runs',
    () =>
      pagedTable(
        'Background runs',
        '/console/api/background',
        [
          ['id', (r) => r.id],
          ['created', (r) => when(r.created_at)],
          ['owner', (r) => owner(r.owner)],
          ['status', (r) => r.status],
          ['node', (r) => r.node_id],
        ],
        null,
      ),
  ],
];

async function openConsole() {
  // The first call checks the key: a wrong one leaves the navigation hidden.
  const sections = await call('/console/api/sections');
  const entries = [
    ...SECTIONS,
    ...sections.data.map((s) => [
      s.name,
      s.title,
      () =>
        pagedTable(
          s.title,
          `/console/api/sections/${encodeURIComponent(s.name)}`,
          [
            ['id', (r) => r.id],
            ['name', (r) => r.name ?? ''],
            ['created', (r) => when(r.created_at)],
            ['owner', (r) => owner(r.owner)],
            ['status', (r) => r.status ?? ''],
          ],
          (row) => showSectionRecord(s, row),
        ),
    ]),
    ['usage', 'Usage', showUsage],
    ['test', 'Test request', showTestRequest],
  ];
  const nav = $('nav');
  nav.replaceChildren(
    ...entries.map(([name, title, show]) =>
      el(
        'button',
        {
          type: 'button',
          'data-section': name,
          onclick: (event) => {
            for (const b of nav.querySelectorAll('button')) b.classList.toggle('active', b === event.currentTarget);
            guarded(show);
          },
        },
        title,
      ),
    ),
  );
  nav.hidden = false;
  status('Key accepted.');
}

$('key-form').addEventListener('submit', (event) => {
  event.preventDefault();
  sessionStorage.setItem(KEY_STORAGE, $('key').value);
  $('key').value = '';
  guarded(openConsole);
});
$('key-forget').addEventListener('click', () => {
  sessionStorage.removeItem(KEY_STORAGE);
  $('nav').hidden = true;
  $('view').replaceChildren();
  status('Key forgotten.');
});
if (key()) guarded(openConsole);
else status('Enter an administrator key (usage.adminKeys) to open the console.');
