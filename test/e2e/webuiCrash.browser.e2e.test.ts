/**
 * The web UI across a daemon killed mid-reply (SIGKILL, no chance to say goodbye) and started
 * again on the same port: the open page says it is reconnecting, comes back live by itself (the
 * token survives the restart, the live feed resumes after the last seq it had), shows the reply
 * that was cut off as ended rather than streaming forever, and the conversation goes on.
 */
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { useBrowser, webuiUrlOf } from '../support/browser.ts';
import { testDataDir, useDaemons } from '../support/homedSession.ts';
import { lastUserText, startLlmServer } from '../support/llmServer/index.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const daemons = useDaemons();
const browser = useBrowser();

/** A port nothing listens on now (the daemon takes it next). */
const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });

describe('the web UI when the daemon is killed', () => {
  it('reconnects by itself once homed is back, ends the reply that was cut off, and the chat goes on', async () => {
    const server = await startLlmServer([
      { when: (r) => lastUserText(r) === 'before', reply: { text: 'answered before the kill' } },
      { when: (r) => lastUserText(r) === 'take your time', reply: { hang: true } },
      { when: (r) => lastUserText(r) === 'after', reply: { text: 'answered after the restart' } },
      { when: () => true, repeat: true, reply: { text: 'something else' } },
    ]);
    daemons.onCleanup(() => server.close());
    const dir = testDataDir(tempDir(), { llm: server, settings: { plugins: { webui: { port: await freePort() } } } });
    const first = await daemons.start(dir);
    const url = webuiUrlOf(first.output);
    const { page, requests } = await browser.page();
    await page.goto(url.href);
    const composer = page.locator('.composer-input');
    const status = page.locator('header .status');
    await status.filter({ hasText: 'live' }).waitFor();
    await composer.fill('before');
    await composer.press('Enter');
    await page.locator('.turn[data-state="answered"] .answer', { hasText: 'answered before the kill' }).waitFor();
    await composer.fill('take your time');
    await composer.press('Enter');
    await page.locator('.turn[data-state="running"]').waitFor();

    first.process.kill('SIGKILL');
    await status.filter({ hasText: 'reconnecting' }).waitFor();

    const second = await daemons.start(dir);
    expect(webuiUrlOf(second.output).port, 'the same port, so the open page can come back').toBe(url.port);
    await status.filter({ hasText: 'live' }).waitFor({ timeout: 30_000 });
    // The cut-off reply is not left streaming: the restarted daemon's facts end it, and the page shows them.
    await page.locator('.turn[data-state="running"]').waitFor({ state: 'detached', timeout: 30_000 });
    await page.locator('.turn[data-state="cancelled"] .answer', { hasText: 'Cut off' }).waitFor();
    await composer.fill('after');
    await composer.press('Enter');
    await page.locator('.turn[data-state="answered"] .answer', { hasText: 'answered after the restart' }).waitFor();
    await expect(page.locator('.turn .answer', { hasText: 'answered before the kill' }).count()).resolves.toBe(1);
    await browser.screenshot(page, 'after-kill');
    expect(requests.filter((r) => new URL(r).hostname !== '127.0.0.1')).toEqual([]);
    await daemons.stop(second);
  }, 120_000);
});
