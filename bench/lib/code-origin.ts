/**
 * Where a script belongs, for grouping a profile's or a heap snapshot's
 * entries: a package (`rxjs`, `@nestjs/core`) for anything under
 * node_modules, `node internals` for Node's own modules, the path below
 * `dist/` for the gateway's files, and `empty` when there is no script
 * (native code).
 */
export function codeOrigin(url: string, empty = '(native)'): string {
  if (!url) return empty;
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  if (url.startsWith('node:')) return 'node internals';
  const dist = url.indexOf('/dist/');
  return dist >= 0 ? url.slice(dist + '/dist/'.length) : url;
}
