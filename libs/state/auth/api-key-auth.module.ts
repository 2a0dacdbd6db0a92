import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ApiKeyAuthenticator } from './api-key.authenticator.js';
import { ApiKeyGuard } from './api-key.guard.js';

/**
 * Inbound API keys. Separate from the state module so that a host running
 * without stored state still authenticates. Expects `GATEWAY_CONFIG` globally.
 */
@Module({
  providers: [ApiKeyAuthenticator, { provide: APP_GUARD, useClass: ApiKeyGuard }],
  exports: [ApiKeyAuthenticator],
})
export class ApiKeyAuthModule {}
