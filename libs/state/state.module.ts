import { Global, Module, type OnModuleInit } from '@nestjs/common';
import { GATEWAY_CONFIG, GatewayConfig } from '#config/gateway-config.js';
import { LoopService } from '#core/loop/loop.service.js';
import { RESPONSE_STATE } from '#core/loop/response-state.interface.js';
import type { PublicItem } from '#core/protocol/items.js';
import { CreateResponseParser } from '#responses/request/create-response.parser.js';
import { ResponsesModule } from '#responses/responses.module.js';
import { StorageModule } from '#storage/index.js';
import { ApiKeyAuthModule } from './auth/api-key-auth.module.js';
import { CompactionService } from './compaction/compaction.service.js';
import { STATE_SETTINGS, readStateSettings } from './config/state-settings.js';
import { ConversationsController } from './http/conversations.controller.js';
import { StoredResponsesController } from './http/stored-responses.controller.js';
import { StoredResponseState } from './persistence/stored-response.state.js';
import { ResponsesWebSocketServer } from './websocket/responses-websocket.server.js';
import { BackgroundRunService } from './background/background-run.service.js';
import { BACKGROUND_RUNNER } from '#core/loop/background-runner.interface.js';

/**
 * Stored state for the Responses API: `store`, `previous_response_id`,
 * conversations, compaction, and WebSocket mode, over whichever `StateStore`
 * the storage module provides (SQLite by default, PostgreSQL to share state
 * between replicas, memory for tests).
 *
 * Global because the loop, which lives in core and knows nothing of this
 * module, picks up `RESPONSE_STATE` by token.
 */
@Global()
@Module({
  imports: [StorageModule, ResponsesModule, ApiKeyAuthModule],
  controllers: [StoredResponsesController, ConversationsController],
  providers: [
    { provide: STATE_SETTINGS, inject: [GATEWAY_CONFIG], useFactory: (config: GatewayConfig) => readStateSettings(config) },
    CompactionService,
    StoredResponseState,
    { provide: RESPONSE_STATE, useExisting: StoredResponseState },
    ResponsesWebSocketServer,
    BackgroundRunService,
    { provide: BACKGROUND_RUNNER, useExisting: BackgroundRunService },
  ],
  exports: [RESPONSE_STATE, StoredResponseState, CompactionService, BACKGROUND_RUNNER, BackgroundRunService],
})
export class StateModule implements OnModuleInit {
  constructor(
    private readonly parser: CreateResponseParser,
    private readonly loop: LoopService,
    private readonly compaction: CompactionService,
  ) {}

  onModuleInit(): void {
    // Checked at parse time too, so that a bad item is a 400 naming its index before anything runs.
    this.parser.acceptItemType('compaction', (item, path) => this.compaction.toModelItems(item as PublicItem, path));
    this.loop.registerInputItemTranslator('compaction', (item) => this.compaction.toModelItems(item));
  }
}
