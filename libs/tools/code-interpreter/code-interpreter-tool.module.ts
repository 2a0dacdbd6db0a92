import { type DynamicModule, Inject, Injectable, Module, type OnApplicationShutdown, type OnModuleInit, type Provider } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { type CatalogQuery, type ContainerRecordStore, registerConfigSection, TOOL_STORAGE, type ToolStorage } from '#tool-sdk/index.js';
import { InternalNode } from './homes/internal-node.js';
import { CodeInterpreterExecutor } from './code-interpreter.executor.js';
import { CodeInterpreterToolHandler } from './code-interpreter.tool-handler.js';
import { CODE_INTERPRETER_SETTINGS, type CodeInterpreterSettings, codeInterpreterConfigSection } from './config/code-interpreter-settings.js';
import { ContainerStore } from './containers/container-store.service.js';
import { ContainersConsoleSection } from './console/containers.console-section.js';
import { ContainersController } from './containers/containers.controller.js';
import { ContainerFileSource } from './files/container-file.source.js';
import { CODE_INTERPRETER_FILE_SOURCE } from './files/file-source.interface.js';
import { CpythonSandboxBackend } from './sandbox/cpython/cpython-sandbox.backend.js';
import { KernelSandboxBackend } from './sandbox/kernel/kernel-sandbox.backend.js';
import { resolveBackend } from './sandbox/kernel/kernel-availability.js';
import { PyodideSandboxBackend } from './sandbox/pyodide/pyodide-sandbox.backend.js';
import { SANDBOX_BACKEND, type SandboxBackend } from './sandbox/sandbox-backend.interface.js';

/** Starts the container store, and stops every sandbox process when the gateway stops. */
@Injectable()
class CodeInterpreterLifecycle implements OnModuleInit, OnApplicationShutdown {
  constructor(
    private readonly store: ContainerStore,
    @Inject(SANDBOX_BACKEND) private readonly backend: SandboxBackend,
  ) {}

  private started = false;

  async onModuleInit(): Promise<void> {
    this.store.onExpire((id) => this.backend.release(id));
    this.started = true;
    await this.store.start();
  }

  async onApplicationShutdown(): Promise<void> {
    // A gateway whose start failed before this module started (a broker refused, the store
    // unreachable) closes without it: there is no store to stop, and saying so would bury the real reason.
    if (this.started) await this.store.stop();
    await this.backend.close();
  }
}

/**
 * The record store, opened when the module starts rather than when its
 * provider is made: its driver is loaded then, after the state store's,
 * instead of beside it.
 */
function deferredRecordStore(open: () => Promise<ContainerRecordStore>): ContainerRecordStore {
  let store: ContainerRecordStore | undefined;
  const ready = (): ContainerRecordStore => {
    if (!store) throw new Error('container records used before the code-interpreter module started');
    return store;
  };
  return new Proxy({} as ContainerRecordStore, {
    get: (_target, key: keyof ContainerRecordStore) => {
      if (key === 'init')
        return async () => {
          store ??= await open();
          await store.init();
        };
      if (key === 'close') return async () => store?.close();
      // Optional: a store without a catalog shows the console no containers.
      if (key === 'catalog') return store?.catalog ? (query: CatalogQuery) => store!.catalog!(query) : undefined;
      return (...args: unknown[]) => (ready()[key] as (...a: unknown[]) => unknown)(...args);
    },
  });
}

export interface CodeInterpreterModuleOptions {
  /** Where `file_ids` are read from (the Files API); default: files of this gateway's containers. */
  fileSource?: Omit<Provider & { provide: unknown }, 'provide'>;
}

function providers(options: CodeInterpreterModuleOptions): Provider[] {
  return [
    registerConfigSection(codeInterpreterConfigSection),
    {
      provide: ContainerStore,
      inject: [CODE_INTERPRETER_SETTINGS, TOOL_STORAGE, SANDBOX_BACKEND],
      useFactory: (s: CodeInterpreterSettings, storage: ToolStorage, backend: SandboxBackend) => {
        const records = deferredRecordStore(() => storage.openContainerRecords());
        // With the memory driver this is the only process: nobody to reach, no listener.
        return new ContainerStore(s, records, new InternalNode(s.internal, records, storage.shared), backend);
      },
    },
    {
      provide: SANDBOX_BACKEND,
      inject: [CODE_INTERPRETER_SETTINGS],
      useFactory: (s: CodeInterpreterSettings): SandboxBackend => {
        const backend = resolveBackend(s);
        if (backend === 'kernel') return new KernelSandboxBackend(s);
        return backend === 'cpython' ? new CpythonSandboxBackend(s) : new PyodideSandboxBackend(s);
      },
    },
    options.fileSource
      ? ({ ...options.fileSource, provide: CODE_INTERPRETER_FILE_SOURCE } as Provider)
      : { provide: CODE_INTERPRETER_FILE_SOURCE, inject: [ContainerStore, ModuleRef], useFactory: (store: ContainerStore, ref: ModuleRef) => new ContainerFileSource(store, ref) },
    CodeInterpreterLifecycle,
    CodeInterpreterToolHandler,
    CodeInterpreterExecutor,
    ContainersConsoleSection,
  ];
}

/**
 * The `code_interpreter` tool type: Python in a sandbox (Pyodide by
 * default, or CPython under bubblewrap), per-conversation containers and a
 * subset of the Containers API. `config.codeInterpreter` is validated when
 * the module starts.
 */
@Module({ providers: providers({}), controllers: [ContainersController], exports: [ContainerStore, SANDBOX_BACKEND] })
export class CodeInterpreterToolModule {
  /**
   * The tool type with `file_ids` read from another store (the Files API):
   * use it instead of `CodeInterpreterToolModule`, never beside it.
   */
  static register(options: CodeInterpreterModuleOptions): DynamicModule {
    return { module: ConfiguredCodeInterpreterToolModule, providers: providers(options), controllers: [ContainersController], exports: [ContainerStore, SANDBOX_BACKEND] };
  }
}

@Module({})
class ConfiguredCodeInterpreterToolModule {}
