import { toolType } from '#tool-sdk/index.js';

/** The `custom` type's key (client-owned: no executor). */
export const CUSTOM = toolType('custom');
