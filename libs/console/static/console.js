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
  node.append(...nodes(children));
  return node;
}

/**
 * Children as DOM nodes: arrays at any depth are flattened, and null,
 * undefined and false (a part left out) are skipped, so neither an array nor
 * a missing part ever shows as its string ("[object …]", "null").
 */
function nodes(children) {
  return children
    .flat(Infinity)
    .flatMap((child) => (child === null || child === undefined || child === false ? [] : [child instanceof Node ? child : document.createTextNode(String(child))]));
}

/** Replaces what an element shows, with the same rules as \`el\`'s children. */
function show(target, ...children) {
  target.replaceChildren(...nodes(children));
}

const SVG = 'http://www.w3.org/2000/svg';

/** An SVG element with attributes and children (SVG nodes or text). */
function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) if (value !== undefined && value !== null) node.setAttribute(name, String(value));
  node.append(...nodes(children));
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
  show(view, el('h2', {}, title));
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
  show(
    $('view'),
    el('h2', {}, `Response ${r.id}`),
    el('p', { class: 'muted' }, `owner ${owner(r.owner)} · ${when(r.created_at)} · ${r.response.status ?? ''} · model ${r.response.model ?? ''}`),
    r.previous_response_id ? el('p', {}, 'previous: ', el('code', {}, r.previous_response_id)) : null,
    el('h3', {}, 'Run'),
    el('div', { id: 'run-timeline' }, el('p', { class: 'muted' }, 'Loading the run…')),
    el('h3', {}, 'Input items'),
    el('div', { id: 'input-items' }, r.input_items.map(itemCard)),
    el('h3', {}, 'Output items'),
    el('div', { id: 'output-items' }, output.map(itemCard)),
    el('h3', {}, 'Tools'),
    json(r.tools),
    el('details', {}, el('summary', {}, 'Whole response'), json(r.response)),
  );
  const { timeline } = await call(`/console/api/responses/${encodeURIComponent(row.id)}/timeline`);
  show(
    $('run-timeline'),
    timeline ? timelineView(timeline) : el('p', { class: 'muted' }, 'No timeline was kept for this run (it ran before the console was on, or over a week ago).'),
  );
}

async function showConversation(row) {
  const c = await call(`/console/api/conversations/${encodeURIComponent(row.id)}?limit=100`);
  show(
    $('view'),
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
  show(
    $('view'),
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
  show(
    $('view'),
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

async function showTestRequest() {
  const model = el('input', { id: 'test-model', name: 'model', value: sessionStorage.getItem('switchyard.console.model') ?? '', placeholder: 'model' });
  if (!model.value) {
    // The upstream's first model, so a first test needs nothing typed but the input.
    const models = await call('/v1/models').catch(() => null);
    const first = models?.data?.[0]?.id;
    if (typeof first === 'string') model.value = first;
  }
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
      show(out, el('p', { class: 'muted', id: 'test-waiting' }, 'Waiting for the model…'));
      let r;
      try {
        r = await call('/v1/responses', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: model.value, input: input.value }) });
      } catch (error) {
        // The answer was an error: say so where the answer would be, not only in the status line.
        show(out, el('p', { class: 'error', id: 'test-error' }, error.message));
        throw error;
      }
      const text = (r.output ?? [])
        .filter((i) => i.type === 'message')
        .flatMap((i) => i.content ?? [])
        .map((p) => p.text ?? '')
        .join('');
      show(
        out,
        el('h3', {}, `${r.id} · ${r.status}`),
        el('div', { id: 'test-output-text' }, text),
        (r.output ?? []).map(itemCard),
        el('details', {}, el('summary', {}, 'Whole response'), json(r)),
      );
    });
  });
  show($('view'), el('h2', {}, 'Test request'), form, out);
}

// ---- Pictures: the overview's charts and a run's timeline, drawn as plain SVG. ----

/** Colours for series, in order; the last is kept for `other`. */
const PALETTE = ['#2f6fb5', '#c77d00', '#2e8b57', '#8e44ad', '#c0392b', '#16a085', '#7f8c8d', '#b7950b'];
const colour = (key, i) => (key === 'other' ? '#9aa4b1' : PALETTE[i % PALETTE.length]);
const CHART = { width: 560, height: 180, left: 48, bottom: 22, top: 8 };

const number = (n) => (n >= 1e6 ? `${(n / 1e6).toFixed(1)}M` : n >= 1e4 ? `${Math.round(n / 1e3)}k` : String(Math.round(n * 10) / 10));
const clock = (ms, bucketMs) => {
  const iso = new Date(ms).toISOString();
  return bucketMs >= 86_400_000 ? iso.slice(5, 10) : bucketMs >= 3_600_000 ? `${iso.slice(5, 10)} ${iso.slice(11, 13)}h` : iso.slice(11, 16);
};

