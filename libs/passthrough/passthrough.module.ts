import { Logger, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { DriverMissingError } from '#storage/sql/sql-database.js';
import { registerConfigSection } from '#config/config-section.js';
import { STORAGE_SETTINGS } from '#storage/config/storage.config-section.js';
import { StorageSettingsModule } from '#storage/config/storage-settings.module.js';
import { BatchRunner } from './batches/batch-runner.service.js';
import { openBatchStore } from './batches/batch-store.provider.js';
import { BatchStore } from './batches/batch.store.js';
import { batchesConfigSection } from './batches/batches.config-section.js';
import { BatchesController } from './batches/batches.controller.js';
import { BatchesService } from './batches/batches.service.js';
import { PassthroughController } from './http/passthrough.controller.js';
import { RelayService } from './relay/relay.service.js';

/**
 * The OpenAI routes besides Responses that an application sends to the same
 * base URL: chat completions, completions and embeddings passed through to
 * the upstream pool, and the Batch API over them and Responses. Needs
 * `GATEWAY_CONFIG` and `UPSTREAM_CLIENT` from the host module; batches read
 * and write files through `BATCH_FILES` (the Files API's module).
 */
@Module({
  imports: [StorageSettingsModule],
  controllers: [PassthroughController, BatchesController],
  providers: [
    registerConfigSection(batchesConfigSection),
    RelayService,
    { provide: BatchStore, inject: [STORAGE_SETTINGS], useFactory: openBatchStore },
    BatchRunner,
    BatchesService,
  ],
  exports: [RelayService, BatchesService],
})
export class PassthroughModule implements OnModuleInit, OnApplicationShutdown {
  constructor(private readonly store: BatchStore) {}

  async onModuleInit(): Promise<void> {
    try {
      await this.store.init();
    } catch (e) {
      // A package install without the driver: the rest of the gateway serves; batches answer 503 saying why.
      if (e instanceof DriverMissingError) return new Logger('Batches').warn(`batches are off: ${e.message.replace(/^file_search/, 'the batch store')}`);
      throw new Error(`Could not open the batch store: ${(e as Error).message}`, { cause: e });
    }
  }

  /** After the runner's own shutdown hook, so no result is written to a closed store. */
  async onApplicationShutdown(): Promise<void> {
    await this.store.close();
  }
}
