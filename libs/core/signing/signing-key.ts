/**
 * The gateway's one signing secret (the state settings' key), or null when
 * the operator set none. Surfaces that sign what they hand to clients and
 * read back later (summaries of a transcript, thinking blocks) inject it by
 * this token, so none of them reads another library's settings. The
 * operator already shares it across replicas, so any replica can verify.
 */
export const SIGNING_KEY = Symbol('switchyard:signing-key');
