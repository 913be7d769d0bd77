/**
 * How hard a secret's value is to guess, roughly: its length times the bits of the character
 * classes it uses. The scrub that keeps a value out of what the model sees is also a way to
 * test a guess: whoever can make the model repeat their words (a plugin's guest) sends
 * candidates and sees which comes back as `@{NAME}`. A key or a long password is out of reach
 * of that; a PIN is not.
 */

/** Below this estimate a value could be found by trying candidates through the scrub. */
export const GUESSABLE_BELOW_BITS = 40;

const CLASSES: readonly (readonly [RegExp, number])[] = [
  [/[0-9]/, 10],
  [/[a-z]/, 26],
  [/[A-Z]/, 26],
  [/[^0-9a-zA-Z]/, 33],
];

/** Bits a guesser must cover at most for `value`: its characters times log2 of the classes' sizes it draws from. */
export const guessBits = (value: string): number => {
  const alphabet = CLASSES.reduce((size, [test, count]) => size + (test.test(value) ? count : 0), 0);
  return [...value].length * Math.log2(Math.max(2, alphabet));
};

/** Whether `value` is easy enough to guess that the scrub could confirm a guess. */
export const isGuessable = (value: string): boolean => guessBits(value) < GUESSABLE_BELOW_BITS;

/** A warning for a value easy enough to guess that the scrub could confirm a guess, or undefined. */
export const guessableWarning = (name: string, value: string): string | undefined => {
  if (!isGuessable(value)) return undefined;
  const bits = guessBits(value);
  return (
    `warning: ${name} is easy to guess (about ${Math.floor(bits)} bits): whoever can make the model repeat their words ` +
    `(a plugin's guest) could send candidates and see which comes back as @{${name}}; a key or a password of 10 or more ` +
    'mixed characters is out of reach of that'
  );
};
