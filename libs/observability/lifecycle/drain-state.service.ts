import { Injectable } from '@nestjs/common';

/** Set once the host starts draining; readiness and keep-alive read it. */
@Injectable()
export class DrainState {
  draining = false;
}
