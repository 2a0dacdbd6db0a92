import { loadGatewayConfig } from './gateway-config.loader.js';
import { readStorageSettings } from './config-sections.js';

/** One setting moves every path the gateway writes; a path given explicitly stays where it was put. */
describe('server.dataDir (SWITCHYARD_DATA_DIR)', () => {
  const containersDir = (config: ReturnType<typeof loadGatewayConfig>) => (config.codeInterpreter as { dataDir: string }).dataDir;

  it('defaults to .switchyard under the working directory', () => {
    const config = loadGatewayConfig({ env: {} });
    expect(config.server.dataDir).toBe('.switchyard');
    expect(readStorageSettings(config).sqlitePath).toBe('.switchyard/state.sqlite');
    expect(containersDir(config)).toBe('.switchyard/containers');
  });

  it('moves the SQLite file and the code-interpreter containers together', () => {
    const config = loadGatewayConfig({ env: { SWITCHYARD_DATA_DIR: '/data' } });
    expect(readStorageSettings(config).sqlitePath).toBe('/data/state.sqlite');
    expect(containersDir(config)).toBe('/data/containers');
  });

  it('leaves explicit paths alone', () => {
    const config = loadGatewayConfig({ env: { SWITCHYARD_DATA_DIR: '/data', SQLITE_PATH: '/elsewhere/s.sqlite' }, overrides: { codeInterpreter: { dataDir: '/scratch/c' } } });
    expect(readStorageSettings(config).sqlitePath).toBe('/elsewhere/s.sqlite');
    expect(containersDir(config)).toBe('/scratch/c');
  });
});
