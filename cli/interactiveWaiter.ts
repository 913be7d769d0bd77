/**
 * `waiter` without a message: a chat session with a running homed. In a terminal it shows a
 * banner (data dir, model) and a prompt, answers /help itself, streams replies above the prompt
 * (the line in progress on its own row just above it, redrawn as it grows, so typed and streamed
 * text never mix and the first words show at once), shows a line when a tool starts, takes
 * /stop and Ctrl-C while a reply streams, shows whatever arrives for its user at any time (a
 * reminder), and reconnects when the daemon goes away and comes back. With piped input it reads
 * one message per line, prints only the replies, and ends when the last one has (one that waits
 * for a person's approval lets the next line go on, and is not waited for once the input ends).
 */
import { createInterface, type Interface } from 'node:readline';
import { type CliReply, MAX_PENDING_MESSAGES } from '../plugins/builtin/cli/cliWire.ts';
import { type CliClient, replyOfType } from './cliClient.ts';
import { NOT_AN_ANSWER } from './converse.ts';
import type { CommandOutput } from './commandOutput.ts';
import { shellWord } from './shellWords.ts';
import { DaemonRefused } from './daemonErrors.ts';
import { answerApproval, formatApprovals } from './approvals.ts';
import { formatPlugins, formatTools } from './listings.ts';
import { LiveLines } from './liveLines.ts';
import { PipedReplies } from './pipedReplies.ts';
import { StreamLines } from './streamLines.ts';
import { closestNames } from '../events/closestNames.ts';

export const INTERACTIVE_HELP = `Commands (answered here, not sent to the model):
  /stop      stop the reply under way and your messages waiting behind it (Ctrl-C does the same)
  /tools     the tools the model can call
  /plugins   the plugins, with their state
  /approvals the tool calls waiting for your approval
  /approve [ID]          run a waiting call (ID may be left out when only one waits)
  /deny [ID] [reason]    refuse it, with the reason (all of a round refused ends the turn)
  /help      this list
  /quit      leave (Ctrl-D does the same)
Anything else is a message. Replies stream above the prompt; a line starting with · is a tool
being run; one starting with ↪ came for you without being asked here (a reminder, say).`;

/** The commands a session answers itself, as /help lists them (`/exit` is also taken for /quit). */
const COMMANDS = ['/stop', '/tools', '/plugins', '/approvals', '/approve', '/deny', '/help', '/quit'] as const;

const COMMAND_NAMES = [...COMMANDS, '/exit'].map((command) => command.slice(1));

/** What is said for a line that starts with '/' and names no command: the nearest one, if any is near, and the list. */
const unknownCommand = (name: string): string => {
  const typed = name.slice(1);
  const [near] = typed ? closestNames(typed, COMMAND_NAMES, 1) : [];
  return (
    `no command ${name}; ${near ? `did you mean /${near}? ` : ''}commands: ${COMMANDS.join(' ')} ` +
    "(/help says what each does; to send a message starting with '/', put a space before it)"
  );
};

/** What a session needs of its connection to homed (a CliClient). */
export type SessionClient = Pick<CliClient, 'onReply' | 'onClose' | 'ask' | 'send' | 'close'>;

/** How long a lost daemon is waited for before the session gives up. */
const RECONNECT_FOR_MS = 60_000;
const RECONNECT_EVERY_MS = 500;

const PROMPT = '› ';

export type InteractiveOptions = Readonly<{
  dataDir: string;
  user: string;
  input: NodeJS.ReadableStream;
  /** The terminal readline draws the prompt and what is typed on (process.stdout). */
  output: NodeJS.WritableStream;
  stdout: CommandOutput;
  terminal: boolean;
  columns: () => number;
  /** One line for the user about a problem (stderr). */
  warn: (line: string) => void;
  connect: (dataDir: string) => Promise<SessionClient>;
  sleep: (ms: number) => Promise<void>;
}>;

/** A reply under way: `asked` when this session sent its message (whose `text` it keeps); `marked` once its ↪ is shown. */
type Reply = {
  lines: StreamLines;
  asked: boolean;
  streamed: boolean;
  marked: boolean;
  text?: string;
  /** Calls of the reply that wait for a person's approval (their ids). */
  approvals?: Set<string>;
  /** The line of its message went on while it waited (piped input). */
  released?: boolean;
};

