// Preloaded into a gateway process (NODE_OPTIONS=--import) to run it as a host where the optional
// peer better-sqlite3 is not installed: resolving the package fails as it does when it is absent.
// The drivers are loaded with `createRequire`, so CommonJS resolution is the one to refuse it.
import Module from 'node:module';

const resolve = Module._resolveFilename;
Module._resolveFilename = function resolveWithoutBetterSqlite3(request, ...rest) {
  if (request === 'better-sqlite3') {
    const error = new Error(`Cannot find module '${request}'`);
    error.code = 'MODULE_NOT_FOUND';
    throw error;
  }
  return resolve.call(this, request, ...rest);
};
