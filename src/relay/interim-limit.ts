// Interim answers (1xx before the final one) are relayed up to one limit per response, whatever the protocols: an app that sends more is failing, and its client gets a 502, not the flood.

/** Interim answers relayed per response at most (nginx takes 1-2, curl any). */
export const MAX_INTERIM_HEADS = 32;

/** The 502's logged error for the one past the limit. */
export function tooManyInterimHeads(): Error {
  return new Error(`upstream sent more than ${MAX_INTERIM_HEADS} interim responses`);
}
