import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { ToolHandlerExplorer } from './handlers/tool-handler.explorer.js';
import { GatewayScheduler } from './loop/gateway-scheduler.service.js';
import { LoopService } from './loop/loop.service.js';
import { ModelContextService } from './loop/model-context.service.js';
import { ToolPreparationService } from './registry/tool-preparation.service.js';

/**
 * The tool framework: explorer, preparation (stages 1–4), scheduler and loop.
 * It needs `GATEWAY_CONFIG` and `UPSTREAM_CLIENT` from the host module and
 * finds tool types through discovery; it imports no tool module.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [ToolHandlerExplorer, ToolPreparationService, GatewayScheduler, LoopService, ModelContextService],
  exports: [ToolHandlerExplorer, ToolPreparationService, GatewayScheduler, LoopService, ModelContextService],
})
export class CoreModule {}
