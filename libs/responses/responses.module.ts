import { Module } from '@nestjs/common';
import { CoreModule } from '#core/core.module.js';
import { ModelsController } from './http/models.controller.js';
import { ResponsesController } from './http/responses.controller.js';
import { CreateResponseParser } from './request/create-response.parser.js';
import { ResponsesService } from './service/responses.service.js';

/** The HTTP surface of the Responses API. */
@Module({
  imports: [CoreModule],
  controllers: [ResponsesController, ModelsController],
  providers: [CreateResponseParser, ResponsesService],
  exports: [CreateResponseParser, ResponsesService],
})
export class ResponsesModule {}
