import { Module } from '@nestjs/common';
import { PassthroughController } from './http/passthrough.controller.js';
import { RelayService } from './relay/relay.service.js';

/**
 * The OpenAI routes besides Responses that an application sends to the same
 * base URL: chat completions, completions and embeddings passed through to
 * the upstream pool. Needs `GATEWAY_CONFIG` and `UPSTREAM_CLIENT` from the
 * host module.
 */
@Module({
  controllers: [PassthroughController],
  providers: [RelayService],
  exports: [RelayService],
})
export class PassthroughModule {}
