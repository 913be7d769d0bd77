/** The scheduler inside homed: its journal in the log, its state in the replay dump, restored on restart. */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { finished, HOMED, REPO, runHomed, spawnNode, waitForLine } from '../support/processes.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();

type Line = { seq: number; type: string; data: Record<string, unknown> };
const lines = (stdout: string): Line[] =>
  stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Line);

describe('the scheduler in homed', () => {
  it('journals inputs and decisions, shows pending inputs and the stack, and abandons orphaned tasks on restart', async () => {
    const dir = join(tempDir(), 'data');
    const session = await finished(spawnNode(['--import', 'tsx', join(REPO, 'test/fixtures/schedulerSession.ts'), dir]));
    expect(session.code).toBe(0);
    const facts = lines(session.stdout).map((f) => f.type);
    expect(facts).toContain('TaskPreempted');
    expect(session.stderr).toContain("resubmit: input 'chat-1' was already submitted to the scheduler");

    const log = await runHomed(['log', '--data', dir, '--stream', 'scheduler']);
    const events = lines(log.stdout);
    const delivered = events.filter((e) => e.type === 'InputDelivered').map((e) => (e.data.message as { type: string }).type);
    // The first start adopts this build's rules, so the log says which rules decided what follows.
    expect(delivered).toEqual(['rules.adopt', 'input.arrive', 'input.arrive', 'input.arrive', 'input.arrive']);
    expect(events.find((e) => e.type === 'InputQueued' && e.data.inputId === 'timer-1')!.data).toMatchObject({
      level: 3,
      declaredLevel: 4,
    });

    const head = events.at(-1)!.seq;
    const dump = JSON.parse((await runHomed(['replay', '--data', dir, '--until', String(head)])).stdout) as {
      projections: { scheduler: { view: Record<string, unknown> } };
    };
    expect(dump.projections.scheduler.view).toMatchObject({
      running: 'timer-1',
      stack: ['chat-1'],
      pendingInputs: ['chat-2', 'chat-3'],
    });

    const daemon = spawnNode([HOMED, '--data', dir]);
    const done = finished(daemon);
    await waitForLine(daemon, /ready/);
    daemon.kill('SIGTERM');
    expect((await done).code).toBe(0);
    const after = lines(
      (await runHomed(['log', '--data', dir, '--stream', 'scheduler', '--type', 'TaskCompleted', '--type', 'TaskStarted'])).stdout,
    );
    // The inputs that never started run now; this journal holds only the scheduler's side of them
    // (no input text), so each fails at once, with a recorded outcome, and the next one runs.
    expect(after.filter((e) => e.type === 'TaskCompleted').map((e) => [e.data.taskId, e.data.outcome])).toEqual([
      ['timer-1', 'abandoned'],
      ['chat-1', 'abandoned'],
      ['chat-2', 'failed'],
      ['chat-3', 'failed'],
    ]);
    expect(
      after
        .filter((e) => e.type === 'TaskStarted')
        .map((e) => e.data.taskId)
        .slice(-2),
    ).toEqual(['chat-2', 'chat-3']);
    const verify = await runHomed(['replay', '--data', dir, '--verify']);
    expect(verify.stdout).toContain('scheduler: 1 of 1 journals match');
    expect(verify.code).toBe(0);
  });
});

describe('homed --inspect', () => {
  it('relays the kernel and scheduler machines to the Stately inspector relay', async () => {
    const { createServer } = await import('node:net');
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, () => {
        const { port: free } = probe.address() as { port: number };
        probe.close(() => resolve(free));
      });
    });
    const dir = join(tempDir(), 'data');
    const daemon = spawnNode([HOMED, '--data', dir, '--inspect-port', String(port)]);
    const done = finished(daemon);
    const output = await waitForLine(daemon, /ready/);
    expect(output).toContain(`inspector relay on http://127.0.0.1:${port}`);
    const { default: WebSocket } = await import('ws');
    // The relay replays what it buffered to each new client: wait until both machines showed up.
    const seen = (messages: string[], id: string) => messages.some((m) => m.includes(`"${id}"`));
    const received = await new Promise<string[]>((resolve, reject) => {
      const messages: string[] = [];
      const socket = new WebSocket(`ws://127.0.0.1:${port}`);
      const timer = setTimeout(() => reject(new Error(`inspector relay sent ${messages.length} messages, not both machines`)), 10_000);
      socket.on('message', (data) => {
        messages.push(String(data));
        if (seen(messages, 'scheduler') && seen(messages, 'kernel')) {
          clearTimeout(timer);
          socket.close();
          resolve(messages);
        }
      });
      socket.on('error', reject);
    });
    daemon.kill('SIGTERM');
    expect((await done).code).toBe(0);
    expect(received.some((m) => m.includes('"scheduler"'))).toBe(true);
    expect(received.some((m) => m.includes('"kernel"'))).toBe(true);
  });
});
