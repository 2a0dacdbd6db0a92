import { toolType } from '#tool-sdk/index.js';

/** The `apply_patch` type's key (client-owned: no executor). */
export const APPLY_PATCH = toolType('apply_patch');
