import { Module, type OnModuleInit } from '@nestjs/common';
import { DiscoveryModule, ModuleRef } from '@nestjs/core';
import { UsageRecorder } from '#observability/usage/usage-recorder.service.js';
import { AdminKeyGuard } from './admin-key.guard.js';
import { ConsoleApiController } from './console-api.controller.js';
import { ConsoleCatalog, optional } from './console-catalog.service.js';
import { ConsolePageController } from './console-page.controller.js';

/**
 * The operator's console: the page under `/console` and its read-only API
 * under `/console/api`. `GatewayModule.forRoot` adds it when
 * `console.enabled` is true; without it the routes do not exist (a 404 like
 * any unknown path). Its readers are every store's catalog and the tool
 * libraries' console sections (`ConsoleSectionProvider`), found by discovery.
 */
@Module({
  imports: [DiscoveryModule],
  controllers: [ConsolePageController, ConsoleApiController],
  providers: [ConsoleCatalog, AdminKeyGuard],
})
export class ConsoleModule implements OnModuleInit {
  constructor(private readonly modules: ModuleRef) {}

  onModuleInit(): void {
    // A console without an administrator key never gets here: the configuration's validation refuses it.
    // The run view reads timelines: they are written only while a console can show them.
    optional<UsageRecorder>(this.modules, UsageRecorder)?.keepTimelines();
  }
}
