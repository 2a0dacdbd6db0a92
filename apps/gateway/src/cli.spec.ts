import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HELP, UsageError, checkConfig, packageVersion, parseArgs } from './cli.js';
import { tempDir } from '../../../test/support/temp-dir.js';

describe('switchyard command line', () => {
  it('parses the flags and the check-config command', () => {
    expect(parseArgs([])).toEqual({ kind: 'serve', configFile: undefined, port: undefined, plugins: [] });
    expect(parseArgs(['--config', 'a.yaml', '--port', '9090'])).toEqual({ kind: 'serve', configFile: 'a.yaml', port: 9090, plugins: [] });
    expect(parseArgs(['--plugin', 'switchyard-example-dice', '--plugin=./p.js'])).toMatchObject({ kind: 'serve', plugins: ['switchyard-example-dice', './p.js'] });
    expect(parseArgs(['--config=b.json', '--port=0'])).toEqual({ kind: 'serve', configFile: 'b.json', port: 0, plugins: [] });
    expect(parseArgs(['--help'])).toEqual({ kind: 'help' });
    expect(parseArgs(['--port', '1', '--version'])).toEqual({ kind: 'version' });
    expect(parseArgs(['check-config', 'c.yaml'])).toEqual({ kind: 'check-config', configFile: 'c.yaml', plugins: [] });
    expect(parseArgs(['check-config', '--config', 'd.yaml'])).toEqual({ kind: 'check-config', configFile: 'd.yaml', plugins: [] });
  });

  it('refuses what it does not know, saying what', () => {
    expect(() => parseArgs(['--bogus'])).toThrow(UsageError);
    expect(() => parseArgs(['--bogus'])).toThrow(/unknown argument "--bogus"/);
    expect(() => parseArgs(['--port', 'http'])).toThrow(/--port must be a port number/);
    expect(() => parseArgs(['--port', '70000'])).toThrow(/--port must be a port number/);
    expect(() => parseArgs(['--config'])).toThrow(/--config needs a value/);
    expect(() => parseArgs(['stray'])).toThrow(/unknown argument "stray"/);
  });

  it('has help naming every option and a version from package.json', () => {
    for (const word of ['--config', '--port', '--version', '--help', 'check-config']) expect(HELP).toContain(word);
    expect(packageVersion()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('check-config names each error, core settings and tool sections alike', () => {
    const dir = tempDir('sy-check-');
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'upstream: { baseUrl: nowhere }\ntools: { maxRounds: 0 }\n');
    const result = checkConfig({}, bad);
    expect(result.ok).toBe(false);
    expect(result.lines).toEqual([expect.stringMatching(/^error: upstream\.baseUrl \(UPSTREAM_URL\)/), expect.stringMatching(/^error: tools\.maxRounds \(MAX_ROUNDS\)/)]);

    const badTools = join(dir, 'bad-tools.yaml');
    writeFileSync(badTools, 'mcp: { servers: [ { label: "has space", transport: stdio } ] }\nwebSearch: { provider: nosuch }\n');
    const tools = checkConfig({}, badTools);
    expect(tools.ok).toBe(false);
    expect(tools.lines.some((l) => /mcp|servers/.test(l))).toBe(true);
    expect(tools.lines.some((l) => /nosuch|provider/.test(l))).toBe(true);
    expect(tools.lines.every((l) => l.startsWith('error: '))).toBe(true);

    const typos = join(dir, 'typos.yaml');
    writeFileSync(typos, 'upstrem: { baseUrl: "http://vllm:8000/v1" }\nmcp: { alowedHosts: [a.example] }\n');
    expect(checkConfig({}, typos).lines).toEqual([
      'error: unknown config key "upstrem" (did you mean "upstream"?)',
      'error: unknown config key "mcp.alowedHosts" (did you mean "mcp.allowedHosts"?)',
    ]);

    const good = join(dir, 'good.yaml');
    writeFileSync(good, 'upstream: { baseUrl: "http://vllm:8000/v1" }\n');
    expect(checkConfig({ PORT: '9000' }, good)).toEqual({ ok: true, lines: [`ok: ${good} and the environment give a valid configuration`] });
    // The environment is checked too.
    expect(checkConfig({ PORT: 'x' }, good).ok).toBe(false);
    // The new settings: accepted, checked, and said.
    expect(checkConfig({ HOST: '0.0.0.0' }, good).lines).toEqual([
      `ok: ${good} and the environment give a valid configuration`,
      expect.stringMatching(/^warning: code execution is off: .*ALLOW_UNAUTHENTICATED_CODE=true/),
    ]);
    expect(checkConfig({ HOST: '0.0.0.0', ALLOW_UNAUTHENTICATED_CODE: 'true' }, good).lines).toHaveLength(1);
    expect(checkConfig({ ALLOW_UNAUTHENTICATED_CODE: 'maybe' }, good).lines).toEqual([
      'error: server.allowUnauthenticatedCode (ALLOW_UNAUTHENTICATED_CODE): must be true or false (got "maybe")',
    ]);
    expect(checkConfig({ OWNER_ID_SECRET: 's'.repeat(32) }, good).lines).toContain('owner ids: keyed with OWNER_ID_SECRET (server.ownerIdSecret)');
    const short = checkConfig({ OWNER_ID_SECRET: 'short' }, good);
    expect(short.ok).toBe(false);
    expect(short.lines.join('\n')).toContain('server.ownerIdSecret (OWNER_ID_SECRET)');
    expect(short.lines.join('\n')).not.toContain('"short"');
  });
});
