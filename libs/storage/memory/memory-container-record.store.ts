import type { CatalogPage, CatalogQuery } from '#tool-sdk/ports/catalog.js';
import { catalogOfEntries } from '../shared/list-window.util.js';
import type { ContainerRecord, ContainerRecordPatch, ContainerRecordStore, GatewayNodeRecord } from '#tool-sdk/ports/container-records.js';

const copy = (r: ContainerRecord): ContainerRecord => ({ ...r, files: r.files.map((f) => ({ ...f })), copiedFileIds: [...r.copiedFileIds] });

/**
 * The memory driver: one process, so every container's home is this
 * process. (Worker mode refuses the memory driver at start-up.)
 */
export class MemoryContainerRecordStore implements ContainerRecordStore {
  private readonly records = new Map<string, ContainerRecord>();
  private readonly nodes = new Map<string, GatewayNodeRecord>();

  async init(): Promise<void> {}
  async close(): Promise<void> {}

  async insert(record: ContainerRecord): Promise<void> {
    if (this.records.has(record.id)) throw new Error(`container ${record.id} exists`);
    this.records.set(record.id, copy(record));
  }

  async get(id: string): Promise<ContainerRecord | null> {
    const r = this.records.get(id);
    return r ? copy(r) : null;
  }

  async list(owner: string | null): Promise<ContainerRecord[]> {
    return [...this.records.values()]
      .filter((r) => r.owner === owner)
      .sort((a, b) => a.createdAt - b.createdAt)
      .map(copy);
  }

  async catalog(query: CatalogQuery): Promise<CatalogPage> {
    return catalogOfEntries(
      [...this.records.values()].map((r) => ({ id: r.id, owner: r.owner, createdAt: Math.floor(r.createdAt / 1000) })),
      query,
    );
  }

  async findByFile(fileId: string, owner: string | null): Promise<ContainerRecord | null> {
    for (const r of this.records.values()) if (r.owner === owner && r.files.some((f) => f.id === fileId)) return copy(r);
    return null;
  }

  async update(id: string, home: string, patch: ContainerRecordPatch): Promise<boolean> {
    const r = this.records.get(id);
    if (!r || r.home !== home) return false;
    Object.assign(r, copy({ ...r, ...patch }));
    return true;
  }

  async rehome(id: string, from: string, to: string, patch: ContainerRecordPatch): Promise<boolean> {
    const r = this.records.get(id);
    if (!r || r.home !== from) return false;
    Object.assign(r, copy({ ...r, ...patch, home: to }));
    return true;
  }

  async remove(id: string): Promise<boolean> {
    return this.records.delete(id);
  }

  async expired(now: number): Promise<ContainerRecord[]> {
    return [...this.records.values()].filter((r) => now - r.lastActiveAt > r.idleExpiryMs).map(copy);
  }

  async heartbeat(node: GatewayNodeRecord): Promise<void> {
    this.nodes.set(node.id, { ...node });
  }

  async node(id: string): Promise<GatewayNodeRecord | null> {
    const n = this.nodes.get(id);
    return n ? { ...n } : null;
  }

  async leave(id: string): Promise<void> {
    this.nodes.delete(id);
  }
}
