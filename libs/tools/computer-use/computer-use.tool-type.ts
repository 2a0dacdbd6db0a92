import { toolType } from '#tool-sdk/index.js';

/** The `computer_use_preview` type's key (client-owned: no executor). */
export const COMPUTER_USE = toolType('computer_use_preview');

/** The GA `computer` type's key (client-owned: no executor). */
export const COMPUTER = toolType('computer');
