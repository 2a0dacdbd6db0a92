import { Global, Module } from '@nestjs/common';
import { registerConfigSection } from '#config/config-section.js';
import { TOOL_STORAGE } from '#tool-sdk/ports/tool-storage.js';
import { toolStorage } from '../tool-storage.js';
import { STORAGE_SETTINGS, type StorageConfig, storageConfigSection } from './storage.config-section.js';

/**
 * The `storage` section alone, and the `ToolStorage` port tool modules keep
 * their own tables through. The gateway loads it even without the state
 * module: file search keeps its index beside the state store and follows the
 * same settings, and a deployment's `storage` settings stay valid when a host
 * turns state off. Global, so a tool module injects `TOOL_STORAGE` without
 * importing the storage library.
 */
@Global()
@Module({
  providers: [registerConfigSection(storageConfigSection), { provide: TOOL_STORAGE, inject: [STORAGE_SETTINGS], useFactory: (s: StorageConfig) => toolStorage(s) }],
  exports: [STORAGE_SETTINGS, TOOL_STORAGE],
})
export class StorageSettingsModule {}
