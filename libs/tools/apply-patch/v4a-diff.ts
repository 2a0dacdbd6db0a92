/**
 * The syntax of a V4A diff as `apply_patch` operations carry it (the
 * format the Agents SDK's `applyDiff` and Codex apply), checked without the
 * file: what can be known before the client tries it. Whether the context
 * lines match the file is the client's to find out.
 *
 * - `create_file`: every line is `+text` (the file's content).
 * - `update_file`: hunks, each optionally opened by `@@` or `@@ <anchor line>`,
 *   of ` context`, `-removed` and `+added` lines (an empty line is empty
 *   context), optionally closed by `*** End of File`; at least one line is
 *   added or removed.
 *
 * Returns null for a diff that parses, else what is wrong, with its line number.
 */
export function v4aSyntaxError(kind: 'create_file' | 'update_file', diff: string): string | null {
  const lines = diff.split('\n');
  // One final newline ends the last line; it is not an empty line of its own.
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  if (kind === 'create_file') {
    const bad = lines.findIndex((line) => !line.startsWith('+'));
    return bad < 0 ? null : `Line ${bad + 1} of a create_file diff must start with "+" (the file's content): ${JSON.stringify(lines[bad])}.`;
  }
  let changes = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line === '@@' || line.startsWith('@@ ') || line === '*** End of File') continue;
    if (line.startsWith('***')) return `Line ${i + 1} is a patch header (${JSON.stringify(line)}): an update_file diff holds only hunks, the path is the operation's.`;
    const marker = line === '' ? ' ' : line[0];
    if (marker === '+' || marker === '-') changes++;
    else if (marker !== ' ') return `Line ${i + 1} must start with " " (context), "-" (removed), "+" (added) or "@@": ${JSON.stringify(line)}.`;
  }
  return changes > 0 ? null : 'The update_file diff adds and removes nothing: write "-" lines to remove and "+" lines to add.';
}
