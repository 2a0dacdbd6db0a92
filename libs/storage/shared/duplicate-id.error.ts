import { ConflictError } from '#tool-sdk/errors.js';

/**
 * A write reused an id that must be unique: a response id, a conversation id,
 * or an item id within one conversation. A conflict: the request is valid in
 * itself and clashes only with what is already stored.
 */
export class DuplicateIdError extends ConflictError {
  constructor(
    readonly kind: 'response' | 'conversation' | 'conversation_item',
    readonly duplicateId: string | null,
    param: string | null = null,
  ) {
    const what = kind === 'conversation_item' ? 'An item' : kind === 'response' ? 'A response' : 'A conversation';
    const where = kind === 'conversation_item' ? ' in this conversation' : '';
    super(duplicateId === null ? `${what} with the same id already exists${where}.` : `${what} with id '${duplicateId}' already exists${where}.`, param, `duplicate_${kind}_id`);
  }
}
