/**
 * The Files API as a batch job needs it: an input file with its purpose (a
 * batch reads only `purpose: "batch"` files), and the output and error files
 * it writes back (`purpose: "batch_output"`). Provided by the module that
 * serves the Files API, so that the batch surface never imports a tool library.
 */
export interface BatchFiles {
  /** The file's name, purpose and bytes; undefined when there is no such file or it is another owner's. */
  read(fileId: string, owner: string | null): Promise<{ filename: string; purpose: string; data: Uint8Array } | undefined>;
  /** Stores a file the gateway wrote for `owner`; resolves with its id (`file-...`). */
  create(owner: string | null, file: { filename: string; purpose: string; data: Uint8Array }): Promise<string>;
}

export const BATCH_FILES = Symbol('BATCH_FILES');
