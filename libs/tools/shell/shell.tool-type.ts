import { toolType } from '#tool-sdk/index.js';

/** The `shell` type's key (client-owned: no executor). */
export const SHELL = toolType('shell');
