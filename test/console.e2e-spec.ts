import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NestFactory } from '@nestjs/core';
import OpenAI, { toFile } from 'openai';
import { type BrowserContext, type Page, chromium } from 'playwright-core';
import { GatewayModule } from '#src/gateway.module.js';
import { checkConfig } from '../apps/gateway/src/cli.js';
import { type GatewayStack, startStack } from './support/gateway-harness.js';
import { StreamableTestServer } from './support/mcp/mcp-test-servers.js';
import { until } from './support/until.js';

/**
 * The operator's console in a real browser: Debian's Chromium, driven by
 * playwright-core, against a gateway whose records were written through the
 * official `openai` client and the simulated upstream.
 */
const ADMIN_KEY = 'sk-console-admin';
const TENANT_KEY = 'sk-console-tenant';
const CHROMIUM = '/usr/bin/chromium';
/** Stored tenant text that would run script if the page rendered it as HTML. */
const HOSTILE = '<img src=x onerror="window.__pwned = 1">';

/** The PNG's width and height, from its IHDR chunk: a screenshot of an element that is really drawn. */
function pngSize(png: Buffer): { width: number; height: number } {
  expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

/** Colours in a PNG screenshot are not checked pixel by pixel; distinct bytes say it is not one flat fill. */
const distinctBytes = (png: Buffer): number => new Set(png.subarray(33)).size;

/** What the page must never show: plumbing printed as text, or a wait that never ends. */
async function expectNoPlumbing(page: Page): Promise<void> {
  const text = await page.evaluate('document.body.innerText');
  expect(text).not.toMatch(/\[object /);
  expect(text).not.toMatch(/(^|\n)\s*(null|undefined)\s*(\n|$)/);
  expect(text).not.toContain('Waiting for the model');
}

describe('the console', () => {
  let stack: GatewayStack;
  let base: string;
  let tenant: OpenAI;
  let context: BrowserContext;
  let page: Page;
  let profile: string;
  let dataDir: string;
  let shots: string;
  let mcp: StreamableTestServer;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'console-containers-'));
    profile = mkdtempSync(join(tmpdir(), 'console-chromium-'));
    shots = mkdtempSync(join(tmpdir(), 'console-shots-'));
    mcp = await StreamableTestServer.start();
    stack = await startStack({
      config: {
        mcp: { allowedHosts: [`127.0.0.1:${mcp.port}`] },
        console: { enabled: true },
        auth: { apiKeys: [TENANT_KEY, ADMIN_KEY] },
        usage: { adminKeys: [ADMIN_KEY] },
        codeInterpreter: { backend: 'pyodide', dataDir, warmWorkers: 0 },
        fileSearch: { ingestion: { pollMs: 50 } },
      },
    });
    base = stack.url.replace(/\/v1$/, '');
    tenant = new OpenAI({ baseURL: stack.url, apiKey: TENANT_KEY, maxRetries: 0, timeout: 20_000 });

    const hostile = await tenant.responses.create({ model: 'sim-model', input: `[[say ${HOSTILE}]]` });
    ids.hostile = hostile.id;
    // A gateway tool call in two rounds (a real MCP server's tool), for the run view's timeline.
    const mcpRun = await tenant.responses.create({
      model: 'sim-model',
      input: 'Echo. [[call demo__echo {"text":"hello"}]]',
      tools: [{ type: 'mcp', server_label: 'demo', server_url: mcp.url, require_approval: 'never' }],
    });
    expect(mcpRun.output.map((i) => i.type)).toEqual(['mcp_list_tools', 'mcp_call', 'message']);
    ids.mcpRun = mcpRun.id;
    // A failed run (the upstream refuses it), for the error rate.
    await expect(tenant.responses.create({ model: 'sim-model', input: '[[fault status=400 message="too long"]]' })).rejects.toMatchObject({ status: 400 });
    const tool = await tenant.responses.create({
      model: 'sim-model',
      input: '[[call get_weather {"city":"Paris"}]]',
      tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }],
    });
    expect(tool.output.map((i) => i.type)).toEqual(['function_call']);
    ids.tool = tool.id;
    const conversation = await tenant.conversations.create({ metadata: { topic: 'console' } });
    ids.conversation = conversation.id;
    await tenant.responses.create({ model: 'sim-model', input: '[[say in the conversation]]', conversation: conversation.id });
    const queued = await tenant.responses.create({ model: 'sim-model', input: '[[say later]]', background: true });
    ids.background = queued.id;
    for (let r = queued; r.status === 'queued' || r.status === 'in_progress'; r = await tenant.responses.retrieve(queued.id)) {
      await new Promise((done) => setTimeout(done, 50));
    }
    const file = await tenant.files.create({ file: await toFile(Buffer.from('console notes'), 'notes.txt'), purpose: 'assistants' });
    const store = await tenant.vectorStores.create({ name: 'console docs' });
    await tenant.vectorStores.files.create(store.id, { file_id: file.id });
    ids.vectorStore = store.id;
    ids.file = file.id;
    const box = await tenant.containers.create({ name: 'console box' });
    const boxFile = await tenant.containers.files.create(box.id, { file: await toFile(Buffer.from('a,b\n'), 'input.csv') });
    ids.container = box.id;
    ids.containerFile = boxFile.id;

    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(10_000);
  }, 60_000);

  afterAll(async () => {
    await context?.close();
    await stack?.close();
    await mcp?.close();
    rmSync(profile, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(shots, { recursive: true, force: true });
  });

  /** A screenshot of the view, kept for a person to look at, and one of each element it must show, each really drawn. */
  const screenshotOf = async (view: string, selectors: string[]): Promise<void> => {
    writeFileSync(join(shots, `${view}.png`), await page.screenshot({ fullPage: true }));
    for (const selector of selectors) {
      const shot = await page.locator(selector).first().screenshot();
      const size = pngSize(shot);
      expect({ selector, wide: size.width > 40, tall: size.height > 10, drawn: distinctBytes(shot) > 16 }).toEqual({ selector, wide: true, tall: true, drawn: true });
    }
  };

  const open = async (section: string) => {
    await page.click(`nav button[data-section="${section}"]`);
  };

  it('asks for the key, refuses a tenant key, then opens every section with the administrator key', async () => {
    const served = await page.goto(`${base}/console`);
    expect(served?.status()).toBe(200);
    expect(served?.headers()['content-security-policy']).toContain("script-src 'self'");
    await page.waitForFunction("document.getElementById('status')?.textContent?.includes('administrator key')");
    expect(await page.isHidden('#nav')).toBe(true);

    await page.fill('#key', TENANT_KEY);
    await page.click('#key-save');
    await page.waitForSelector('#status.error');
    expect(await page.textContent('#status')).toMatch(/^401: Not an administrator key/);
    expect(await page.isHidden('#nav')).toBe(true);

    await page.fill('#key', ADMIN_KEY);
    await page.click('#key-save');
    await page.waitForSelector('#nav:not([hidden])');
    expect(await page.$$eval('nav button', (buttons) => buttons.map((b) => b.getAttribute('data-section')))).toEqual([
      'overview',
      'responses',
      'conversations',
      'background',
      'vector_stores',
      'containers',
      'usage',
      'test',
    ]);
    expect(await page.evaluate("sessionStorage.getItem('switchyard.console.key')")).toBe(ADMIN_KEY);
  });

  it('opens on the overview: totals, tokens and requests over time by model and owner, latency and error rate', async () => {
    // The key was accepted in the previous test: the overview is shown without a click.
    await page.waitForSelector('#chart-tokens svg rect[data-series="sim-model"]');
    expect(await page.getAttribute('nav button[data-section="overview"]', 'class')).toBe('active');
    const totals = Object.fromEntries(
      await page.$$eval('#overview-totals .tile', (tiles) => tiles.map((t) => [t.getAttribute('data-total'), t.querySelector('strong')?.textContent])),
    );
    // Six runs: five answered (one of them in two rounds) and one the upstream refused.
    expect(totals).toMatchObject({ runs: '6', failed: '1' });
    expect(await page.$$eval('#chart-tokens .legend li', (items) => items.map((i) => i.getAttribute('data-series')))).toEqual(['sim-model']);
    expect(await page.locator('#chart-requests svg rect').count()).toBeGreaterThan(0);
    // Both measures by both dimensions: tokens by owner, requests by model.
    expect(await page.locator('#chart-tokens-owner svg rect').count()).toBeGreaterThan(0);
    expect(await page.locator('#chart-requests-model svg rect[data-series="sim-model"]').count()).toBeGreaterThan(0);
    expect(await page.locator('#chart-latency svg circle').count()).toBeGreaterThan(0);
    const errorPoints = await page.$$eval('#chart-errors svg circle title', (titles) => titles.map((t) => t.textContent));
    expect(errorPoints.some((t) => t !== '0 %')).toBe(true);
    await expectNoPlumbing(page);
    await screenshotOf('overview', [
      '#overview-totals',
      '#chart-tokens svg',
      '#chart-requests svg',
      '#chart-tokens-owner svg',
      '#chart-requests-model svg',
      '#chart-latency svg',
      '#chart-errors svg',
    ]);

    await page.click('button[data-range="1h"]');
    await page.waitForSelector('button[data-range="1h"].active');
    expect(await page.locator('#chart-tokens svg rect[data-series="sim-model"]').count()).toBeGreaterThan(0);
  });

  it("shows a run's rounds and tool calls on a timeline with their durations", async () => {
    await open('responses');
    await page.click(`tr[data-id="${ids.mcpRun}"]`);
    await page.waitForSelector('#run-timeline svg.timeline');
    const rows = await page.$$eval('#run-timeline .timeline-row', (gs) =>
      gs.map((g) => [g.getAttribute('data-kind'), g.getAttribute('data-outcome'), g.querySelector('.label')?.textContent]),
    );
    expect(rows).toEqual([
      ['discovery', 'completed', 'discover mcp (tools[0])'],
      ['round', 'completed', 'round 1'],
      ['tool', 'completed', 'mcp: demo.echo'],
      ['round', 'completed', 'round 2'],
    ]);
    expect(await page.textContent('#timeline-summary')).toMatch(/^completed · [\d.k]+ ms · 2 rounds · 1 gateway tool call/);
    for (const duration of await page.$$eval('#run-timeline .duration', (ds) => ds.map((d) => d.textContent ?? ''))) expect(duration).toMatch(/^[\d.]+k? ms$/);
    await expectNoPlumbing(page);
    await screenshotOf('run', ['#run-timeline svg.timeline', '#output-items']);
  });

  it('lists the stored responses and shows one with its items, tenant markup as text that never runs', async () => {
    await open('responses');
    await page.waitForSelector(`tr[data-id="${ids.hostile}"]`);
    const listed = await page.$$eval('tbody[data-list="/console/api/responses"] tr', (rows) => rows.map((r) => r.getAttribute('data-id')));
    // Five responses stored (one in a conversation, one in the background). Their order (newest
    // first, ties within a second broken by id) is the store contract tests' to check: these were
    // made within one second, so their relative order here is the ids'.
    expect(listed).toHaveLength(5);
    expect(listed).toEqual(expect.arrayContaining([ids.tool, ids.hostile]));

    await page.click(`tr[data-id="${ids.hostile}"]`);
    await page.waitForSelector('#output-items [data-item-type="message"]');
    expect(await page.textContent('#output-items [data-item-type="message"] .text')).toBe(HOSTILE);
    expect(await page.textContent('#input-items')).toContain(HOSTILE);
    expect(await page.locator('#view img').count()).toBe(0);
    expect(await page.evaluate('typeof window.__pwned')).toBe('undefined');
    await expectNoPlumbing(page);
  });

  it('shows a tool call with its name and arguments', async () => {
    await open('responses');
    await page.click(`tr[data-id="${ids.tool}"]`);
    const call = page.locator('#output-items [data-item-type="function_call"]');
    await call.waitFor();
    expect(await call.locator('h4').textContent()).toBe('function_call: get_weather');
    expect(JSON.parse((await call.locator('.arguments code').textContent())!)).toEqual({ city: 'Paris' });
    expect(await page.textContent('#view')).toContain('"get_weather"');
  });

  it('browses conversations, background runs, vector stores and containers with their files, and usage', async () => {
    await open('conversations');
    await page.click(`tr[data-id="${ids.conversation}"]`);
    await page.waitForSelector('#conversation-items [data-item-type="message"]');
    expect(await page.$$eval('#conversation-items .text', (items) => items.map((i) => i.textContent))).toEqual(['[[say in the conversation]]', 'in the conversation']);

    await open('background');
    const run = page.locator(`tr[data-id="${ids.background}"]`);
    await run.waitFor();
    expect(await run.locator('td').nth(3).textContent()).toBe('completed');

    await open('vector_stores');
    await page.click(`tr[data-id="${ids.vectorStore}"]`);
    await page.waitForSelector('#section-files');
    expect(await page.textContent('#section-files')).toContain(ids.file);
    expect(await page.textContent('#view h2')).toBe('Vector stores: console docs');

    await open('containers');
    await page.click(`tr[data-id="${ids.container}"]`);
    await page.waitForSelector('#section-files');
    expect(await page.textContent('#section-files')).toContain('/mnt/data/input.csv');

    await open('usage');
    await page.waitForSelector('#usage tbody tr td:nth-child(4)');
    const requests = await page.$$eval('#usage tbody tr', (rows) => rows.map((r) => [r.children[2]?.textContent, Number(r.children[3]?.textContent)]));
    expect(requests.filter(([model]) => model === 'sim-model').reduce((n, [, count]) => n + (count as number), 0)).toBe(5);
  });

  it('sends a test request to /v1/responses with the model filled in, and shows the answer or the error', async () => {
    await open('test');
    // Filled from /v1/models: nothing but the input needs typing.
    const listed = (await tenant.models.list()).data[0]!.id;
    await until(
      () => page.inputValue('#test-model'),
      (value) => value === listed,
      'the model field filled from /v1/models',
    );
    await page.fill('#test-input', '[[say pong from the console]]');
    await page.click('#test-send');
    await page.waitForSelector('#test-output-text');
    expect(await page.textContent('#test-output-text')).toBe('pong from the console');
    await expectNoPlumbing(page);
    await screenshotOf('test-request', ['#test-form', '#test-output']);

    await page.fill('#test-input', '[[fault status=400 message="the prompt is too long"]]');
    await page.click('#test-send');
    await page.waitForSelector('#test-error');
    expect(await page.textContent('#test-error')).toMatch(/^400: .*too long/);
    await expectNoPlumbing(page);
  });

  it('answers its API to administrator keys only, with the error envelope, and pages with after', async () => {
    const get = (path: string, key?: string) => fetch(`${base}${path}`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
    for (const key of [undefined, TENANT_KEY, 'sk-unknown']) {
      const res = await get('/console/api/responses', key);
      const body = (await res.json()) as { error: { type: string; message: string } };
      expect({ key, status: res.status, type: body.error.type }).toEqual({ key, status: 401, type: 'authentication_error' });
    }
    const first = (await (await get('/console/api/responses?limit=3', ADMIN_KEY)).json()) as { data: Array<{ id: string }>; has_more: boolean; last_id: string };
    expect(first.data).toHaveLength(3);
    expect(first.has_more).toBe(true);
    const second = (await (await get(`/console/api/responses?limit=3&after=${first.last_id}`, ADMIN_KEY)).json()) as { data: Array<{ id: string }>; has_more: boolean };
    expect(second.data.map((r) => r.id).filter((id) => first.data.some((r) => r.id === id))).toEqual([]);
    expect(first.data.length + second.data.length).toBeGreaterThanOrEqual(5);

    const badLimit = await get('/console/api/responses?limit=1000', ADMIN_KEY);
    expect([badLimit.status, ((await badLimit.json()) as { error: { param: string } }).error.param]).toEqual([400, 'limit']);
    // Ids and names are looked up in their own store: anything else is a 404, never a path.
    for (const path of [
      '/console/api/responses/..%2F..%2Fetc%2Fpasswd',
      `/console/api/responses/${ids.conversation}`,
      '/console/api/sections/..%2Fresponses',
      `/console/api/sections/containers/${ids.vectorStore}/files`,
    ]) {
      expect({ path, status: (await get(path, ADMIN_KEY)).status }).toEqual({ path, status: 404 });
    }
    expect((await get('/console/assets/..%2F..%2Fpackage.json')).status).toBe(404);
  });
});

