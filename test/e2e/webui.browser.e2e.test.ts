/**
 * The web UI in a real browser (headless chromium) against a real homed and the local test LLM
 * server, as a person uses it: opening the printed URL signs the browser in; a message streams
 * in piece by piece; Stop ends a reply that is taking too long; a call that needs approval is
 * approved from the page and runs; the machines view shows the scheduler busy while a reply runs
 * and idle after; a turn's trajectory and the live event log show what the log holds; time travel
 * shows the scheduler as it was at an earlier seq, and verify from the page finds the log matching; a 390 px window still works; and no request leaves the daemon. Screenshots of each page
 * go to test-artifacts/webui/.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFailed } from 'vitest';
import { useBrowser, webuiUrlOf } from '../support/browser.ts';
import { logOf, testDataDir, useDaemons } from '../support/homedSession.ts';
import { afterToolResult, lastUserText, startLlmServer } from '../support/llmServer/index.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const daemons = useDaemons();
const browser = useBrowser();

const STREAMED = 'Here is a reply that arrives in many small pieces, so a person can watch it being written out.';

describe('the web UI in a browser', () => {
  it('streams a reply, stops a slow one, approves a call, and shows the trajectory and the log', async () => {
    const server = await startLlmServer([
      { when: (r) => lastUserText(r) === 'hello' && !afterToolResult(r), reply: { text: STREAMED, slow: { chunkDelayMs: 100 } } },
      { when: (r) => lastUserText(r) === 'take your time', reply: { hang: true } },
      {
        when: (r) => lastUserText(r) === 'announce it' && !afterToolResult(r),
        reply: { toolCalls: [{ id: 's', name: 'output_send__webui', arguments: { payload: 'A message for the web page', type: 'text' } }] },
      },
      { when: (r) => lastUserText(r) === 'announce it' && afterToolResult(r), reply: { text: 'Announced.' } },
      {
        when: (r) => lastUserText(r) === 'remind me' && !afterToolResult(r),
        reply: { toolCalls: [{ id: 't', name: 'timer_set', arguments: { seconds: 1, note: 'stretch' } }] },
      },
      { when: (r) => lastUserText(r) === 'remind me' && afterToolResult(r), reply: { text: 'I will remind you.' } },
      { when: (r) => lastUserText(r).startsWith('Timer '), reply: { text: 'Time to stretch!' } },
      {
        when: (r) => lastUserText(r) === 'write the note' && !afterToolResult(r),
        reply: { toolCalls: [{ id: 'n', name: 'files_write', arguments: { path: 'note.txt', content: 'from the web' } }] },
      },
      { when: (r) => afterToolResult(r), reply: { text: 'The note is written.' } },
    ]);
    daemons.onCleanup(() => server.close());
    const dir = testDataDir(tempDir(), { llm: server, settings: { security: { tools: { approve: ['files_write'] } } } });
    const daemon = await daemons.start(dir);
    // What the daemon said, for a failure seen once in CI and not reproduced since (the page lost its live feed after Approve).
    const said: string[] = [daemon.output];
    for (const stream of [daemon.process.stdout, daemon.process.stderr]) stream?.on('data', (chunk) => said.push(String(chunk)));
    onTestFailed(() => console.log(`homed's output:\n${said.join('')}`));
    const url = webuiUrlOf(daemon.output);
    expect(url.hostname).toBe('127.0.0.1');
    const { page, requests, errors } = await browser.page();

    // Without the token the page says where to find it; the printed URL signs the browser in.
    await page.goto(url.origin);
    await expect(page.textContent('body')).resolves.toContain('token');
    await page.goto(url.href);
    errors.length = 0; // the unsigned visit's 401 is the one error expected
    const composer = page.locator('.composer-input');
    await composer.waitFor();

    // A message streams in: the answer is seen part-written before it is whole. Every text the
    // streaming answer shows is recorded as the page draws it, from before the message is sent,
    // so a fast machine that finishes early cannot leave the recorder nothing to see.
    await page.evaluate(() => {
      type Element = { textContent: string | null };
      type Doc = { querySelector(selector: string): Element | null; body: unknown };
      const scope = globalThis as unknown as {
        document: Doc;
        streamedTexts: string[];
        MutationObserver: new (callback: () => void) => { observe(node: unknown, options: object): void };
      };
      scope.streamedTexts = [];
      new scope.MutationObserver(() => {
        const text = scope.document.querySelector('.message.assistant.streaming .answer')?.textContent;
        if (text) scope.streamedTexts.push(text);
      }).observe(scope.document.body, { childList: true, subtree: true, characterData: true });
    });
    await composer.fill('hello');
    await composer.press('Enter');
    await page.locator('.turn[data-state="answered"] .answer', { hasText: STREAMED }).waitFor();
    const streamedTexts = await page.evaluate(() => (globalThis as unknown as { streamedTexts: string[] }).streamedTexts);
    const partial = streamedTexts.find((text) => text.length > 5 && text.length < STREAMED.length) ?? '';
    expect(partial.length, `texts seen while streaming: ${JSON.stringify(streamedTexts)}`).toBeGreaterThan(5);
    expect(STREAMED.startsWith(partial)).toBe(true);
    await browser.screenshot(page, 'chat');

    // Stop ends a reply that does not come.
    await composer.fill('take your time');
    await composer.press('Enter');
    await page.locator('.turn[data-state="running"]').waitFor();

    // Meanwhile the machines view draws every machine and lights the state each is in: the scheduler is busy.
    await page.locator('nav.views a', { hasText: 'Machines' }).click();
    await page.locator('.machine[data-machine="scheduler"][data-current="busy"]').waitFor();
    await page.locator('.machine[data-machine="scheduler"] [data-state="scheduler.busy"].active').waitFor();
    for (const machine of ['kernel', 'turn', 'pluginSupervisor', 'heartbeat']) {
      await expect(page.locator(`.machine[data-machine="${machine}"] svg`).count(), machine).resolves.toBe(1);
    }
    await browser.screenshot(page, 'machines');
    await page.locator('nav.views a', { hasText: 'Chat' }).click();
    await page.locator('.turn[data-state="running"]').waitFor();
    // A message sent meanwhile waits for its turn, shown as waiting; Cancel stops it before it
    // starts, at once, while the running reply goes on (a reload still shows that).
    await composer.fill('and this one');
    await composer.press('Enter');
    const waiting = page.locator('.turn.waiting[data-state="waiting"]', { hasText: 'and this one' });
    await waiting.waitFor();
    await waiting.locator('button.cancel-waiting').click();
    await page.locator('.turn.waiting[data-state="stopped"]', { hasText: 'and this one' }).waitFor();
    await page.locator('.turn[data-state="running"]').waitFor();
    await page.reload();
    await page.locator('.turn.waiting[data-state="stopped"]', { hasText: 'Stopped before it started.' }).waitFor();
    await page.locator('.turn[data-state="running"]').waitFor();
    const stop = page.locator('button.stop');
    await expect(stop.isEnabled()).resolves.toBe(true);
    await stop.click();
    await page.locator('.turn[data-state="cancelled"] .who', { hasText: 'stopped' }).waitFor();
    await page.locator('.turn.waiting[data-state="stopped"]', { hasText: 'and this one' }).waitFor();
    await expect(stop.isDisabled()).resolves.toBe(true);
    await page.locator('nav.views a', { hasText: 'Machines' }).click();
    await page.locator('.machine[data-machine="scheduler"][data-current="idle"]').waitFor();
    await page.locator('nav.views a', { hasText: 'Chat' }).click();

    // A call that needs approval waits for the person, and runs when approved from the page.
    await composer.fill('write the note');
    await composer.press('Enter');
    await page.locator('.tool-awaiting_approval', { hasText: 'files_write' }).waitFor();
    await browser.screenshot(page, 'approval');
    await page.locator('.tool-awaiting_approval button.approve').click();
    await page.locator('.tool-done', { hasText: 'files_write' }).waitFor();
    await page.locator('.turn[data-state="answered"] .answer', { hasText: 'The note is written.' }).waitFor();
    expect(readFileSync(join(dir, 'files', 'note.txt'), 'utf8')).toBe('from the web');

    // What the model sends to the web UI's channel on its own shows as a message of its own, not as a tool call.
    await composer.fill('announce it');
    await composer.press('Enter');
    await page.locator('.message.sent[data-channel="webui"]', { hasText: 'A message for the web page' }).waitFor();
    await page.locator('.turn[data-state="answered"] .answer', { hasText: 'Announced.' }).waitFor();

    // A reminder comes back later into the conversation it was set in, by itself, as the timer's message and its answer.
    await composer.fill('remind me');
    await composer.press('Enter');
    await page.locator('.turn[data-state="answered"] .answer', { hasText: 'I will remind you.' }).waitFor();
    const reminder = page.locator('.turn[data-state="answered"]', { hasText: 'Time to stretch!' });
    await reminder.waitFor();
    await expect(reminder.locator('.message.user').textContent()).resolves.toMatch(/timer · .*Timer \S+ fired: stretch/);
    await page.reload();
    await expect(reminder.locator('.message.user').getAttribute('data-from')).resolves.toBe('timer');
    await expect(page.locator('.message.user[data-from="you"]', { hasText: 'remind me' }).count()).resolves.toBe(1);
    await expect(page.locator('.tool', { hasText: 'output_send__webui' }).count()).resolves.toBe(0);
    await expect(page.locator('.approvals .approval').count()).resolves.toBe(0);

    // The whole session exports as JSON: every turn of the conversation with its events.
    const exported = await page.request.get(new URL((await page.locator('a.export-session').getAttribute('href'))!, url.origin).href);
    expect(exported.headers()['content-disposition']).toBe('attachment; filename="session-webui_owner.json"');
    const session = (await exported.json()) as { turns: { events: { type: string }[] }[] };
    expect(session.turns.length).toBe(await page.locator('.turn:not(.waiting)').count());
    expect(session.turns.every((t) => t.events[0]?.type === 'TurnRequested')).toBe(true);

    // The turn's trajectory: scheduling, the model's rounds, the call and its result.
    await page.locator('.turn', { hasText: 'write the note' }).locator('.trajectory-link').click();
    await page.locator('.step-ToolCalled').waitFor();
    // The memory records a turn's utterances as it ends; the open trajectory shows them when they come.
    await page.locator('.step-ContextEventAppended').first().waitFor();
    for (const type of ['TaskStarted', 'TurnRequested', 'LlmRequested', 'LlmAnswerRecorded', 'ToolResultRecorded', 'TurnCompleted']) {
      await expect(page.locator(`.step-${type}`).count()).resolves.toBeGreaterThan(0);
    }
    // By keyboard, as without a mouse: the step takes focus and Enter opens its event.
    await page.locator('.step-ToolCalled').focus();
    await page.keyboard.press('Enter');
    await expect(page.locator('.trajectory .event-json').textContent()).resolves.toContain('"note.txt"');
    await browser.screenshot(page, 'trajectory');

    // The live log, filtered.
    await page.locator('nav.views a', { hasText: 'Events' }).click();
    await page.locator('.events tbody tr', { hasText: 'TurnCompleted' }).first().waitFor();
    await page.locator('.events-bar input[type="search"]').fill('ToolCalled');
    const types = await page.locator('.events tbody tr td:nth-child(4)').allTextContents();
    expect(types.length).toBeGreaterThan(0);
    expect(types.every((t) => t === 'ToolCalled')).toBe(true);
    await browser.screenshot(page, 'events');

    // Time travel: to the seq where the first task started the scheduler is busy again; at the end, idle; verify matches.
    const [started] = await logOf(dir, '--type', 'TaskStarted');
    await page.locator('.events tbody tr', { hasText: 'ToolCalled' }).first().click();
    await page.locator('.event-json a.travel').click();
    await page.locator('.time[data-seq]').waitFor();
    await page.goto(`${url.origin}/#/time/${started!.seq}`);
    await page.locator(`.time[data-seq="${started!.seq}"] tr[data-actor="scheduler"] .actor-state`, { hasText: 'busy' }).waitFor();
    // Every actor then (no turn yet: the task has only just started), drawn on its statechart with the state it was in lit.
    await page.locator('.time .machine[data-machine="scheduler"] [data-state="scheduler.busy"].active').waitFor();
    for (const machine of ['kernel', 'pluginSupervisor', 'heartbeat']) {
      await page.locator(`.time .machine[data-machine="${machine}"] svg .active`).first().waitFor();
    }
    await expect(page.locator('.time tr[data-actor="heartbeat-review"]').count()).resolves.toBe(1);
    // A seq inside an append (the message there, its facts after) is the cut, not a divergence.
    await expect(page.locator('.actors-at .failed').count()).resolves.toBe(0);
    await browser.screenshot(page, 'time-travel');
    // Past the end is the end.
    await page.goto(`${url.origin}/#/time/999999999`);
    await page.locator(`.time[data-seq]:not([data-seq="${started!.seq}"]):not([data-loading])`).waitFor();
    const head = Number(await page.locator('.time').getAttribute('data-seq'));
    expect(head).toBeGreaterThan(started!.seq);
    await page.locator(`.time[data-seq="${head}"] tr[data-actor="scheduler"] .actor-state`, { hasText: 'idle' }).waitFor();
    await page.locator('button.step-back').click();
    await page.locator(`.time[data-seq="${head - 1}"]`).waitFor();
    await page.locator('button.run-verify').click();
    await expect(page.locator('.verify-summary').textContent({ timeout: 60_000 })).resolves.toMatch(/matches the log/);

    // The memory: the conversation's context holds what was said, and a recall answers with tiers and scores.
    await page.locator('nav.views a', { hasText: 'Memory' }).click();
    await page.locator('.memory select option', { hasText: 'webui:owner' }).waitFor({ state: 'attached' });
    await expect(page.locator('.memory select').inputValue(), 'it opens on the conversation the chat showed').resolves.toBe('webui:owner');
    await page.locator('.memory table td', { hasText: 'write the note' }).first().waitFor();
    await page.locator('.recall-form input[type="search"]').fill('the note');
    await page.locator('.recall-form button').click();
    await page.locator('.recall-results td', { hasText: 'write the note' }).first().waitFor();
    const scores = await page.locator('.recall-results tbody tr td:nth-child(2)').allTextContents();
    expect(scores.length).toBeGreaterThan(0);
    expect(scores.every((score) => Number(score) > 0)).toBe(true);
    await browser.screenshot(page, 'memory');

    // The plugins: each offers only the controls that do something as it is; stop one and start it again.
    await page.locator('nav.views a', { hasText: 'Plugins' }).click();
    const timer = page.locator('tr[data-plugin="timer"]');
    await timer.locator('.plugin-state', { hasText: 'running' }).waitFor();
    await expect(timer.locator('.actions button').allTextContents()).resolves.toEqual(['reload', 'stop', 'disable']);
    await timer.locator('.actions button', { hasText: 'stop' }).click();
    await timer.locator('.plugin-state', { hasText: 'stopped' }).waitFor();
    await expect(timer.locator('.actions button').allTextContents()).resolves.toEqual(['start', 'disable']);
    await timer.locator('.actions button', { hasText: 'start' }).click();
    await timer.locator('.plugin-state', { hasText: 'running' }).waitFor();
    await browser.screenshot(page, 'plugins');

    // A phone-sized window: the chat is still there and still sends.
    const narrow = await browser.page(390, 800);
    await narrow.page.goto(url.href);
    await narrow.page.locator('.turn[data-state="answered"]').first().waitFor();
    await browser.screenshot(narrow.page, 'chat-390');

    // Nothing was fetched from anywhere but the daemon, and the page raised no error.
    for (const request of [...requests, ...narrow.requests]) expect(request.startsWith(`${url.origin}/`), request).toBe(true);
    expect(requests.length).toBeGreaterThan(3);
    expect(errors).toEqual([]);
    expect(existsSync(join(dir, 'state', 'webui', 'token'))).toBe(true);
  });

  it('adds a model source with its key from the settings page: the key goes to the vault, is used, and is shown nowhere', async () => {
    const KEY = 'sk-webui-e2e-3f9a7c1d5b';
    const first = await startLlmServer([{ when: () => true, repeat: true, reply: { text: 'from the first source' } }]);
    const second = await startLlmServer([
      { when: (r) => lastUserText(r).startsWith('Reply with the single word'), repeat: true, reply: { text: 'ready' } },
      { when: () => true, repeat: true, reply: { text: 'from the second source' } },
    ]);
    daemons.onCleanup(() => Promise.all([first.close(), second.close()]));
    const dir = testDataDir(tempDir(), { llm: first });
    const daemon = await daemons.start(dir);
    const url = webuiUrlOf(daemon.output);
    const { page, errors } = await browser.page();
    const bodies: string[] = [];
    page.on(
      'response',
      (response) =>
        void response.text().then(
          (text) => bodies.push(text),
          () => undefined,
        ),
    );
    // Settings are read back slowly, as from a busy daemon: what the person types once the page
    // says "saved" must survive the redraw of what was saved (CI once lost the typed source name).
    await page.route('**/api/settings', async (route) => {
      if (route.request().method() === 'GET') await new Promise((resolve) => setTimeout(resolve, 300));
      await route.continue();
    });
    const settingsRead = () => page.waitForResponse((r) => r.url().endsWith('/api/settings') && r.request().method() === 'GET');
    await page.goto(url.href);
    await page.locator('nav.views a', { hasText: 'Settings' }).click();

    // The schema's own words for a setting of the wrong shape; nothing is written.
    const before = readFileSync(join(dir, 'settings.json'), 'utf8');
    await page.locator('.settings-json').fill('{"llm": {"sources": 5}}');
    await page.locator('button.save-json').click();
    await page.locator('.problems li', { hasText: 'llm.sources' }).waitFor();
    expect(readFileSync(join(dir, 'settings.json'), 'utf8')).toBe(before);

    // A setting by its field: a value of the wrong kind is refused beside the field in the schema's words, and nothing is written; a right one is saved.
    await page.locator('.settings-group[data-group="memory"] summary').click();
    const keepTopK = page.locator('.settings-form input[data-key="memory.keepTopK"]');
    await keepTopK.fill('ten');
    await page.locator('button.save-form').click();
    await page.locator('.settings-form .field-problem', { hasText: 'must be' }).waitFor();
    await expect(keepTopK.getAttribute('aria-invalid')).resolves.toBe('true');
    expect(readFileSync(join(dir, 'settings.json'), 'utf8')).toBe(before);
    await keepTopK.fill('12');
    const savedRead = settingsRead();
    await page.locator('button.save-form').click();
    await page.locator('.notice', { hasText: 'Restart homed' }).waitFor();

    // A new source, tested, then added with its key: typing starts as soon as "saved" shows.
    const form = page.locator('.source-form');
    await form.locator('input[name="name"]').fill('second');
    await savedRead;
    expect(JSON.parse(readFileSync(join(dir, 'settings.json'), 'utf8')).memory.keepTopK).toBe(12);
    await form.locator('select[name="adapter"]').selectOption('openai');
    await form.locator('input[name="baseUrl"]').fill(second.baseUrl('openai'));
    await form.locator('input[name="model"]').fill('mb');
    await form.locator('input[name="apiKey"]').fill(KEY);
    await form.locator('button', { hasText: 'Test connection' }).click();
    await form.locator('.probe .ok', { hasText: 'ready' }).waitFor();
    await form.locator('button', { hasText: 'Add source' }).click();
    await page.locator('tr[data-source="second"]', { hasText: 'vault: LLM_SECOND_KEY' }).waitFor();
    await page.locator('.notice', { hasText: 'Restart homed' }).waitFor();
    await browser.screenshot(page, 'settings');
    // The first source goes, so the next start asks the second.
    await page.locator('tr[data-source="local"] button', { hasText: 'Remove' }).click();
    await page.locator('tr[data-source="local"]').waitFor({ state: 'detached' });

    await daemons.stop(daemon);
    const again = await daemons.start(dir);
    await page.goto(webuiUrlOf(again.output).origin);
    const composer = page.locator('.composer-input');
    await composer.fill('which source is this?');
    await composer.press('Enter');
    await page.locator('.turn[data-state="answered"] .answer', { hasText: 'from the second source' }).waitFor();
    const asked = second.requests.filter((r) => lastUserText(r) === 'which source is this?');
    expect(asked.map((r) => r.headers.authorization)).toEqual([`Bearer ${KEY}`]);

    // The key is in no page, no answer the page got, no setting, no event, no line homed printed.
    await expect(page.content()).resolves.not.toContain(KEY);
    expect(bodies.length).toBeGreaterThan(5);
    for (const body of bodies) expect(body).not.toContain(KEY);
    const settings = readFileSync(join(dir, 'settings.json'), 'utf8');
    expect(settings).toContain('"apiKeySecret": "LLM_SECOND_KEY"');
    expect(settings).not.toContain(KEY);
    expect(JSON.stringify(await logOf(dir))).not.toContain(KEY);
    expect(again.output + daemon.output).not.toContain(KEY);
    // Expected: the refused save's 422, and the live feed losing the daemon while it restarted.
    expect(errors.filter((e) => !/status of 422|ERR_CONNECTION_REFUSED|ERR_INCOMPLETE_CHUNKED_ENCODING/.test(e))).toEqual([]);
  });

  it('keeps the live event view responsive at 1,000 events a second (measured, not asserted as a time)', async () => {
    const dir = testDataDir(tempDir());
    const url = webuiUrlOf((await daemons.start(dir)).output);
    const { page, errors } = await browser.page();
    await page.goto(url.href);
    await page.locator('nav.views a', { hasText: 'Events' }).click();
    await page.locator('.events tbody tr').first().waitFor();
    // Five seconds of real events' shapes, 50 every 50 ms, through the feed's own path; frame gaps sampled meanwhile.
    const measured = await page.evaluate(
      () =>
        new Promise<{ sent: number; longestFrameMs: number; frames: number }>((resolve) => {
          type Feed = { receive(events: readonly unknown[]): void };
          const scope = globalThis as unknown as { hologram: { live: Feed }; requestAnimationFrame(f: (t: number) => void): void };
          const shapes = [
            { type: 'LlmChunkRecorded', stream: 'turn-load', data: { round: 0, index: 0, text: 'piece ' } },
            { type: 'ToolCalled', stream: 'turn-load', data: { callId: 'c', name: 'files_read', owner: 'files', args: { path: 'a.txt' } } },
            { type: 'InputQueued', stream: 'scheduler', data: { inputId: 'i', source: 'load', level: 0, where: 'inbox' } },
          ];
          let seq = 1_000_000;
          let sent = 0;
          let last = performance.now();
          let longest = 0;
          let frames = 0;
          let running = true;
          const frame = (now: number) => {
            longest = Math.max(longest, now - last);
            last = now;
            frames += 1;
            if (running) scope.requestAnimationFrame(frame);
          };
          scope.requestAnimationFrame(frame);
          const tick = setInterval(() => {
            const batch = Array.from({ length: 50 }, (_, i) => ({ ...shapes[i % shapes.length]!, seq: ++seq, at: Date.now() }));
            scope.hologram.live.receive(batch);
            sent += batch.length;
            if (sent >= 5_000) {
              clearInterval(tick);
              setTimeout(() => {
                running = false;
                resolve({ sent, longestFrameMs: Math.round(longest), frames });
              }, 300);
            }
          }, 50);
        }),
    );
    console.log(`live event view at 1,000 events/s for 5 s: ${measured.frames} frames, longest frame gap ${measured.longestFrameMs} ms`);
    expect(measured.sent).toBe(5_000);
    // Every event counted, only the newest kept on the page, and the page still answers a click.
    await expect(page.locator('.counter').textContent()).resolves.toMatch(/^\d+ events$/);
    const counted = Number((await page.locator('.counter').textContent())!.split(' ')[0]);
    expect(counted).toBeGreaterThanOrEqual(5_000);
    await expect(page.locator('.events tbody tr').count()).resolves.toBeLessThanOrEqual(1_000);
    await page.locator('.events tbody tr').first().click();
    await expect(page.locator('.event-json').textContent()).resolves.toContain('"seq": 1005000');
    expect(errors).toEqual([]);
  });
});
