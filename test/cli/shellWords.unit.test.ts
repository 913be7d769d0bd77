/** Commands printed for pasting: a path quoted as the shell reads it back, `--data` only off the default data dir. */
import { describe, expect, it } from 'vitest';
import { defaultDataDir } from '../../cli/defaultDataDir.ts';
import { shellWord, withDataDir } from '../../cli/shellWords.ts';

describe('shellWord', () => {
  it('leaves a plain path bare and quotes one with spaces, quotes or shell characters', () => {
    expect(shellWord('/srv/hologram-data_1')).toBe('/srv/hologram-data_1');
    expect(shellWord('/srv/my data')).toBe("'/srv/my data'");
    expect(shellWord("/srv/Al's $HOME")).toBe("'/srv/Al'\\''s $HOME'");
  });
});

describe('withDataDir', () => {
  it('adds --data DIR, quoted, unless DIR is the default data dir', () => {
    expect(withDataDir('homed init', '/srv/my data')).toBe("homed init --data '/srv/my data'");
    expect(withDataDir('homed init', defaultDataDir())).toBe('homed init');
    expect(withDataDir('homed init', `${defaultDataDir()}/`)).toBe('homed init');
  });
});
