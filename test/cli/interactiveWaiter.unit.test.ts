/**
 * waiter's chat session on a fake terminal, against a fake daemon whose replies the test hands
 * over one at a time: what the person sees for each step (the screen, scrollback included), and
 * what reached the daemon. No socket, no timer: each step waits only for the event loop to turn.
 */
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { type CliReply, type CliRequest, MAX_PENDING_MESSAGES } from '../../plugins/builtin/cli/cliWire.ts';
import { CommandOutput } from '../../cli/commandOutput.ts';
import { InteractiveWaiter, type SessionClient } from '../../cli/interactiveWaiter.ts';
import { FakeTerminal } from './fakeTerminal.ts';

/** A daemon on the other end of the session: it records each request and says only what the test makes it say. */
class FakeDaemon implements SessionClient {
  readonly requests: CliRequest[] = [];
  private readonly listeners = new Set<(reply: CliReply) => void>();

  onReply(listener: (reply: CliReply) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  onClose(): () => void {
    return () => undefined;
  }

  ask<T extends CliReply>(request: CliRequest, accept: (reply: CliReply) => reply is T): Promise<T> {
    return new Promise<T>((resolve) => {
      const off = this.onReply((reply) => {
        if (!accept(reply)) return;
        off();
        resolve(reply);
      });
      this.send(request);
    });
  }

  send(request: CliRequest): void {
    this.requests.push(request);
    if (request.type === 'hello') {
      queueMicrotask(() => this.reply({ type: 'welcome', session: 's1', conversation: 'cli:al', models: [{ name: 'local', model: 'm' }] }));
    }
  }

  close(): void {}

  /** The daemon says `reply` to the session. */
  reply(reply: CliReply): void {
    for (const listener of [...this.listeners]) listener(reply);
  }
}

/** Lets what was typed or replied be handled: readline's keys and the session's answers run on the next turns of the loop. */
const settled = () => new Promise((resolve) => setImmediate(resolve));

const opened: Array<() => void> = [];
afterEach(() => {
  for (const close of opened.splice(0)) close();
});

/** A session in a terminal `columns` wide, greeted and showing its prompt. */
const givenSession = async (columns = 60) => {
  const term = new FakeTerminal(columns);
  const keys = new PassThrough();
  const daemon = new FakeDaemon();
  const session = new InteractiveWaiter({
    dataDir: '/data',
    user: 'al',
    input: keys,
    output: term,
    stdout: new CommandOutput(term),
    terminal: true,
    columns: () => term.columns,
    warn: () => undefined,
    connect: () => Promise.reject(new Error('no reconnect in this test')),
    sleep: () => Promise.resolve(),
  });
  const ended = session.run(daemon);
  opened.push(() => keys.end());
  await settled();
  /** Types `text` (`\r` is Enter) and lets the session handle it. */
  const type = async (text: string) => {
    keys.write(text);
    await settled();
  };
  /** The daemon says `replies`, and the session shows them. */
  const reply = async (...replies: CliReply[]) => {
    for (const r of replies) daemon.reply(r);
    await settled();
  };
  return { term, daemon, type, reply, ended };
};

describe('interactive waiter: commands', () => {
  it('answers a mistyped command with the one it is closest to and the list, and sends nothing', async () => {
    const { term, daemon, type } = await givenSession(200);
    expect(term.screen().at(-1)).toBe('›');
    await type('/stpo\r');
    const commands = 'commands: /stop /tools /plugins /approvals /approve /deny /help /quit';
    expect(term.screen().join('\n')).toContain(`waiter: no command /stpo; did you mean /stop? ${commands}`);
    // Nothing close: the list alone.
    await type('/xyzzy\r');
    expect(term.screen().join('\n')).toContain(`waiter: no command /xyzzy; ${commands}`);
    expect(term.screen().join('\n')).not.toMatch(/\/xyzzy; did you mean/);
    expect(daemon.requests.map((r) => r.type)).toEqual(['hello']);
  });
});

describe('interactive waiter: approvals', () => {
  it('shows the approval its own message waits for unmarked, and marks ↪ only what came unasked', async () => {
    const { term, type, reply } = await givenSession(200);
    await type('write it down\r');
    await reply(
      { type: 'accepted', inputId: 'mine' },
      { type: 'message', inputId: 'mine', approval: 'mine-1.1', text: 'Approval mine-1.1: the agent wants to run files_write' },
      { type: 'message', text: 'Reminder: stretch' },
    );
    const screen = term.screen();
    expect(screen).toContain('Approval mine-1.1: the agent wants to run files_write');
    expect(screen).toContain('↪ Reminder: stretch');
    expect(screen.join('\n')).not.toContain('↪ Approval');
  });
});

describe('interactive waiter: a stop while a reply streams', () => {
  /** A session whose message 'tell me a story' is being answered: one line given out, the next in progress. */
  const givenStreaming = async () => {
    const given = await givenSession();
    await given.type('tell me a story\r');
    await given.reply({ type: 'accepted', inputId: 'in-1' }, { type: 'chunk', inputId: 'in-1', text: 'Once upon a time\nthere was' });
    expect(given.term.screen().slice(-4)).toEqual(['› tell me a story', 'Once upon a time', 'there was', '›']);
    return given;
  };

  it('shows › /stop and stopping… below the line in progress, which goes on growing above them, then (stopped)', async () => {
    const { term, daemon, type, reply } = await givenStreaming();
    await type('/stop\r');
    expect(daemon.requests.at(-1)).toEqual({ type: 'cancel', inputId: 'in-1' });
    expect(term.screen().slice(-5)).toEqual(['Once upon a time', 'there was', '› /stop', 'stopping…', '›']);

    // A piece already on its way when the stop was sent joins its line, above the stop.
    await reply({ type: 'chunk', inputId: 'in-1', text: ' a model' });
    expect(term.screen().slice(-5)).toEqual(['Once upon a time', 'there was a model', '› /stop', 'stopping…', '›']);

    await reply({ type: 'end', inputId: 'in-1', outcome: 'cancelled', text: '(cancelled)' });
    const screen = term.screen();
    expect(screen.slice(-7)).toEqual([
      '› tell me a story',
      'Once upon a time',
      'there was a model',
      '› /stop',
      'stopping…',
      '(stopped)',
      '›',
    ]);
    // Each once: nothing left of the line in progress, the stop said once.
    expect(screen.filter((row) => row.startsWith('there was'))).toEqual(['there was a model']);
    expect(screen.filter((row) => row === '› /stop' || row === 'stopping…')).toHaveLength(2);
  });

  it('stops a message typed meanwhile that homed has not yet accepted: once it is, both are stopped, it first', async () => {
    const { term, daemon, type, reply } = await givenStreaming();
    await type('ping\r');
    await type('/stop\r');
    // Stopping the running one now would let its end start ping before ping's id is known.
    expect(daemon.requests.filter((r) => r.type === 'cancel')).toEqual([]);
    await reply({ type: 'accepted', inputId: 'in-2' });
    expect(daemon.requests.slice(-2)).toEqual([
      { type: 'cancel', inputId: 'in-2' },
      { type: 'cancel', inputId: 'in-1' },
    ]);
    await reply(
      { type: 'end', inputId: 'in-2', outcome: 'cancelled', text: '(cancelled)' },
      { type: 'end', inputId: 'in-1', outcome: 'cancelled', text: '(cancelled)' },
    );
    expect(term.screen().slice(-3)).toEqual(['(stopped before it began: "ping")', '(stopped)', '›']);
    // A message typed after the stop is not stopped by it.
    await type('pong?\r');
    await reply({ type: 'accepted', inputId: 'in-3' });
    expect(daemon.requests.filter((r) => r.type === 'cancel')).toHaveLength(2);
  });

  it(`stops the running replies at once when homed holds the next message until one ends (${MAX_PENDING_MESSAGES} under way), and that one when taken`, async () => {
    const { daemon, type, reply } = await givenSession();
    const ids = Array.from({ length: MAX_PENDING_MESSAGES }, (_, i) => `in-${i + 1}`);
    for (const inputId of ids) {
      await type(`message ${inputId}\r`);
      await reply({ type: 'accepted', inputId });
    }
    await type('one too many\r');
    await type('/stop\r');
    const cancels = () => daemon.requests.filter((r) => r.type === 'cancel').map((r) => (r.type === 'cancel' ? r.inputId : ''));
    expect(cancels()).toEqual([...ids].reverse());
    await reply({ type: 'end', inputId: 'in-1', outcome: 'cancelled', text: '(cancelled)' }, { type: 'accepted', inputId: 'in-9' });
    expect(cancels().at(-1)).toBe('in-9');
  });

  it('does the same for Ctrl-C, and what is typed next goes on the prompt below', async () => {
    const { term, daemon, type, reply } = await givenStreaming();
    await type('\x03');
    expect(daemon.requests.at(-1)).toEqual({ type: 'cancel', inputId: 'in-1' });
    expect(term.screen().slice(-4)).toEqual(['Once upon a time', 'there was', 'stopping…', '›']);
    await type('half typed');
    await reply({ type: 'chunk', inputId: 'in-1', text: ' a' });
    expect(term.screen().slice(-4)).toEqual(['Once upon a time', 'there was a', 'stopping…', '› half typed']);
    await reply({ type: 'end', inputId: 'in-1', outcome: 'cancelled', text: '(cancelled)' });
    expect(term.screen().slice(-5)).toEqual(['Once upon a time', 'there was a', 'stopping…', '(stopped)', '› half typed']);
  });

  it('says a reply cut short by homed stopping was stopped by homed, told by why it was cancelled and not by its wording', async () => {
    const { term, reply } = await givenStreaming();
    await reply({ type: 'end', inputId: 'in-1', outcome: 'cancelled', stoppedFor: 'shutdown', text: '(cancelled)' });
    expect(term.screen().slice(-3)).toEqual(['there was', '(stopped: homed is stopping)', '›']);
  });

  it('leaves a message typed while a reply streams above its line in progress, as before', async () => {
    const { term, type, reply } = await givenStreaming();
    await type('ping\r');
    expect(term.screen().slice(-4)).toEqual(['Once upon a time', '› ping', 'there was', '›']);
    await reply({ type: 'end', inputId: 'in-1', outcome: 'answered', text: '' });
    expect(term.screen().slice(-4)).toEqual(['Once upon a time', '› ping', 'there was', '›']);
  });
});

describe('interactive waiter: piped input', () => {
  /** A piped session (stdin not a terminal): what it writes to stdout, as a script reads it. */
  const givenPiped = async () => {
    const lines = new PassThrough();
    const out = new PassThrough();
    let written = '';
    out.on('data', (chunk: Buffer) => (written += chunk.toString()));
    const daemon = new FakeDaemon();
    const warnings: string[] = [];
    const session = new InteractiveWaiter({
      dataDir: '/data',
      user: 'al',
      input: lines,
      output: out,
      stdout: new CommandOutput(out),
      terminal: false,
      columns: () => 80,
      warn: (line) => warnings.push(line),
      connect: () => Promise.reject(new Error('no reconnect in this test')),
      sleep: () => Promise.resolve(),
    });
    const ended = session.run(daemon);
    opened.push(() => lines.end());
    await settled();
    const reply = async (...replies: CliReply[]) => {
      for (const r of replies) daemon.reply(r);
      await settled();
    };
    return { lines, out, daemon, reply, ended, warnings, stdout: () => written };
  };

  it('gives a reply asked for elsewhere whole and marked ↪, once the line of ours in progress has ended', async () => {
    const { lines, reply, ended, stdout } = await givenPiped();
    lines.end('tell me\n');
    await settled();
    await reply({ type: 'accepted', inputId: 'ours' }, { type: 'chunk', inputId: 'ours', text: 'One two ' });
    // A reminder's reply (another input) streams while ours is mid-line, as when it preempts ours.
    await reply({ type: 'chunk', inputId: 'theirs', text: 'Time to ' }, { type: 'chunk', inputId: 'theirs', text: 'stretch!' });
    await reply({ type: 'end', inputId: 'theirs', text: '' });
    expect(stdout()).toBe('One two ');
    await reply({ type: 'chunk', inputId: 'ours', text: 'three.' }, { type: 'end', inputId: 'ours', text: '' });
    expect(stdout()).toBe('One two three.\n↪ Time to stretch!\n');
    expect(await ended).toBe(0);
  });

  it('gives a one-line message from elsewhere after our line too, after what its reply said before it', async () => {
    const { lines, reply, ended, stdout } = await givenPiped();
    lines.end('tell me\n');
    await settled();
    await reply({ type: 'accepted', inputId: 'ours' }, { type: 'chunk', inputId: 'ours', text: 'One two ' });
    await reply({ type: 'chunk', inputId: 'theirs', text: 'Let me write.' });
    await reply({ type: 'message', inputId: 'theirs', approval: 'x-1.1', text: 'Approval x-1.1: files_write' });
    await reply({ type: 'message', text: 'Reminder: stretch' });
    expect(stdout()).toBe('One two ');
    await reply({ type: 'chunk', inputId: 'ours', text: 'three.' }, { type: 'end', inputId: 'ours', text: '' });
    expect(stdout()).toBe('One two three.\n↪ Let me write.\n↪ Approval x-1.1: files_write\n↪ Reminder: stretch\n');
    expect(await ended).toBe(0);
  });

  it('gives what came of a reply from elsewhere still under way when it ends, says when one failed, and caps what it holds', async () => {
    const { lines, reply, ended, stdout, warnings } = await givenPiped();
    lines.end('ping\n');
    await settled();
    await reply(
      { type: 'chunk', inputId: 'failing', text: 'Half of it' },
      { type: 'end', inputId: 'failing', outcome: 'failed', text: 'boom' },
    );
    await reply({ type: 'chunk', inputId: 'long', text: 'x'.repeat((1 << 20) + 5) });
    await reply({ type: 'accepted', inputId: 'ours' }, { type: 'end', inputId: 'ours', text: 'pong' });
    expect(await ended).toBe(0);
    expect(warnings).toEqual(['waiter: a reply asked for elsewhere failed: boom']);
    expect(stdout()).toBe(
      `↪ Half of it\npong\n↪ ${'x'.repeat(1 << 20)} … (5 more characters not shown) (still being written as waiter ended)\n`,
    );
  });

  it('holds at most 4 MiB from elsewhere while our line is in progress, and counts what it left out', async () => {
    const { lines, reply, ended, stdout } = await givenPiped();
    lines.end('tell me\n');
    await settled();
    await reply({ type: 'accepted', inputId: 'ours' }, { type: 'chunk', inputId: 'ours', text: 'One ' });
    const big = 'm'.repeat((1 << 20) - 10);
    for (let i = 0; i < 6; i++) await reply({ type: 'message', text: big });
    await reply({ type: 'end', inputId: 'ours', text: '' });
    expect(await ended).toBe(0);
    const out = stdout();
    expect(out.startsWith('One \n↪ m')).toBe(true);
    expect(out.match(/↪ m+\n/g)).toHaveLength(4);
    expect(out.endsWith('↪ … (2 more from elsewhere not shown)\n')).toBe(true);
  });

  it('sends no line queued after it gave up, and counts only the lines that say something', async () => {
    const { lines, daemon, reply, ended, warnings } = await givenPiped();
    lines.end('m1\nm2\nm3\nm4\nm5\n\n/tools\nm6\n');
    await settled();
    for (const id of ['i1', 'i2', 'i3', 'i4']) {
      await reply({ type: 'accepted', inputId: id }, { type: 'message', inputId: id, approval: `${id}-1.1`, text: `Approval ${id}-1.1` });
    }
    await settled();
    await reply({ type: 'approvals', pending: [] });
    expect(await ended).toBe(1);
    await settled();
    expect(warnings.join('\n')).toContain('the 2 line(s) after it were not sent');
    expect(daemon.requests.filter((r) => r.type === 'message').map((r) => (r as { text: string }).text)).toEqual([
      'm1',
      'm2',
      'm3',
      'm4',
      'm5',
    ]);
  });

  it('ends with the output error when the reader of stdout went away, never a crash', async () => {
    const { lines, out, reply, ended } = await givenPiped();
    lines.end('tell me\n');
    await settled();
    const outcome = expect(ended).rejects.toMatchObject({ code: 'OUTPUT_CLOSED' });
    out.destroy(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    await settled();
    await reply({ type: 'accepted', inputId: 'ours' }, { type: 'chunk', inputId: 'ours', text: 'words' });
    await outcome;
  });
});
