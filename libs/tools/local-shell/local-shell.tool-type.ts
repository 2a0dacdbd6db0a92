import { toolType } from '#tool-sdk/index.js';

/** The `local_shell` type's key (client-owned: no executor). */
export const LOCAL_SHELL = toolType('local_shell');
