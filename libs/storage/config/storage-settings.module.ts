import { Module } from '@nestjs/common';
import { registerConfigSection } from '#config/config-section.js';
import { STORAGE_SETTINGS, storageConfigSection } from './storage.config-section.js';

/**
 * The `storage` section alone. The gateway loads it even without the state
 * module: file search keeps its index beside the state store and follows the
 * same settings, and a deployment's `storage` settings stay valid when a host
 * turns state off.
 */
@Module({
  providers: [registerConfigSection(storageConfigSection)],
  exports: [STORAGE_SETTINGS],
})
export class StorageSettingsModule {}
