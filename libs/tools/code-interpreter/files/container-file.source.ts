import { ContainerStore } from '../containers/container-store.service.js';
import type { CodeInterpreterFileSource, FileReadContext, SourceFile } from './file-source.interface.js';

/** The default file source: files of the owner's live containers in this gateway, by `cfile_` id. */
export class ContainerFileSource implements CodeInterpreterFileSource {
  constructor(private readonly store: ContainerStore) {}

  async read(fileId: string, ctx: FileReadContext): Promise<SourceFile | undefined> {
    const found = await this.store.findFile(fileId, ctx.owner);
    if (!found) return undefined;
    return { filename: found.file.path.split('/').pop() ?? 'file', data: new Uint8Array(await this.store.content(found.container, found.file)) };
  }
}
