import { InvalidRequestError } from '#tool-sdk/index.js';
import { MAX_FILE_IDS, validateCodeInterpreterDeclaration } from './code-interpreter-declaration.js';

function param(decl: Record<string, unknown>): string | null {
  try {
    validateCodeInterpreterDeclaration({ type: 'code_interpreter', ...decl } as never, 'tools[3]');
  } catch (err) {
    if (err instanceof InvalidRequestError) return err.param;
    throw err;
  }
  return null;
}

describe('validateCodeInterpreterDeclaration', () => {
  it('accepts "auto", {type: "auto", ...} and a container id', () => {
    expect(validateCodeInterpreterDeclaration({ type: 'code_interpreter', container: 'auto' }, 'tools[0]').container).toEqual({ kind: 'auto', fileIds: [], memoryLimit: null });
    expect(validateCodeInterpreterDeclaration({ type: 'code_interpreter', container: { type: 'auto', file_ids: ['f1', 'f2'], memory_limit: '4g' } }, 'tools[0]').container).toEqual(
      {
        kind: 'auto',
        fileIds: ['f1', 'f2'],
        memoryLimit: '4g',
      },
    );
    expect(validateCodeInterpreterDeclaration({ type: 'code_interpreter', container: 'cntr_abc' }, 'tools[0]').container).toEqual({ kind: 'id', id: 'cntr_abc' });
  });

  it('names the offending field', () => {
    expect(param({})).toBe('tools[3].container');
    expect(param({ container: '' })).toBe('tools[3].container');
    expect(param({ container: [] })).toBe('tools[3].container');
    expect(param({ container: { type: 'fixed' } })).toBe('tools[3].container.type');
    expect(param({ container: { type: 'auto', files: [] } })).toBe('tools[3].container.files');
    expect(param({ container: { type: 'auto', file_ids: {} } })).toBe('tools[3].container.file_ids');
    expect(param({ container: { type: 'auto', file_ids: ['ok', 7] } })).toBe('tools[3].container.file_ids[1]');
    expect(param({ container: { type: 'auto', memory_limit: 512 } })).toBe('tools[3].container.memory_limit');
    expect(param({ container: { type: 'auto', network_policy: { type: 'allowlist' } } })).toBe('tools[3].container.network_policy');
    expect(param({ container: { type: 'auto', network_policy: { type: 'disabled' } } })).toBeNull();
  });

  it('takes 10 and 100 file ids, and refuses more than the cap with a 400', () => {
    for (const n of [10, MAX_FILE_IDS]) {
      const ids = Array.from({ length: n }, (_, i) => `file_${i}`);
      expect(validateCodeInterpreterDeclaration({ type: 'code_interpreter', container: { type: 'auto', file_ids: ids } }, 't').container).toMatchObject({ fileIds: ids });
    }
    const tooMany = Array.from({ length: MAX_FILE_IDS * 10 }, (_, i) => `file_${i}`);
    expect(param({ container: { type: 'auto', file_ids: tooMany } })).toBe('tools[3].container.file_ids');
  });
});
