/**
 * Plugins sandboxed below the tools, where the proxy cannot see: a subprocess plugin's process
 * sees nothing of the data dir but its own folder: not the vault, settings or the log, nor the
 * cli socket (which speaks as the owner), whether or not it has the network, and not what the
 * daemon writes there later or renames over a file (the web UI saves settings so, and the index
 * snapshot is written so; both were once read by a plugin); one whose manifest does not ask for `network`
 * reaches no address, not even this machine's loopback, while the same tool granted `network`
 * connects. With `security.sandbox.plugins: "require"` on a machine that cannot sandbox (no
 * `unshare` on the PATH here), a plugin does not start, and the daemon says why.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { SecretVault } from '../../adapters/secrets/secretVault.ts';
import { probeSandbox } from '../../plugins/host/processSandbox.ts';
import { describe, expect, it } from 'vitest';
import { testDataDir, useDaemons, verifyReplay } from '../support/homedSession.ts';
import { type RecordedRequest, startLlmServer } from '../support/llmServer/index.ts';
import { messagesOf } from '../support/llmServer/recordedMessages.ts';
import { finished, REPO, spawnNode, WAITER } from '../support/processes.ts';
import { installPluginCopy } from '../support/pluginCopies.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
/** Outside /tmp, which the sandbox hides from every plugin: a home a plugin with the home capability sees. */
const sharedDir = useTempDir({ shared: true });
const daemons = useDaemons();
const support = probeSandbox('isolate');
const canIsolate = support.kind === 'available';
/** And a PID namespace with a /proc of its own for each plugin. */
const fullSandbox = support.kind === 'available' && support.unconfined === undefined && support.sharedProc === undefined;
/** And the user's home hidden. */
const hidesHome = fullSandbox && support.sharedFolders === undefined;
/** And the machine's folders read-only to them. */
const locksFolders = canIsolate && support.writable === undefined;

/** The tool results a request to the model carried, by call id. */
const toolResultsOf = (request: RecordedRequest): Record<string, unknown> =>
  Object.fromEntries(
    messagesOf(request)
      .filter((m) => m.role === 'tool')
      .map((m) => [(m as { tool_call_id?: string }).tool_call_id, m.content]),
  );

