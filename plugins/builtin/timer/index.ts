/** The `timer` built-in plugin. */
export { timerPlugin, timerManifest, TIMER_INTERRUPT_LEVEL, MAX_TIMERS } from './timerPlugin.ts';
export { parseTimerRequest, describeDuration, MAX_TIMER_MS } from './timerArgs.ts';
export { InvalidTimerArgument, TimerStoreCorrupt, TimerStoreUnwritable, TooManyTimers, UnknownTimer } from './errors.ts';