/** The axes both chart kinds share: a y scale to `max`, and a few time labels under the plot. */
function axes(buckets, bucketMs, max, unit) {
  const plotH = CHART.height - CHART.bottom - CHART.top;
  const parts = [];
  for (const f of [0, 0.5, 1]) {
    const y = CHART.top + plotH * (1 - f);
    parts.push(svg('line', { x1: CHART.left, x2: CHART.width, y1: y, y2: y, class: 'grid' }));
    parts.push(svg('text', { x: CHART.left - 4, y: y + 4, 'text-anchor': 'end', class: 'tick' }, `${number(max * f)}${unit}`));
  }
  const step = Math.max(1, Math.ceil(buckets.length / 6));
  const slot = (CHART.width - CHART.left) / buckets.length;
  buckets.forEach((start, i) => {
    if (i % step === 0) parts.push(svg('text', { x: CHART.left + slot * i, y: CHART.height - 6, class: 'tick' }, clock(start, bucketMs)));
  });
  return parts;
}

function legend(series) {
  const swatch = (key, i) => {
    const node = el('span', { class: 'swatch' });
    // Through CSSOM: the page's policy refuses inline style attributes.
    node.style.background = colour(key, i);
    return node;
  };
  return el(
    'ul',
    { class: 'legend' },
    series.map((s, i) => el('li', { 'data-series': s.key }, swatch(s.key, i), s.label ?? s.key)),
  );
}

/** Stacked bars, one bar per bucket, one colour per series. */
function barChart(id, title, stats, series, valueOf, unit = '') {
  const totals = stats.buckets.map((_, i) => series.reduce((sum, s) => sum + valueOf(s)[i], 0));
  const max = Math.max(1, ...totals);
  const plotH = CHART.height - CHART.bottom - CHART.top;
  const slot = (CHART.width - CHART.left) / stats.buckets.length;
  const bars = [];
  stats.buckets.forEach((start, i) => {
    let base = CHART.top + plotH;
    series.forEach((s, k) => {
      const value = valueOf(s)[i];
      if (value <= 0) return;
      const h = (value / max) * plotH;
      base -= h;
      bars.push(
        svg(
          'rect',
          { x: CHART.left + slot * i + 1, y: base, width: Math.max(1, slot - 2), height: h, fill: colour(s.key, k), 'data-series': s.key },
          svg('title', {}, `${s.label ?? s.key} · ${clock(start, stats.bucket_ms)}: ${number(value)}${unit}`),
        ),
      );
    });
  });
  return el(
    'figure',
    { class: 'chart', id },
    el('figcaption', {}, title),
    svg('svg', { viewBox: `0 0 ${CHART.width} ${CHART.height}`, role: 'img', 'aria-label': title }, axes(stats.buckets, stats.bucket_ms, max, unit), bars),
    legend(series),
  );
}

/** One line over the buckets; buckets with no value (null) break the line. */
function lineChart(id, title, stats, values, unit, key) {
  const max = Math.max(1, ...values.filter((v) => v !== null));
  const plotH = CHART.height - CHART.bottom - CHART.top;
  const slot = (CHART.width - CHART.left) / stats.buckets.length;
  const points = values.map((v, i) => (v === null ? null : [CHART.left + slot * (i + 0.5), CHART.top + plotH * (1 - v / max)]));
  const runs = [];
  let current = [];
  for (const p of points) {
    if (p) current.push(p);
    else if (current.length) {
      runs.push(current);
      current = [];
    }
  }
  if (current.length) runs.push(current);
  return el(
    'figure',
    { class: 'chart', id },
    el('figcaption', {}, title),
    svg(
      'svg',
      { viewBox: `0 0 ${CHART.width} ${CHART.height}`, role: 'img', 'aria-label': title },
      axes(stats.buckets, stats.bucket_ms, max, unit),
      runs.map((run) => svg('polyline', { points: run.map(([x, y]) => `${x},${y}`).join(' '), class: 'line', 'data-series': key })),
      points
        .filter(Boolean)
        .map(([x, y], i) => svg('circle', { cx: x, cy: y, r: 2.5, class: 'point', 'data-series': key }, svg('title', {}, `${number(values.filter((v) => v !== null)[i])}${unit}`))),
    ),
  );
}

async function showOverview(range = sessionStorage.getItem('switchyard.console.range') ?? '24h') {
  sessionStorage.setItem('switchyard.console.range', range);
  const stats = await call(`/console/api/stats?range=${encodeURIComponent(range)}`);
  const owners = stats.by_owner.map((s) => ({ ...s, label: s.key === 'other' || s.key === 'no key' ? s.key : owner(s.key) }));
  const errorRate = stats.runs.map((n, i) => (n === 0 ? null : Math.round((stats.failed_runs[i] / n) * 1000) / 10));
  const t = stats.totals;
  const tiles = [
    ['runs', t.runs],
    ['failed', t.failed_runs],
    ['input tokens', t.input_tokens],
    ['output tokens', t.output_tokens],
  ];
  show(
    $('view'),
    el('h2', {}, 'Overview'),
    el(
      'p',
      { class: 'ranges' },
      ['1h', '24h', '7d'].map((r) =>
        el('button', { type: 'button', 'data-range': r, class: r === range ? 'active' : '', onclick: () => guarded(() => showOverview(r)) }, `last ${r}`),
      ),
    ),
    el(
      'div',
      { class: 'tiles', id: 'overview-totals' },
      tiles.map(([label, value]) => el('div', { class: 'tile', 'data-total': label }, el('strong', {}, number(value)), el('span', {}, label))),
    ),
    t.runs === 0 ? el('p', { class: 'muted', id: 'overview-empty' }, 'No runs in this window yet: send one from "Test request".') : null,
    el(
      'div',
      { class: 'charts' },
      barChart('chart-tokens', 'Tokens by model', stats, stats.by_model, (s) => s.tokens),
      barChart('chart-requests', 'Requests by owner', stats, owners, (s) => s.requests),
      barChart('chart-tokens-owner', 'Tokens by owner', stats, owners, (s) => s.tokens),
      barChart('chart-requests-model', 'Requests by model', stats, stats.by_model, (s) => s.requests),
      lineChart('chart-latency', 'Mean latency', stats, stats.mean_latency_ms, ' ms', 'latency'),
      lineChart('chart-errors', 'Error rate', stats, errorRate, ' %', 'errors'),
    ),
  );
}

