import { DiscoveryService } from '@nestjs/core';

/**
 * Tags a provider as the `ToolHandler` of a tool type. The explorer finds
 * tagged providers at start-up; core never imports a tool module by name.
 */
export const ToolHandlerProvider = DiscoveryService.createDecorator<{ type?: string } | undefined>();

/** Tags a provider as the `GatewayExecutor` of a gateway-owned tool type. */
export const GatewayExecutorProvider = DiscoveryService.createDecorator<{ type?: string } | undefined>();