/** At most this much of a message is quoted when it is stopped before its reply began. */
const QUOTED_AT_MOST = 40;

export class InteractiveWaiter {
  private client: SessionClient | undefined;
  private rl: Interface | undefined;
  /** Replies under way, by input: `asked` when this session sent the message. */
  private readonly replies = new Map<string, Reply>();
  /** Messages sent whose `accepted` has not come yet. */
  private unaccepted = 0;
  /** Their texts, oldest first (the daemon accepts them in the order they were sent). */
  private readonly unacceptedTexts: string[] = [];
  /**
   * A /stop typed while messages were sent and not yet accepted: they are stopped too, once their
   * ids come. `together`: homed takes them at once, so every stop waits for them and is sent
   * newest first, and the end of the running reply cannot start one of them.
   */
  private stopWhenTaken: { untaken: number; together: boolean } | undefined;
  private quitting = false;
  private lastInterrupt = 0;
  private finish: ((code: number) => void) | undefined;
  /** Ends the session with an error the command reports (stdout's reader went away: exit 141, quietly). */
  private broken: ((error: unknown) => void) | undefined;
  /** Piped input is taken a line at a time: the next one once this one is done (its reply ended). */
  private lines: Promise<void> = Promise.resolve();
  private replyDone: (() => void) | undefined;
  /** A message of this session was not sent or got no answer (a failure, a limit, a refusal): piped, waiter then exits 1. */
  private unanswered = false;
  /** Commands waiting for the daemon's answer: an error that comes meanwhile is theirs, said where they are. */
  private asking = 0;
  /** Piped input has ended: what is left to do is what was sent. */
  private inputEnded = false;
  /** Piped input has ended with a reply of ours still running (its approval answered): waiter ends with it. */
  private endWhenAnswered = false;
  /** Piped input has ended and waiter is saying what waits, before it exits. */
  private endingPiped = false;
  /** Piped: our replies' words, and what comes from elsewhere held until no line of ours is in progress. */
  private readonly piped: PipedReplies<Reply>;
  /** Piped lines read from the input and not yet taken (each waits for the line before it). */
  private linesNotRead = 0;
  /** A terminal's rows above the prompt: printed lines, then the replies' lines in progress. */
  private readonly live: LiveLines;

  constructor(private readonly options: InteractiveOptions) {
    this.live = new LiveLines({ write: options.stdout.write, prompt: () => this.prompt(), columns: options.columns });
    this.piped = new PipedReplies(options.stdout.write);
  }

  async run(client: SessionClient): Promise<number> {
    const done = new Promise<number>((resolve, reject) => {
      this.finish = resolve;
      this.broken = reject;
    });
    await this.attach(client);
    const { terminal, input } = this.options;
    this.rl = createInterface({ input, output: terminal ? this.options.output : undefined, terminal, prompt: PROMPT });
    this.rl.on('line', (line) => {
      if (terminal) {
        // A stop is about the lines in progress: it shows below them, where it was typed.
        this.live.submitted(`${PROMPT}${line}`, line.startsWith('/') && line.trim().split(/\s+/)[0] === '/stop');
        void this.onLine(line).catch((error: unknown) => this.failed(error));
      } else {
        const counted = line.trim() !== '';
        if (counted) this.linesNotRead += 1;
        this.lines = this.lines
          .then(() => {
            if (counted) this.linesNotRead -= 1;
            return this.onLine(line);
          })
          .catch((error: unknown) => this.failed(error));
      }
    });
    this.rl.on('close', () => {
      if (terminal) return this.end(0);
      this.inputEnded = true;
      this.giveUpIfStuck();
      void this.lines.then(() => this.endPiped());
    });
    this.rl.on('SIGINT', () => this.onInterrupt());
    this.prompt();
    return done;
  }

  private async attach(client: SessionClient): Promise<void> {
    this.client = client;
    client.onReply((reply) => {
      try {
        this.onReply(reply);
      } catch (error) {
        this.failed(error);
      }
    });
    client.onClose((lost) => void this.onLost(lost.message));
    const welcome = await client.ask({ type: 'hello', from: this.options.user }, replyOfType('welcome'));
    if (this.options.terminal) {
      const models = welcome.models.map((m) => (m.model ? `${m.name} (${m.model})` : m.name)).join(', ') || 'none configured';
      this.say(`hologram · ${this.options.dataDir} · model ${models} · you are ${welcome.conversation}`);
      this.say('type a message; /help for commands, Ctrl-D to leave');
    }
  }

