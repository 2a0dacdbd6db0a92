import { redactUrl, urlSecrets } from './url-redaction.js';

describe('redactUrl', () => {
  it('hides passwords, lone tokens and query values, keeping what names the server', () => {
    expect(redactUrl('http://user:pass@host:8000/v1')).toBe('http://user:***@host:8000/v1');
    expect(redactUrl('https://sk-secret@host/v1')).toBe('https://***@host/v1');
    expect(redactUrl('http://host/mcp?token=abc&x=1#frag')).toBe('http://host/mcp?token=***&x=***');
    expect(redactUrl('http://127.0.0.1:8000/v1')).toBe('http://127.0.0.1:8000/v1');
  });

  it('returns text that is not a URL unchanged', () => {
    expect(redactUrl('not a url')).toBe('not a url');
  });

  it('lists the secret parts for scrubbing free text, longest first', () => {
    expect(urlSecrets('http://u:hunter2@h/p?token=abcdef')).toEqual(expect.arrayContaining(['hunter2', 'abcdef', 'token=abcdef']));
    expect(urlSecrets('http://h/p')).toEqual([]);
  });
});
