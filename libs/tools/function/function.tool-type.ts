import { toolType } from '#tool-sdk/index.js';

/** The `function` type's key (client-owned: no executor). */
export const FUNCTION = toolType('function');