  private async onLine(raw: string): Promise<void> {
    // Ended (given up, or stdout gone): a line still queued is neither sent nor run.
    if (this.quitting) return;
    const text = raw.trim();
    if (!text) return this.prompt();
    // A line that starts with '/' is a command; with a space before it, a message.
    if (raw.startsWith('/')) return this.command(text);
    if (!this.client) {
      this.unanswered = true;
      this.warn('not connected to homed right now; the message was not sent (it will be possible again once it is back)');
      return this.prompt();
    }
    const replied = this.options.terminal ? undefined : new Promise<void>((resolve) => (this.replyDone = resolve));
    try {
      this.client.send({ type: 'message', text, from: this.options.user });
      this.unaccepted += 1;
      this.unacceptedTexts.push(text);
      this.giveUpIfStuck();
    } catch (error) {
      this.replyDone = undefined;
      this.unanswered = true;
      this.warn((error as Error).message);
      return this.prompt();
    }
    this.prompt();
    await replied;
  }

  private async command(text: string): Promise<void> {
    if (this.quitting) return;
    const [name] = text.split(/\s+/);
    this.asking += 1;
    try {
      switch (name) {
        case '/help':
          this.print(INTERACTIVE_HELP);
          break;
        case '/quit':
        case '/exit':
          this.end(0);
          return;
        case '/stop':
          this.stopReplies();
          break;
        case '/tools': {
          this.print(formatTools((await this.need().ask({ type: 'tools' }, replyOfType('tools'))).tools).replace(/\n$/, ''));
          break;
        }
        case '/plugins':
          this.print(formatPlugins((await this.need().ask({ type: 'plugins' }, replyOfType('plugins'))).plugins).trimEnd());
          break;
        case '/approvals':
          this.print(formatApprovals((await this.need().ask({ type: 'approvals' }, replyOfType('approvals'))).pending));
          break;
        case '/approve':
        case '/deny':
          {
            const { approval, said } = await answerApproval(this.need(), name === '/approve', text.split(/\s+/).slice(1));
            this.answered(approval);
            this.print(said);
          }
          break;
        default:
          this.unanswered = true;
          this.warn(unknownCommand(name ?? text));
      }
    } catch (error) {
      this.unanswered = true;
      this.warn((error as Error).message);
    } finally {
      this.asking -= 1;
    }
    this.prompt();
  }

  /**
   * Piped input has ended and the message sent last is not taken: homed takes a session's next
   * message once one of MAX_PENDING_MESSAGES replies ends, and when each of those waits for a
   * person's approval none will end by itself. Said, and ended as `endPiped` does.
   */
  private giveUpIfStuck(): void {
    if (this.options.terminal || !this.inputEnded || this.unaccepted === 0 || this.quitting) return;
    const ours = [...this.replies.values()].filter((reply) => reply.asked);
    if (ours.length < MAX_PENDING_MESSAGES || ours.some((reply) => !reply.approvals?.size)) return;
    this.unanswered = true;
    const after = this.linesNotRead > 0 ? `; the ${this.linesNotRead} line(s) after it were not sent` : '';
    this.warn(
      `${this.unaccepted} message(s) not taken yet: homed takes ${MAX_PENDING_MESSAGES} at a time from one session while their replies are under way, and those wait for your approval${after}`,
    );
    void this.endPiped();
  }

