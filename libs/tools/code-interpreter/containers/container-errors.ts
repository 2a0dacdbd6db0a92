import { GatewayError, InvalidRequestError, ForbiddenError } from '#tool-sdk/index.js';
import { ContainerFileNameError, UnsafeContainerFileError } from '../sandbox/container-fs.js';

/** The container would hold more than `maxContainerBytes`. */
export class ContainerFullError extends Error {}

/** An owner's limit (`limit` names the setting) is reached: a 403 `quota_exceeded` naming it. */
export class QuotaExceededError extends Error {
  constructor(
    readonly limit: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The client's error for a container file operation that failed on what the
 * client sent or on what is in the container (`param`: the field that named
 * the file), or undefined for anything else (a gateway fault).
 */
export function containerFileError(err: unknown, param: string | null): GatewayError | undefined {
  if (err instanceof ContainerFullError) return new InvalidRequestError(`The file does not fit: ${err.message}.`, param, 'container_full');
  if (err instanceof QuotaExceededError) return new ForbiddenError(err.message, param, 'quota_exceeded');
  if (err instanceof ContainerFileNameError) return new InvalidRequestError(`Invalid container file name: ${err.message}.`, param, 'invalid_file_name');
  if (err instanceof UnsafeContainerFileError) {
    return new InvalidRequestError(`The container file cannot be used: ${err.message}; only plain files inside the container are read or written.`, param, 'unsafe_container_file');
  }
  return undefined;
}
