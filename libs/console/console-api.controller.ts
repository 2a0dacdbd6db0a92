import { Controller, Get, Param, Query, UseGuards } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { NotFoundError, StoreUnavailableError } from '#tool-sdk/errors.js';
import type { JsonObject } from '#tool-sdk/items.js';
import type { CatalogQuery } from '#tool-sdk/ports/catalog.js';
import type { ConsolePage } from '#tool-sdk/ports/console-sections.js';
import { GatewayRoutes } from '#tool-sdk/routes/gateway-routes.js';
import { listQuery } from '#tool-sdk/routes/request-validation.js';
import { hasTimelines, USAGE_STORE, type RunTimeline, type UsageStore } from '#storage/usage-store.interface.js';
import { parseUsageQuery, usageBuckets } from '#observability/usage/usage-report.js';
import { AdminKeyGuard } from './admin-key.guard.js';
import { ConsoleCatalog, optional } from './console-catalog.service.js';
import { consoleStats, parseStatsRange, statsWindow, type ConsoleStats } from './console-stats.js';

/** Usage rows one answer reads at most, as `GET /v1/usage` does. */
const MAX_USAGE_ROWS = 20_000;

/** `limit` (1..100, default 20) and `after` (an id of the previous page), checked like every list's. */
function pageQuery(query: Record<string, unknown>): CatalogQuery {
  const { limit, after } = listQuery(query);
  return after ? { limit, after } : { limit };
}

/**
 * The console's read-only JSON API, every owner's records, for administrator
 * keys only. Lists are newest first, paged with `limit` and `after`; each
 * entry carries its `owner` (the key's hash, null without authentication).
 */
@GatewayRoutes()
@UseGuards(AdminKeyGuard)
@Controller('console/api')
export class ConsoleApiController {
  constructor(
    private readonly catalog: ConsoleCatalog,
    private readonly modules: ModuleRef,
  ) {}

  /** The usage module's store, null when usage is not recorded. */
  private get usageStore(): UsageStore | undefined {
    return optional<UsageStore>(this.modules, USAGE_STORE);
  }

  @Get('sections')
  sections(): { object: 'list'; data: Array<{ name: string; title: string }> } {
    return { object: 'list', data: this.catalog.sectionList() };
  }

  @Get('responses')
  async responses(@Query() query: Record<string, unknown>): Promise<ConsolePage> {
    return this.catalog.responses(pageQuery(query));
  }

  @Get('responses/:id')
  async response(@Param('id') id: string): Promise<JsonObject> {
    return this.catalog.response(id);
  }

  /**
   * What the run behind a response did, round by round, as the run view draws
   * it: \`{ timeline: null }\` for a response whose run left none (it ran
   * before the console was on, or longer ago than timelines are kept).
   */
  @Get('responses/:id/timeline')
  async timeline(@Param('id') id: string): Promise<{ timeline: RunTimeline | null }> {
    const store = this.usageStore;
    return { timeline: hasTimelines(store) ? await store.timeline(id) : null };
  }

  /** The overview's charts: requests and tokens by model and owner, runs, failures and mean latency, over \`range\`. */
  @Get('stats')
  async stats(@Query() query: Record<string, unknown>): Promise<ConsoleStats> {
    if (!this.usageStore) throw new StoreUnavailableError('Usage is not recorded on this gateway (usage.record is false).');
    const range = parseStatsRange(query.range);
    const window = statsWindow(range, Date.now());
    const rows = await this.usageStore.query({ ...window, limit: MAX_USAGE_ROWS });
    return consoleStats(range, window, rows);
  }

  @Get('conversations')
  async conversations(@Query() query: Record<string, unknown>): Promise<ConsolePage> {
    return this.catalog.conversations(pageQuery(query));
  }

  /** The conversation and one page of its items, oldest first. */
  @Get('conversations/:id')
  async conversation(@Param('id') id: string, @Query() query: Record<string, unknown>): Promise<JsonObject> {
    return this.catalog.conversation(id, pageQuery(query));
  }

  @Get('background')
  async background(@Query() query: Record<string, unknown>): Promise<ConsolePage> {
    return this.catalog.backgroundRuns(pageQuery(query));
  }

  @Get('sections/:name')
  async sectionList(@Param('name') name: string, @Query() query: Record<string, unknown>): Promise<ConsolePage> {
    return this.catalog.section(name).list(pageQuery(query));
  }

  @Get('sections/:name/:id')
  async sectionRecord(@Param('name') name: string, @Param('id') id: string): Promise<JsonObject> {
    const record = await this.catalog.section(name).get(id);
    if (!record) throw new NotFoundError(`No record '${id}' in ${name}.`, 'not_found', 'id');
    return record;
  }

  @Get('sections/:name/:id/files')
  async sectionFiles(@Param('name') name: string, @Param('id') id: string, @Query() query: Record<string, unknown>): Promise<ConsolePage> {
    const files = await this.catalog.section(name).files(id, pageQuery(query));
    if (!files) throw new NotFoundError(`No record '${id}' in ${name}.`, 'not_found', 'id');
    return files;
  }

  /** `GET /v1/usage` as an administrator sees it: every owner's, or one with `owner=`. */
  @Get('usage')
  async usage(@Query() query: Record<string, unknown>): Promise<{ object: 'page'; data: JsonObject[]; has_more: boolean }> {
    if (!this.usageStore) throw new StoreUnavailableError('Usage is not recorded on this gateway (usage.record is false).');
    const parsed = parseUsageQuery(query, Date.now());
    const rows = await this.usageStore.query({ from: parsed.from, to: parsed.to, owner: parsed.owner, bucketMs: parsed.bucketMs, limit: MAX_USAGE_ROWS + 1 });
    const data = usageBuckets(rows.slice(0, MAX_USAGE_ROWS), { ...parsed, owner: parsed.owner }) as unknown as JsonObject[];
    return { object: 'page', data, has_more: rows.length > MAX_USAGE_ROWS };
  }
}