describe('the console, off', () => {
  it('is not there unless console.enabled: /console and its API are 404s', async () => {
    const stack = await startStack({ config: { usage: { adminKeys: [ADMIN_KEY] } } });
    try {
      const base = stack.url.replace(/\/v1$/, '');
      for (const path of ['/console', '/console/assets/console.js', '/console/api/responses']) {
        const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
        expect({ path, status: res.status }).toEqual({ path, status: 404 });
      }
    } finally {
      await stack.close();
    }
  });

  it('is refused without an administrator key by the one validation that check-config and the boot both run', async () => {
    const config = { upstream: { baseUrl: 'http://127.0.0.1:9/v1' }, storage: { driver: 'memory' as const }, console: { enabled: true } };
    const refusal = /console\.enabled \(CONSOLE_ENABLED\) is true but usage\.adminKeys \(USAGE_ADMIN_KEYS\)/;
    expect(() => GatewayModule.forRoot({ config })).toThrow(refusal);
    // What check-config says of the same settings from the environment: the same line, not "ok".
    const checked = checkConfig({ CONSOLE_ENABLED: 'true', STORAGE_DRIVER: 'memory' });
    expect(checked.ok).toBe(false);
    expect(checked.lines).toEqual([expect.stringMatching(refusal)]);
    const withKey = checkConfig({ CONSOLE_ENABLED: 'true', STORAGE_DRIVER: 'memory', USAGE_ADMIN_KEYS: ADMIN_KEY });
    expect(withKey.ok).toBe(true);
    // And what it accepts boots.
    const app = await NestFactory.create(GatewayModule.forRoot({ config: { ...config, usage: { adminKeys: [ADMIN_KEY] } } }), {
      bodyParser: false,
      logger: false,
      abortOnError: false,
    });
    await app.init();
    await app.close();
  });
});
