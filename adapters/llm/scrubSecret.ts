/**
 * Removes a key from text a provider sent back or an error carries, before it can be recorded
 * or shown: servers echo keys in error bodies ("invalid api key sk-…"), and a URL may carry one.
 * The key is looked for in every form the firewall's scrub knows (as written, escaped in JSON,
 * URL- and base64-encoded as a Basic auth echo has it, hex, HTML).
 */
import { writtenForms } from '../secrets/writtenForms.ts';

export const REDACTED = '[redacted]';

/** Keys shorter than this are not scrubbed: they would match ordinary words. */
const MIN_SECRET_LENGTH = 6;

export const scrubSecret = (text: string, secret: string | undefined): string => {
  if (!secret || secret.length < MIN_SECRET_LENGTH) return text;
  let scrubbed = text;
  // Longest first, so a form that contains another is replaced whole.
  for (const form of writtenForms(secret).sort((a, b) => b.length - a.length)) scrubbed = scrubbed.split(form).join(REDACTED);
  return scrubbed;
};
