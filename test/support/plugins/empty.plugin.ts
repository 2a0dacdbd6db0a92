/** A file that exports nothing a gateway can load. */
export const notAPlugin = 42;
