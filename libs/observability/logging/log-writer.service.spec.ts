import { parseObservabilitySettings } from '../config/observability.config-section.js';
import { LogWriter } from './log-writer.service.js';

function sink(isTTY: boolean) {
  const lines: string[] = [];
  return { lines, isTTY, write: (line: string) => lines.push(line) };
}

describe('LogWriter', () => {
  it('writes one JSON object per line when the output is not a terminal', () => {
    const out = sink(false);
    new LogWriter(parseObservabilitySettings(undefined), out).write('info', 'request', { status: 200, tool_calls: { mcp: { completed: 1 } } });
    expect(out.lines).toHaveLength(1);
    expect(out.lines[0].endsWith('\n')).toBe(true);
    expect(JSON.parse(out.lines[0])).toMatchObject({ level: 'info', msg: 'request', status: 200, tool_calls: { mcp: { completed: 1 } } });
  });

  it('writes key=value text on a terminal, without colour codes', () => {
    const out = sink(true);
    new LogWriter(parseObservabilitySettings(undefined), out).write('warn', 'request', { route: '/v1/responses', note: 'two words', n: 3 });
    expect(out.lines[0]).toMatch(/ WARN request route=\/v1\/responses note="two words" n=3\n$/);
    expect(out.lines[0]).not.toMatch(/\u001b\[/);
  });

  it('follows an explicit format whatever the output is', () => {
    const tty = sink(true);
    new LogWriter(parseObservabilitySettings({ logFormat: 'json' }), tty).write('info', 'x');
    expect(() => JSON.parse(tty.lines[0])).not.toThrow();
    const pipe = sink(false);
    new LogWriter(parseObservabilitySettings({ logFormat: 'text' }), pipe).write('info', 'x');
    expect(pipe.lines[0]).toMatch(/ INFO x\n$/);
  });

  it('writes only lines at least as severe as the log level', () => {
    const out = sink(false);
    const writer = new LogWriter(parseObservabilitySettings({ logLevel: 'warn' }), out);
    for (const level of ['debug', 'info', 'warn', 'error'] as const) writer.write(level, level);
    expect(out.lines.map((l) => JSON.parse(l).msg)).toEqual(['warn', 'error']);
    const verbose = sink(false);
    const debug = new LogWriter(parseObservabilitySettings({ logLevel: 'debug' }), verbose);
    debug.write('debug', 'mapped a route');
    expect(JSON.parse(verbose.lines[0])).toMatchObject({ level: 'debug', msg: 'mapped a route' });
    expect(new LogWriter(parseObservabilitySettings(undefined), sink(false)).enabled('debug')).toBe(false);
    expect(() => parseObservabilitySettings({ logLevel: 'trace' })).toThrow('observability.logLevel: must be one of "error", "warn", "info", "debug" (got "trace")');
  });
});
