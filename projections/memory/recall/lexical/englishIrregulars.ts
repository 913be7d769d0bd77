/**
 * English inflections that suffix stripping cannot undo, mapped to their base form, so that a
 * question in the present ("what did she buy") finds a statement in the past ("I bought") and
 * "children" finds "child". Forms that are more often another word ("rose", "bore", "lives" as
 * in "she lives in Oslo") are left out.
 */

const VERBS: Readonly<Record<string, readonly string[]>> = {
  begin: ['began', 'begun'],
  bite: ['bit', 'bitten'],
  blow: ['blew', 'blown'],
  break: ['broke', 'broken'],
  bring: ['brought'],
  build: ['built'],
  buy: ['bought'],
  catch: ['caught'],
  choose: ['chose', 'chosen'],
  come: ['came'],
  dig: ['dug'],
  draw: ['drew', 'drawn'],
  drink: ['drank', 'drunk'],
  drive: ['drove', 'driven'],
  eat: ['ate', 'eaten'],
  fall: ['fell', 'fallen'],
  feed: ['fed'],
  feel: ['felt'],
  fight: ['fought'],
  find: ['found'],
  fly: ['flew', 'flown'],
  forget: ['forgot', 'forgotten'],
  forgive: ['forgave', 'forgiven'],
  freeze: ['froze', 'frozen'],
  get: ['got', 'gotten'],
  give: ['gave', 'given'],
  go: ['went', 'gone'],
  grow: ['grew', 'grown'],
  hang: ['hung'],
  hear: ['heard'],
  hide: ['hid', 'hidden'],
  hold: ['held'],
  keep: ['kept'],
  know: ['knew', 'known'],
  lead: ['led'],
  leave: ['left'],
  lend: ['lent'],
  lose: ['lost'],
  make: ['made'],
  mean: ['meant'],
  meet: ['met'],
  pay: ['paid'],
  ride: ['rode', 'ridden'],
  ring: ['rang', 'rung'],
  run: ['ran'],
  say: ['said'],
  see: ['saw', 'seen'],
  sell: ['sold'],
  send: ['sent'],
  shoot: ['shot'],
  sing: ['sang', 'sung'],
  sit: ['sat'],
  sleep: ['slept'],
  speak: ['spoke', 'spoken'],
  spend: ['spent'],
  stand: ['stood'],
  steal: ['stole', 'stolen'],
  stick: ['stuck'],
  swim: ['swam', 'swum'],
  take: ['took', 'taken'],
  teach: ['taught'],
  tell: ['told'],
  think: ['thought'],
  throw: ['threw', 'thrown'],
  understand: ['understood'],
  wake: ['woke', 'woken'],
  wear: ['wore', 'worn'],
  win: ['won'],
  write: ['wrote', 'written'],
};

const NOUNS: Readonly<Record<string, readonly string[]>> = {
  child: ['children'],
  person: ['people'],
  man: ['men'],
  woman: ['women'],
  foot: ['feet'],
  tooth: ['teeth'],
  mouse: ['mice'],
  goose: ['geese'],
  wife: ['wives'],
  knife: ['knives'],
};

const baseForms = (table: Readonly<Record<string, readonly string[]>>): ReadonlyMap<string, string> =>
  new Map(Object.entries(table).flatMap(([base, forms]) => forms.map((form) => [form, base] as const)));

/** Inflected form → base form, verbs and nouns (lower case). */
export const ENGLISH_IRREGULAR_BASE: ReadonlyMap<string, string> = new Map([...baseForms(VERBS), ...baseForms(NOUNS)]);

/** Irregular plural → singular (lower case). */
export const ENGLISH_IRREGULAR_PLURALS: ReadonlyMap<string, string> = baseForms(NOUNS);
