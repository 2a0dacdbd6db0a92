import { defineConfigSection } from './config-section.js';
import { settingLikeVariables } from './setting-like-env.js';

class Demo {
  enabled = false;
}

const section = {
  ...defineConfigSection({ key: 'demo', type: Demo, token: Symbol('demo'), env: [{ env: 'DEMO_ENABLED', path: 'enabled', kind: 'bool' }] }),
  fromEnv: (env: Record<string, string | undefined>) => (env.DEMO_PROVIDER_URL ? { url: env.DEMO_PROVIDER_URL } : undefined),
};

describe('variables that look like settings', () => {
  it('names a misspelt setting with the one it meant, and an unknown one under our own prefixes', () => {
    expect(settingLikeVariables({ UPSTREM_URL: 'http://x', UPSTREAM_TIMEOUT: '5', DEMO_ENABLD: '1' }, [section])).toEqual([
      'DEMO_ENABLD is set but is not a setting (did you mean DEMO_ENABLED?); it is ignored',
      'UPSTREAM_TIMEOUT is set but is not a setting; it is ignored',
      'UPSTREM_URL is set but is not a setting (did you mean UPSTREAM_URL?); it is ignored',
    ]);
  });

  it("leaves real settings, the variables a section's fromEnv reads, and the environment's own variables alone", () => {
    const env = {
      UPSTREAM_URL: 'http://x',
      PORT: '1',
      DEMO_ENABLED: '1',
      DEMO_PROVIDER_URL: 'http://y',
      HOME: '/root',
      HOSTNAME: 'h',
      PATH: '/bin',
      USER: 'root',
      PWD: '/',
      LANG: 'C',
      NODE_ENV: 'test',
    };
    expect(settingLikeVariables(env, [section])).toEqual([]);
  });

  it.each([10, 100])('reads an environment of %s ordinary variables without a false alarm', (count) => {
    const env = Object.fromEntries(Array.from({ length: count }, (_, i) => [`APP_VARIABLE_${i}`, 'x']));
    expect(settingLikeVariables(env, [section])).toEqual([]);
  });
});
