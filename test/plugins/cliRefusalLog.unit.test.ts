/** The cli socket's refusals reach the daemon's log once per burst, not once per connection. */
import { describe, expect, it } from 'vitest';
import { refusalLog } from '../../plugins/builtin/cli/refusalLog.ts';

const withLog = () => {
  const lines: string[] = [];
  return { lines, refusals: refusalLog({ log: (line) => lines.push(line) }) };
};

const emfile = () => Object.assign(new Error('accept EMFILE'), { code: 'EMFILE' });

describe('refusalLog', () => {
  it('says a burst of busy refusals once when it starts and once, with the count, when it is over', () => {
    const { lines, refusals } = withLog();
    for (let i = 0; i < 1_000; i++) refusals.refused();
    expect(lines).toEqual(['refusing cli clients: 256 are connected, the most served at once']);
    refusals.accepted();
    refusals.accepted();
    expect(lines.slice(1)).toEqual(['accepting cli clients again; 1000 were refused as busy']);
  });

  it('says why accepts fail once per cause, with what to do when out of descriptors', () => {
    const { lines, refusals } = withLog();
    for (let i = 0; i < 50; i++) refusals.failed(emfile());
    expect(lines).toEqual([
      'cannot accept cli connections (EMFILE: accept EMFILE); the daemon is out of file descriptors: raise its limit (ulimit -n) or close clients',
    ]);
    refusals.accepted();
    expect(lines.slice(1)).toEqual(['accepting cli connections again; 50 failed with EMFILE']);
  });
});
