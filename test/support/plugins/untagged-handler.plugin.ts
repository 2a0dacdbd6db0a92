import { Injectable, Module } from '@nestjs/common';
import { definePlugin } from 'switchyard-gateway';

/** A handler whose author forgot `@ToolHandlerProvider`: the gateway must refuse to boot, not skip the type. */
@Injectable()
export class ForgottenHandler {
  readonly type = 'forgotten';
  readonly gatewayOwned = false;
  validate(): object {
    return {};
  }
  normalize(): never[] {
    return [];
  }
}

@Module({ providers: [ForgottenHandler] })
export class ForgottenModule {}

export default definePlugin({ name: 'forgotten', toolModules: [ForgottenModule] });
