/**
 * Where `file_ids` in a `code_interpreter` declaration are read from. The
 * gateway's Files API can provide this token; until then the default reads
 * files that already live in one of this gateway's containers (`cfile_...`
 * ids), so a file produced in one conversation can be handed to another on
 * purpose.
 */
export interface SourceFile {
  filename: string;
  data: Uint8Array;
}

/** Whose request reads the file: a source with owners answers only for the owner's own files. */
export interface FileReadContext {
  /** The request's owner (API key hash, OIDC subject), null without authentication. */
  owner: string | null;
}

export interface CodeInterpreterFileSource {
  /** The file's bytes, or undefined when there is no such file, or it is another owner's (a 404 naming the id). */
  read(fileId: string, ctx: FileReadContext): Promise<SourceFile | undefined>;
}

export const CODE_INTERPRETER_FILE_SOURCE = Symbol('CODE_INTERPRETER_FILE_SOURCE');
