import type { Migration } from '../shared/migration.interface.js';

/**
 * JSON lives in TEXT columns. Tables whose key is composite are WITHOUT ROWID
 * so that rows sit in key order and a conversation's items are read
 * sequentially.
 */
export const SQLITE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'responses_and_conversations',
    sql: `
      CREATE TABLE responses (
        id TEXT NOT NULL PRIMARY KEY,
        owner TEXT,
        created_at INTEGER NOT NULL,
        previous_response_id TEXT,
        conversation_id TEXT,
        status TEXT NOT NULL,
        response TEXT NOT NULL,
        model_items TEXT NOT NULL,
        tools TEXT NOT NULL,
        tool_choice TEXT NOT NULL,
        extra TEXT
      );
      CREATE TABLE response_input_items (
        response_id TEXT NOT NULL REFERENCES responses (id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        item_id TEXT NOT NULL,
        item TEXT NOT NULL,
        PRIMARY KEY (response_id, position)
      ) WITHOUT ROWID;
      CREATE INDEX response_input_items_item_id ON response_input_items (response_id, item_id);
      CREATE TABLE conversations (
        id TEXT NOT NULL PRIMARY KEY,
        owner TEXT,
        created_at INTEGER NOT NULL,
        metadata TEXT NOT NULL,
        next_position INTEGER NOT NULL DEFAULT 0
      );
      CREATE TABLE conversation_items (
        conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
        item_id TEXT NOT NULL,
        position INTEGER NOT NULL,
        item TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (conversation_id, item_id)
      ) WITHOUT ROWID;
      CREATE UNIQUE INDEX conversation_items_position ON conversation_items (conversation_id, position);
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
        response_id TEXT NOT NULL REFERENCES responses (id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        item_id TEXT NOT NULL,
        item TEXT NOT NULL,
        PRIMARY KEY (response_id, position)
      ) WITHOUT ROWID;
      INSERT INTO response_output_items (response_id, position, item_id, item)
        SELECT r.id, CAST(o.key AS INTEGER), json_extract(o.value, '$.id'), o.value
        FROM responses r, json_each(r.response, '$.output') o
        WHERE json_extract(o.value, '$.id') IS NOT NULL;
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
