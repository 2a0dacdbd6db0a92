import type { PublicItem } from '../items.js';

/**
 * Turns the files a request's messages and tool outputs (an `output` list of
 * a `function_call_output` and its kin) carry into what a self-hosted model
 * reads: `input_file` parts (by `file_id` from the Files API, or inline
 * `file_data`) become their text, and `input_image` parts given by `file_id`
 * become data URLs. Provided under `MESSAGE_FILES` by the Responses surface;
 * the loop calls it on the turn's input before translating it for the model,
 * so stored items keep the parts as the client sent them.
 */
export interface MessageFiles {
  /** The input with file parts resolved (new item objects; the given ones are not changed). Bad parts are 400s naming the part. */
  resolve(input: readonly PublicItem[], caller: { owner: string | null; signal?: AbortSignal }): Promise<PublicItem[]>;
}

export const MESSAGE_FILES = Symbol('MESSAGE_FILES');

/**
 * Text of a document (PDF, DOCX, HTML, plain text), with the extractors and
 * caps file search indexes files with, off the event loop. Provided under
 * `FILE_TEXT` by the module that owns those extractors.
 */
export interface FileText {
  /** `owner`: whose share of the extraction threads the file waits for (the request's owner), so another owner's backlog does not delay it. */
  extract(filename: string, data: Uint8Array, owner?: string | null): Promise<string>;
}

export const FILE_TEXT = Symbol('FILE_TEXT');
