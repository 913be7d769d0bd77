/**
 * The files tools against what a root can hold besides text files: FIFOs, sockets, devices,
 * symlink loops, names too long, unreadable and huge files. Each is refused at once with a typed
 * error that says what it is; nothing blocks and no errno text or stack reaches the model.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../events/index.ts';
import { filesPlugin, MAX_READ_BYTES } from '../../plugins/builtin/files/index.ts';
import { createFakePluginApi, replyOf } from '../support/fakePluginApi.ts';
import { createManualTimers } from '../support/manualTimers.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((done) => server.close(done));
});

const given = async () => {
  const dataDir = tempDir();
  const api = createFakePluginApi('files', {});
  await filesPlugin.start(api, { dataDir, clock: new VirtualClock(), timers: createManualTimers() });
  const call = async (tool: string, args: Record<string, unknown>) => replyOf(await api.call(tool, args));
  return { root: join(dataDir, 'files'), call };
};

/** No raw errno name, syscall text or stack frame in what the model reads. */
const expectNoRawError = (content: string) => {
  expect(content).not.toMatch(/E[A-Z]{3,}:|\bopen '|\brealpath '|\n\s+at /);
};

const mkfifo = (path: string) => execFileSync('mkfifo', [path]);

describe('files tools: special files are refused at once', () => {
  it('files_read of a FIFO answers "is a FIFO, not a regular file" without waiting for a writer', async () => {
    const { root, call } = await given();
    mkfifo(join(root, 'pipe'));
    const reply = await call('files_read', { path: 'pipe' });
    expect(reply.isError).toBe(true);
    expect(reply.content).toContain("pipe' is a FIFO, not a regular file");
    expectNoRawError(reply.content);
  });

  it('a FIFO is not written, appended to or listed either', async () => {
    const { root, call } = await given();
    mkfifo(join(root, 'pipe'));
    for (const args of [
      { path: 'pipe', content: 'x' },
      { path: 'pipe', content: 'x', append: true },
    ]) {
      const reply = await call('files_write', args);
      expect(reply).toMatchObject({ isError: true, content: expect.stringContaining('is a FIFO, not a regular file') });
    }
    expect(await call('files_list', { path: 'pipe' })).toMatchObject({ isError: true, content: expect.stringContaining('is a FIFO') });
    expect((await call('files_list', {})).content).toContain('pipe  (a FIFO)');
  });

  it('a socket and a device are refused the same way', async () => {
    const { root, call } = await given();
    const server = createServer();
    servers.push(server);
    await new Promise<void>((done) => server.listen(join(root, 'sock'), done));
    expect(await call('files_read', { path: 'sock' })).toMatchObject({
      isError: true,
      content: expect.stringContaining('is a socket, not a regular file'),
    });
    if (process.getuid?.() === 0) {
      execFileSync('mknod', [join(root, 'zero'), 'c', '1', '5']); // /dev/zero: an endless read if it were opened
      expect(await call('files_read', { path: 'zero' })).toMatchObject({
        isError: true,
        content: expect.stringContaining('is a character device, not a regular file'),
      });
    }
  });

  it('a symlink inside the root to a FIFO inside it is refused too', async () => {
    const { root, call } = await given();
    mkfifo(join(root, 'pipe'));
    symlinkSync(join(root, 'pipe'), join(root, 'alias'));
    expect(await call('files_read', { path: 'alias' })).toMatchObject({ isError: true, content: expect.stringContaining('is a FIFO') });
  });
});

describe('files tools: file-system errors come back typed and worded', () => {
  it('a symlink loop', async () => {
    const { root, call } = await given();
    symlinkSync(join(root, 'b'), join(root, 'a'));
    symlinkSync(join(root, 'a'), join(root, 'b'));
    for (const path of ['a', 'a/inner.txt']) {
      const reply = await call('files_read', { path });
      expect(reply).toMatchObject({ isError: true, content: expect.stringContaining('goes through a symlink loop') });
      expectNoRawError(reply.content);
    }
    expect(await call('files_write', { path: 'a', content: 'x' })).toMatchObject({
      isError: true,
      content: expect.stringContaining('symlink loop'),
    });
  });

  it('a name longer than 255 bytes and a path longer than 4,095', async () => {
    const { call } = await given();
    const name = await call('files_read', { path: 'n'.repeat(300) });
    expect(name).toMatchObject({ isError: true, content: expect.stringContaining('has a name of 300 bytes') });
    expectNoRawError(name.content);
    const path = await call('files_write', { path: Array.from({ length: 40 }, () => 'd'.repeat(200)).join('/'), content: 'x' });
    expect(path).toMatchObject({ isError: true, content: expect.stringContaining('longer than the 4095 bytes a path may have') });
  });

  it('a missing file, and a file where a directory was expected', async () => {
    const { root, call } = await given();
    writeFileSync(join(root, 'plain.txt'), 'x');
    expect(await call('files_read', { path: 'missing.txt' })).toMatchObject({ content: expect.stringContaining('does not exist') });
    const through = await call('files_read', { path: 'plain.txt/inner' });
    expect(through).toMatchObject({ isError: true, content: expect.stringContaining('a directory was expected') });
    expectNoRawError(through.content);
  });

  it.skipIf(process.getuid?.() === 0)('permission denied', async () => {
    const { root, call } = await given();
    mkdirSync(join(root, 'locked'));
    writeFileSync(join(root, 'locked', 'x.txt'), 'x');
    chmodSync(join(root, 'locked'), 0o000);
    try {
      const reply = await call('files_read', { path: 'locked/x.txt' });
      expect(reply).toMatchObject({ isError: true, content: expect.stringContaining('permission denied') });
      expectNoRawError(reply.content);
    } finally {
      chmodSync(join(root, 'locked'), 0o700);
    }
  });
});

describe('files tools: size caps', () => {
  it('reads the first MAX_READ_BYTES of a large file and says it was cut', async () => {
    const { root, call } = await given();
    const size = 5 * 1024 * 1024;
    writeFileSync(join(root, 'big.txt'), Buffer.alloc(size, 'a'));
    const reply = await call('files_read', { path: 'big.txt' });
    expect(reply.isError).toBe(false);
    const [text, note] = reply.content.split('\n');
    expect(text).toHaveLength(MAX_READ_BYTES);
    expect(note).toBe(`[truncated: showed bytes 0–${MAX_READ_BYTES} of ${size}; call files_read with offset ${MAX_READ_BYTES} to read on]`);
  });

  it('refuses to append to a file larger than the append cap, leaving it as it was', async () => {
    const { root, call } = await given();
    writeFileSync(join(root, 'huge.log'), Buffer.alloc(9 * 1024 * 1024, 'b'));
    const reply = await call('files_write', { path: 'huge.log', content: 'more', append: true });
    expect(reply).toMatchObject({ isError: true, content: expect.stringContaining('more than files_write appends to') });
    expect(readFileSync(join(root, 'huge.log')).length).toBe(9 * 1024 * 1024);
  });
});
