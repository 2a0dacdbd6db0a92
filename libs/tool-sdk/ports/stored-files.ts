/**
 * Files a tool can read by id from the gateway's Files API (`file-...`),
 * provided by the module that serves that API. A tool that takes file ids
 * (code interpreter's `file_ids`) reads them through this token, so that
 * tool modules never import each other.
 */
export interface StoredFiles {
  /** The file's name and bytes, or undefined when there is no such file or it is another owner's. */
  read(fileId: string, owner: string | null): Promise<{ filename: string; data: Uint8Array } | undefined>;
}

export const STORED_FILES = Symbol('STORED_FILES');
