/** How much of a tool's answer is kept: cut once its secret values are aliases, so no cut leaves part of one in clear. */

/** The most of a tool's answer that is recorded and reaches the model (twice what the files plugin reads at once). */
export const TOOL_RESULT_AT_MOST = 512 * 1024;

/** The most of a tool's error message that is kept: a message says what went wrong in a few lines. */
export const TOOL_ERROR_AT_MOST = 16 * 1024;

/** `text` cut at `atMost` characters, not between the two halves of a character written as a surrogate pair, and `note` said of the rest. */
const cutAt = (text: string, atMost: number, note: string): string => {
  if (text.length <= atMost) return text;
  const high = text.charCodeAt(atMost - 1);
  const cut = high >= 0xd800 && high <= 0xdbff ? atMost - 1 : atMost;
  return `${text.slice(0, cut)}${note}`;
};

/** A tool's answer, cut at TOOL_RESULT_AT_MOST, saying so: it is recorded, shown to the model and kept in memory. */
export const boundedResult = (content: string): string =>
  cutAt(content, TOOL_RESULT_AT_MOST, `\n… (cut: the tool answered ${content.length} characters; at most ${TOOL_RESULT_AT_MOST} are kept)`);

/** A tool's error message, cut at TOOL_ERROR_AT_MOST, saying so. */
export const boundedError = (message: string): string =>
  cutAt(message, TOOL_ERROR_AT_MOST, `… (cut: the tool's error held ${message.length} characters; at most ${TOOL_ERROR_AT_MOST} are kept)`);
