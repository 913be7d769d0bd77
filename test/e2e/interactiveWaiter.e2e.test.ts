/**
 * The journeys of a person at the terminal, driven through tmux against a real homed: the
 * banner, /help answered locally, a tool shown while it runs, the first words of a reply shown
 * before its line is complete (and the reply then once), /stop while a reply streams, a
 * reminder coming back to its user in another session, and a daemon restart under an open
 * session. And one-shot waiter's Ctrl-C, which stops only the task it started.
 */
import { describe, expect, it } from 'vitest';
import { logOf, testDataDir, useDaemons, verifyReplay } from '../support/homedSession.ts';
import { afterToolResult, lastUserText, messagesOf, type RecordedRequest, startLlmServer } from '../support/llmServer/index.ts';
import { finished, spawnNode, WAITER, waitForLine } from '../support/processes.ts';
import { useTempDir } from '../support/tempDir.ts';
import { useTerminals } from '../support/tmux.ts';

const tempDir = useTempDir();
const daemons = useDaemons();
const terminals = useTerminals();

const asks = (start: string) => (request: RecordedRequest) => !afterToolResult(request) && lastUserText(request).startsWith(start);

/** Ten lines of a story, streamed a word at a time: long enough to press /stop in the middle. */
const STORY = Array.from({ length: 10 }, (_, i) => `Line ${i + 1} of a story that goes on and on.`).join('\n');
/** Held in its third line (ten words a line, after the frame that says who speaks): however slow the machine, it cannot end before /stop. */
const STORY_HELD_AFTER_FRAMES = 26;

/** Held by the model after its first four words (the first frame says only who speaks) until the test lets it go. */
const SLOW_REPLY = 'Once upon a time there was a slow model.\nThe end.';
const HELD_AFTER_FRAMES = 5;

/** A reply quoting a file that holds terminal control sequences: retitle the window, hide text, clear the screen, overwrite a line. */
const QUOTED_ESCAPES = 'The file says: \x1b]0;OWNED\x07title \x1b[8mhidden\x1b[0m \x1b[2J safe\rrm -rf ~ end';
/** The same as a terminal shows it through waiter: every control character as its symbol. */
const QUOTED_SHOWN = 'The file says: ␛]0;OWNED␇title ␛[8mhidden␛[0m ␛[2J safe␍rm -rf ~ end';

const startScriptedLlm = () =>
  startLlmServer([
    { when: (r) => afterToolResult(r) && lastUserText(r).startsWith('list'), reply: { text: 'There is nothing there yet.' }, repeat: true },
    { when: (r) => afterToolResult(r) && lastUserText(r).startsWith('remind'), reply: { text: 'I will remind you.' }, repeat: true },
    { when: asks('list'), reply: { toolCalls: [{ name: 'files_list', arguments: {} }] }, repeat: true },
    { when: asks('remind'), reply: { toolCalls: [{ name: 'timer_set', arguments: { seconds: 2, note: 'stretch' } }] }, repeat: true },
    { when: asks('Timer'), reply: { text: 'Time to stretch!' }, repeat: true },
    { when: asks('tell me a long story'), reply: { text: STORY, holdAfterChunks: STORY_HELD_AFTER_FRAMES }, repeat: true },
    {
      when: (r) => !afterToolResult(r) && lastUserText(r).includes('story'),
      reply: { text: STORY, slow: { chunkDelayMs: 60 } },
      repeat: true,
    },
    { when: asks('tell me slowly'), reply: { text: SLOW_REPLY, holdAfterChunks: HELD_AFTER_FRAMES }, repeat: true },
    { when: asks('ping'), reply: { text: 'pong' }, repeat: true },
    { when: asks('quote the file'), reply: { text: QUOTED_ESCAPES }, repeat: true },
  ]);

/** A homed on a fresh data dir, answered by the scripted server. */
const startScriptedHomed = async () => {
  const server = await startScriptedLlm();
  daemons.onCleanup(() => server.close());
  const dir = testDataDir(tempDir(), { llm: server });
  return { server, dir, daemon: await daemons.start(dir) };
};

const interactive = (dir: string) => terminals.open([process.execPath, WAITER, '--data', dir]);

