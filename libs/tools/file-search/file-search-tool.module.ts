import { Inject, Logger, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import {
  BATCH_FILES,
  type BatchFiles,
  DriverMissingError,
  FILE_TEXT,
  type FileText,
  InvalidRequestError,
  NotFoundError,
  registerConfigSection,
  STORED_FILES,
  type StoredFiles,
  TOOL_STORAGE,
  type ToolStorage,
} from '#tool-sdk/index.js';
import { ExtractionError } from './ingestion/ingestion-contract.js';
import { ownerOf } from './storage/file-search-rows.js';
import { FilesController } from './api/files.controller.js';
import { FilesService } from './api/files.service.js';
import { VectorStoresController } from './api/vector-stores.controller.js';
import { VectorStoresService } from './api/vector-stores.service.js';
import { FILE_SEARCH_SETTINGS, type FileSearchSettings, fileSearchConfigSection } from './config/file-search-settings.js';
import { EmbeddingsClient } from './ingestion/embeddings.client.js';
import { FILE_SEARCH_EMBEDDINGS, IngestionWorker } from './ingestion/ingestion.worker.js';
import { FileSearchService } from './retrieval/file-search.service.js';
import { FileSearchStore } from './storage/file-search.store.js';
import { VectorStoresConsoleSection } from './console/vector-stores.console-section.js';
import { FileSearchExecutor } from './tool/file-search.executor.js';
import { FileSearchToolHandler } from './file-search.tool-handler.js';

/** The index's tables, where the operator's `storage` settings put the gateway's state. */
const indexLocation = (settings: FileSearchSettings) => ({ file: 'files.sqlite', path: settings.sqlitePath });

function openStore(settings: FileSearchSettings, storage: ToolStorage): FileSearchStore {
  return new FileSearchStore(storage.openSql(indexLocation(settings)));
}

/**
 * The `file_search` tool type with the Files and Vector Stores APIs it
 * searches. It uses only the tool SDK (`libs/tool-sdk`): the tool
 * decorators, `GATEWAY_CONFIG`, the domain errors and the `ToolStorage`
 * port, through which its own tables live on the database `storage` names
 * (same timeouts and error mapping as the state store).
 */
@Module({
  controllers: [FilesController, VectorStoresController],
  providers: [
    registerConfigSection(fileSearchConfigSection),
    { provide: FileSearchStore, inject: [FILE_SEARCH_SETTINGS, TOOL_STORAGE], useFactory: openStore },
    {
      provide: FILE_SEARCH_EMBEDDINGS,
      inject: [FILE_SEARCH_SETTINGS],
      useFactory: (s: FileSearchSettings) => (s.embeddings ? new EmbeddingsClient(s.embeddings) : null),
    },
    IngestionWorker,
    FileSearchService,
    VectorStoresConsoleSection,
    FilesService,
    {
      provide: STORED_FILES,
      inject: [FilesService],
      useFactory: (files: FilesService): StoredFiles => ({
        read: async (fileId, owner) => {
          try {
            const { filename, bytes } = await files.content(ownerOf(owner), fileId);
            return { filename, data: new Uint8Array(bytes) };
          } catch (e) {
            if (e instanceof NotFoundError) return undefined;
            throw e;
          }
        },
      }),
    },
    {
      provide: BATCH_FILES,
      inject: [FilesService],
      useFactory: (files: FilesService): BatchFiles => ({
        read: async (fileId, owner) => {
          try {
            const row = await files.require(ownerOf(owner), fileId);
            const { filename, bytes } = await files.content(ownerOf(owner), fileId);
            return { filename, purpose: row.purpose, data: new Uint8Array(bytes) };
          } catch (e) {
            if (e instanceof NotFoundError) return undefined;
            throw e;
          }
        },
        create: async (owner, file) => (await files.write(ownerOf(owner), { filename: file.filename, purpose: file.purpose, bytes: Buffer.from(file.data) })).id,
      }),
    },
    {
      provide: FILE_TEXT,
      inject: [IngestionWorker, FILE_SEARCH_SETTINGS],
      useFactory: (worker: IngestionWorker, settings: FileSearchSettings): FileText => ({
        extract: async (filename, data, owner) => {
          if (data.byteLength > settings.maxFileBytes) {
            throw new InvalidRequestError(`${filename} is larger than this gateway's ${settings.maxFileBytes} bytes per file (fileSearch.maxFileBytes).`, null, 'file_too_large');
          }
          try {
            return await worker.extractText(filename, Buffer.from(data.buffer, data.byteOffset, data.byteLength), ownerOf(owner));
          } catch (e) {
            if (e instanceof ExtractionError) throw new InvalidRequestError(e.message, null, e.code);
            throw e;
          }
        },
      }),
    },
    VectorStoresService,
    FileSearchToolHandler,
    FileSearchExecutor,
  ],
  exports: [FileSearchStore, FileSearchService, IngestionWorker, STORED_FILES, BATCH_FILES, FILE_TEXT],
})
export class FileSearchToolModule implements OnModuleInit, OnApplicationShutdown {
  constructor(
    private readonly store: FileSearchStore,
    @Inject(FILE_SEARCH_SETTINGS) private readonly settings: FileSearchSettings,
    @Inject(TOOL_STORAGE) private readonly storage: ToolStorage,
    private readonly handler: FileSearchToolHandler,
  ) {}

  async onModuleInit(): Promise<void> {
    try {
      await this.store.init();
    } catch (e) {
      // A package install without the driver: the rest of the gateway serves; file search says why it cannot.
      if (e instanceof DriverMissingError) {
        const where = this.storage.describeSql(indexLocation(this.settings));
        this.handler.unavailable = `needs the package ${e.pkg} (file search keeps its index in ${where}): npm install ${e.pkg}; until then its routes and calls answer 503 driver_missing`;
        return new Logger('FileSearch').warn(`file_search is off: ${e.message}`);
      }
      const where = this.storage.describeSql(indexLocation(this.settings));
      throw new Error(`Could not open the file-search store on ${where}: ${(e as Error).message}`, { cause: e });
    }
  }

  /** After the worker's own shutdown hook (providers stop before their module), so no job writes to a closed store. */
  async onApplicationShutdown(): Promise<void> {
    await this.store.close();
  }
}
