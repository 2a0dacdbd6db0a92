import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { registerConfigSection } from '#config/config-section.js';
import { ApiKeyAuthenticator } from './api-key.authenticator.js';
import { ApiKeyGuard } from './api-key.guard.js';
import { OwnerIdMigration } from './owner-id.migration.js';
import { AUTH_SETTINGS, authConfigSection } from './auth.config-section.js';

/**
 * Inbound API keys. Separate from the state module so that a host running
 * without stored state still authenticates. Expects `GATEWAY_CONFIG` globally;
 * owns the `auth` section.
 */
@Module({
  providers: [registerConfigSection(authConfigSection), ApiKeyAuthenticator, OwnerIdMigration, { provide: APP_GUARD, useClass: ApiKeyGuard }],
  exports: [ApiKeyAuthenticator, AUTH_SETTINGS],
})
export class ApiKeyAuthModule {}
