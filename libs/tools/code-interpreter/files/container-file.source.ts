import { ContainerStore } from '../containers/container-store.service.js';
import type { CodeInterpreterFileSource, SourceFile } from './file-source.interface.js';

/** The default file source: files of this gateway's live containers, by `cfile_` id. */
export class ContainerFileSource implements CodeInterpreterFileSource {
  constructor(private readonly store: ContainerStore) {}

  async read(fileId: string): Promise<SourceFile | undefined> {
    const found = this.store.findFile(fileId);
    if (!found) return undefined;
    return { filename: found.file.path.split('/').pop() ?? 'file', data: new Uint8Array(await this.store.content(found.container, found.file)) };
  }
}
