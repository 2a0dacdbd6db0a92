import type { Migration } from '../shared/migration.interface.js';

/**
 * JSON lives in `jsonb`. Constraint names are spelled out because the store
 * maps unique violations to domain errors by constraint name.
 * Timestamps and positions are bigint: node-postgres returns them as strings,
 * and the store converts them back to numbers.
 */
export const POSTGRES_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'responses_and_conversations',
    sql: `
      CREATE TABLE responses (
        id text NOT NULL,
        owner text,
        created_at bigint NOT NULL,
        previous_response_id text,
        conversation_id text,
        status text NOT NULL,
        response jsonb NOT NULL,
        model_items jsonb NOT NULL,
        tools jsonb NOT NULL,
        tool_choice jsonb NOT NULL,
        extra jsonb,
        CONSTRAINT responses_pkey PRIMARY KEY (id)
      );
      CREATE TABLE response_input_items (
        response_id text NOT NULL,
        position bigint NOT NULL,
        item_id text NOT NULL,
        item jsonb NOT NULL,
        CONSTRAINT response_input_items_pkey PRIMARY KEY (response_id, position),
        CONSTRAINT response_input_items_response_fkey FOREIGN KEY (response_id) REFERENCES responses (id) ON DELETE CASCADE
      );
      CREATE INDEX response_input_items_item_id ON response_input_items (response_id, item_id);
      CREATE TABLE conversations (
        id text NOT NULL,
        owner text,
        created_at bigint NOT NULL,
        metadata jsonb NOT NULL,
        next_position bigint NOT NULL DEFAULT 0,
        CONSTRAINT conversations_pkey PRIMARY KEY (id)
      );
      CREATE TABLE conversation_items (
        conversation_id text NOT NULL,
        item_id text NOT NULL,
        position bigint NOT NULL,
        item jsonb NOT NULL,
        created_at bigint NOT NULL,
        CONSTRAINT conversation_items_pkey PRIMARY KEY (conversation_id, item_id),
        CONSTRAINT conversation_items_position_key UNIQUE (conversation_id, position),
        CONSTRAINT conversation_items_conversation_fkey FOREIGN KEY (conversation_id) REFERENCES conversations (id) ON DELETE CASCADE
      );
    `,
  },
  {
    version: 2,
    name: 'item_lookup_by_id',
    // item_reference resolves an id across every stored item: output items get
    // their own table (backfilled from the stored responses), and all three item
    // tables an index on the item id alone.
    sql: `
      CREATE TABLE response_output_items (
        response_id text NOT NULL,
        position bigint NOT NULL,
        item_id text NOT NULL,
        item jsonb NOT NULL,
        CONSTRAINT response_output_items_pkey PRIMARY KEY (response_id, position),
        CONSTRAINT response_output_items_response_fkey FOREIGN KEY (response_id) REFERENCES responses (id) ON DELETE CASCADE
      );
      INSERT INTO response_output_items (response_id, position, item_id, item)
        SELECT r.id, o.ord - 1, o.value->>'id', o.value
        FROM responses r, jsonb_array_elements(CASE WHEN jsonb_typeof(r.response->'output') = 'array' THEN r.response->'output' ELSE '[]'::jsonb END) WITH ORDINALITY AS o (value, ord)
        WHERE o.value->>'id' IS NOT NULL;
      CREATE INDEX response_output_items_by_item ON response_output_items (item_id);
      CREATE INDEX response_input_items_by_item ON response_input_items (item_id);
      CREATE INDEX conversation_items_by_item ON conversation_items (item_id);
    `,
  },
  {
    version: 3,
    name: 'catalog_order',
    // The console lists every owner's responses and conversations newest
    // first, a page at a time: without these each page sorted the whole table.
    sql: `
      CREATE INDEX responses_catalog ON responses (created_at, id);
      CREATE INDEX conversations_catalog ON conversations (created_at, id);
    `,
  },
  {
    version: 4,
    name: 'drop_redundant_input_item_index',
    // No query reads input items by (response_id, item_id): a response's items
    // are read by the primary key, an item by its id alone (\`_by_item\`). The
    // index only cost every saved response one more B-tree to write.
    sql: `DROP INDEX IF EXISTS response_input_items_item_id;`,
  },
];
