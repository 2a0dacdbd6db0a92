// pdf.js, on import in Node, requires `@napi-rs/canvas` (Skia) to polyfill
// DOMMatrix, ImageData and Path2D for rendering pages. Text extraction never
// renders, and a native addon cannot be unloaded: once one ingestion thread
// had loaded it, about 20 MiB of Skia (and its runtime's threads) stayed in
// the gateway process for good, after the thread itself had ended. This
// module, imported by the ingestion thread before pdf-parse, answers that
// one `require` in this thread with inert classes instead (each worker
// thread has a CommonJS loader of its own, so the gateway's main thread and
// other threads are untouched).
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const Module = require('node:module');

const CANVAS = '@napi-rs/canvas';

class RenderingUnavailable extends Error {
  constructor(what) {
    super(`${what} is not available in the ingestion thread: it extracts text and never renders`);
  }
}

/** Only an identity matrix: pdf.js builds one when it loads (`SCALE_MATRIX`); drawing would use the rest. */
class DOMMatrix {
  constructor() {
    Object.assign(this, { a: 1, b: 0, c: 0, d: 1, e: 0, f: 0, is2D: true, isIdentity: true });
  }
}

class ImageData {
  constructor() {
    throw new RenderingUnavailable('ImageData');
  }
}

class Path2D {
  constructor() {
    throw new RenderingUnavailable('Path2D');
  }
}

const inertCanvas = Object.freeze({
  DOMMatrix,
  ImageData,
  Path2D,
  createCanvas() {
    throw new RenderingUnavailable('A canvas');
  },
});

const load = Module._load;
Module._load = function loadWithoutCanvas(request, ...rest) {
  return request === CANVAS ? inertCanvas : load.call(this, request, ...rest);
};
