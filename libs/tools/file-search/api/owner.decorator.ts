import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { requestOwner } from '#tool-sdk/index.js';
import { ownerOf } from '../storage/file-search-rows.js';

/**
 * The stored owner of the request a route serves: every Files and Vector
 * Stores route takes it, so no route can forget to scope what it touches.
 */
export const OwnerOf = createParamDecorator((_data: unknown, ctx: ExecutionContext) => ownerOf(requestOwner(ctx.switchToHttp().getRequest<Request>())));
