import { Module } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '#config/gateway-config.js';
import { WEB_SEARCH_SETTINGS, parseWebSearchSettings } from './config/web-search-settings.js';
import { providerRequirements } from './providers/search-provider.registry.js';
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
  providers: [
    {
      provide: WEB_SEARCH_SETTINGS,
      inject: [GATEWAY_CONFIG],
      useFactory: (config: GatewayConfig) => parseWebSearchSettings(config.webSearch, providerRequirements()),
    },
    WebSearchService,
    WebSearchToolHandler,
    WebSearchExecutor,
  ],
  exports: [WebSearchService],
})
export class WebSearchToolModule {}