describe('interactive waiter in a terminal', () => {
  it('greets with the data dir and model, answers /help itself, shows a tool as it runs, then the answer', async () => {
    const { server, dir, daemon } = await startScriptedHomed();
    const term = interactive(dir);
    await term.waitFor(new RegExp(`hologram · ${dir.replaceAll('/', '\\/')} · model local \\(m\\)`));
    await term.waitFor(/^› /m);

    term.type('/help');
    await term.waitFor(/\/stop +stop the reply under way and your messages waiting behind it/);
    expect(server.requests, '/help went to the model').toHaveLength(0);
    term.type('/nope');
    await term.waitFor(/no command \/nope; commands: \/stop \/tools/);
    term.type('/stpo');
    await term.waitFor(/no command \/stpo; did you mean \/stop\? commands:/);
    expect(server.requests, 'an unknown command went to the model').toHaveLength(0);

    term.type('list the files');
    const screen = await term.waitFor(/There is nothing there yet\./);
    expect(screen).toMatch(/· files_list\n(.*\n)*There is nothing there yet\./);
    // What was typed stays on its prompt line; the reply has lines of its own.
    expect(screen).toMatch(/^› list the files$/m);
    await daemons.stop(daemon);
    await verifyReplay(dir);
  });

  it('shows the first words of a reply before its line is complete, keeps what is typed, and shows the finished reply once', async () => {
    const { server, dir, daemon } = await startScriptedHomed();
    const term = interactive(dir);
    await term.waitFor(/^› /m);
    term.type('tell me slowly');
    // The model holds after "Once upon a time ": no line of the reply is complete, yet its words show, right above the prompt.
    await term.waitFor(/^Once upon a time *\n› *$/m);
    term.type('ping', { enter: false });
    await term.waitFor(/^Once upon a time *\n› ping *$/m);

    server.release();
    // Redrawn under the rest of the reply, what was typed is still on the prompt.
    await term.waitFor(/^Once upon a time there was a slow model\. *\nThe end\. *\n› ping *$/m);
    term.press('Enter');
    // ping is answered after the slow reply has ended: by then its last line has stopped being in progress.
    const screen = await term.waitFor(/^pong *$/m);
    expect(screen.match(/Once upon a time/g), 'the reply is shown once, no partial left behind').toHaveLength(1);
    expect(screen.match(/^Once upon a time there was a slow model\. *$/gm)).toHaveLength(1);
    expect(screen.match(/The end\./g)).toHaveLength(1);
    expect(screen.match(/^› ping *$/gm), 'the message is left on its prompt line once').toHaveLength(1);
    await daemons.stop(daemon);
    await verifyReplay(dir);
  });

  it('/stop while a reply streams stops it there, and the next message is answered', async () => {
    const { dir, daemon } = await startScriptedHomed();
    const term = interactive(dir);
    await term.waitFor(/^› /m);
    term.type('tell me a long story');
    await term.waitFor(/Line 2 of a story/);
    // A message typed meanwhile waits its turn; /stop stops both, and says which one had not begun.
    term.type('ping');
    term.type('/stop');
    // The waiting one is stopped first, so the end of the running one cannot start it.
    await term.waitFor(/\(stopped before it began: "ping"\)/);
    const stopped = await term.waitFor(/^\(stopped\) *$/m);
    expect(stopped).not.toContain('Line 10 of a story');
    // Said once: not also with the daemon's own '(cancelled)'.
    expect(stopped).not.toContain('(cancelled)');
    expect((await logOf(dir, '--type', 'TurnCancelled')).length).toBe(1);

    term.type('ping');
    await term.waitFor(/^pong$/m);
    await daemons.stop(daemon);
    await verifyReplay(dir);
  });

  it('/stop while a line of the reply is in progress shows below that line, which is left whole, then (stopped)', async () => {
    const { dir, daemon } = await startScriptedHomed();
    const term = interactive(dir);
    await term.waitFor(/^› /m);
    term.type('tell me slowly');
    // The model holds after "Once upon a time ": that line is in progress when the stop is typed.
    await term.waitFor(/^Once upon a time *\n› *$/m);
    term.type('/stop');
    const screen = await term.waitFor(/^\(stopped\) *$/m);
    expect(screen).toMatch(/^› tell me slowly *\nOnce upon a time *\n› \/stop *\nstopping… *\n\(stopped\) *\n› *$/m);
    expect(screen.match(/Once upon a time/g), 'the line in progress is left once').toHaveLength(1);
    await daemons.stop(daemon);
    await verifyReplay(dir);
  });

  it("shows a reminder set from another session when it fires, answered with that conversation's history", async () => {
    const { server, dir, daemon } = await startScriptedHomed();
    // Set from a one-shot waiter, which leaves at once.
    const setter = await finished(spawnNode([WAITER, '--data', dir, 'remind me to stretch in 2 seconds']));
    expect(setter.stdout).toBe('I will remind you.\n');

    const term = interactive(dir);
    await term.waitFor(/^› /m);
    await term.waitFor(/↪ Time to stretch!/, 15_000);
    const reminder = server.requests.find((r) => lastUserText(r).startsWith('Timer'))!;
    expect(JSON.stringify(messagesOf(reminder)), 'the reminder turn has the conversation it was set in').toContain(
      'remind me to stretch in 2 seconds',
    );
    await daemons.stop(daemon);
    await verifyReplay(dir);
  });

  it('shows a reminder that fired while no session was open when the next one opens, once', async () => {
    const { dir, daemon } = await startScriptedHomed();
    const setter = await finished(spawnNode([WAITER, '--data', dir, 'remind me to stretch in 2 seconds']));
    expect(setter.stdout).toBe('I will remind you.\n');
    // The reminder's reply is sent (a second OutputSent) with no session of this user open.
    await expect.poll(async () => (await logOf(dir, '--type', 'OutputSent')).length, { timeout: 15_000, interval: 200 }).toBe(2);

    const term = interactive(dir);
    await term.waitFor(/↪ \(while you were away\) Time to stretch!/);
    const again = interactive(dir);
    await again.waitFor(/^› /m);
    term.type('ping');
    await term.waitFor(/^pong$/m);
    expect(again.screen()).not.toContain('Time to stretch!');
    await daemons.stop(daemon);
    await verifyReplay(dir);
  });

  it('says when homed goes away, reconnects when it is back, and goes on', async () => {
    const { dir, daemon: first } = await startScriptedHomed();
    const term = interactive(dir);
    await term.waitFor(/^› /m);
    await daemons.stop(first);
    await term.waitFor(/homed went away; trying to reconnect/);

    const second = await daemons.start(dir);
    await term.waitFor(/reconnected to homed/);
    term.type('ping');
    await term.waitFor(/^pong$/m);
    await daemons.stop(second);
    await verifyReplay(dir);
  });
});

