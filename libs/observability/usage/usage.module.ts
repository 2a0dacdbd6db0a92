import { Inject, Module, Optional, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { registerConfigSection } from '#config/config-section.js';
import { StorageSettingsModule } from '#storage/config/storage-settings.module.js';
import { STORAGE_SETTINGS, type StorageConfig } from '#storage/config/storage.config-section.js';
import { createUsageStore } from '#storage/usage/create-usage-store.js';
import { USAGE_STORE, type UsageStore } from '#storage/usage-store.interface.js';
import { LogWriter } from '../logging/log-writer.service.js';
import { USAGE_SETTINGS, usageConfigSection, type UsageConfig } from './usage.config-section.js';
import { UsageController } from './usage.controller.js';
import { UsageRecorder } from './usage-recorder.service.js';

/**
 * Per-owner token usage: the store (on the state's database, its own table),
 * the recorder the run observer writes through, and `GET /v1/usage`. The
 * store opens at module init, so a database that cannot be reached stops the
 * boot naming the setting, as the state store does.
 */
@Module({
  imports: [StorageSettingsModule],
  controllers: [UsageController],
  providers: [
    registerConfigSection(usageConfigSection),
    {
      provide: USAGE_STORE,
      inject: [USAGE_SETTINGS, STORAGE_SETTINGS],
      useFactory: (usage: UsageConfig, storage: StorageConfig): Promise<UsageStore | null> | null => (usage.record ? createUsageStore(storage) : null),
    },
    {
      provide: UsageRecorder,
      inject: [LogWriter, { token: USAGE_STORE, optional: true }],
      useFactory: (log: LogWriter, store?: UsageStore | null) => new UsageRecorder(log, store),
    },
  ],
  exports: [UsageRecorder, USAGE_STORE],
})
export class UsageModule implements OnModuleInit, OnApplicationShutdown {
  constructor(
    private readonly recorder: UsageRecorder,
    @Optional() @Inject(USAGE_STORE) private readonly store?: UsageStore | null,
  ) {}

  async onModuleInit(): Promise<void> {
    try {
      await this.store?.init();
    } catch (e) {
      throw new Error(`Could not open the usage store: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
    }
  }

  /**
   * The store first: its close writes what is pending at once, where the
   * recorder's writes alone would wait out the batch's window. Every
   * record's promise settles with that write; `settled()` then waits for
   * the warnings of any that failed.
   */
  async onApplicationShutdown(): Promise<void> {
    await this.store?.close();
    await this.recorder.settled();
  }
}
