/**
 * The Porter (1980) stemmer against stems worked out by hand from the published rules; most
 * words are the paper's own examples (steps 1a–5b), run through the whole algorithm.
 */
import { describe, expect, it } from 'vitest';
import { measure, porterStem } from '../../../projections/memory/recall/lexical/porterStemmer.ts';

// word → stem after all five steps. Comments give the rule chain for the less obvious ones.
const TABLE: ReadonlyArray<readonly [string, string]> = [
  ['caresses', 'caress'], // 1a SSES → SS
  ['ponies', 'poni'], // 1a IES → I
  ['ties', 'ti'],
  ['caress', 'caress'], // 1a SS → SS
  ['cats', 'cat'], // 1a S →
  ['feed', 'feed'], // 1b (m>0) EED: m(f)=0, no change
  ['agreed', 'agre'], // 1b EED → EE; 5a (m=1, not *o) E →
  ['plastered', 'plaster'], // 1b (*v*) ED →
  ['bled', 'bled'], // 1b: no vowel in "bl"
  ['motoring', 'motor'], // 1b (*v*) ING →
  ['sing', 'sing'], // 1b: no vowel in "s"
  ['conflated', 'conflat'], // 1b → conflate (AT → ATE); 5a (m=2) E →
  ['troubled', 'troubl'], // 1b → trouble (BL → BLE); 5a
  ['sized', 'size'], // 1b → size (IZ → IZE); 5a keeps it: m(siz)=1 and *o
  ['hopping', 'hop'], // 1b *d, not L/S/Z → single letter
  ['tanned', 'tan'],
  ['falling', 'fall'], // *d but L: kept double
  ['hissing', 'hiss'],
  ['fizzed', 'fizz'],
  ['failing', 'fail'],
  ['filing', 'file'], // 1b (m=1 and *o) → E
  ['happy', 'happi'], // 1c (*v*) Y → I
  ['sky', 'sky'], // 1c: no vowel in "sk"
  ['relational', 'relat'], // 2 ATIONAL → ATE; 5a (m=2) E →
  ['conditional', 'condit'], // 2 TIONAL → TION; 4 (m>1, *T) ION →
  ['rational', 'ration'], // 2 ATIONAL matches but m(r)=0, step ends; 4 AL →
  ['valenci', 'valenc'], // 2 ENCI → ENCE; 4 ENCE: m(val)=1, kept; 5a (m=2) E →
  ['digitizer', 'digit'], // 2 IZER → IZE; 4 IZE →
  ['generalization', 'gener'], // 2 IZATION → IZE; 3 ALIZE → AL; 4 AL →
  ['generalizations', 'gener'],
  ['oscillators', 'oscil'], // 1a; 2 ATOR → ATE; 4 ATE →; 5b (m>1, *d, *L) → single L
  ['hopefulness', 'hope'], // 2 FULNESS → FUL; 3 FUL →; 5a keeps E: m(hop)=1 and *o
  ['electrical', 'electr'], // 3 ICAL → IC; 4 IC →
  ['adjustable', 'adjust'], // 4 ABLE →
  ['controlling', 'control'], // 1b: *d but L keeps "controll"; 5b → single L
  ['roll', 'roll'], // 5b needs m>1: m(roll)=1
  ['probate', 'probat'], // 5a (m>1) E →
  ['rate', 'rate'], // 5a: m(rat)=1 and *o
  ['cease', 'ceas'], // 5a: m(ceas)=1, "eas" is not cvc
  ['triplicate', 'triplic'], // 3 ICATE → IC
  ['formative', 'form'], // 3 ATIVE →
  ['formalize', 'formal'], // 3 ALIZE → AL; 4 AL: m(form)=1, kept
  ['goodness', 'good'], // 3 NESS →
  ['revival', 'reviv'], // 4 AL →
  ['allowance', 'allow'], // 4 ANCE →
  ['inference', 'infer'], // 4 ENCE →
  ['airliner', 'airlin'], // 4 ER →
  ['gyroscopic', 'gyroscop'], // 4 IC →
  ['defensible', 'defens'], // 4 IBLE →
  ['irritant', 'irrit'], // 4 ANT →
  ['replacement', 'replac'], // 4 EMENT → (longest match)
  ['adjustment', 'adjust'], // 4 MENT →
  ['dependent', 'depend'], // 4 ENT →
  ['adoption', 'adopt'], // 4 (*T) ION →
  ['homologous', 'homolog'], // 4 OUS →
  ['communism', 'commun'], // 4 ISM →
  ['activate', 'activ'], // 4 ATE →
  ['angulariti', 'angular'], // 4 ITI →
  ['effective', 'effect'], // 4 IVE →
  ['bowdlerize', 'bowdler'], // 4 IZE →
  ['runners', 'runner'], // 1a; 4 ER needs m>1 but m(runn)=1
  ['running', 'run'], // 1b ING; *d → single letter
  ['quickly', 'quickli'], // 1c Y → I; no step-2 rule ends in "kli"
];

describe('porterStem', () => {
  it.each(TABLE)('%s → %s', (word, stem) => {
    expect(porterStem(word)).toBe(stem);
  });

  it('holds at least 30 worked examples', () => {
    expect(TABLE.length).toBeGreaterThanOrEqual(30);
  });

  it('leaves words of one or two letters alone', () => {
    expect(['a', 'is', 'as', 'us'].map(porterStem)).toEqual(['a', 'is', 'as', 'us']);
  });

  it('measures [C](VC)^m[V] as in the paper', () => {
    // m=0: TR, EE, TREE, Y, BY; m=1: TROUBLE, OATS, TREES, IVY; m=2: TROUBLES, PRIVATE, OATEN, ORRERY
    expect(['tr', 'ee', 'tree', 'y', 'by'].map(measure)).toEqual([0, 0, 0, 0, 0]);
    expect(['trouble', 'oats', 'trees', 'ivy'].map(measure)).toEqual([1, 1, 1, 1]);
    expect(['troubles', 'private', 'oaten', 'orrery'].map(measure)).toEqual([2, 2, 2, 2]);
  });
});
