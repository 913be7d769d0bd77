/** The memory ceiling and instruction budget of a fengari VM (see luaMeter.ts for the mechanism). */
export { measureHeap, SIZES } from './heapSize.ts';
export { jsValueBytes } from './jsValueBytes.ts';
export { LuaMeter, type LimitExceeded, type LuaMeterLimits } from './luaMeter.ts';
export { BUFFER_FACTOR } from './meteredCall.ts';
export { meterStringLibrary } from './meteredString.ts';
export { meterTableLibrary } from './meteredTable.ts';
