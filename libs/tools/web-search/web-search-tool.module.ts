import { Module } from '@nestjs/common';
import { registerConfigSection } from '#tool-sdk/index.js';
import { webSearchConfigSection } from './config/web-search.config-section.js';
import { WebSearchService } from './search/web-search.service.js';
import { WebSearchExecutor } from './web-search.executor.js';
import { WebSearchToolHandler } from './web-search.tool-handler.js';

/**
 * The `web_search` tool type. `config.webSearch` is validated when this
 * module's providers are built, so a bad setting stops the boot with its
 * name in the message. Without a provider the tool is still accepted and
 * validated, and each call fails with an explanation instead of vanishing.
 */
@Module({
  providers: [registerConfigSection(webSearchConfigSection), WebSearchService, WebSearchToolHandler, WebSearchExecutor],
  exports: [WebSearchService],
})
export class WebSearchToolModule {}
