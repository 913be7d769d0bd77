/** Typed refusals of the timer plugin. */
import { HologramError } from '../../../events/index.ts';
import { InvalidToolArgument } from '../shared/invalidToolArgument.ts';

/** A timer_set / timer_cancel argument that cannot be used. */
export class InvalidTimerArgument extends InvalidToolArgument {
  readonly code = 'INVALID_TIMER_ARGUMENT';
}

/** timer_cancel named an id that is not set (never was, already fired, or cancelled). */
export class UnknownTimer extends HologramError {
  readonly code = 'UNKNOWN_TIMER';
  constructor(readonly id: string) {
    super(`no timer '${id}' is set (it may have fired or been cancelled already); timer_list shows the ones that are`);
  }
}

/** Too many timers are set at once. */
export class TooManyTimers extends HologramError {
  readonly code = 'TOO_MANY_TIMERS';
  constructor(
    readonly limit: number,
    /** The principal whose own limit it is, when it is not the owner's. */
    readonly principal?: string,
  ) {
    super(
      `${limit} timers are already set${principal === undefined ? '' : ` for ${principal}`}, the most allowed; ` +
        'cancel some with timer_cancel before setting more',
    );
  }
}

/** timers.json exists but does not hold what this plugin wrote. */
export class TimerStoreCorrupt extends HologramError {
  readonly code = 'TIMER_STORE_CORRUPT';
  constructor(
    readonly path: string,
    readonly problem: string,
  ) {
    super(`the timer store '${path}' ${problem}; fix the file by hand, or move it away to start with no timers`);
  }
}

/** A change to the timers could not be saved, so it was not made. */
export class TimerStoreUnwritable extends HologramError {
  readonly code = 'TIMER_STORE_UNWRITABLE';
  constructor(
    readonly path: string,
    readonly change: string,
    cause: unknown,
  ) {
    super(
      `could not save the timers to '${path}' (${cause instanceof Error ? cause.message : String(cause)}), so the timer was not ${change}; ` +
        `check the data dir is writable and try again`,
      { cause },
    );
  }
}
