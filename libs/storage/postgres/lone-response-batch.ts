import type { StoredResponse } from '../state-store.interface.js';
import { outputItemsOf, RESPONSE_COLUMNS_SQL, responseRowValues, withItemId } from '../shared/stored-item.util.js';
import { pgJson } from './pg-text.js';

/** Positions in a batch row of the JSON columns, whose values arrive already serialized. */
const JSON_COLUMNS = new Set([6, 7, 8, 9, 10]);

/**
 * Responses outside a conversation, with their input and output items, in one statement: the
 * batch is one `jsonb` array of rows `[id, owner, created_at, previous_response_id,
 * conversation_id, status, response, model_items, tools, tool_choice, extra, inputs, outputs]`.
 * The item inserts are sibling CTEs of the responses': their foreign keys are checked when the
 * statement ends, after the response rows exist. A statement is atomic on its own, so this needs
 * no BEGIN and COMMIT around it.
 */
export const SAVE_LONE_RESPONSES_SQL = `WITH batch AS (
    SELECT b.v FROM jsonb_array_elements($1::jsonb) AS b (v)
  ), saved AS (
    INSERT INTO responses (${RESPONSE_COLUMNS_SQL})
    SELECT v->>0, v->>1, (v->>2)::bigint, v->>3, v->>4, v->>5, v->6, v->7, v->8, v->9, NULLIF(v->10, 'null'::jsonb) FROM batch
  ), inputs AS (
    INSERT INTO response_input_items (response_id, position, item_id, item)
    SELECT batch.v->>0, e.ord - 1, e.value->>'id', e.value FROM batch, jsonb_array_elements(batch.v->11) WITH ORDINALITY AS e (value, ord)
  )
  INSERT INTO response_output_items (response_id, position, item_id, item)
  SELECT batch.v->>0, e.ord - 1, e.value->>'id', e.value FROM batch, jsonb_array_elements(batch.v->12) WITH ORDINALITY AS e (value, ord)
  WHERE e.value->>'id' IS NOT NULL`;

/**
 * One response as a batch row. The JSON columns go in as the text `pgJson` makes of them (NUL and
 * lone surrogates replaced, as on every other write); the plain columns are JSON-encoded as they
 * are, so text PostgreSQL cannot hold fails as it would as a parameter.
 */
export function loneResponseRow(r: StoredResponse): string {
  const values = responseRowValues(r, pgJson);
  const cells = values.map((value, i) => (JSON_COLUMNS.has(i) ? (value ?? 'null') : JSON.stringify(value ?? null)));
  cells.push(pgJson(r.inputItems.map(withItemId)), pgJson(outputItemsOf(r)));
  return `[${cells.join(',')}]`;
}

/** The statement's one parameter for these rows. */
export function loneResponseBatch(rows: readonly string[]): string {
  return `[${rows.join(',')}]`;
}
