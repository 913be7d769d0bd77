/**
 * A data dir with a long log, made fast: a short real session of homed (a few answered turns),
 * then FILLER_EVENTS events appended straight to its log while no daemon runs. No actor reads
 * them, but every time travel to the end (and every verify) rebuilds the read models through
 * all of them, a batch at a time.
 */
import { existingLogPath, openEventLog } from '../../cli/dataDir.ts';
import { askSocket, testDataDir, type useDaemons } from './homedSession.ts';
import { startLlmServer } from './llmServer/index.ts';

export const FILLER_EVENTS = 100_000;

const APPEND_AT_ONCE = 10_000;

export const longLogDataDir = async (daemons: ReturnType<typeof useDaemons>, root: string): Promise<string> => {
  const llm = await startLlmServer([{ when: () => true, reply: { text: 'fine' }, repeat: true }]);
  daemons.onCleanup(() => llm.close());
  const dir = testDataDir(root, { llm });
  const session = await daemons.start(dir);
  for (const text of ['one', 'two', 'three']) await askSocket(dir, text);
  await daemons.stop(session);
  const store = openEventLog(existingLogPath(dir));
  try {
    for (let i = 0; i < FILLER_EVENTS; i += APPEND_AT_ONCE) {
      await store.append(
        'filler',
        Array.from({ length: APPEND_AT_ONCE }, (_, k) => ({ type: 'StageTimedOut' as const, data: { run: i + k } })),
      );
    }
  } finally {
    await store.close();
  }
  return dir;
};
