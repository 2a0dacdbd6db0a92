import { toolType } from '#tool-sdk/index.js';
import type { WebSearchParams } from './web-search-declaration.js';

/** The `web_search` type's key: its handler's functions carry `WebSearchParams` to its executor. */
export const WEB_SEARCH = toolType<WebSearchParams>('web_search');