  /**
   * Piped input has ended and every line is done: exit 1 if a message was not sent or not answered.
   * A reply waiting for a person's approval is not waited for (no line left could answer it): it
   * waits in homed, and how to answer it is said.
   */
  private async endPiped(): Promise<void> {
    if (this.quitting || this.endingPiped) return;
    // A reply whose line went on while it waited for approval, and which runs again, is waited for.
    if ([...this.replies.values()].some((reply) => reply.asked && reply.released && !reply.approvals?.size)) {
      this.endWhenAnswered = true;
      return;
    }
    this.endingPiped = true;
    const ours = new Map([...this.replies].filter(([, reply]) => reply.asked && reply.approvals?.size));
    // The calls a reply waits for are said one message each, which may not all have come: homed says them all.
    if (ours.size > 0 && this.client) {
      this.asking += 1;
      try {
        const { pending } = await this.client.ask({ type: 'approvals' }, replyOfType('approvals'));
        for (const { approval, input } of pending) if (input !== undefined) ours.get(input)?.approvals?.add(approval);
      } catch {
        // What came in the replies is said.
      } finally {
        this.asking -= 1;
      }
    }
    for (const reply of ours.values()) {
      for (const approval of reply.approvals ?? []) {
        this.unanswered = true;
        this.warn(
          `the reply waits for your approval of ${approval}, which homed keeps: answer with /approve ${approval} or /deny ${approval} in waiter (echo '/approve ${approval}' | waiter --data ${shellWord(this.options.dataDir)})`,
        );
      }
    }
    this.end(this.unanswered ? 1 : 0);
  }

  private need(): SessionClient {
    if (!this.client) throw new DaemonRefused('not connected to homed right now');
    return this.client;
  }

  /** Stops what this session asked for that is still being answered. */
  private stopReplies(): void {
    const asked = this.askedIds();
    if (asked.length === 0 && this.unaccepted === 0) {
      this.sayAfter('nothing of yours is being answered');
      return;
    }
    this.sayAfter('stopping…');
    if (this.unaccepted > 0) {
      // Past its limit homed takes the next message only once a reply ends: that one is stopped when taken.
      const together = asked.length < MAX_PENDING_MESSAGES;
      this.stopWhenTaken = { untaken: this.unaccepted, together };
      if (together) return;
    }
    this.cancel(asked);
  }

  /** The inputs this session asked for whose replies are under way, oldest first. */
  private askedIds(): string[] {
    return [...this.replies].filter(([, reply]) => reply.asked).map(([id]) => id);
  }

  /** Stops `inputIds`, the latest first: one still waiting ends before the end of the one running could start it. */
  private cancel(inputIds: readonly string[]): void {
    for (const inputId of [...inputIds].reverse()) this.client?.send({ type: 'cancel', inputId });
  }

  /** A message sent before a /stop was accepted (`inputId`) or refused: it is stopped with the rest. */
  private takenAfterStop(inputId: string | undefined): void {
    const stop = this.stopWhenTaken;
    if (!stop) return;
    stop.untaken -= 1;
    if (!stop.together && inputId !== undefined) this.cancel([inputId]);
    if (stop.untaken > 0) return;
    this.stopWhenTaken = undefined;
    if (stop.together) this.cancel(this.askedIds());
  }

  private onInterrupt(): void {
    if ([...this.replies.values()].some((r) => r.asked)) return this.stopReplies();
    const now = Date.now();
    if (now - this.lastInterrupt < 2_000) return this.end(0);
    this.lastInterrupt = now;
    this.say('(Ctrl-C again, Ctrl-D or /quit to leave)');
    this.prompt();
  }

