import { createHash, createHmac, randomBytes } from 'node:crypto';
import { chmodSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Where the generated secret lives under `server.dataDir`. */
export const OWNER_SECRET_FILE = 'owner-id.secret';

/** Nest token for the deployment's `OwnerIds`. */
export const OWNER_IDS = Symbol('switchyard:owner-ids');

/**
 * The owner id an API key had before owner ids were keyed: its unsalted
 * SHA-256, which anyone holding a candidate key (or a list of them) can
 * check. Kept only to find and rewrite stored rows.
 */
export function legacyOwnerIdOf(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/**
 * The owner id of an API key: HMAC-SHA256 under the deployment's secret.
 * Stored rows, the console, the usage API and the logs carry it; without the
 * secret nothing about the key can be checked against it.
 */
export function ownerIdOf(secret: Buffer, key: string): string {
  return createHmac('sha256', secret).update(key, 'utf8').digest('hex');
}

/**
 * Reads the secret from `<dataDir>/owner-id.secret`, making it first when
 * absent: written to a private temporary file and linked into place, so that
 * two workers starting at once agree on one secret and none reads a half-written file.
 */
export function dataDirOwnerSecret(dataDir: string): Buffer {
  const file = join(dataDir, OWNER_SECRET_FILE);
  try {
    return Buffer.from(readFileSync(file, 'utf8').trim(), 'hex');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  mkdirSync(dataDir, { recursive: true });
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(temporary, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(temporary, 0o600);
  try {
    linkSync(temporary, file);
  } catch (err) {
    // Another process made it first: its secret is the deployment's.
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    rmSync(temporary, { force: true });
  }
  return Buffer.from(readFileSync(file, 'utf8').trim(), 'hex');
}

/**
 * The deployment's owner ids. The secret is `server.ownerIdSecret`
 * (`OWNER_ID_SECRET`) when set, else generated once into the data
 * directory; it is read on first use, so a gateway without API keys never
 * writes it. Workers of one gateway share the data directory, hence the
 * secret; replicas that do not must be given the same `OWNER_ID_SECRET`.
 */
export class OwnerIds {
  private secret?: Buffer;

  constructor(private readonly server: { ownerIdSecret?: string; dataDir: string }) {}

  /** Where the secret comes from, for the start-up line (never the secret). */
  get source(): string {
    return this.server.ownerIdSecret ? 'server.ownerIdSecret (OWNER_ID_SECRET)' : join(this.server.dataDir, OWNER_SECRET_FILE);
  }

  of(key: string): string {
    this.secret ??= this.server.ownerIdSecret ? Buffer.from(this.server.ownerIdSecret, 'utf8') : dataDirOwnerSecret(this.server.dataDir);
    return ownerIdOf(this.secret, key);
  }

  /** Each key's old id and its new one, for rewriting stored rows. */
  rekeying(keys: readonly string[]): Array<{ from: string; to: string }> {
    return keys.map((key) => ({ from: legacyOwnerIdOf(key), to: this.of(key) }));
  }
}
