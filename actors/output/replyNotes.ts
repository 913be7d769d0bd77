/** Notes a reply's end carries, shared with the clients that show them (so no daemon code comes with them). */

/** A reply cancelled because homed is stopping says so, not just that it was cancelled. */
export const SHUTDOWN_NOTE = '(cancelled: homed is stopping)';
