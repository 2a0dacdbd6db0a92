import { Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { CoreModule } from '../core/core.module.js';
import { ModelsController } from './http/models.controller.js';
import { OpenAiExceptionFilter } from './http/openai-exception.filter.js';
import { ResponsesController } from './http/responses.controller.js';
import { CreateResponseParser } from './request/create-response.parser.js';

/** The HTTP surface of the Responses API. */
@Module({
  imports: [CoreModule],
  controllers: [ResponsesController, ModelsController],
  providers: [CreateResponseParser, { provide: APP_FILTER, useClass: OpenAiExceptionFilter }],
  exports: [CreateResponseParser],
})
export class ResponsesModule {}
