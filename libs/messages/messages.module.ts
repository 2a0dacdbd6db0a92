import { Module } from '@nestjs/common';
import { CoreModule } from '#core/core.module.js';
import { MessagesTokenCounter } from './count-tokens/messages-token-counter.service.js';
import { MessagesController } from './http/messages.controller.js';
import { thinkingSignerProvider } from './thinking/thinking-signer.provider.js';

/** The HTTP surface of the Anthropic Messages API, on the Responses loop. */
@Module({
  imports: [CoreModule],
  controllers: [MessagesController],
  providers: [MessagesTokenCounter, thinkingSignerProvider],
})
export class MessagesModule {}
