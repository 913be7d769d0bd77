/**
 * The line in progress of a streamed reply, drawn on the row above the prompt: the exact output
 * for each step, and the screen it leaves on a fake terminal (no stale partial, no line twice,
 * what is typed kept on the prompt).
 */
import { createInterface } from 'node:readline';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { LiveLines } from '../../cli/liveLines.ts';
import { StreamLines } from '../../cli/streamLines.ts';
import { FakeTerminal } from './fakeTerminal.ts';

/** Live lines on a fake terminal whose prompt is `› ` (no typing); `writes` holds every write, `<prompt>` for each prompt. */
const given = (columns = 40) => {
  const term = new FakeTerminal(columns);
  const writes: string[] = [];
  const live = new LiveLines({
    write: (text) => {
      writes.push(text);
      term.apply(text);
    },
    prompt: () => {
      writes.push('<prompt>');
      term.apply('\x1b[1G\x1b[0J› ');
    },
    columns: () => columns,
  });
  term.apply('› ');
  /** The writes since the last call. */
  const written = () => writes.splice(0);
  return { term, live, written };
};

describe('LiveLines', () => {
  it('shows a partial line above the prompt as it grows, and replaces it in place with the completed line', () => {
    const { term, live, written } = given();
    const reply = {};
    live.update(reply, [], 'Once upon');
    expect(written()).toEqual(['\r\x1b[2KOnce upon\n', '<prompt>']);
    expect(term.screen()).toEqual(['Once upon', '›']);

    live.update(reply, [], 'Once upon a time');
    expect(written()).toEqual(['\x1b[1A\r\x1b[JOnce upon a time\n', '<prompt>']);
    expect(term.screen()).toEqual(['Once upon a time', '›']);

    live.update(reply, ['Once upon a time there was a model.'], 'It was');
    expect(written()).toEqual(['\x1b[1A\r\x1b[JOnce upon a time there was a model.\nIt was\n', '<prompt>']);
    expect(term.screen()).toEqual(['Once upon a time there was a model.', 'It was', '›']);
  });

  it('prints a tool line above the partial and draws the partial again under it', () => {
    const { term, live, written } = given();
    const reply = {};
    live.update(reply, [], 'Let me look');
    written();
    live.print('· files_list');
    expect(written()).toEqual(['\x1b[1A\r\x1b[J· files_list\nLet me look\n', '<prompt>']);
    expect(term.screen()).toEqual(['· files_list', 'Let me look', '›']);

    live.update(reply, ['Let me look: there is nothing there yet.']);
    expect(term.screen()).toEqual(['· files_list', 'Let me look: there is nothing there yet.', '›']);
  });

  it('turns the partial into the last line when the reply ends, once, and prints what follows below it', () => {
    const { term, live, written } = given();
    const reply = {};
    live.update(reply, ['The story.'], 'The end.');
    written();
    live.update(reply, ['The end.']);
    expect(written()).toEqual(['\x1b[1A\r\x1b[JThe end.\n', '<prompt>']);
    // Nothing is shown in progress any more: the next note only clears the prompt row.
    live.print('(stopped)');
    expect(written()).toEqual(['\r\x1b[2K(stopped)\n', '<prompt>']);
    expect(term.screen()).toEqual(['The story.', 'The end.', '(stopped)', '›']);
  });

  it("keeps a second reply's partial on its own row, both right above the prompt", () => {
    const { term, live, written } = given();
    const asked = {};
    const reminder = {};
    live.update(asked, [], 'A story');
    live.update(reminder, [], '↪ Time to');
    expect(term.screen()).toEqual(['A story', '↪ Time to', '›']);
    written();
    live.update(asked, ['A story told.']);
    expect(written()).toEqual(['\x1b[2A\r\x1b[JA story told.\n↪ Time to\n', '<prompt>']);
    live.update(reminder, ['↪ Time to stretch!']);
    expect(term.screen()).toEqual(['A story told.', '↪ Time to stretch!', '›']);
  });

  it('cuts a partial that would not fit on one row, so erasing one row erases it', () => {
    const { term, live, written } = given(20);
    const reply = {};
    live.update(reply, [], `↪ ${'x'.repeat(19)}`);
    expect(written()[0]).toBe(`\r\x1b[2K↪ ${'x'.repeat(16)}…\n`);
    live.print('a note');
    expect(term.screen()).toEqual(['a note', `↪ ${'x'.repeat(16)}…`, '›']);
  });

  it('shows a line said after the partial below it, redrawn with it, and prints it after the partial once the reply ends', () => {
    const { term, live, written } = given();
    const reply = {};
    live.update(reply, [], 'Once upon');
    written();
    live.printAfter('stopping…');
    expect(written()).toEqual(['\x1b[1A\r\x1b[JOnce upon\nstopping…\n', '<prompt>']);
    expect(term.screen()).toEqual(['Once upon', 'stopping…', '›']);

    // The partial grows in its place; a note printed meanwhile goes after the one already below it.
    live.update(reply, [], 'Once upon a time');
    live.print('· files_list');
    expect(written()).toEqual([
      '\x1b[2A\r\x1b[JOnce upon a time\nstopping…\n',
      '<prompt>',
      '\x1b[2A\r\x1b[JOnce upon a time\nstopping…\n· files_list\n',
      '<prompt>',
    ]);
    live.update(reply, ['Once upon a time.']);
    expect(written()).toEqual(['\x1b[3A\r\x1b[JOnce upon a time.\nstopping…\n· files_list\n', '<prompt>']);
    live.print('(stopped)');
    expect(written()).toEqual(['\r\x1b[2K(stopped)\n', '<prompt>']);
    expect(term.screen()).toEqual(['Once upon a time.', 'stopping…', '· files_list', '(stopped)', '›']);
  });

  it('prints the lines said after two partials right after the first of them to end', () => {
    const { term, live } = given();
    const asked = {};
    const reminder = {};
    live.update(asked, [], 'A story');
    live.update(reminder, [], '↪ Time to');
    live.printAfter('stopping…');
    expect(term.screen()).toEqual(['A story', '↪ Time to', 'stopping…', '›']);
    live.update(asked, ['A story cut.']);
    live.print('(stopped)');
    expect(term.screen()).toEqual(['A story cut.', 'stopping…', '(stopped)', '↪ Time to', '›']);
    live.update(reminder, ['↪ Time to stretch!']);
    expect(term.screen()).toEqual(['A story cut.', 'stopping…', '(stopped)', '↪ Time to stretch!', '›']);
  });

  it('erases every row of a line after the partial that wraps, colours taking no room', () => {
    const { term, live } = given(20);
    const reply = {};
    live.update(reply, [], 'Once');
    live.printAfter(`\x1b[31m${'w'.repeat(30)}\x1b[39m`);
    expect(term.screen()).toEqual(['Once', 'w'.repeat(20), 'w'.repeat(10), '›']);
    live.update(reply, [], 'Once upon');
    expect(term.screen()).toEqual(['Once upon', 'w'.repeat(20), 'w'.repeat(10), '›']);
  });

  it('prints a line said after no partial as any other', () => {
    const { term, live, written } = given();
    live.printAfter('nothing of yours is being answered');
    expect(written()).toEqual(['\r\x1b[2Knothing of yours is being answered\n', '<prompt>']);
    expect(term.screen()).toEqual(['nothing of yours is being answered', '›']);
  });

  it('leaves partials on screen as printed lines once kept (their replies were cut off)', () => {
    const { term, live, written } = given();
    live.update({}, [], 'cut off here');
    live.keep();
    written();
    live.print('homed went away');
    expect(written()).toEqual(['\r\x1b[2Khomed went away\n', '<prompt>']);
    expect(term.screen()).toEqual(['cut off here', 'homed went away', '›']);
  });
});

