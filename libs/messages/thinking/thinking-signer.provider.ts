import type { Provider } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '#config/gateway-config.js';
import { readStateSettings } from '#state/config/state-settings.js';
import { ThinkingSigner } from './thinking-signer.js';

/** The signing key is the compaction key: one secret the operator already shares across replicas. */
export const thinkingSignerProvider: Provider = {
  provide: ThinkingSigner,
  inject: [GATEWAY_CONFIG],
  useFactory: (config: GatewayConfig) => new ThinkingSigner(readStateSettings(config).compactionKey),
};
