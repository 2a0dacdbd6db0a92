/** The tool contract, one file per capability; see libs/tool-sdk/README.md. */
export type * from './declaration.js';
export type * from './discovery.js';
export type * from './history.js';
export type * from './tool-choice.js';
export type * from './approvals.js';
export type * from './execution.js';
export type * from './events.js';
export type * from './handler.js';
export type * from './client-calls.js';
export type * from './entry.js';
export type * from './input-items.js';
export type { JsonSchema } from '../items.js';
