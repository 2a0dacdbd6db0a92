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

export interface CodeInterpreterFileSource {
  /** The file's bytes, or undefined when there is no such file (a 400 naming the id). */
  read(fileId: string): Promise<SourceFile | undefined>;
}

export const CODE_INTERPRETER_FILE_SOURCE = Symbol('CODE_INTERPRETER_FILE_SOURCE');
