/**
 * The chat: conversations on the side, the chosen one's turns (input, tool calls, approvals,
 * the answer streaming in, what the model sent to a channel, failures as failures), the messages
 * still waiting for their turn (queued, with Cancel), a composer with a stop button.
 */
import { type Approval, api, type Delivery } from './api.ts';
import {
  foldTurnEvent,
  foldWaiting,
  inputSourceOf,
  isFailure,
  isOver,
  type LoggedEvent,
  senderOf,
  type ToolView,
  type TurnView,
  WAITING_EVENT_TYPES,
  type WaitingInput,
} from './chatFold.ts';
import { clear, h, json, time } from './dom.ts';
import type { LiveFeed } from './live.ts';

const STATUS_TEXT: Record<ToolView['status'], string> = {
  awaiting_approval: 'waiting for your approval',
  running: 'running',
  done: 'done',
  failed: 'failed',
  refused: 'refused by the firewall',
  denied: 'denied by a stage',
  refused_by_person: 'not approved',
};

/** What a turn that ended without its answer says, by why it ended. */
const CANCELLED_TEXT = (reason: string | undefined): string =>
  reason === 'abandoned'
    ? 'Cut off: homed went away before it answered.'
    : reason === 'shutdown'
      ? 'Cut off: homed was shut down before it answered.'
      : 'Stopped before it answered.';

export class ChatView {
  readonly element = h('section', { class: 'chat', 'aria-label': 'Chat' });
  private readonly list = h('nav', { class: 'conversations', 'aria-label': 'Conversations' });
  private readonly messages = h('div', { class: 'messages', role: 'log', 'aria-live': 'polite', 'aria-label': 'Messages' });
  private readonly approvalsBox = h('div', { class: 'approvals', 'aria-live': 'polite' });
  private readonly input = h('textarea', {
    class: 'composer-input',
    rows: 2,
    placeholder: 'Message Hologram (Enter sends, Shift+Enter for a new line)',
    'aria-label': 'Message',
  }) as HTMLTextAreaElement;
  private readonly sendButton = h('button', { type: 'submit', class: 'primary' }, 'Send') as HTMLButtonElement;
  private readonly stopButton = h('button', { type: 'button', class: 'stop', disabled: true }, 'Stop') as HTMLButtonElement;
  private readonly errorLine = h('p', { class: 'error', role: 'alert' });
  private turns = new Map<string, TurnView>();
  private drafts = new Map<string, string>();
  /** The plugin each input came through (by input id), so a reminder is not shown as the person's words. */
  private sources = new Map<string, string>();
  /** This conversation's messages that have no turn yet, by input id. */
  private waiting = new Map<string, WaitingInput>();
  private approvals: readonly Approval[] = [];
  private conversations: { key: string; lastInput: string }[] = [];
  private key = '';

  /** The conversation shown (the memory view opens on it). */
  get conversation(): string {
    return this.key;
  }
  private rendering = false;

