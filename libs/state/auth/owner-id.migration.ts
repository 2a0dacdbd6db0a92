import { Inject, Injectable, Logger, type OnModuleInit, Optional } from '@nestjs/common';
import { OWNER_IDS, type OwnerIds } from '#config/owner-ids.js';
import { rekeyStoredOwners, STORAGE_SETTINGS, type StorageConfig } from '#storage/index.js';
import { AUTH_SETTINGS, type AuthConfig } from './auth.config-section.js';

/**
 * Before the first request: stored rows and usage of each configured API key
 * move from the key's old id (its SHA-256) to its keyed id. Only here are the
 * keys known, so only here can the one be mapped to the other
 * (`libs/storage/owner-rekey.ts` says what happens to other rows).
 */
@Injectable()
export class OwnerIdMigration implements OnModuleInit {
  private readonly logger = new Logger('OwnerIds');

  constructor(
    @Inject(AUTH_SETTINGS) private readonly auth: AuthConfig,
    @Inject(OWNER_IDS) private readonly ownerIds: OwnerIds,
    @Optional() @Inject(STORAGE_SETTINGS) private readonly storage?: StorageConfig,
  ) {}

  async onModuleInit(): Promise<void> {
    if (this.auth.apiKeys.length === 0 || !this.storage) return;
    const changed = await rekeyStoredOwners(this.storage, this.ownerIds.rekeying(this.auth.apiKeys));
    if (Object.keys(changed).length > 0) this.logger.log(`owner ids rewritten to keyed ids: ${JSON.stringify(changed)}`);
  }
}