describe("a subprocess plugin's sandbox", () => {
  it.skipIf(!canIsolate)("see none of the daemon's files or its socket, and reach no address unless granted network", async () => {
    const server = await startLlmServer([]);
    daemons.onCleanup(() => server.close());
    const dir = testDataDir(tempDir(), { llm: server, plugins: ['prober', 'netprober'] });
    SecretVault.open(dir).set('CANARY', 'vault-canary-77a1');
    const file = (name: string) => join(dir, name);
    const root = process.getuid?.() === 0;
    const machineSettings = [
      ...(root && fullSandbox ? ['/proc/sys/kernel/core_pattern', '/proc/irq/default_smp_affinity'] : []),
      ...(locksFolders ? ['/sys/kernel/mm/ksm/run'] : []),
    ].filter((path) => existsSync(path));
    server.setScript([
      {
        toolCalls: [
          { id: 'isolated', name: 'prober_connect', arguments: { port: server.port } },
          { id: 'granted', name: 'netprober_connect', arguments: { port: server.port } },
          { id: 'socket', name: 'netprober_connect', arguments: { socket: file('homed.sock') } },
          { id: 'key', name: 'netprober_read', arguments: { path: file('secrets/vault.key') } },
          { id: 'vault', name: 'prober_read', arguments: { path: file('secrets/vault.json') } },
          { id: 'settings', name: 'netprober_read', arguments: { path: file('settings.json') } },
          { id: 'log', name: 'prober_read', arguments: { path: file('events.db') } },
          { id: 'own', name: 'prober_read', arguments: { path: file('plugins/prober/plugin.json') } },
          // A red-team plugin of a daemon run as root unmounted what hides the data dir, then read the vault key.
          { id: 'unmount', name: 'prober_unmount', arguments: { path: dir } },
          { id: 'keyAfter', name: 'prober_read', arguments: { path: file('secrets/vault.key') } },
          // The machine's processes and their command lines: this test's own, and the first of all.
          { id: 'machineProcess', name: 'prober_read', arguments: { path: `/proc/${process.pid}/cmdline` } },
          { id: 'firstProcess', name: 'netprober_read', arguments: { path: '/proc/1/cmdline' } },
          // The machine's settings, each written as it is (were the sandbox to fail, nothing changes): as root, the
          // kernel's parts of /proc; as anyone, /sys.
          ...machineSettings.map((path) => ({ id: path, name: 'prober_write', arguments: { path, text: readFileSync(path, 'utf8') } })),
        ],
      },
      { text: 'probed' },
      {
        toolCalls: [
          { id: 'saved', name: 'prober_read', arguments: { path: file('settings.json') } },
          { id: 'snapshot', name: 'netprober_read', arguments: { path: file('memory-index.snapshot') } },
          { id: 'other', name: 'prober_read', arguments: { path: file('plugins/netprober/plugin.json') } },
        ],
      },
      { text: 'probed again' },
    ]);
    const daemon = await daemons.start(dir);
    const reply = await finished(spawnNode([WAITER, '--data', dir, 'probe the network']));
    expect(reply.stdout).toBe('probed\n');
    const results = toolResultsOf(server.requests[1]!);
    expect(results.isolated).toMatch(/^failed: (ENETUNREACH|EHOSTUNREACH|ECONNREFUSED|EACCES)/);
    expect(results.granted).toBe('connected');
    expect(results.socket).toMatch(/^failed: /);
    expect(results.key).toBe('failed: ENOENT');
    expect(results.vault).toBe('failed: ENOENT');
    expect(results.settings).toBe('failed: ENOENT');
    expect(results.log).toBe('failed: ENOENT');
    expect(results.own).toContain('"name": "prober"');
    expect(results.unmount).not.toBe('umount exit 0');
    expect(results.keyAfter).toBe('failed: ENOENT');
    for (const path of machineSettings) expect(results[path], path).toMatch(/^failed: (EROFS|EACCES)$/);
    if (fullSandbox) {
      expect(results.machineProcess).toBe('failed: ENOENT');
      expect(results.firstProcess).toContain('hologram-init');
    }
    // Settings saved as the web UI saves them (a new file renamed over the old), a file the daemon writes later.
    const settings = readFileSync(file('settings.json'), 'utf8');
    writeFileSync(file('settings.json.saving'), settings.replace('{', '{"saved":"canary-settings-41",'));
    renameSync(file('settings.json.saving'), file('settings.json'));
    writeFileSync(file('memory-index.snapshot'), 'canary-snapshot-42');
    const again = await finished(spawnNode([WAITER, '--data', dir, 'probe again']));
    expect(again.stdout).toBe('probed again\n');
    const later = toolResultsOf(server.requests[3]!);
    expect([later.saved, later.snapshot, later.other]).toEqual(['failed: ENOENT', 'failed: ENOENT', 'failed: ENOENT']);
    writeFileSync(file('settings.json'), settings);
    // Outside the sandbox nothing moved: the daemon's files are where they were.
    expect(readFileSync(file('settings.json'), 'utf8')).toContain('llm');
    await daemons.stop(daemon);
    await verifyReplay(dir);
  });

  it.skipIf(!hidesHome)(
    "find the user's home empty but what they run from, unless their manifest asks for it, and /tmp empty",
    async () => {
      const server = await startLlmServer([]);
      daemons.onCleanup(() => server.close());
      // A home as a user has it: keys in it, and the data dir in it too.
      const home = sharedDir();
      mkdirSync(join(home, '.ssh'));
      writeFileSync(join(home, '.ssh', 'id_ed25519'), 'home-canary-5150');
      const dir = testDataDir(home, { llm: server, plugins: ['prober', 'homeprober'] });
      const key = join(home, '.ssh', 'id_ed25519');
      // What other programs leave in /tmp (an agent's socket, say): hidden from every plugin.
      const inTmp = join(tempDir(), 'left-by-another-program');
      writeFileSync(inTmp, 'tmp-canary-6160');
      // A service listening in /run (GNU screen's sessions run what they are sent): reached through its path, were /run shown.
      const inRun = join(existsSync('/run') && process.getuid?.() === 0 ? '/run' : tempDir(), `hologram-test-${process.pid}.sock`);
      const service = createServer((socket) => socket.end());
      await new Promise<void>((resolve) => service.listen(inRun, resolve));
      daemons.onCleanup(() => new Promise<void>((resolve) => service.close(() => resolve())));
      server.setScript([
        {
          toolCalls: [
            { id: 'key', name: 'prober_read', arguments: { path: key } },
            { id: 'granted', name: 'homeprober_read', arguments: { path: key } },
            { id: 'settings', name: 'prober_read', arguments: { path: join(dir, 'settings.json') } },
            { id: 'grantedSettings', name: 'homeprober_read', arguments: { path: join(dir, 'settings.json') } },
            { id: 'own', name: 'prober_read', arguments: { path: join(dir, 'plugins/prober/plugin.json') } },
            { id: 'tmp', name: 'homeprober_read', arguments: { path: inTmp } },
            { id: 'run', name: 'homeprober_connect', arguments: { socket: inRun } },
          ],
        },
        { text: 'probed' },
      ]);
      const daemon = await daemons.start(dir, { env: { HOME: home } });
      const reply = await finished(spawnNode([WAITER, '--data', dir, 'probe the home']));
      expect(reply.stdout).toBe('probed\n');
      const results = toolResultsOf(server.requests[1]!);
      expect(results.key).toBe('failed: ENOENT');
      expect(results.granted).toBe('read: home-canary-5150');
      // The data dir stays hidden from a plugin that sees the home: it is hidden apart.
      expect([results.settings, results.grantedSettings]).toEqual(['failed: ENOENT', 'failed: ENOENT']);
      // It runs: its folder (a link to a checkout outside the home), Node and the daemon's install are there.
      expect(results.own).toContain('"name": "prober"');
      expect(results.tmp).toBe('failed: ENOENT');
      expect(results.run).toBe('failed: ENOENT');
      await daemons.stop(daemon);
      await verifyReplay(dir);
    },
  );

  it.skipIf(!hidesHome)('say when a folder they run from holds the home, which then stays shown; "require" mode starts none', async () => {
    // A HOME inside the daemon's install: the install, given back to every plugin, holds it.
    const home = join(REPO, 'test');
    const shown = `${home} is not hidden from plugins: ${REPO.replace(/\/$/, '')}, which they run from, holds it`;
    const isolate = testDataDir(tempDir(), { plugins: ['prober'] });
    const started = await daemons.start(isolate, { env: { HOME: home } });
    expect(started.output).toMatch(/homed: plugins: .*; subprocess plugins are sandboxed as far as the rest goes/);
    expect(started.output).toContain(shown);
    expect((await finished(spawnNode([WAITER, '--data', isolate, '--plugins']))).stdout).toMatch(/prober\s+subprocess\s+running/);
    await daemons.stop(started);
    const require = testDataDir(tempDir(), { plugins: ['prober'], settings: { security: { sandbox: { plugins: 'require' } } } });
    const refused = await daemons.start(require, { env: { HOME: home } });
    expect(refused.output).toMatch(/homed: plugins: .*; subprocess plugins will not start/);
    const listed = await finished(spawnNode([WAITER, '--data', require, '--plugins']));
    // The first part missing is named: as root, that; else the home.
    expect(listed.stdout + refused.output).toContain(
      `cannot sandbox its process wholly (${process.getuid?.() === 0 ? 'homed runs as root' : shown}`,
    );
    await daemons.stop(refused);
  });

  it.skipIf(!locksFolders)(
    'find every folder read-only but their own: one linked from outside the data dir can neither move it nor plant the manifest of its next start',
    async () => {
      const server = await startLlmServer([]);
      daemons.onCleanup(() => server.close());
      // A checkout of plugins outside the data dir, neither private nor a folder plugins run from.
      const outside = sharedDir();
      const checkout = join(outside, 'checkout');
      const own = join(checkout, 'prober');
      const neighbour = join(checkout, 'neighbour');
      const ownManifest = installPluginCopy(own, 'prober');
      mkdirSync(neighbour);
      const neighbourManifest = JSON.stringify({ name: 'neighbour', version: '1.0.0', entry: 'main.js', capabilities: ['tools'] });
      writeFileSync(join(neighbour, 'plugin.json'), neighbourManifest);
      const dir = testDataDir(tempDir(), { llm: server });
      symlinkSync(own, join(dir, 'plugins', 'prober'));
      const granting = JSON.stringify({ name: 'prober', version: '1.0.0', entry: 'main.ts', capabilities: ['tools', 'network', 'home'] });
      server.setScript([
        {
          toolCalls: [
            // Its folder moved aside, and a new one with the manifest it wants where its link leads.
            { id: 'moveOwn', name: 'prober_rename', arguments: { from: own, to: join(checkout, 'moved') } },
            { id: 'moveParent', name: 'prober_rename', arguments: { from: checkout, to: `${checkout}-moved` } },
            { id: 'plantNeighbour', name: 'prober_write', arguments: { path: join(neighbour, 'plugin.json'), text: granting } },
            { id: 'plantBeside', name: 'prober_write', arguments: { path: join(checkout, 'plugin.json'), text: granting } },
            { id: 'manifest', name: 'prober_write', arguments: { path: join(own, 'plugin.json'), text: granting } },
            // A dependency whose install script would run, unsandboxed, when its user next ran npm in its folder.
            {
              id: 'npmPackage',
              name: 'prober_write',
              arguments: { path: join(own, 'package.json'), text: '{"dependencies":{"x":"file:x"}}' },
            },
            { id: 'userFile', name: 'prober_write', arguments: { path: join(outside, 'note.txt'), text: 'planted' } },
            { id: 'ownFile', name: 'prober_write', arguments: { path: join(dir, 'state', 'prober', 'state.txt'), text: 'kept-state-17' } },
            // What its user's git and npm read, there or not yet (a red team's plugin had them run its code).
            { id: 'gitHook', name: 'prober_write', arguments: { path: join(own, '.git'), text: 'gitdir: ../repo' } },
            { id: 'npmrc', name: 'prober_write', arguments: { path: join(own, '.npmrc'), text: 'script-shell=./x' } },
            { id: 'ownTmp', name: 'prober_write', arguments: { path: '/tmp/scratch.txt', text: 'scratch' } },
          ],
        },
        { text: 'tried' },
      ]);
      const daemon = await daemons.start(dir);
      const reply = await finished(spawnNode([WAITER, '--data', dir, 'try to move out']));
      expect(reply.stdout).toBe('tried\n');
      const results = toolResultsOf(server.requests[1]!);
      for (const id of [
        'moveOwn',
        'moveParent',
        'plantNeighbour',
        'plantBeside',
        'manifest',
        'npmPackage',
        'gitHook',
        'npmrc',
        'userFile',
      ]) {
        expect(results[id], id).toMatch(/^failed: (EROFS|EBUSY)$/);
      }
      // Its state folder and its own /tmp it writes as before.
      expect([results.ownFile, results.ownTmp]).toEqual(['written', 'written']);
      expect(readFileSync(join(dir, 'state', 'prober', 'state.txt'), 'utf8')).toBe('kept-state-17');
      expect(readdirSync(checkout).sort()).toEqual(['neighbour', 'prober']);
      expect(readFileSync(join(own, 'plugin.json'), 'utf8')).toBe(ownManifest);
      expect(readFileSync(join(own, 'package.json'), 'utf8')).toBe('{"type":"module"}');
      expect(readFileSync(join(neighbour, 'plugin.json'), 'utf8')).toBe(neighbourManifest);
      expect(existsSync(join(outside, 'note.txt'))).toBe(false);
      await daemons.stop(daemon);
      await verifyReplay(dir);
    },
  );

  it.skipIf(!canIsolate)(
    "refuse a plugin whose folder holds another plugin's, whose manifest it could rewrite, and that other one",
    async () => {
      const checkout = join(sharedDir(), 'outer');
      const inner = join(checkout, 'inner');
      installPluginCopy(checkout, 'prober', { name: 'outer' }, { PROBER_NAME: 'outer' });
      installPluginCopy(inner, 'prober', { name: 'inner' }, { PROBER_NAME: 'inner' });
      const dir = testDataDir(tempDir());
      symlinkSync(checkout, join(dir, 'plugins', 'outer'));
      symlinkSync(inner, join(dir, 'plugins', 'inner'));
      const daemon = await daemons.start(dir);
      const listed = await finished(spawnNode([WAITER, '--data', dir, '--plugins']));
      expect(listed.stdout + daemon.output).toContain(
        `plugin 'outer' was not started: its folder ${join(dir, 'plugins', 'outer')} leads to ${checkout}, which holds ${inner}, ` +
          `the folder of the plugin ${join(dir, 'plugins', 'inner')}, whose manifest it could rewrite`,
      );
      // The inner one too: installed while the outer one runs, it would be the outer one's to rewrite.
      expect(listed.stdout + daemon.output).toContain(
        `plugin 'inner' was not started: its folder ${join(dir, 'plugins', 'inner')} leads to ${inner}, which is inside ${checkout}, ` +
          `the folder of the plugin ${join(dir, 'plugins', 'outer')}, which could rewrite its manifest`,
      );
      await daemons.stop(daemon);
    },
  );

  // Red team round 10: a plugin linked from outside the data dir read its neighbour's state, linked from there too.
  it.skipIf(!hidesHome)("hide the other plugins' folders wherever they are, and leave a plugin its own", async () => {
    const server = await startLlmServer([]);
    daemons.onCleanup(() => server.close());
    const outside = sharedDir();
    const own = join(outside, 'prober');
    const neighbour = join(outside, 'netprober');
    installPluginCopy(own, 'prober');
    installPluginCopy(neighbour, 'netprober');
    writeFileSync(join(neighbour, 'state.txt'), 'neighbour-token-5c1e');
    writeFileSync(join(own, 'state.txt'), 'own-state-8d2f');
    const dir = testDataDir(tempDir(), { llm: server });
    symlinkSync(own, join(dir, 'plugins', 'prober'));
    symlinkSync(neighbour, join(dir, 'plugins', 'netprober'));
    // Its state folder left open to others (by hand, or an older daemon), and its neighbour's, holding a token.
    mkdirSync(join(dir, 'state', 'prober'), { recursive: true, mode: 0o755 });
    mkdirSync(join(dir, 'state', 'netprober'));
    writeFileSync(join(dir, 'state', 'netprober', 'token'), 'neighbour-state-token-3b7a');
    server.setScript([
      {
        toolCalls: [
          { id: 'neighbour', name: 'prober_read', arguments: { path: join(neighbour, 'state.txt') } },
          { id: 'neighbourState', name: 'prober_read', arguments: { path: join(dir, 'state', 'netprober', 'token') } },
          { id: 'own', name: 'prober_read', arguments: { path: join(own, 'state.txt') } },
          { id: 'back', name: 'netprober_read', arguments: { path: join(own, 'state.txt') } },
        ],
      },
      { text: 'read' },
    ]);
    const daemon = await daemons.start(dir);
    expect((await finished(spawnNode([WAITER, '--data', dir, 'read your neighbour']))).stdout).toBe('read\n');
    const results = toolResultsOf(server.requests[1]!);
    expect(results).toEqual({
      neighbour: 'failed: ENOENT',
      neighbourState: 'failed: ENOENT',
      own: 'read: own-state-8d2f',
      back: 'failed: ENOENT',
    });
    // Private to the daemon's user again, as at every start.
    expect(statSync(join(dir, 'state', 'prober')).mode & 0o777).toBe(0o700);
    await daemons.stop(daemon);
  });

  it.skipIf(!canIsolate)(
    'refuse a plugin whose manifest or package.json is a link, which it could point elsewhere to grant itself capabilities or have npm run what it wrote',
    async () => {
      const dir = testDataDir(tempDir(), { plugins: ['prober'] });
      const manifest = join(sharedDir(), 'plugin.json');
      writeFileSync(manifest, JSON.stringify({ name: 'linked', version: '1.0.0', entry: 'main.js', capabilities: ['tools'] }));
      mkdirSync(join(dir, 'plugins', 'linked'));
      writeFileSync(join(dir, 'plugins', 'linked', 'main.js'), '');
      symlinkSync(manifest, join(dir, 'plugins', 'linked', 'plugin.json'));
      const daemon = await daemons.start(dir);
      const listed = await finished(spawnNode([WAITER, '--data', dir, '--plugins']));
      expect(listed.stdout + daemon.output).toContain(
        `plugin 'linked' was not started: its plugin.json (${join(dir, 'plugins', 'linked', 'plugin.json')}) is a link`,
      );
      expect(listed.stdout).toMatch(/prober\s+subprocess\s+running/);
      await daemons.stop(daemon);
      // Its manifest a file, its package.json a link to one it could write.
      const own = join(dir, 'plugins', 'linked');
      rmSync(join(own, 'plugin.json'));
      writeFileSync(join(own, 'plugin.json'), readFileSync(manifest));
      writeFileSync(join(own, 'npm.json'), '{"type":"module"}');
      symlinkSync(join(own, 'npm.json'), join(own, 'package.json'));
      const again = await daemons.start(dir);
      expect(again.output).toContain(`plugin 'linked' was not started: its package.json (${join(own, 'package.json')}) is a link`);
      await daemons.stop(again);
    },
  );

  it('in "require" mode, does not start one when this machine cannot sandbox it, and says why', async () => {
    const dir = testDataDir(tempDir(), {
      plugins: ['prober', 'netprober'],
      settings: { security: { sandbox: { plugins: 'require' } } },
    });
    const daemon = await daemons.start(dir, { env: { PATH: '/nonexistent' } });
    expect(daemon.output).toContain('subprocess plugins will not start (security.sandbox.plugins)');
    const listed = await finished(spawnNode([WAITER, '--data', dir, '--plugins']));
    const text = listed.stdout + listed.stderr + daemon.output;
    expect(text).toContain('security.sandbox.plugins is "require" and this machine cannot sandbox its process wholly');
    expect(text).toMatch(/to run plugins with as much of the sandbox as this machine allows; then restart homed/);
    expect(text).not.toMatch(/prober \(subprocess\): running/);
    await daemons.stop(daemon);
  });
});
