export { StateModule } from './state.module.js';
export { ApiKeyAuthModule } from './auth/api-key-auth.module.js';
export { ApiKeyAuthenticator } from './auth/api-key.authenticator.js';
export { STATE_SETTINGS, readStateSettings, StateConfigError, type StateSettings } from './config/state-settings.js';
export { CompactionService, summaryMessage, type CompactionItem } from './compaction/compaction.service.js';
export { CompactionTokenCodec, type CompactionPayload } from './compaction/compaction-token.codec.js';
export { StoredResponseState } from './persistence/stored-response.state.js';
export { SocketScopedResponseState } from './websocket/socket-scoped.response-state.js';
export { SocketResponseCache } from './websocket/socket-response-cache.js';
