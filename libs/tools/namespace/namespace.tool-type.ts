import { toolType } from '#tool-sdk/index.js';

/** The `namespace` type's key (client-owned: no executor). */
export const NAMESPACE = toolType('namespace');
