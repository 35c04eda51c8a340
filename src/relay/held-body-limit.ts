// How much of a request's body the relay holds for an app connection or stream still to come, whatever either side speaks.

/**
 * Up to 64 KiB is held and the client is still read, so a client that leaves the queue is seen
 * (a typical API body fits whole); past it the client is paused until the body can be sent.
 */
export const HELD_BODY_BYTES = 64 * 1024;