describe('LiveLines with readline', () => {
  const opened: Array<() => void> = [];
  afterEach(() => {
    for (const close of opened.splice(0)) close();
  });

  /** A readline prompt on a fake terminal, as waiter's: typed keys go in through `keys`. */
  const givenPrompt = () => {
    const term = new FakeTerminal(40);
    const keys = new PassThrough();
    const rl = createInterface({ input: keys, output: term, terminal: true, prompt: '› ' });
    opened.push(() => rl.close());
    const live = new LiveLines({ write: (text) => term.apply(text), prompt: () => rl.prompt(true), columns: () => term.columns });
    rl.on('line', (line) => live.submitted(`› ${line}`));
    rl.prompt();
    const type = async (text: string) => {
      keys.write(text);
      await new Promise((resolve) => setImmediate(resolve));
    };
    return { term, rl, live, type };
  };

  it('keeps what the person is typing on the prompt, cursor at its end, while the partial grows and completes', async () => {
    const { term, rl, live, type } = givenPrompt();
    await type('half typed');
    const reply = {};
    live.update(reply, [], 'Once upon');
    live.update(reply, ['Once upon a time there was a model.'], 'It was');
    expect(term.screen()).toEqual(['Once upon a time there was a model.', 'It was', '› half typed']);
    expect(rl.line).toBe('half typed');
    expect(term.cursor()).toEqual({ row: 2, col: '› half typed'.length });

    // Typing goes on where it was; Enter leaves the message above the partial, which stays above the prompt.
    await type(' more\r');
    expect(term.screen()).toEqual(['Once upon a time there was a model.', '› half typed more', 'It was', '›']);
    live.update(reply, ['It was slow.']);
    expect(term.screen()).toEqual(['Once upon a time there was a model.', '› half typed more', 'It was slow.', '›']);
  });

  it('leaves a stop typed while a partial grows below it, and prints it after the partial once the reply ends', async () => {
    const { term, rl, live, type } = givenPrompt();
    rl.removeAllListeners('line');
    rl.on('line', (line) => live.submitted(`› ${line}`, line === '/stop'));
    const reply = {};
    live.update(reply, [], 'Once upon');
    await type('/stop\r');
    live.printAfter('stopping…');
    expect(term.screen()).toEqual(['Once upon', '› /stop', 'stopping…', '›']);
    await type('next');
    live.update(reply, [], 'Once upon a time');
    expect(term.screen()).toEqual(['Once upon a time', '› /stop', 'stopping…', '› next']);
    live.update(reply, ['Once upon a time']);
    expect(term.screen()).toEqual(['Once upon a time', '› /stop', 'stopping…', '› next']);
    expect(term.cursor()).toEqual({ row: 3, col: '› next'.length });
  });
});

describe('StreamLines.partial', () => {
  it('is the text no line given out holds yet, without a break and shorter than the width', () => {
    const lines = new StreamLines(() => 30);
    expect(lines.push('Once upon')).toEqual([]);
    expect(lines.partial).toBe('Once upon');
    expect(lines.push(' a time\nIt')).toEqual(['Once upon a time']);
    expect(lines.partial).toBe('It');
    lines.push(' was a long and winding road through the hills');
    expect(lines.partial.length).toBeLessThan(30);
    expect(lines.partial).not.toContain('\n');
    const partial = lines.partial;
    expect(lines.flush()).toBe(partial);
  });
});
