import type { Provider } from '@nestjs/common';
import { SIGNING_KEY } from '#core/signing/signing-key.js';
import { ThinkingSigner } from './thinking-signer.js';

/** Thinking blocks are signed with the gateway's signing key, so a block can come back through any replica. */
export const thinkingSignerProvider: Provider = {
  provide: ThinkingSigner,
  inject: [SIGNING_KEY],
  useFactory: (key: string | null) => new ThinkingSigner(key),
};
