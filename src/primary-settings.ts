/**
 * The limits settings the primary's services take, read from the config by
 * whoever plans the primary (the short-lived config child). Apart from
 * `primary-services.ts`, which the primary itself loads: reading them loads
 * class-validator, which the primary must not.
 */
export { readLimitsSettings } from '#limits/limits.settings.js';
