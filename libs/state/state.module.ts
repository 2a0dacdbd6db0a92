import { Global, Module } from '@nestjs/common';
import { RESPONSE_STATE } from '#core/loop/response-state.interface.js';
import { ResponsesModule } from '#responses/responses.module.js';
import { StorageModule } from '#storage/index.js';
import { ApiKeyAuthModule } from './auth/api-key-auth.module.js';
import { CompactionInputItem } from './compaction/compaction-input-item.js';
import { CompactionService } from './compaction/compaction.service.js';
import { registerConfigSection } from '#config/config-section.js';
import { ConversationsController } from './http/conversations.controller.js';
import { StoredResponsesController } from './http/stored-responses.controller.js';
import { StoredResponseState } from './persistence/stored-response.state.js';
import { ResponsesWebSocketServer } from './websocket/responses-websocket.server.js';
import { BackgroundRunService } from './background/background-run.service.js';
import { BACKGROUND_RUNNER } from '#core/loop/background-runner.interface.js';
import { REASONING_SEALER } from '#core/loop/reasoning-sealer.interface.js';
import { STATE_SETTINGS, type StateSettings, stateConfigSection } from './config/state-settings.js';
import { ReasoningTokenCodec } from './reasoning/reasoning-token.codec.js';

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
    registerConfigSection(stateConfigSection),
    CompactionService,
    CompactionInputItem,
    StoredResponseState,
    { provide: RESPONSE_STATE, useExisting: StoredResponseState },
    ResponsesWebSocketServer,
    BackgroundRunService,
    { provide: BACKGROUND_RUNNER, useExisting: BackgroundRunService },
    // Reasoning round-trips through store:false clients sealed with the compaction key.
    { provide: REASONING_SEALER, useFactory: (settings: StateSettings) => new ReasoningTokenCodec(settings.compactionKey), inject: [STATE_SETTINGS] },
  ],
  exports: [REASONING_SEALER, RESPONSE_STATE, StoredResponseState, CompactionService, BACKGROUND_RUNNER, BackgroundRunService],
})
export class StateModule {}
