import { Module } from '@nestjs/common';
import { registerConfigSection } from '#config/config-section.js';
import { CoreModule } from '#core/core.module.js';
import { MESSAGE_FILES } from '#tool-sdk/ports/message-files.interface.js';
import { InputTokensCounter } from './count-tokens/input-tokens.counter.js';
import { MessageFilesResolver } from './files/message-files.resolver.js';
import { ModelsController } from './http/models.controller.js';
import { ResponsesController } from './http/responses.controller.js';
import { CreateResponseParser } from './request/create-response.parser.js';
import { TRANSPORTS_SETTINGS, transportsConfigSection } from './rpc/transports.config-section.js';
import { ResponsesService } from './service/responses.service.js';

/**
 * The HTTP surface of the Responses API. It also owns the `transports`
 * section: the broker surface (rpc/) is this library's, and the section is
 * known whether or not a host connects a broker.
 */
@Module({
  imports: [CoreModule],
  controllers: [ResponsesController, ModelsController],
  providers: [
    CreateResponseParser,
    ResponsesService,
    InputTokensCounter,
    registerConfigSection(transportsConfigSection),
    MessageFilesResolver,
    { provide: MESSAGE_FILES, useExisting: MessageFilesResolver },
  ],
  exports: [CreateResponseParser, ResponsesService, TRANSPORTS_SETTINGS, MESSAGE_FILES],
})
export class ResponsesModule {}
