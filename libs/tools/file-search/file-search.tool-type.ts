import { toolType } from '#tool-sdk/index.js';
import type { FileSearchParams } from './file-search.tool-handler.js';

/** The `file_search` type's key: its handler's functions carry `FileSearchParams` to its executor. */
export const FILE_SEARCH = toolType<FileSearchParams>('file_search');
