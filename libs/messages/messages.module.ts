import { Module } from '@nestjs/common';
import { CoreModule } from '../core/core.module.js';
import { MessagesController } from './http/messages.controller.js';

/** The HTTP surface of the Anthropic Messages API, on the Responses loop. */
@Module({
  imports: [CoreModule],
  controllers: [MessagesController],
})
export class MessagesModule {}
