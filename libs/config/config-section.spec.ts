import { Module } from '@nestjs/common';
import { Type } from 'class-transformer';
import { IsInt, IsObject, IsOptional, IsString, Min, ValidateNested } from 'class-validator';
import { configSectionsOf, defineConfigSection, registerConfigSection } from './config-section.js';

class Empty {}

const section = (key: string) => defineConfigSection({ key, token: Symbol(key), type: Empty });

describe('configSectionsOf', () => {
  it('finds sections in the modules given, their imports, and dynamic modules', () => {
    const a = section('alpha');
    const b = section('beta');
    const c = section('gamma');
    @Module({ providers: [registerConfigSection(b)] })
    class Inner {}
    @Module({ imports: [Inner], providers: [registerConfigSection(a)] })
    class Outer {}
    @Module({})
    class Dynamic {}
    const found = configSectionsOf([Outer, { module: Dynamic, providers: [registerConfigSection(c)] }]);
    expect(found.map((s) => s.key).sort()).toEqual(['alpha', 'beta', 'gamma']);
  });

  it('counts a module imported twice once, and refuses two sections under one key', () => {
    const a = section('alpha');
    @Module({ providers: [registerConfigSection(a)] })
    class Shared {}
    @Module({ imports: [Shared] })
    class Left {}
    expect(configSectionsOf([Left, Shared])).toEqual([a]);
    @Module({ providers: [registerConfigSection(section('alpha'))] })
    class Rival {}
    expect(() => configSectionsOf([Shared, Rival])).toThrow('Two modules register the config section "alpha".');
  });
});

class Retry {
  @IsInt() @Min(0) attempts = 3;
}

class Tickets {
  @IsOptional() @IsString() baseUrl?: string;
  @IsInt() @Min(1) timeoutMs = 5_000;
  @IsInt() @Min(1) deadlineMs = 30_000;
  @IsObject() @ValidateNested() @Type(() => Retry) retry = new Retry();
}

const tickets = defineConfigSection({
  key: 'tickets',
  type: Tickets,
  token: Symbol('tickets'),
  check: (t) => (t.timeoutMs > t.deadlineMs ? [`tickets.timeoutMs: must not exceed deadlineMs (${t.deadlineMs})`] : []),
  settings: (t) => ({ ...t, seconds: t.timeoutMs / 1000 }),
});

const problemsOf = (parse: () => unknown): string => {
  try {
    parse();
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('expected the section to be refused');
};

describe('defineConfigSection', () => {
  it("reads keys and defaults from the class, a nested class's keys from the default it holds", () => {
    expect(tickets.keys).toEqual({ baseUrl: true, timeoutMs: true, deadlineMs: true, retry: { attempts: true } });
    expect(tickets.parse(undefined)).toMatchObject({ timeoutMs: 5_000, deadlineMs: 30_000, retry: { attempts: 3 }, seconds: 5 });
  });

  it('names every problem in one pass: unknown keys, wrong values with what they got, and the rules across settings', () => {
    const message = problemsOf(() => tickets.parse({ timeoutMs: 60_000, retry: { attempts: -1, atempts: 2 }, baseUrll: 'x' }));
    expect(
      message
        .split('\n')
        .slice(1)
        .map((l) => l.trim()),
    ).toEqual([
      'unknown config key "tickets.retry.atempts" (did you mean "tickets.retry.attempts"?)',
      'unknown config key "tickets.baseUrll" (did you mean "tickets.baseUrl"?)',
      'tickets.retry.attempts: must be an integer of at least 0 (got -1)',
      'tickets.timeoutMs: must not exceed deadlineMs (30000)',
    ]);
    expect(problemsOf(() => tickets.parse(7))).toBe('Invalid configuration: tickets must be an object of settings (got 7)');
  });

  it('reads a map of named entries, each under its own name', () => {
    class Model {
      @IsString() upstreamModel!: string;
    }
    const models = defineConfigSection({ key: 'models', entryType: Model, token: Symbol('models'), settings: (entries) => Object.keys(entries) });
    expect(models.keys).toEqual({ '*': { upstreamModel: true } });
    expect(models.parse({ a: { upstreamModel: 'x' }, b: { upstreamModel: 'y' } })).toEqual(['a', 'b']);
    expect(problemsOf(() => models.parse({ a: { upstreamModel: 1 }, b: 'y' }))).toBe(
      'Invalid configuration:\n  models.a.upstreamModel: must be a string (got 1)\n  models.b must be an object of settings (got "y")',
    );
  });

  it('never quotes a value of a section whose values are secrets, and reads null as the default where asked', () => {
    class Headers {
      @IsString() authorization = '';
      @IsInt() retries = 1;
    }
    const secret = defineConfigSection({ key: 'upstreamHeaders', type: Headers, token: Symbol('h'), secretValues: true, nullMeansDefault: true });
    expect(problemsOf(() => secret.parse({ authorization: 1234567, retries: 'sk-live' }))).not.toMatch(/1234567|sk-live/);
    expect(secret.parse({ retries: null })).toEqual({ authorization: '', retries: 1 });
  });
});
