import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Global, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import pg from 'pg';
import { GATEWAY_CONFIG, GatewayConfig } from '#config/gateway-config.js';
import type { StorageConfig } from './config/storage.config-section.js';
import { MemoryStateStore } from './memory/memory-state-store.js';
import { PostgresStateStore } from './postgres/postgres-state-store.js';
import { SqliteStateStore } from './sqlite/sqlite-state-store.js';
import { STATE_STORE, type StateStore } from './state-store.interface.js';
import { StorageModule } from './storage.module.js';

const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const root = mkdtempSync(join(tmpdir(), 'sy-storage-module-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function configWith(storage: Partial<StorageConfig>): GatewayConfig {
  const config = new GatewayConfig();
  // The section as the loader leaves it: the raw settings, which StorageModule's section parses.
  config.storage = storage;
  return config;
}

async function boot(config: GatewayConfig) {
  @Global()
  @Module({ providers: [{ provide: GATEWAY_CONFIG, useValue: config }], exports: [GATEWAY_CONFIG] })
  class ConfigStubModule {}
  const moduleRef = await Test.createTestingModule({ imports: [ConfigStubModule, StorageModule] }).compile();
  await moduleRef.init();
  return moduleRef;
}

describe('StorageModule', () => {
  it('provides an initialised memory store and closes it at shutdown', async () => {
    const moduleRef = await boot(configWith({ driver: 'memory' }));
    const store = moduleRef.get<StateStore>(STATE_STORE);
    expect(store).toBeInstanceOf(MemoryStateStore);
    let closed = 0;
    const close = store.close.bind(store);
    store.close = () => {
      closed += 1;
      return close();
    };
    await moduleRef.close();
    expect(closed).toBe(1);
  });

  it('opens the SQLite file named by storage.sqlitePath, creating its folder', async () => {
    const path = join(root, 'deep', 'state.sqlite');
    const moduleRef = await boot(configWith({ driver: 'sqlite', sqlitePath: path }));
    const store = moduleRef.get<StateStore>(STATE_STORE);
    expect(store).toBeInstanceOf(SqliteStateStore);
    await store.createConversation({ id: 'conv_1', owner: null, createdAt: 1, metadata: {} }, []);
    expect(existsSync(path)).toBe(true);
    await moduleRef.close();
    await expect(store.getConversation('conv_1', null)).rejects.toThrow(/after close/);
  });

  it('connects to storage.postgresUrl', async () => {
    const schema = `sy_test_${randomBytes(4).toString('hex')}_module`;
    const admin = new pg.Pool({ connectionString: url, max: 1 });
    await admin.query(`CREATE SCHEMA ${schema}`);
    try {
      const moduleRef = await boot(configWith({ driver: 'postgres', postgresUrl: `${url}?options=-c%20search_path%3D${schema}` }));
      const store = moduleRef.get<StateStore>(STATE_STORE);
      expect(store).toBeInstanceOf(PostgresStateStore);
      expect(await store.getConversation('conv_none', null)).toBeNull();
      await moduleRef.close();
    } finally {
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    }
  });

  it('names the missing setting at boot', async () => {
    await expect(boot(configWith({ driver: 'postgres', postgresUrl: undefined }))).rejects.toThrow(/storage\.postgresUrl .*is required/);
    await expect(boot(configWith({ driver: 'sqlite', sqlitePath: '' }))).rejects.toThrow(/storage\.sqlitePath/);
    await expect(boot(configWith({ driver: 'mongo' as 'memory' }))).rejects.toThrow(/storage\.driver/);
  });

  it('names the setting, without its password, when the database cannot be reached', async () => {
    const failure = boot(configWith({ driver: 'postgres', postgresUrl: 'postgres://sy:hunter2@127.0.0.1:1/test' }));
    await expect(failure).rejects.toThrow(/storage\.postgresUrl=postgres:\/\/sy:\*\*\*@127\.0\.0\.1:1\/test/);
    await expect(failure).rejects.not.toThrow(/hunter2/);
  });
});
