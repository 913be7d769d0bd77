/**
 * The time travel view in a real browser while the daemon's time travel is busy (one request
 * running and one waiting, asked by another client over a long log): a step says that time
 * travel is busy and to try again, and keeps the seq it shows; verify says the same; once the
 * daemon is free, the next step moves the view and the message goes.
 */
import { request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import { useBrowser, webuiUrlOf } from '../support/browser.ts';
import { useDaemons } from '../support/homedSession.ts';
import { longLogDataDir } from '../support/longLog.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const daemons = useDaemons();
const browser = useBrowser();

const BUSY = 'time travel is busy: one request is running and one is waiting; try again when they are done';

/** The status of a time travel asked by another client. */
const timeAt = (url: URL, token: string, seq: number) =>
  new Promise<number>((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, path: `/api/time?seq=${seq}`, headers: { host: url.host, authorization: `Bearer ${token}` } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end();
  });

/**
 * Fills the daemon's time travel (each further back than the last, so each rebuilds from the
 * start); resolves once two were refused, that is once one runs and one waits, with what
 * will be the answers of all four.
 */
const fillTimeTravel = async (url: URL, token: string, from: number) => {
  const asked = [0, 1, 2, 3].map((back) => timeAt(url, token, from - back));
  let refused = 0;
  await Promise.race([
    new Promise<void>((resolve) => {
      for (const answer of asked) void answer.then((status) => status === 429 && ++refused === 2 && resolve());
    }),
    Promise.all(asked),
  ]);
  expect(refused, 'two of the four refused: one runs and one waits').toBe(2);
  return { answers: Promise.all(asked) };
};

describe('time travel in the browser while the daemon is busy', () => {
  it('says time travel is busy, keeps what it shows, and moves on once the daemon is free', async () => {
    const dir = await longLogDataDir(daemons, tempDir());
    const url = webuiUrlOf((await daemons.start(dir)).output);
    const token = url.searchParams.get('token')!;
    const { page } = await browser.page();
    await page.goto(url.href);
    await page.goto(`${url.origin}/#/time/999999999`);
    await page.locator('.time[data-seq]:not([data-loading])').waitFor({ timeout: 30_000 });
    const head = Number(await page.locator('.time').getAttribute('data-seq'));

    const held = await fillTimeTravel(url, token, head - 1);
    await page.locator('button.step-back').click();
    await page.locator('.time-notice', { hasText: 'time travel is busy' }).waitFor();
    await expect(page.locator('.time-notice').textContent()).resolves.toBe(`Not moved: ${BUSY}`);
    await expect(page.locator('.time').getAttribute('data-seq')).resolves.toBe(String(head));
    await expect(page.locator('.time-body > h2').textContent()).resolves.toBe(`At seq ${head} of ${head}`);
    await expect(page.locator('.time .error').count()).resolves.toBe(0);
    await browser.screenshot(page, 'time-travel-busy');
    expect((await held.answers).sort()).toEqual([200, 200, 429, 429]);

    // Free again: the next step moves the view, and the message goes.
    await page.locator('button.step-back').click();
    await page.locator(`.time[data-seq="${head - 1}"]:not([data-loading])`).waitFor({ timeout: 30_000 });
    await expect(page.locator('.time-notice').textContent()).resolves.toBe('');

    // Verify says so too.
    const heldAgain = await fillTimeTravel(url, token, head - 2);
    await page.locator('button.run-verify').click();
    await page.locator('.verify .failed').waitFor();
    await expect(page.locator('.verify .failed').textContent()).resolves.toBe(`Verify could not run: ${BUSY}`);
    expect((await heldAgain.answers).sort()).toEqual([200, 200, 429, 429]);
  });
});
