/** How built-in tools answer: a typed refusal (a HologramError) becomes an isError result the model reads; a programming error propagates. */
import { HologramError } from '../../../events/index.ts';
import type { ToolReply } from '../../sdk/pluginApi.ts';

export const replyOrRefuse = async (run: () => Promise<string> | string): Promise<ToolReply> => {
  try {
    return await run();
  } catch (error) {
    if (error instanceof HologramError) return { content: error.message, isError: true };
    throw error;
  }
};
