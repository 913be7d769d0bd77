/**
 * Removes a key from text a provider sent back or an error carries, before it can be recorded
 * or shown: servers echo keys in error bodies ("invalid api key sk-…"), and a URL may carry one.
 * The key is replaced as written, URL-encoded and base64-encoded (Basic auth echoes).
 */
export const REDACTED = '[redacted]';

/** Keys shorter than this are not scrubbed: they would match ordinary words. */
const MIN_SECRET_LENGTH = 6;

const formsOf = (secret: string): string[] => [
  ...new Set([secret, encodeURIComponent(secret), Buffer.from(secret).toString('base64').replace(/=+$/, '')]),
];

export const scrubSecret = (text: string, secret: string | undefined): string => {
  if (!secret || secret.length < MIN_SECRET_LENGTH) return text;
  let scrubbed = text;
  for (const form of formsOf(secret)) scrubbed = scrubbed.split(form).join(REDACTED);
  return scrubbed;
};
