import type { ModuleRef } from '@nestjs/core';
import { STORED_FILES, type StoredFiles } from '#tool-sdk/index.js';
import { ContainerStore } from '../containers/container-store.service.js';
import type { CodeInterpreterFileSource, FileReadContext, SourceFile } from './file-source.interface.js';

/**
 * The default file source: container file ids (`cfile_...`) from the owner's
 * live containers, and any other id from the gateway's Files API
 * (`file-...`) when a module provides it (`STORED_FILES`, the file-search
 * module does), found in the whole application because tool modules do not
 * import each other.
 */
export class ContainerFileSource implements CodeInterpreterFileSource {
  constructor(
    private readonly store: ContainerStore,
    private readonly moduleRef?: ModuleRef,
  ) {}

  async read(fileId: string, ctx: FileReadContext): Promise<SourceFile | undefined> {
    if (fileId.startsWith('cfile_')) {
      const found = await this.store.findFile(fileId, ctx.owner);
      if (!found) return undefined;
      return { filename: found.file.path.split('/').pop() ?? 'file', data: new Uint8Array(await this.store.content(found.container, found.file)) };
    }
    return (await this.storedFiles()?.read(fileId, ctx.owner)) ?? undefined;
  }

  private storedFiles(): StoredFiles | undefined {
    try {
      return this.moduleRef?.get<StoredFiles>(STORED_FILES, { strict: false });
    } catch {
      return undefined;
    }
  }
}
