import type { CatalogPage, CatalogQuery } from './catalog.js';

/**
 * Code-interpreter containers as every gateway process sees them: the
 * record (owner, name, expiry, file table) and its **home**, the process
 * that holds the container's files and live interpreter. Any process answers
 * metadata from here; operations that need the files or the interpreter go
 * to the home, found through its node row (its internal address and lease).
 */
export interface ContainerFileRecord {
  id: string;
  /** Relative to /mnt/data. */
  path: string;
  bytes: number;
  createdAt: number;
  /** `user`: copied in or uploaded; `assistant`: written by the code. */
  source: 'user' | 'assistant';
}

export interface ContainerRecord {
  id: string;
  name: string;
  /** The request's owner (API key hash, OIDC subject), null without authentication. */
  owner: string | null;
  createdAt: number;
  lastActiveAt: number;
  idleExpiryMs: number;
  memoryLimit: string | null;
  calls: number;
  /** The node id of the process holding its files and interpreter. */
  home: string;
  files: ContainerFileRecord[];
  /** `file_ids` already copied in, so that a later turn does not copy them again. */
  copiedFileIds: string[];
  /** Told to the model on the next run, then cleared (the session was reset, which files remain). */
  notice: string | null;
}

/** What the home changes after an operation; the home is the record's only writer. */
export type ContainerRecordPatch = Partial<Pick<ContainerRecord, 'lastActiveAt' | 'calls' | 'files' | 'copiedFileIds' | 'notice'>>;

/** A gateway process other processes can reach: its internal address, valid while its lease holds. */
export interface GatewayNodeRecord {
  id: string;
  url: string;
  leaseExpiresAt: number;
}

export interface ContainerRecordStore {
  init(): Promise<void>;
  close(): Promise<void>;

  insert(record: ContainerRecord): Promise<void>;
  /** Whoever owns it: callers compare owners (another owner's container answers 404 like a missing one). */
  get(id: string): Promise<ContainerRecord | null>;
  /** The owner's containers, oldest first. */
  list(owner: string | null): Promise<ContainerRecord[]>;
  /** Every container, whoever owns it, newest first (the console's listing; a store without it shows none). */
  catalog?(query: CatalogQuery): Promise<CatalogPage>;
  /** The owner's container holding this file id. */
  findByFile(fileId: string, owner: string | null): Promise<ContainerRecord | null>;
  /** Applies the patch while `home` still holds the container; false once another process took it over. */
  update(id: string, home: string, patch: ContainerRecordPatch): Promise<boolean>;
  /** Moves the container from `from` to `to` (one atomic compare-and-set), with a patch; false if `from` no longer holds it. */
  rehome(id: string, from: string, to: string, patch: ContainerRecordPatch): Promise<boolean>;
  remove(id: string): Promise<boolean>;
  /** Containers idle past their expiry at `now`. */
  expired(now: number): Promise<ContainerRecord[]>;

  /** Registers or renews this process's node row. */
  heartbeat(node: GatewayNodeRecord): Promise<void>;
  node(id: string): Promise<GatewayNodeRecord | null>;
  /** Removes the node row (a clean stop): its containers are taken over at once, not after the lease. */
  leave(id: string): Promise<void>;
}
