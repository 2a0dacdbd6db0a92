import { toolType } from '#tool-sdk/index.js';
import type { CodeInterpreterParams } from './code-interpreter-declaration.js';

/** The `code_interpreter` type's key: its handler's functions carry `CodeInterpreterParams` to its executor. */
export const CODE_INTERPRETER = toolType<CodeInterpreterParams>('code_interpreter');
