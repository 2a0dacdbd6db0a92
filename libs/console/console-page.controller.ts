import { Controller, Get, Param, Res } from '@nestjs/common';
import type { Response } from 'express';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NotFoundError } from '#tool-sdk/errors.js';

/** The console's files, by the name the page asks for: a fixed table, never a path from the request. */
const ASSETS: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'console.js': 'text/javascript; charset=utf-8',
  'console.css': 'text/css; charset=utf-8',
};

/**
 * The page may load only its own script and style and talk only to its own
 * origin; inline script (an `onerror=` that slipped into the markup) does
 * not run, as a second line behind the page escaping every stored value.
 */
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** Beside this file in the sources (libs/console/static), or the package's copy of them when running from dist/. */
function staticDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (let dir = here; dirname(dir) !== dir; dir = dirname(dir)) {
    const candidate = dir === here ? join(here, 'static') : join(dir, 'libs/console/static');
    if (existsSync(join(candidate, 'index.html'))) return candidate;
  }
  throw new Error(`The console's files (libs/console/static) are missing beside ${here}.`);
}

/**
 * `GET /console`: the page itself, three small files read once at start-up.
 * The page needs no key to load; it asks for the administrator key and every
 * call it makes to `/console/api` carries it.
 */
@Controller('console')
export class ConsolePageController {
  private readonly files: Map<string, Buffer>;

  constructor() {
    const dir = staticDir();
    this.files = new Map(Object.keys(ASSETS).map((name) => [name, readFileSync(join(dir, name))]));
  }

  @Get()
  page(@Res() res: Response): void {
    this.send(res, 'index.html');
  }

  @Get('assets/:name')
  asset(@Param('name') name: string, @Res() res: Response): void {
    if (!Object.hasOwn(ASSETS, name)) throw new NotFoundError(`The console has no file '${name}'.`, 'not_found', 'name');
    this.send(res, name);
  }

  private send(res: Response, name: string): void {
    res.setHeader('content-type', ASSETS[name]);
    res.setHeader('content-security-policy', CSP);
    res.setHeader('x-content-type-options', 'nosniff');
    res.setHeader('referrer-policy', 'no-referrer');
    res.setHeader('cache-control', 'no-cache');
    res.status(200).end(this.files.get(name));
  }
}
