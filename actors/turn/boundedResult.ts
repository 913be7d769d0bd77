/** How much of a tool's answer is kept: cut once its secret values are aliases, so no cut leaves part of one in clear. */

/** The most of a tool's answer that is recorded and reaches the model (twice what the files plugin reads at once). */
export const TOOL_RESULT_AT_MOST = 512 * 1024;

/** A tool's answer, cut at TOOL_RESULT_AT_MOST, saying so: it is recorded, shown to the model and kept in memory. */
export const boundedResult = (content: string): string => {
  if (content.length <= TOOL_RESULT_AT_MOST) return content;
  // Not between the two halves of a character written as a surrogate pair.
  const high = content.charCodeAt(TOOL_RESULT_AT_MOST - 1);
  const cut = high >= 0xd800 && high <= 0xdbff ? TOOL_RESULT_AT_MOST - 1 : TOOL_RESULT_AT_MOST;
  return `${content.slice(0, cut)}\n… (cut: the tool answered ${content.length} characters; at most ${TOOL_RESULT_AT_MOST} are kept)`;
};