  private onReply(reply: CliReply): void {
    switch (reply.type) {
      case 'accepted': {
        this.unaccepted = Math.max(0, this.unaccepted - 1);
        const entry = this.replyFor(reply.inputId, true);
        entry.asked = true;
        entry.text = this.unacceptedTexts.shift();
        this.takenAfterStop(reply.inputId);
        return;
      }
      case 'chunk': {
        const entry = this.replyFor(reply.inputId, false);
        entry.streamed = true;
        // Its approvals were answered (elsewhere, maybe): it runs on.
        entry.approvals?.clear();
        if (!this.options.terminal) {
          // One asked elsewhere (a reminder, a reply a run before this one left waiting) would mix into ours.
          if (entry.asked) this.piped.words(reply.text);
          else this.piped.hold(entry, reply.text);
          return;
        }
        const lines = this.mark(entry, entry.lines.push(reply.text));
        this.live.update(entry, lines, this.inProgress(entry));
        return;
      }
      case 'tool': {
        const entry = reply.inputId === undefined ? undefined : this.replies.get(reply.inputId);
        // A tool starts: whatever approval the reply waited for was answered.
        if (entry) entry.approvals?.clear();
        this.say(`· ${reply.name}`, true);
        return;
      }
      case 'message': {
        const of = reply.inputId === undefined ? undefined : this.replies.get(reply.inputId);
        // Ours (its call waits for approval) is not marked ↪: that mark is for what came unasked.
        if (this.options.terminal) this.say(of?.asked ? reply.text : `↪ ${reply.text}`);
        else if (of?.asked) {
          // After its streamed words, on a line of its own.
          this.piped.line(reply.text);
        } else {
          // From elsewhere: after what came of its reply so far, once no line of ours is in progress.
          this.piped.fromElsewhere(of, `↪ ${reply.text}\n`);
        }
        const entry = reply.approval !== undefined ? of : undefined;
        if (entry?.asked) {
          entry.approvals ??= new Set();
          entry.approvals.add(reply.approval!);
          // Piped, the lines after this one go on: none of them can be the answer it waits for.
          if (!entry.released) this.releaseLine();
          entry.released = true;
          this.giveUpIfStuck();
          if (this.endWhenAnswered) void this.endPiped();
        }
        return;
      }
      case 'end':
        return this.ended(reply);
      case 'error':
        // A command's error is said by the command.
        if (this.asking > 0) return;
        this.unanswered = true;
        this.warn(reply.message);
        if (this.unaccepted > 0) this.unaccepted -= 1;
        this.unacceptedTexts.shift();
        this.takenAfterStop(undefined);
        this.releaseLine();
        return;
      default:
        return;
    }
  }

  /** The reply under way for `inputId` (one that carries none is taken as the newest asked). */
  private replyFor(inputId: string | undefined, asked: boolean): Reply {
    const id = inputId ?? [...this.replies.keys()].at(-1) ?? 'unknown';
    let entry = this.replies.get(id);
    if (!entry) {
      entry = { lines: new StreamLines(this.options.columns), asked, streamed: false, marked: false };
      this.replies.set(id, entry);
    }
    return entry;
  }

  /** The line in progress of a reply as shown: with the ↪ its first line will have when nobody here asked for it. */
  private inProgress(entry: Reply): string {
    const partial = entry.lines.partial;
    return partial && !entry.asked && !entry.marked ? `↪ ${partial}` : partial;
  }

  /** A reply nobody here asked for is marked on its first line. */
  private mark(entry: Reply, lines: string[]): string[] {
    if (entry.asked || entry.marked || lines.length === 0) return lines;
    entry.marked = true;
    return [`↪ ${lines[0]}`, ...lines.slice(1)];
  }

  private ended(reply: Extract<CliReply, { type: 'end' }>): void {
    const id = reply.inputId ?? [...this.replies.keys()].at(-1);
    const entry = id === undefined ? undefined : this.replies.get(id);
    if (id !== undefined) this.replies.delete(id);
    // Not one of ours (each of ours has its entry from `accepted` on).
    const foreign = entry ? !entry.asked : reply.inputId !== undefined;
    if (this.options.terminal) {
      const rest = entry?.lines.flush();
      // The line in progress is given out as the reply's last line, in its place.
      if (entry && rest !== undefined) this.live.update(entry, this.mark(entry, [rest]));
      // A stopped reply is said once, as (stopped) below, not also with the daemon's '(cancelled)'.
      if (reply.text && reply.outcome !== 'failed' && reply.outcome !== 'cancelled') this.say(reply.text);
    } else if (foreign) {
      this.piped.fromElsewhere(entry, reply.text && reply.outcome !== 'failed' ? `↪ ${reply.text.replace(/\n$/, '')}\n` : undefined);
    } else if (entry?.streamed || (reply.text && reply.outcome !== 'failed')) {
      this.piped.ended(`${reply.text && reply.outcome !== 'failed' ? `${entry?.streamed ? '\n' : ''}${reply.text}` : ''}\n`);
    }
    if (entry?.asked && (reply.outcome === 'failed' || (reply.outcome !== undefined && NOT_AN_ANSWER[reply.outcome])))
      this.unanswered = true;
    if (reply.outcome === 'failed') this.warn(foreign ? `a reply asked for elsewhere failed: ${reply.text}` : reply.text);
    else if (reply.outcome && NOT_AN_ANSWER[reply.outcome] && reply.outcome !== 'cancelled') this.warn(NOT_AN_ANSWER[reply.outcome]!);
    else if (reply.outcome === 'cancelled' && this.options.terminal) {
      this.say(reply.stoppedFor === 'shutdown' ? '(stopped: homed is stopping)' : stoppedNote(entry));
    }
    this.prompt();
    // One that waited for approval let its line go on already.
    if (entry?.asked && !entry.released) this.releaseLine();
    if (this.endWhenAnswered) void this.endPiped();
  }

