/**
 * The UTF-8 bytes a parsed JSON value was read from and their digest
 * (`contentDigest`, core/protocol/json-source.ts), with the value they were
 * read into: the same bytes make the same value, so the tool preparation
 * keys its cache on the digest instead of serializing the declarations
 * again, and prepares a missed list from the bytes. `value` says which
 * value: a reader holding another one (a list replaced since) ignores it.
 */
export interface JsonSource {
  readonly value: object;
  readonly bytes: Uint8Array;
  readonly digest: string;
}

/**
 * What the gateway's JSON body reader learnt from a request body's bytes
 * before parsing them (json-shape.scanner.ts): the body passed the default
 * shape limits (depth, keys per object, `tools` entries), whether its bytes
 * could hold unstorable text at all, and where its top-level `tools` array
 * came from. Kept on the request beside `req.body` (`SCANNED_BODY`) by the
 * reader's last step, so later checks of the parsed body that the bytes
 * already answered are skipped: the text-integrity guard's walk, the create
 * parser's shape walk, the tool preparation's serialization and hash.
 */
export interface ScannedBody {
  /** The parsed body these facts are about: a request whose `req.body` was replaced since has none. */
  readonly body: object;
  /** No string in the body can hold NUL or an unpaired surrogate (`utf8BytesAreStorable`). */
  readonly storableText: boolean;
  /** The bytes of the body's top-level `tools` array, when it had one read as UTF-8. */
  readonly tools?: JsonSource;
}

/**
 * The request property the body reader sets: a plain named property, as
 * `req.body` is, so that whoever reads it can see where it comes from; the
 * prefix keeps it apart from a host's own.
 */
export const SCANNED_BODY = 'switchyardScannedBody';

/** A request as the body reader leaves it. */
export interface ScannedRequest {
  body?: unknown;
  [SCANNED_BODY]?: ScannedBody;
}

/** What the body reader learnt of the request's current body, or undefined (not read by it, or replaced since). */
export function scannedBodyOf(req: ScannedRequest): ScannedBody | undefined {
  const scanned = req[SCANNED_BODY];
  return scanned !== undefined && scanned.body === req.body ? scanned : undefined;
}