  constructor(live: LiveFeed) {
    const form = h(
      'form',
      {
        class: 'composer',
        onsubmit: (event: Event) => {
          event.preventDefault();
          void this.send();
        },
      },
      this.input,
      this.sendButton,
      this.stopButton,
    );
    this.input.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        void this.send();
      }
    });
    this.stopButton.addEventListener('click', () => void this.stop());
    const newConversation = h(
      'form',
      {
        class: 'new-conversation',
        onsubmit: (event: Event) => {
          event.preventDefault();
          const field = (event.target as HTMLFormElement).elements.namedItem('name') as HTMLInputElement;
          const name = field.value.trim().replace(/[^\w.@-]/g, '-');
          if (name) location.hash = `#/chat/${encodeURIComponent(`webui:${name}`)}`;
          field.value = '';
        },
      },
      h('label', { for: 'new-conversation' }, 'New conversation'),
      h('input', { id: 'new-conversation', name: 'name', placeholder: 'name', autocomplete: 'off' }),
    );
    this.element.append(
      h('aside', { class: 'sidebar' }, this.list, newConversation),
      h('div', { class: 'thread' }, this.approvalsBox, this.messages, this.errorLine, form),
    );
    live.events((events) => this.logged(events));
    live.deliveries((delivery) => this.delivered(delivery));
  }

  async show(key: string, conversations: readonly { key: string; lastInput: string }[], approvals: readonly Approval[]): Promise<void> {
    this.conversations = conversations.map((c) => ({ key: c.key, lastInput: c.lastInput }));
    this.approvals = approvals;
    if (!this.conversations.some((c) => c.key === key)) this.conversations.unshift({ key, lastInput: '' });
    this.key = key;
    this.turns = new Map();
    this.drafts = new Map();
    const loaded = await api.conversation(key);
    this.waiting = new Map(loaded.waiting.map((w) => [w.inputId, w]));
    this.sources = new Map();
    for (const { turnId, events, source } of loaded.turns) {
      let turn: TurnView | undefined;
      for (const event of events) turn = foldTurnEvent(turn, event);
      if (!turn) continue;
      this.turns.set(`turn-${turnId}`, turn);
      if (source) this.sources.set(turn.taskId, source);
    }
    this.render();
    this.input.focus();
  }

  private logged(events: readonly LoggedEvent[]): void {
    let changed = false;
    let approvalsChanged = false;
    for (const event of events) {
      const source = inputSourceOf(event);
      if (source) this.sources.set(...source);
      const waited = this.waiting.size;
      foldWaiting(this.waiting, this.key, event);
      if ((WAITING_EVENT_TYPES as readonly string[]).includes(event.type) || this.waiting.size !== waited) changed = true;
      if (!event.stream.startsWith('turn-')) continue;
      if (event.type === 'ApprovalRequested' || event.type === 'InputDelivered' || event.type === 'ToolCalled') approvalsChanged = true;
      const known = this.turns.get(event.stream);
      if (event.type === 'TurnRequested') {
        const turn = foldTurnEvent(undefined, event)!;
        if (!this.conversations.some((c) => c.key === turn.conversation)) {
          this.conversations.unshift({ key: turn.conversation, lastInput: turn.input });
          changed = true;
        }
        if (turn.conversation !== this.key) continue;
        this.turns.set(event.stream, turn);
        changed = true;
      } else if (known) {
        foldTurnEvent(known, event);
        if (event.type === 'OutputSent') this.drafts.delete(known.taskId);
        changed = true;
      }
    }
    if (approvalsChanged) void this.refreshApprovals();
    if (changed) this.schedule();
  }

  private delivered(delivery: Delivery): void {
    if (delivery.target !== null && delivery.target !== this.key) return;
    if (delivery.kind !== 'chunk' || !delivery.inputId) return;
    const turn = [...this.turns.values()].find((t) => t.taskId === delivery.inputId);
    if (turn?.answer) return;
    this.drafts.set(delivery.inputId, (this.drafts.get(delivery.inputId) ?? '') + delivery.text);
    this.schedule();
  }

  private async refreshApprovals(): Promise<void> {
    this.approvals = (await api.approvals()).approvals;
    this.schedule();
  }

  private schedule(): void {
    if (this.rendering) return;
    this.rendering = true;
    requestAnimationFrame(() => {
      this.rendering = false;
      this.render();
    });
  }

  private running(): TurnView[] {
    return [...this.turns.values()].filter((turn) => !isOver(turn));
  }

  private async send(): Promise<void> {
    const text = this.input.value;
    if (!text.trim()) return;
    this.errorLine.textContent = '';
    this.sendButton.disabled = true;
    try {
      await api.send(this.key, text);
      this.input.value = '';
    } catch (error) {
      this.errorLine.textContent = `Not sent: ${(error as Error).message}`;
    } finally {
      this.sendButton.disabled = false;
      this.input.focus();
    }
  }

  private async stop(): Promise<void> {
    const running = this.running();
    try {
      if (running.length === 0) await api.stop();
      else await Promise.all(running.map((turn) => api.cancel(turn.taskId)));
    } catch (error) {
      this.errorLine.textContent = `Could not stop: ${(error as Error).message}`;
    }
  }

  private async answer(approval: string, approved: boolean): Promise<void> {
    try {
      await api.approve(approval, approved, approved ? undefined : 'refused from the web UI');
      await this.refreshApprovals();
    } catch (error) {
      this.errorLine.textContent = `Could not answer: ${(error as Error).message}`;
    }
  }

  private render(): void {
    clear(
      this.list,
      h('h2', {}, 'Conversations'),
      h(
        'ul',
        {},
        this.conversations.map((c) =>
          h(
            'li',
            {},
            h(
              'a',
              { href: `#/chat/${encodeURIComponent(c.key)}`, 'aria-current': c.key === this.key ? 'page' : undefined, title: c.lastInput },
              c.key,
            ),
          ),
        ),
      ),
      h(
        'a',
        {
          class: 'export-session',
          href: `/api/conversation?key=${encodeURIComponent(this.key)}&download=1`,
          download: true, // the daemon names the file
        },
        `Export ${this.key} (JSON)`,
      ),
    );
    const pending = this.approvals;
    clear(
      this.approvalsBox,
      ...pending.map((a) =>
        h(
          'div',
          { class: 'approval', role: 'group', 'aria-label': `Approval ${a.approval}` },
          h('span', {}, `${a.name} waits for your approval (${a.approval}, ${a.conversation})`),
          h('button', { type: 'button', class: 'approve', onclick: () => void this.answer(a.approval, true) }, 'Approve'),
          h('button', { type: 'button', class: 'deny', onclick: () => void this.answer(a.approval, false) }, 'Deny'),
        ),
      ),
    );
    const stick = this.messages.scrollTop + this.messages.clientHeight >= this.messages.scrollHeight - 40;
    clear(
      this.messages,
      // In the order they were said: a message stopped before it started stays where it was sent.
      ...[
        ...[...this.turns.values()].map((turn) => ({ at: turn.at, element: () => this.turnElement(turn) })),
        ...[...this.waiting.values()].map((input) => ({ at: input.at, element: () => this.waitingElement(input) })),
      ]
        .sort((a, b) => a.at - b.at)
        .map((entry) => entry.element()),
    );
    if (this.turns.size === 0 && this.waiting.size === 0)
      this.messages.append(h('p', { class: 'empty' }, `No messages in ${this.key} yet. Say something below.`));
    if (stick) this.messages.scrollTop = this.messages.scrollHeight;
    this.stopButton.disabled = this.running().length === 0;
  }

  private turnElement(turn: TurnView): HTMLElement {
    const draft = this.drafts.get(turn.taskId);
    const failed = isFailure(turn);
    const answer = turn.answer?.text ?? draft ?? '';
    const state = isOver(turn) ? (turn.outcome ?? '') : 'running';
    const from = senderOf(this.sources.get(turn.taskId));
    return h(
      'article',
      { class: 'turn', 'data-turn': turn.turnId, 'data-state': state },
      h(
        'div',
        { class: 'message user', 'data-from': from },
        h('span', { class: 'who' }, `${from} · ${time(turn.at)}`),
        h('p', {}, turn.input),
      ),
      turn.tools.map((tool) => this.toolElement(tool)),
      turn.sent.map((sent) =>
        h(
          'div',
          { class: 'message assistant sent', 'data-channel': sent.channel },
          h('span', { class: 'who' }, `Hologram → ${sent.channel}`),
          h('p', {}, sent.text),
        ),
      ),
      h(
        'div',
        { class: `message assistant${failed ? ' failure' : ''}${isOver(turn) ? '' : ' streaming'}`, ...(failed ? { role: 'alert' } : {}) },
        h(
          'span',
          { class: 'who' },
          failed ? 'failed' : turn.outcome === 'cancelled' ? 'stopped' : 'Hologram',
          ' · ',
          h('a', { href: `#/turn/${turn.turnId}`, class: 'trajectory-link' }, 'trajectory'),
        ),
        h(
          'p',
          { class: 'answer' },
          answer || (turn.outcome === 'cancelled' ? CANCELLED_TEXT(turn.cancelReason) : isOver(turn) ? '(no answer)' : '…'),
        ),
      ),
    );
  }

  private waitingElement(input: WaitingInput): HTMLElement {
    const note = input.ended
      ? input.ended === 'stopped before it started'
        ? 'Stopped before it started.'
        : `This message ${input.ended}.`
      : input.cancelled
        ? 'Cancelled: it will not run.'
        : input.queued
          ? 'Queued: the agent is busy with another task; this message is answered after it.'
          : 'Waiting for its turn…';
    const state = input.ended ? 'stopped' : input.cancelled ? 'cancelled' : 'waiting';
    return h(
      'article',
      { class: 'turn waiting', 'data-input': input.inputId, 'data-state': state },
      h('div', { class: 'message user' }, h('span', { class: 'who' }, `you · ${time(input.at)}`), h('p', {}, input.text)),
      h(
        'p',
        { class: 'waiting-note muted' },
        note,
        state !== 'waiting'
          ? null
          : h('button', { type: 'button', class: 'cancel-waiting', onclick: () => void this.cancelWaiting(input.inputId) }, 'Cancel'),
      ),
    );
  }

  private async cancelWaiting(inputId: string): Promise<void> {
    try {
      await api.cancel(inputId);
    } catch (error) {
      this.errorLine.textContent = `Could not cancel: ${(error as Error).message}`;
    }
  }

  private toolElement(tool: ToolView): HTMLElement {
    const pending = tool.approval ? this.approvals.find((a) => a.approval === tool.approval) : undefined;
    return h(
      'div',
      { class: `tool tool-${tool.status}`, 'data-call': tool.callId },
      h('span', { class: 'tool-name' }, tool.name),
      h('span', { class: 'tool-status' }, STATUS_TEXT[tool.status]),
      tool.note ? h('p', { class: tool.status === 'awaiting_approval' ? 'tool-why' : 'tool-note' }, tool.note) : null,
      h('details', {}, h('summary', {}, 'arguments'), h('pre', {}, json(tool.args))),
      tool.result !== undefined ? h('details', {}, h('summary', {}, 'result'), h('pre', {}, tool.result)) : null,
      pending
        ? h(
            'div',
            { class: 'tool-actions' },
            h('button', { type: 'button', class: 'approve', onclick: () => void this.answer(pending.approval, true) }, 'Approve'),
            h('button', { type: 'button', class: 'deny', onclick: () => void this.answer(pending.approval, false) }, 'Deny'),
          )
        : null,
    );
  }
}
