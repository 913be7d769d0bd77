/**
 * The web UI's access token: 32 random bytes, hex, kept in `<dataDir>/state/webui/token` (0600)
 * so a browser that has it stays signed in across restarts. Whoever holds it acts as the owner,
 * as whoever reaches the cli socket does; `homed` prints the URL that carries it at start.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../shared/writeFileAtomic.ts';

const TOKEN_FILE = 'token';
const TOKEN = /^[0-9a-f]{64}$/;

/** The token of this state dir, made at first use; a file that holds no token is replaced. */
export const webuiToken = async (stateDir: string): Promise<string> => {
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const path = join(stateDir, TOKEN_FILE);
  try {
    const stored = readFileSync(path, 'utf8').trim();
    if (TOKEN.test(stored)) return stored;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const token = randomBytes(32).toString('hex');
  await writeFileAtomic(path, `${token}\n`);
  chmodSync(path, 0o600);
  return token;
};

/** Whether `given` is the token, compared in constant time. */
export const tokenMatches = (token: string, given: string | undefined): boolean => {
  if (given === undefined) return false;
  // Compared as bytes: a string of the token's length in other characters has more of them (timingSafeEqual throws then).
  const bytes = Buffer.from(given);
  const expected = Buffer.from(token);
  return bytes.length === expected.length && timingSafeEqual(bytes, expected);
};
