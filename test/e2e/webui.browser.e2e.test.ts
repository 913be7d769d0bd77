/**
 * The web UI in a real browser (headless chromium) against a real homed and the local test LLM
 * server, as a person uses it: opening the printed URL signs the browser in; a message streams
 * in piece by piece; Stop ends a reply that is taking too long; a call that needs approval is
 * approved from the page and runs; the machines view shows the scheduler busy while a reply runs
 * and idle after; a turn's trajectory and the live event log show what the log holds; a 390 px window still works; and no request leaves the daemon. Screenshots of each page
 * go to test-artifacts/webui/.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useBrowser, webuiUrlOf } from '../support/browser.ts';
import { testDataDir, useDaemons } from '../support/homedSession.ts';
import { afterToolResult, lastUserText, startLlmServer } from '../support/llmServer/index.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const daemons = useDaemons();
const browser = useBrowser();

const STREAMED = 'Here is a reply that arrives in many small pieces, so a person can watch it being written out.';

describe('the web UI in a browser', () => {
  it('streams a reply, stops a slow one, approves a call, and shows the trajectory and the log', async () => {
    const server = await startLlmServer([
      { when: (r) => lastUserText(r) === 'hello' && !afterToolResult(r), reply: { text: STREAMED, slow: { chunkDelayMs: 60 } } },
      { when: (r) => lastUserText(r) === 'take your time', reply: { hang: true } },
      {
        when: (r) => lastUserText(r) === 'write the note' && !afterToolResult(r),
        reply: { toolCalls: [{ id: 'n', name: 'files_write', arguments: { path: 'note.txt', content: 'from the web' } }] },
      },
      { when: (r) => afterToolResult(r), reply: { text: 'The note is written.' } },
    ]);
    daemons.onCleanup(() => server.close());
    const dir = testDataDir(tempDir(), { llm: server, settings: { security: { tools: { approve: ['files_write'] } } } });
    const daemon = await daemons.start(dir);
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

    // A message streams in: the answer is seen part-written before it is whole.
    await composer.fill('hello');
    await composer.press('Enter');
    const streaming = page.locator('.message.assistant.streaming .answer');
    await streaming.waitFor();
    // Sampled in the page every few ms (the list is drawn anew as pieces come): some text, not yet all of it.
    const partial = await page.evaluate(
      (whole) =>
        new Promise<string>((resolve) => {
          type Doc = { querySelector(selector: string): { textContent: string | null } | null };
          const doc = (globalThis as unknown as { document: Doc }).document;
          const started = Date.now();
          const sample = () => {
            const text = doc.querySelector('.message.assistant.streaming .answer')?.textContent ?? '';
            if (text.length > 5 && text.length < whole.length && whole.startsWith(text)) resolve(text);
            else if (Date.now() - started > 15_000) resolve('');
            else setTimeout(sample, 5);
          };
          sample();
        }),
      STREAMED,
    );
    expect(partial.length).toBeGreaterThan(5);
    expect(STREAMED.startsWith(partial)).toBe(true);
    await page.locator('.turn[data-state="answered"] .answer', { hasText: STREAMED }).waitFor();
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
    const stop = page.locator('button.stop');
    await expect(stop.isEnabled()).resolves.toBe(true);
    await stop.click();
    await page.locator('.turn[data-state="cancelled"] .who', { hasText: 'stopped' }).waitFor();
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
    await expect(page.locator('.approvals .approval').count()).resolves.toBe(0);

    // The turn's trajectory: scheduling, the model's rounds, the call and its result.
    await page.locator('.turn').last().locator('.trajectory-link').click();
    await page.locator('.step-ToolCalled').waitFor();
    for (const type of ['TaskStarted', 'TurnRequested', 'LlmRequested', 'LlmAnswerRecorded', 'ToolResultRecorded', 'TurnCompleted']) {
      await expect(page.locator(`.step-${type}`).count()).resolves.toBeGreaterThan(0);
    }
    await page.locator('.step-ToolCalled').click();
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
});