  /** Approval `approval` was answered here: the reply waiting for it runs on (or ends refused). */
  private answered(approval: string): void {
    for (const reply of this.replies.values()) reply.approvals?.delete(approval);
  }

  private async onLost(why: string): Promise<void> {
    this.client = undefined;
    this.unacceptedTexts.length = 0;
    this.stopWhenTaken = undefined;
    const cut = [...this.replies.values()].some((r) => r.asked) || this.unaccepted > 0;
    this.replies.clear();
    this.live.keep();
    this.unaccepted = 0;
    if (this.quitting) return;
    if (!this.options.terminal) {
      this.warn(why);
      return this.end(1);
    }
    this.warn(`homed went away${cut ? ' (the reply under way was cut off)' : ''}; trying to reconnect for ${RECONNECT_FOR_MS / 1000} s…`);
    const deadline = Date.now() + RECONNECT_FOR_MS;
    while (Date.now() < deadline && !this.quitting) {
      await this.options.sleep(RECONNECT_EVERY_MS);
      try {
        const client = await this.options.connect(this.options.dataDir);
        this.say('reconnected to homed');
        await this.attach(client);
        this.prompt();
        return;
      } catch {
        // not back yet
      }
    }
    if (!this.quitting) {
      // Why the connection went is news only when a reply was cut by it; otherwise it only speaks of an answer no one waited for.
      this.warn(
        `homed did not come back within ${RECONNECT_FOR_MS / 1000} s${cut ? ` (${why})` : ''}; ` +
          `start it (homed run --data ${this.options.dataDir}) and run waiter again`,
      );
      this.end(1);
    }
  }

  /** Piped input: the line waiting for its reply may go on to the next. */
  private releaseLine(): void {
    const done = this.replyDone;
    this.replyDone = undefined;
    done?.();
  }

  /** A write failed (stdout's reader went away, a full disk): the session ends with that error. */
  private failed(error: unknown): void {
    if (this.quitting) return;
    this.quitting = true;
    this.rl?.close();
    this.client?.close();
    this.broken?.(error);
  }

  private end(code: number): void {
    if (this.quitting) return;
    try {
      this.piped.finish();
    } catch (error) {
      return this.failed(error);
    }
    this.quitting = true;
    this.releaseLine();
    this.rl?.close();
    this.client?.close();
    this.finish?.(code);
  }

  private prompt(): void {
    if (this.options.terminal && !this.quitting) this.rl?.prompt(true);
  }

  /** What a command answers: above the prompt in a terminal, plain lines otherwise. */
  private print(text: string): void {
    if (this.options.terminal) this.say(text);
    else this.options.stdout.write(`${text}\n`);
  }

  /** A note above the prompt in a terminal (the banner, a tool, `stopping…`); nothing otherwise. */
  private say(text: string, dim = false): void {
    if (this.options.terminal) this.live.print(dim ? `\x1b[2m${text}\x1b[22m` : text);
  }

  /** A note about the lines in progress (`stopping…`): below them in a terminal, printed after the first to end; nothing otherwise. */
  private sayAfter(text: string): void {
    if (this.options.terminal) this.live.printAfter(text);
  }

  private warn(line: string): void {
    if (this.options.terminal) this.live.print(`\x1b[31mwaiter: ${line}\x1b[39m`);
    else this.options.warn(`waiter: ${line}`);
  }
}

/** How a stopped reply is told: a message stopped while it waited its turn is named, so two stops are told apart. */
const stoppedNote = (entry: Reply | undefined): string => {
  if (entry?.streamed || entry?.text === undefined) return '(stopped)';
  const oneLine = entry.text.replace(/\s+/g, ' ').trim();
  const quoted = oneLine.length > QUOTED_AT_MOST ? `${oneLine.slice(0, QUOTED_AT_MOST - 1)}…` : oneLine;
  return `(stopped before it began: "${quoted}")`;
};
