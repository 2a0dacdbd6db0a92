import { Module } from '@nestjs/common';
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