const OUTCOME_CLASS = { completed: 'ok', failed: 'failed', incomplete: 'failed', cancelled: 'cancelled' };

/** A run's rounds and tool calls as bars on one time axis, with their durations and failures. */
function timelineView(t) {
  const rows = [
    ...t.tools
      .filter((c) => c.kind === 'discovery')
      .map((c) => ({ label: `discover ${c.toolType} (${c.name})`, start: c.startMs, ms: c.durationMs, outcome: c.outcome, error: c.error, kind: 'discovery' })),
    ...t.rounds.flatMap((r) => [
      { label: `round ${r.round}`, start: r.startMs, ms: r.durationMs, outcome: r.error ? 'failed' : 'completed', error: r.error, kind: 'round', upstream: r.upstreamMs },
      ...t.tools
        .filter((c) => c.kind === 'call' && c.round === r.round)
        .map((c) => ({
          label: `${c.toolType}: ${c.serverLabel ? `${c.serverLabel}.` : ''}${c.name}`,
          start: c.startMs,
          ms: c.durationMs,
          outcome: c.outcome,
          error: c.error,
          kind: 'tool',
        })),
    ]),
    ...t.tools
      .filter((c) => c.kind === 'call' && c.round === undefined)
      .map((c) => ({ label: `${c.toolType}: ${c.name} (approved)`, start: c.startMs, ms: c.durationMs, outcome: c.outcome, error: c.error, kind: 'tool' })),
  ];
  const total = Math.max(t.durationMs, ...rows.map((r) => r.start + r.ms), 1);
  const rowH = 22;
  const labelW = 220;
  const width = 760;
  const x = (ms) => labelW + ((width - labelW - 70) * ms) / total;
  const height = rowH * rows.length + 24;
  return el(
    'div',
    {},
    el(
      'p',
      { class: 'muted', id: 'timeline-summary' },
      `${t.status} · ${number(t.durationMs)} ms · ${t.rounds.length} round${t.rounds.length === 1 ? '' : 's'} · ${t.tools.filter((c) => c.kind === 'call').length} gateway tool call(s)${t.error ? ` · ${t.error}` : ''}`,
    ),
    svg(
      'svg',
      { viewBox: `0 0 ${width} ${height}`, class: 'timeline', role: 'img', 'aria-label': 'run timeline' },
      rows.map((r, i) => {
        const y = 4 + i * rowH;
        const cls = `${r.kind} ${OUTCOME_CLASS[r.outcome] ?? 'failed'}`;
        return svg(
          'g',
          { class: 'timeline-row', 'data-kind': r.kind, 'data-outcome': r.outcome },
          svg('text', { x: 0, y: y + 14, class: 'label' }, r.label),
          svg(
            'rect',
            { x: x(r.start), y, width: Math.max(2, x(r.start + r.ms) - x(r.start)), height: rowH - 6, class: cls },
            svg('title', {}, `${r.label}: ${number(r.ms)} ms${r.error ? ` (${r.error})` : ''}`),
          ),
          r.upstream !== undefined ? svg('rect', { x: x(r.start), y: y + rowH - 9, width: Math.max(1, x(r.start + r.upstream) - x(r.start)), height: 3, class: 'upstream' }) : null,
          svg('text', { x: x(r.start + r.ms) + 4, y: y + 14, class: 'duration' }, `${number(r.ms)} ms${r.outcome !== 'completed' ? ` ${r.outcome}` : ''}`),
        );
      }),
      svg('text', { x: labelW, y: height - 4, class: 'tick' }, '0'),
      svg('text', { x: width - 70, y: height - 4, 'text-anchor': 'end', class: 'tick' }, `${number(total)} ms`),
    ),
  );
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
    ['overview', 'Overview', () => showOverview()],
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
    ['usage', 'Usage table', showUsage],
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
  // A view at once, not a blank page: the overview.
  nav.querySelector('button[data-section="overview"]').click();
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
  show($('view'));
  status('Key forgotten.');
});
if (key()) guarded(openConsole);
else status('Enter an administrator key (usage.adminKeys) to open the console.');
