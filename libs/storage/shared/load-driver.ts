/**
 * The SQLite and PostgreSQL drivers are optional peer dependencies: they are
 * loaded only when their driver is chosen, so an embedding app that brings
 * its own store (or runs on memory) installs and compiles neither. A missing
 * one is one line naming the package and the setting.
 */
export async function loadDriver<T>(load: () => Promise<T>, driver: string, pkg: string): Promise<T> {
  try {
    return await load();
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' && String((e as Error).message).includes(`'${pkg}'`)) {
      throw new Error(`storage.driver '${driver}' needs the package ${pkg}, an optional peer dependency: npm install ${pkg}`, { cause: e });
    }
    throw e;
  }
}
