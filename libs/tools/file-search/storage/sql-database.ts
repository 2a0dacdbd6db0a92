// The SQL layer file search stores its tables through is the storage library's
// (same drivers, timeouts and error mapping as the state store), reached through
// the public tool contract.
export { DriverMissingError, PostgresDatabase, SqliteDatabase, type Row, type SqlDatabase, type SqlValue } from '#src/tool-contract.js';
