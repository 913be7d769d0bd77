/**
 * A data dir from a clock that ran ahead, as a user meets it: homed ran a year in the future
 * (a wrong clock, or a data dir copied from a machine whose clock was wrong) and recorded its
 * memory loops' firings then; started again with the clock set right, the loops run again one
 * interval after the start, instead of waiting a year for the clock to catch up, and what is
 * said once the clock is right is distilled even when homed stops before the loop fires.
 */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { testDataDir, useDaemons } from '../support/homedSession.ts';
import { startLlmServer } from '../support/llmServer/index.ts';
import { finished, HOMED, runHomed, spawnNode, WAITER, waitForLine } from '../support/processes.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const daemons = useDaemons();

/** Debian's libfaketime (`apt install faketime`, which .ci/run does): the process sees a clock a year ahead. */
const LIBFAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
const A_YEAR_AHEAD = { LD_PRELOAD: LIBFAKETIME, FAKETIME: '+365d' };
const DAY_MS = 24 * 3_600_000;

type Firing = Readonly<{ seq: number; data: { loop: string; at: number } }>;

/** The next rules-loop firing recorded after `afterSeq`, as `homed log --follow` prints it. */
const nextRulesFiring = async (dir: string, afterSeq: number): Promise<Firing> => {
  const follow = spawnNode([HOMED, 'log', '--data', dir, '--type', 'HeartbeatFired', '--from', String(afterSeq + 1), '--follow']);
  try {
    const seen = await waitForLine(follow, /"loop":"rules"/, 20_000);
    const line = seen.split('\n').find((l) => l.includes('"loop":"rules"'))!;
    return JSON.parse(line) as Firing;
  } finally {
    follow.kill('SIGINT');
  }
};

describe('a clock set back', () => {
  it.skipIf(!existsSync(LIBFAKETIME))(
    'runs the memory loops again when their last firing lies a year ahead, and skips nothing said after the clock was set right',
    async () => {
      const server = await startLlmServer([{ text: 'Noted.' }]);
      daemons.onCleanup(() => server.close());
      // The rules loop every 6 s, so its firings come within the test.
      const dir = testDataDir(tempDir(), { llm: server, settings: { memory: { heartbeats: { rulesMinutes: 0.1 } } } });

      let daemon = await daemons.start(dir, { env: A_YEAR_AHEAD });
      const ahead = await nextRulesFiring(dir, 0);
      expect(ahead.data.at).toBeGreaterThan(Date.now() + 300 * DAY_MS);
      await daemons.stop(daemon);

      // Set right: a fact is said, and homed stopped before the rules loop fires again.
      daemon = await daemons.start(dir);
      expect((await finished(spawnNode([WAITER, '--data', dir, 'I live in Berlin']))).stdout).toBe('Noted.\n');
      await daemons.stop(daemon);

      // The next start resumes from where the loop started over, not from a year ahead nor from this start.
      daemon = await daemons.start(dir);
      const again = await nextRulesFiring(dir, ahead.seq);
      expect(again.data.at).toBeLessThan(Date.now() + 60_000);
      await daemons.stop(daemon);
      const committed = await runHomed(['log', '--data', dir, '--type', 'MemoryCommitted']);
      expect(committed.stdout).toMatch(/"object":"Berlin"/);

      const verify = await runHomed(['replay', '--data', dir, '--verify']);
      expect(verify.stdout).toMatch(/memory: 1 of 1 journals match/);
      expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    },
  );
});
