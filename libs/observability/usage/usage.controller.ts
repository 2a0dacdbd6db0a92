import { Controller, Get, Inject, Optional, Query, Req } from '@nestjs/common';
import type { Request } from 'express';
import { timingSafeEqual } from 'node:crypto';
import { OWNER_IDS, type OwnerIds } from '#config/owner-ids.js';
import { ForbiddenError, StoreUnavailableError } from '#tool-sdk/errors.js';
import { requestOwner } from '#tool-sdk/routes/request-owner.js';
import { GatewayRoutes } from '#tool-sdk/routes/gateway-routes.js';
import { USAGE_STORE, type UsageStore } from '#storage/usage-store.interface.js';
import { USAGE_SETTINGS, type UsageConfig } from './usage.config-section.js';
import { parseUsageQuery, usageBuckets, type UsageBucket } from './usage-report.js';

/** Rows read per answer at most; a larger answer says `has_more`. */
const MAX_ROWS = 20_000;

/**
 * `GET /v1/usage`: token usage from the usage store, so every replica gives
 * the same answer and a restart loses nothing. A key sees its own usage; an
 * administrator key (`usage.adminKeys`) sees everyone's and may pick one
 * owner with `owner=`.
 */
@GatewayRoutes()
@Controller()
export class UsageController {
  private readonly adminOwners: Buffer[];

  constructor(
    @Inject(USAGE_SETTINGS) settings: UsageConfig,
    @Inject(OWNER_IDS) ownerIds: OwnerIds,
    @Optional() @Inject(USAGE_STORE) private readonly store?: UsageStore | null,
  ) {
    // An owner id is the key's keyed hash (see the API-key authenticator): compared as ids, keys are never kept.
    this.adminOwners = settings.adminKeys.map((key) => Buffer.from(ownerIds.of(key), 'hex'));
  }

  @Get('v1/usage')
  async usage(@Req() req: Request, @Query() query: Record<string, unknown>): Promise<{ object: 'page'; data: UsageBucket[]; has_more: boolean }> {
    const caller = requestOwner(req);
    const parsed = parseUsageQuery(query, Date.now());
    const admin = this.isAdmin(caller);
    if (parsed.owner !== undefined && !admin && parsed.owner !== caller) {
      throw new ForbiddenError("Only an administrator key may read another owner's usage.", 'owner', 'permission_denied');
    }
    const owner = admin ? parsed.owner : caller;
    if (!this.store) throw new StoreUnavailableError('Usage is not recorded on this gateway (usage.record is false).');
    const rows = await this.store.query({ from: parsed.from, to: parsed.to, owner, bucketMs: parsed.bucketMs, limit: MAX_ROWS + 1 });
    return { object: 'page', data: usageBuckets(rows.slice(0, MAX_ROWS), { ...parsed, owner }), has_more: rows.length > MAX_ROWS };
  }

  private isAdmin(owner: string | null): boolean {
    if (owner === null || !/^[0-9a-f]{64}$/.test(owner)) return false;
    const presented = Buffer.from(owner, 'hex');
    let admin = false;
    for (const hash of this.adminOwners) admin = timingSafeEqual(hash, presented) || admin;
    return admin;
  }
}
