import { type CanActivate, type ExecutionContext, ForbiddenException, Injectable } from '@nestjs/common';

/**
 * A host-wide guard (APP_GUARD): it runs for the gateway's routes too, as any
 * Nest guard does. Requests marked `x-example-deny` are refused; the
 * gateway's controllers answer that in the OpenAI envelope (a 403).
 */
@Injectable()
export class DenyListGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    if (context.getType() !== 'http') return true;
    const req = context.switchToHttp().getRequest<{ headers: Record<string, string | string[] | undefined> }>();
    if (req.headers['x-example-deny'] !== undefined) throw new ForbiddenException('This client is on the deny list.');
    return true;
  }
}
