/**
 * A real browser for the web UI's e2e tests: Debian's chromium (installed by .ci/run), driven
 * by playwright-core. Every request a page makes is recorded, so a test can say none left the
 * daemon; screenshots go to test-artifacts/webui/ (kept by CI, ignored by git), and when a
 * test fails, one of each page it opened as it stood then (failed-N.png), with the failure.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, onTestFailed } from 'vitest';
import { REPO } from './processes.ts';

export const CHROMIUM = '/usr/bin/chromium';
export const ARTIFACTS = join(REPO, 'test-artifacts', 'webui');

/** The URL the web UI printed at start (it carries the token). */
export const webuiUrlOf = (daemonOutput: string): URL => {
  const found = /plugin webui: open (http:\/\/\S+)/.exec(daemonOutput)?.[1];
  if (!found) throw new Error(`the daemon printed no web UI URL:\n${daemonOutput}`);
  return new URL(found);
};

export type RecordedPage = Readonly<{ page: Page; requests: string[]; errors: string[] }>;

/** One browser for a test file; `page()` opens a fresh context (no cookies) of the given width. */
export const useBrowser = () => {
  let browser: Browser | undefined;
  let failedShots = 0;
  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does)`);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    mkdirSync(ARTIFACTS, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
  });
  return {
    async page(width = 1280, height = 800): Promise<RecordedPage> {
      const context = await browser!.newContext({ viewport: { width, height } });
      const page = await context.newPage();
      const requests: string[] = [];
      const errors: string[] = [];
      page.on('request', (request) => requests.push(request.url()));
      page.on('pageerror', (error) => errors.push(error.message));
      page.on('console', (message) => message.type() === 'error' && errors.push(message.text()));
      onTestFailed(async () => {
        const path = join(ARTIFACTS, `failed-${++failedShots}.png`);
        await page.screenshot({ path, fullPage: true }).then(
          () => process.stderr.write(`the page as the test failed: ${path}\n`),
          () => undefined, // the page is gone: nothing to show
        );
      });
      return { page, requests, errors };
    },
    screenshot: (page: Page, name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`) }),
  };
};