// Found by the hostile tester: a reply's control sequences reached the terminal and were obeyed.
describe('control sequences in a reply', () => {
  it('are shown, not obeyed, in a terminal (a session and one-shot), and kept as sent when piped', async () => {
    const { dir, daemon } = await startScriptedHomed();
    const term = interactive(dir);
    await term.waitFor(/^› /m);
    term.type('quote the file');
    expect(await term.waitFor(/end *$/m)).toContain(QUOTED_SHOWN);
    const oneShot = terminals.open([process.execPath, WAITER, '--data', dir, 'quote the file']);
    expect(await oneShot.waitFor(/end *$/m)).toContain(QUOTED_SHOWN);
    const piped = await finished(spawnNode([WAITER, '--data', dir, 'quote the file']));
    expect(piped.stdout).toBe(`${QUOTED_ESCAPES}\n`);
    await daemons.stop(daemon);
    await verifyReplay(dir);
  });
});

describe('one-shot waiter', () => {
  // A 1 MiB message went whole to a model that reads 8,192 tokens (found by the hostile tester).
  it('a message longer than the model reads fails saying so, no model asked, and the next one is answered', async () => {
    const { server, dir, daemon } = await startScriptedHomed();
    const long = await finished(spawnNode([WAITER, '--data', dir, `ping ${'words '.repeat(8_000)}`]));
    expect(long.code).toBe(1);
    expect(long.stderr).toContain('The message was not sent to the model: the message is about 12,002 tokens');
    expect(long.stderr).toContain('more than the 8,192 the model reads at most (its context window): send a shorter message, or split it');
    expect(server.requests).toHaveLength(0);
    expect((await finished(spawnNode([WAITER, '--data', dir, 'ping']))).stdout).toBe('pong\n');
    await daemons.stop(daemon);
    await verifyReplay(dir);
  });

  it('Ctrl-C stops the task it started and no other: it exits 1 saying so, and the next message still runs', async () => {
    const { dir, daemon } = await startScriptedHomed();
    const story = spawnNode([WAITER, '--data', dir, 'tell me a story']);
    const storyDone = finished(story);
    await waitForLine(story, /Line 1 of a story/);
    // Another client's message waits behind the story; Ctrl-C on the story must not cancel it.
    const ping = finished(spawnNode([WAITER, '--data', dir, 'ping']));
    await expect.poll(async () => (await logOf(dir, '--type', 'InputQueued')).length, { timeout: 10_000 }).toBe(2);
    story.kill('SIGINT');
    const result = await storyDone;
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('the turn was stopped before it finished');
    expect(result.stdout).not.toContain('Line 10');
    expect((await ping).stdout).toBe('pong\n');
    const stops = await logOf(dir, '--type', 'StopRequested');
    expect(stops).toHaveLength(1);
    expect(stops[0]!.data).toMatchObject({ cancelBudget: [] });
    await daemons.stop(daemon);
    await verifyReplay(dir);
  });

  // A newcomer's one-shot `waiter "remind me…"` whose call needed approval waited with no way to answer from its terminal.
  it.each([
    ['y', 'approved', /Written\.\s+exit 0$/m],
    // Every call of the round refused, the turn ends there, saying so.
    ['n not now', 'refused', /refused it: not now\)\.\s+waiter: every tool call the model made was denied\s+exit 1$/m],
  ])('one-shot at a terminal: asks about a call waiting for approval, and %s answers it', async (typed, said, ending) => {
    const server = await startLlmServer([
      { when: afterToolResult, reply: { text: 'Written.' }, repeat: true },
      // A long first argument pushed the path past the chat line's cut: the question shows every argument (red team round 16).
      {
        when: () => true,
        reply: {
          toolCalls: [{ name: 'files_write', arguments: { content: `${'A harmless note. '.repeat(25)}\nEVIL`, path: 'asked.txt' } }],
        },
        repeat: true,
      },
    ]);
    daemons.onCleanup(() => server.close());
    const dir = testDataDir(tempDir(), { llm: server, settings: { security: { tools: { approve: ['files_write'] } } } });
    const daemon = await daemons.start(dir);
    const term = terminals.open(['/bin/sh', '-c', `"$0" "$@"; echo "exit $?"`, process.execPath, WAITER, '--data', dir, 'write asked.txt']);
    const asked = await term.waitFor(/Run it\? y, n \[reason\], or Enter to leave it waiting \(\S+-1\.1\): $/m);
    expect(asked).toMatch(
      /\S+-1\.1 wants to run files_write with:\n {4}content: (A harmless note\. ){25}\n {6}EVIL\n {4}path: asked\.txt\nRun it\?/,
    );
    term.type(typed);
    const screen = await term.waitFor(ending);
    expect(screen).toMatch(new RegExp(`^${said} \\S+-1\\.1`, 'm'));
    expect((await logOf(dir, '--type', 'ToolCalled')).length).toBe(said === 'approved' ? 1 : 0);
    await daemons.stop(daemon);
    await verifyReplay(dir);
  });

  it.each(['SIGHUP', 'SIGTERM'] as const)('%s (its terminal closed) stops the task it started, as Ctrl-C does', async (signal) => {
    const { dir, daemon } = await startScriptedHomed();
    const story = spawnNode([WAITER, '--data', dir, 'tell me a story']);
    const storyDone = finished(story);
    await waitForLine(story, /Line 1 of a story/);
    story.kill(signal);
    const result = await storyDone;
    expect(result.code).toBe(1);
    expect(result.stdout).not.toContain('Line 10');
    await expect
      .poll(async () => (await logOf(dir, '--type', 'TaskCompleted')).map((e) => e.data.outcome), { timeout: 10_000 })
      .toEqual(['cancelled']);
    await daemons.stop(daemon);
    await verifyReplay(dir);
  });

  it('Ctrl-C on a message still waiting behind another ends it at once, not when the other is answered', async () => {
    const { dir, daemon } = await startScriptedHomed();
    const story = spawnNode([WAITER, '--data', dir, 'tell me a story']);
    const storyDone = finished(story);
    await waitForLine(story, /Line 1 of a story/);
    const ping = spawnNode([WAITER, '--data', dir, 'ping']);
    const pingDone = finished(ping);
    await expect.poll(async () => (await logOf(dir, '--type', 'InputQueued')).length, { timeout: 10_000 }).toBe(2);
    ping.kill('SIGINT');
    const stopped = await pingDone;
    // The story (about 6 s of streaming) is still being told.
    expect(story.exitCode).toBeNull();
    expect(stopped.code).toBe(1);
    expect(stopped.stdout).not.toContain('pong');
    expect((await storyDone).stdout).toContain('Line 10 of a story');
    const shortCircuited = await logOf(dir, '--type', 'InputShortCircuited');
    expect(shortCircuited).toHaveLength(1);
    await daemons.stop(daemon);
    await verifyReplay(dir);
  });

  // A hostile tester's `printf 'hi\nhi again\n' | waiter | head -1` ended with a stack trace and exit 1.
  it('piped, ends quietly with 141 when the reader of its output leaves (| head -1)', async () => {
    const { dir, daemon } = await startScriptedHomed();
    const piped = spawnNode([WAITER, '--data', dir], { stdio: ['pipe', 'pipe', 'pipe'] });
    const done = finished(piped);
    piped.stdin!.end('tell me a story\nping\n');
    piped.stdout!.once('data', () => piped.stdout!.destroy());
    const result = await done;
    expect(result).toMatchObject({ code: 141, stderr: '' });
    await daemons.stop(daemon);
  });
});
