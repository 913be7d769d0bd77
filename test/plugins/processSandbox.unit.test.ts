/**
 * How a subprocess plugin's command is wrapped in its sandbox: always its own mount namespace
 * with the data dir hidden but for the plugin's own folder, its own network namespace unless it
 * asked for `network`; where the machine cannot sandbox, it starts as it is in `isolate` mode and
 * not at all in `require` mode, with what to do. Where this machine can, the wrapped command is
 * run: the data dir shows nothing but the plugin's folder (reached as it is, or through the link
 * the data dir has to it), and what the plugin writes there lands in its real folder.
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseManifest } from '../../plugins/host/manifest.ts';
import { pluginEnvironment } from '../../plugins/host/pluginEnv.ts';
import type { PrivateFolders } from '../../plugins/host/privateFolders.ts';
import {
  otherPluginFolders,
  PLUGIN_TASKS_AT_MOST,
  probeSandbox,
  sandboxedCommand,
  type SandboxSupport,
} from '../../plugins/host/processSandbox.ts';
import { findTagged, hostPidOfTag, processState } from '../support/processes.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const node = { command: '/usr/bin/node', args: ['main.js'] };
const available: SandboxSupport = { kind: 'available' };
/** A plugin whose manifest asks for neither the network nor the home directory. */
const ASKED_NOTHING = { network: false, home: false };
const unavailable: SandboxSupport = { kind: 'unavailable', why: 'user namespaces are off here' };
const hidden = { dataDir: '/srv/data', pluginsDir: '/srv/data/plugins' };
const own = { path: '/srv/data/plugins/p', real: '/srv/data/plugins/p' };
const support = probeSandbox('isolate');
const canIsolate = support.kind === 'available';
/** And each plugin in a PID namespace of its own. */
const canConfine = canIsolate && support.unconfined === undefined;
/** And with a /proc of its own. */
const fullSandbox = canConfine && support.sharedProc === undefined;
/** The sandbox's programs are run from the system's folders, never found through PATH. */
const SYSTEM_UNSHARE = /^\/(usr\/)?s?bin\/unshare$/;

/** The state folder of plugin 'p' in `dataDir`, made as the daemon makes it. */
const stateOf = (dataDir: string): string => {
  const state = join(dataDir, 'state', 'p');
  mkdirSync(state, { recursive: true });
  return state;
};

/**
 * The command that runs shell `script` as a plugin asking for nothing, in its folder `folder` of
 * `dataDir` (with its state folder there), in the whole sandbox.
 */
const shellInside = (
  dataDir: string,
  folder: { path: string; real: string },
  script: string,
  folders?: PrivateFolders,
): Readonly<{ command: string; args: string[] }> => {
  return sandboxedCommand(
    'p',
    ASKED_NOTHING,
    'isolate',
    available,
    { dataDir, pluginsDir: join(dataDir, 'plugins'), ...(folders ? { folders } : {}) },
    { ...folder, state: stateOf(dataDir) },
    {
      command: '/bin/sh',
      args: ['-c', script],
    },
  );
};

/** What a shell run as the plugin, in the sandbox (from its folder, with `env` or the test's own), prints. */
const runInside = (dataDir: string, folder: { path: string; real: string }, script: string, env?: NodeJS.ProcessEnv): string => {
  const { command, args } = shellInside(dataDir, folder, script);
  const run = spawnSync(command, args, { cwd: folder.real, encoding: 'utf8', ...(env ? { env } : {}) });
  expect(run.status, run.stderr).toBe(0);
  return run.stdout;
};

describe("the other plugins' folders a plugin's sandbox hides", () => {
  it('are the real folders of the other plugins, but those hidden already, in a folder plugins run from, or holding one given back', () => {
    const root = tempDir();
    const dataDir = join(root, 'data');
    const pluginsDir = join(dataDir, 'plugins');
    const plugin = (folder: string): string => {
      mkdirSync(folder, { recursive: true });
      writeFileSync(join(folder, 'plugin.json'), '{}');
      return folder;
    };
    const own = plugin(join(root, 'checkout', 'own'));
    const away = plugin(join(root, 'checkout', 'away'));
    // One in the data dir, hidden with it.
    plugin(join(pluginsDir, 'inside'));
    const inHome = plugin(join(root, 'home', 'plugin'));
    const inInstall = plugin(join(root, 'install', 'fixture'));
    const holdingInstall = plugin(join(root, 'outer'));
    mkdirSync(join(root, 'outer', 'install'));
    mkdirSync(join(root, 'not-a-plugin'));
    for (const [name, folder] of Object.entries({ own, away, inHome, inInstall, holdingInstall, junk: join(root, 'not-a-plugin') })) {
      symlinkSync(folder, join(pluginsDir, name));
    }
    writeFileSync(join(pluginsDir, 'README'), 'not a folder');
    const hidden = { dataDir, pluginsDir };
    const kept = [join(root, 'install'), join(root, 'outer', 'install')];
    expect(otherPluginFolders(hidden, own, [join(root, 'home')], kept)).toEqual([away]);
  });
});

describe("a plugin process's sandbox", () => {
  it('wraps every plugin, with its own network only when it did not ask for one, naming the data dir and its folder', () => {
    const isolated = sandboxedCommand('p', ASKED_NOTHING, 'isolate', available, hidden, own, node);
    expect(isolated.command).toMatch(SYSTEM_UNSHARE);
    expect(isolated.args.slice(0, 7)).toEqual(['--map-current-user', '--keep-caps', '--mount', '--ipc', '--net', '--', '/bin/sh']);
    expect(isolated.args.slice(isolated.args.indexOf('sh'))).toEqual(['sh', '/usr/bin/node', 'main.js']);
    expect(isolated.args[isolated.args.indexOf('-c') + 1]).toContain(`hologram-hidden '/srv/data'`);
    const granted = sandboxedCommand('p', { network: true, home: false }, 'isolate', available, hidden, own, node);
    expect(granted.args.slice(0, 5)).toEqual(['--map-current-user', '--keep-caps', '--mount', '--ipc', '--']);
  });

  it('keeps what the plugin starts to a PID namespace that ends with it, and with the daemon, with a /proc of its own; where the machine has less, the rest of the sandbox holds', () => {
    const script = (support: SandboxSupport) => {
      const { args } = sandboxedCommand('p', ASKED_NOTHING, 'isolate', support, hidden, own, node);
      return args[args.indexOf('-c') + 1]!;
    };
    expect(script(available)).toMatch(
      /exec \/\S+\/setpriv --pdeathsig KILL -- \/\S+\/unshare --user --map-current-user --mount --pid --fork --kill-child --mount-proc -- \/bin\/sh -c/,
    );
    expect(script(available)).toMatch(/' hologram-init "\$@"$/);
    expect(script({ kind: 'available', sharedProc: 'no /proc of their own here' })).toMatch(
      /exec \/\S+\/setpriv --pdeathsig KILL -- \/\S+\/unshare --user --map-current-user --mount --pid --fork --kill-child -- \/bin\/sh -c/,
    );
    const unconfined = script({ kind: 'available', unconfined: 'no PID namespaces here' });
    expect(unconfined).not.toContain('--pid');
    expect(unconfined).toContain('mount -t tmpfs');
    expect(unconfined).toMatch(/exec \/\S+\/unshare --user --map-current-user --mount -- "\$@"$/);
  });

  it.skipIf(!canConfine)('ends a process the plugin put in a session of its own when the plugin ends', async () => {
    const folder = tempDir();
    const instance = `sandbox-test-${process.pid}`;
    const { command, args } = sandboxedCommand(
      'p',
      ASKED_NOTHING,
      'isolate',
      support,
      undefined,
      { path: folder, real: folder },
      {
        command: '/bin/sh',
        args: ['-c', 'setsid sleep 300 & echo "$!"; read -r line'],
      },
    );
    const plugin = spawn(command, args, {
      env: { ...process.env, HOLOGRAM_PLUGIN_INSTANCE: instance },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const [said] = (await once(plugin.stdout!, 'data')) as [Buffer];
    const tag = `${instance}/${said.toString().trim()}`;
    // Caught mid-exec (setsid becoming sleep), its environment reads empty for a moment.
    await expect.poll(() => findTagged(tag), { timeout: 2_000 }).toBeDefined();
    const sleeper = hostPidOfTag(tag);
    expect(processState(sleeper)).toBe('alive');
    plugin.stdin!.end('bye\n');
    await once(plugin, 'close');
    await expect.poll(() => processState(sleeper), { timeout: 2_000 }).toBe('gone');
  });

  it.skipIf(!fullSandbox)('bounds the tasks the plugin has at once, whatever it starts inheriting the bound', () => {
    const folder = tempDir();
    const seen = runInside(
      tempDir(),
      { path: folder, real: folder },
      "grep 'Max processes' /proc/self/limits; sh -c \"grep 'Max processes' /proc/self/limits\"",
    );
    const bound = new RegExp(`^Max processes\\s+${PLUGIN_TASKS_AT_MOST}\\s+${PLUGIN_TASKS_AT_MOST}\\s+processes\\s*$`);
    expect(seen.trim().split('\n')).toEqual([expect.stringMatching(bound), expect.stringMatching(bound)]);
  });

  // A plugin that forks without end would use up its user's processes, and the daemon's with them. The kernel bounds
  // no process of root's so: run as root, the plugin is started as nobody here, as a daemon run as a user of its own is.
  it.skipIf(!fullSandbox)('stops a plugin forking without end at the bound: the rest of its starts are refused', () => {
    const root = mkdtempSync(join(tmpdir(), 'hologram-tasks-'));
    try {
      chmodSync(root, 0o755);
      const [dataDir, folder] = [join(root, 'data'), join(root, 'own')];
      for (const dir of [join(dataDir, 'plugins'), join(dataDir, 'state', 'p'), folder]) mkdirSync(dir, { recursive: true, mode: 0o777 });
      const forker = join(root, 'forker.mjs');
      writeFileSync(
        forker,
        [
          "import { spawn } from 'node:child_process';",
          'let ok = 0;',
          'const kids = [];',
          'for (let i = 0; i < 60; i++) {',
          "  await new Promise((resolve) => { const c = spawn('sleep', ['5']); c.once('spawn', () => { ok++; kids.push(c); resolve(); }); c.once('error', resolve); });",
          '}',
          'console.log(ok);',
          'for (const c of kids) c.kill();',
        ].join('\n'),
        { mode: 0o644 },
      );
      const wants = { network: false, home: false };
      const hidden = { dataDir, pluginsDir: join(dataDir, 'plugins') };
      const own = { path: folder, real: folder, state: join(dataDir, 'state', 'p') };
      const { command, args } = sandboxedCommand(
        'p',
        wants,
        'isolate',
        support,
        hidden,
        own,
        { command: process.execPath, args: [forker] },
        { tasks: 40 },
      );
      const asNobody =
        process.getuid?.() === 0 ? ['setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', command, ...args]] : [command, args];
      const run = spawnSync(asNobody[0] as string, asNobody[1] as string[], { cwd: folder, encoding: 'utf8' });
      expect(run.status, run.stderr).toBe(0);
      // Node's own threads count too: some of the 60 start, and the rest are refused.
      const started = Number(run.stdout.trim());
      expect(started).toBeGreaterThan(0);
      expect(started).toBeLessThan(40);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it.skipIf(!fullSandbox)("shows the plugin its own processes, not the machine's (this test's Node among them)", () => {
    const folder = tempDir();
    const seen = runInside(
      tempDir(),
      { path: folder, real: folder },
      'echo "me $$"; for d in /proc/[0-9]*; do echo "$(basename $d) $(cat $d/comm)"; done',
    );
    const [me, ...listed] = seen.trim().split('\n');
    // The namespace's first process (its init) and the plugin: nothing of the machine's, this test's own process included.
    expect(listed.map((line) => line.split(' ')[0])).toEqual(expect.arrayContaining(['1', me!.split(' ')[1]]));
    expect(listed.length, seen).toBeLessThan(6);
    expect(listed.map((line) => line.split(' ')[1])).not.toContain('node');
    expect(listed.map(Number)).not.toContain(process.pid);
  });

  it.skipIf(!canConfine)(
    "is not its PID namespace's first process: it keeps its stdin and exit code, a signal it sends itself ends it, and what its programs leave is reaped",
    () => {
      const folder = { path: tempDir(), real: '' };
      const inSandbox = (command: string, args: string[], input?: string) => {
        const wrapped = sandboxedCommand(
          'p',
          ASKED_NOTHING,
          'isolate',
          available,
          undefined,
          { ...folder, real: folder.path },
          { command, args },
        );
        return spawnSync(wrapped.command, wrapped.args, { encoding: 'utf8', input, timeout: 10_000 });
      };
      const echoed = inSandbox('sh', ['-c', 'read line; echo "$$ got $line"; exit 7'], 'hello\n');
      // Not pid 1: that is the namespace's first process, its init.
      expect([echoed.status, echoed.stdout]).toEqual([7, expect.stringMatching(/^([2-9]|\d\d+) got hello\n$/)]);
      // As the first process it would ignore the TERM it sends itself and wait out the timer.
      const selfKilled = inSandbox(process.execPath, ['-e', 'process.kill(process.pid, "SIGTERM"); setTimeout(() => {}, 8000)']);
      expect(selfKilled.status).toBe(128 + 15);
      // Five programs each leave a process behind that soon ends: a first process that is Node reaps none.
      const zombies =
        'mine=$(readlink /proc/self/ns/pid); z=0; for d in /proc/[0-9]*; do [ "$(readlink $d/ns/pid 2>/dev/null)" = "$mine" ] || continue; ' +
        'set -- $(cat $d/stat 2>/dev/null); [ "$3" = Z ] && z=$((z+1)); done; echo $z';
      const leaver =
        "const { execSync } = require('node:child_process'); for (let i = 0; i < 5; i++) execSync('sh -c \"sleep 0.05 &\"'); " +
        `setTimeout(() => process.stdout.write(execSync(${JSON.stringify(zombies)})), 500);`;
      const reaped = inSandbox(process.execPath, ['-e', leaver]);
      expect([reaped.status, reaped.stdout.trim()]).toEqual([0, '0']);
    },
  );

  it.skipIf(!canIsolate)("runs the sandbox's own commands, not a plugin's of the same name, whatever the daemon's PATH holds", () => {
    const data = join(tempDir(), 'data');
    const folder = join(data, 'plugins', 'p');
    mkdirSync(folder, { recursive: true });
    // Look-alikes of what the sandbox runs before its mounts are locked: shipped in the plugin's
    // folder, to be found through '' or '.'; and put in a folder on the daemon's PATH that the
    // daemon's user may write (~/.local/bin), as a plugin can, to be run outside the sandbox at its next start.
    const writable = join(tempDir(), 'bin');
    mkdirSync(writable);
    for (const name of ['unshare', 'setpriv', 'mount', 'mkdir', 'ln', 'dirname']) {
      for (const where of [folder, writable]) {
        writeFileSync(join(where, name), '#!/bin/sh\ntouch "$(cd "$(dirname "$0")" && pwd)/pwned"\nexit 1\n');
        chmodSync(join(where, name), 0o755);
      }
    }
    const env = pluginEnvironment([], { PATH: `${writable}::.:${process.env.PATH}` }, new Set(), 'instance-1').env;
    expect(env.PATH!.split(':').every((entry) => entry.startsWith('/'))).toBe(true);
    expect(runInside(data, { path: folder, real: folder }, 'echo ran', env)).toBe('ran\n');
    expect([existsSync(join(folder, 'pwned')), existsSync(join(writable, 'pwned'))]).toEqual([false, false]);
  });

  it('where it cannot sandbox: starts as it is in isolate mode, refuses in require mode with what to do; off is off', () => {
    expect(sandboxedCommand('p', ASKED_NOTHING, 'isolate', unavailable, hidden, own, node)).toEqual(node);
    expect(() => sandboxedCommand('p', ASKED_NOTHING, 'require', unavailable, hidden, own, node)).toThrow(
      /plugin 'p' was not started: .*user namespaces are off here.*set security.sandbox.plugins to "isolate"/,
    );
    expect(sandboxedCommand('p', ASKED_NOTHING, 'off', { kind: 'off' }, hidden, own, node)).toEqual(node);
  });

  it('in require mode, refuses a sandbox this machine can only have in part, naming the part', () => {
    for (const partial of [
      { kind: 'available', unconfined: 'no PID namespaces here' },
      { kind: 'available', sharedProc: 'no /proc of their own here' },
      { kind: 'available', writable: 'no read-only folders here' },
    ] as const) {
      expect(sandboxedCommand('p', ASKED_NOTHING, 'isolate', partial, hidden, own, node).command).toMatch(SYSTEM_UNSHARE);
      expect(() => sandboxedCommand('p', ASKED_NOTHING, 'require', partial, hidden, own, node)).toThrow(
        new RegExp(`cannot sandbox its process wholly \\(${partial.unconfined ?? partial.sharedProc ?? partial.writable}\\)`),
      );
    }
  });

  it.skipIf(!fullSandbox)(
    'lets the plugin write only its own folder, make no namespace, and gives it a /dev of its own with nothing of the machine',
    () => {
      const data = join(tempDir(), 'data');
      const folder = { path: join(data, 'plugins', 'p'), real: join(data, 'plugins', 'p') };
      mkdirSync(folder.real, { recursive: true });
      const seen = runInside(
        data,
        folder,
        [
          `for p in /etc/hologram-planted /var/tmp/hologram-planted ./mine ${data}/state/p/mine /dev/shm/mine; do (echo x > "$p") 2>/dev/null && echo "wrote $p"; done`,
          // Its state folder runs nothing set-user-ID (it lies in the data dir, but a file left there keeps its bits).
          `awk -v p=${data}/state/p '$5 == p && $6 ~ /nosuid/ { print "state nosuid" }' /proc/self/mountinfo`,
          'echo "dev: $(ls /dev | tr "\\n" " ")"',
          'head -c 8 /dev/urandom | wc -c; echo gone > /dev/null && echo null takes',
          // No namespace of its own: in a user and cgroup namespace it could mount a cgroup tree, writable.
          'unshare --user true 2>/dev/null && echo made a user namespace',
          'unshare --map-root-user --cgroup true 2>/dev/null && echo made a cgroup namespace',
          'unshare --cgroup true 2>/dev/null && echo made a cgroup namespace as root',
          // Nor, as root in its own, any other: a root daemon's plugin used up the machine's network namespaces.
          'for kind in --net --mount --ipc --uts --pid --time; do unshare $kind true 2>/dev/null && echo "made a namespace ($kind)"; done',
          'echo tried',
        ].join('\n'),
      );
      expect(seen).not.toContain('made a');
      // Its state folder, not the rest of its own (what its user's git and npm read).
      expect(seen).toContain(`wrote ${data}/state/p/mine\nwrote /dev/shm/mine\n`);
      expect(seen).toContain('state nosuid\n');
      expect(seen).not.toContain('wrote ./mine');
      expect(seen).not.toMatch(/wrote \/(etc|var)/);
      expect(seen).toContain('dev: fd full null ptmx pts random shm stderr stdin stdout urandom zero \n8\nnull takes\n');
      expect(readFileSync(join(data, 'state', 'p', 'mine'), 'utf8')).toBe('x\n');
    },
  );

  it.skipIf(!fullSandbox || process.getuid?.() !== 0)(
    'makes every mount the plugin can reach read-only, however it is named or stacked, and hides the other places the data dir shows',
    () => {
      // A data dir whose name holds a newline, which the folders' list to cover must not split.
      const data = join(tempDir(), 'da\nta');
      const folder = { path: join(data, 'plugins', 'p'), real: join(data, 'plugins', 'p') };
      mkdirSync(folder.real, { recursive: true });
      writeFileSync(join(data, 'settings.json'), '{"password":"pw-alias-1"}');
      const m = join(tempDir(), 'mounts');
      // In a mount namespace of the test's own: a mount covered by another at its place, whose folder has the name of
      // the first one's submount; names with a newline, a space and a backslash; a second proc; one under a covered folder.
      const setup = [
        'set -e',
        `M=${m}`,
        'mkdir -p "$M/s" "$M/x\n" "$M/a b\\c" "$M/proc2" "$M/top/inner"',
        'mount -t tmpfs s1 "$M/s"; mkdir "$M/s/sub"; mount -t tmpfs s2 "$M/s/sub"; mount -t tmpfs s3 "$M/s"; mkdir "$M/s/sub"',
        'mount -t tmpfs t1 "$M/x\n"; mount -t tmpfs t2 "$M/a b\\c"; mount -t proc proc "$M/proc2"',
        'mount -t tmpfs i1 "$M/top/inner"; mount -t tmpfs t3 "$M/top"; mkdir "$M/top/inner"',
        // The data dir shown three times more: in a bind mount of the folder holding it, in one of itself, and its settings in one of that file.
        `D='${data}'`,
        // The machine's /dev/shm, hidden, shown elsewhere too; and a devtmpfs outside /dev.
        'mount -t tmpfs shm /dev/shm; echo shm-secret > /dev/shm/secret; mkdir "$M/shmAlias" "$M/dev2"',
        'mount --bind /dev/shm "$M/shmAlias"; mount -t devtmpfs none "$M/dev2"',
        'mkdir "$M/alias" "$M/dataAlias"; touch "$M/settingsAlias"',
        'mount --bind "$D/.." "$M/alias"; mount --bind "$D" "$M/dataAlias"; mount --bind "$D/settings.json" "$M/settingsAlias"',
        'exec "$@"',
      ].join('\n');
      const attempts = [
        `M=${m}`,
        'for p in "$M/s/sub/f" "$M/x\n/f" "$M/a b\\c/f" "$M/top/inner/f"; do (echo x > "$p") 2>/dev/null && echo "wrote $p"; done',
        'v=$(cat "$M/proc2/sys/kernel/printk_ratelimit"); (echo "$v" > "$M/proc2/sys/kernel/printk_ratelimit") 2>/dev/null && echo wrote proc2',
        'cat "$M/alias/da\nta/settings.json" "$M/dataAlias/settings.json" "$M/settingsAlias" "$M/shmAlias/secret" 2>/dev/null',
        'head -c 1 "$M/dev2/zero" > /dev/null 2>&1 && echo read a device of the machine',
        'echo tried',
      ].join('\n');
      const { command, args } = shellInside(data, folder, attempts, { homes: [], others: ['/dev/shm'], kept: [], shown: [] });
      const run = spawnSync('unshare', ['--mount', '--propagation', 'private', '/bin/sh', '-c', setup, 'sh', command, ...args], {
        cwd: folder.real,
        encoding: 'utf8',
      });
      expect(run.stderr).toBe('');
      expect([run.status, run.stdout]).toEqual([0, 'tried\n']);
    },
  );

  it.skipIf(!fullSandbox)(
    "writes again what the file /etc/resolv.conf leads to says, in a hidden folder, and nothing else of that folder (systemd-resolved's socket)",
    async () => {
      const data = join(tempDir(), 'data');
      const folder = { path: join(data, 'plugins', 'p'), real: join(data, 'plugins', 'p') };
      mkdirSync(folder.real, { recursive: true });
      const run = join(tempDir(), 'run');
      const resolver = join(run, 'resolve', 'stub-resolv.conf');
      mkdirSync(join(run, 'resolve'), { recursive: true });
      writeFileSync(resolver, 'nameserver 127.0.0.53\noptions edns0\n');
      const service = createServer((socket) => socket.end());
      await new Promise<void>((resolve) => service.listen(join(run, 'resolve', 'io.systemd.Resolve'), resolve));
      try {
        const folders = { homes: [], others: [run], kept: [], shown: [], resolver };
        const { command, args } = shellInside(data, folder, `ls ${join(run, 'resolve')}; cat ${resolver}`, folders);
        const inside = spawnSync(command, args, { cwd: folder.real, encoding: 'utf8' });
        expect([inside.status, inside.stderr]).toEqual([0, '']);
        expect(inside.stdout).toBe('stub-resolv.conf\nnameserver 127.0.0.53\noptions edns0\n');
      } finally {
        service.close();
      }
    },
  );

  it.skipIf(!fullSandbox || process.getuid?.() !== 0)('does not start a plugin whose folder is another place a hidden folder shows', () => {
    const data = join(tempDir(), 'data');
    mkdirSync(join(data, 'plugins'), { recursive: true });
    const alias = join(tempDir(), 'alias');
    mkdirSync(alias);
    const { command, args } = shellInside(data, { path: join(data, 'plugins', 'p'), real: alias }, 'ls');
    const setup = `mount --bind '${data}' '${alias}'; exec "$@"`;
    const run = spawnSync('unshare', ['--mount', '--propagation', 'private', '/bin/sh', '-c', setup, 'sh', command, ...args], {
      encoding: 'utf8',
    });
    expect(run.status).toBe(126);
    expect(run.stderr).toContain(`the sandbox cannot give the plugin ${alias}: it shows ${data}, which plugins may not see`);
  });

  it.skipIf(!fullSandbox)('lets a plugin whose folder holds the data dir rename none of the folders between them', () => {
    const outer = join(tempDir(), 'checkout');
    const data = join(outer, 'ck', 'data');
    mkdirSync(join(data, 'plugins'), { recursive: true });
    const seen = runInside(
      data,
      { path: join(data, 'plugins', 'g'), real: outer },
      `mv ck ck-old 2>/dev/null && echo moved; mkdir -p ${data}/state/p/mine && echo wrote`,
    );
    expect(seen).toBe('wrote\n');
    expect(existsSync(join(outer, 'ck', 'data', 'plugins'))).toBe(true);
  });

  it.skipIf(!canIsolate)('shows the plugin its own folder in the data dir and nothing else of it', () => {
    const data = join(tempDir(), 'data');
    mkdirSync(join(data, 'plugins', 'p'), { recursive: true });
    mkdirSync(join(data, 'plugins', 'other'));
    mkdirSync(join(data, 'secrets'));
    writeFileSync(join(data, 'settings.json'), '{"password":"pw-1"}');
    writeFileSync(join(data, 'plugins', 'p', 'main.js'), 'mine');
    const folder = { path: join(data, 'plugins', 'p'), real: join(data, 'plugins', 'p') };
    const seen = runInside(
      data,
      folder,
      `ls -A ${data}; ls -A ${data}/plugins; cat main.js; echo; cat ../../settings.json 2>&1 || true; echo written > ${data}/state/p/note.txt`,
    );
    expect(seen.split('\n').slice(0, 4)).toEqual(['plugins', 'state', 'p', 'mine']);
    expect(seen).toContain('No such file');
    expect(seen).not.toContain('pw-1');
    expect(readFileSync(join(data, 'state', 'p', 'note.txt'), 'utf8')).toBe('written\n');
  });

  it.skipIf(!canIsolate)('gives a plugin installed as a link into the data dir its link, to its folder outside', () => {
    const root = tempDir();
    const data = join(root, 'data');
    const elsewhere = join(root, 'checkout', 'p');
    mkdirSync(join(data, 'plugins'), { recursive: true });
    mkdirSync(elsewhere, { recursive: true });
    writeFileSync(join(elsewhere, 'plugin.json'), 'manifest');
    writeFileSync(join(data, 'settings.json'), 'hidden');
    symlinkSync(elsewhere, join(data, 'plugins', 'p'));
    const seen = runInside(
      data,
      { path: join(data, 'plugins', 'p'), real: elsewhere },
      `cat ${data}/plugins/p/plugin.json; echo; ls -A ${data}`,
    );
    // The data dir shows the way to its link and to its state folder, and nothing else.
    expect(seen).toBe('manifest\nplugins\nstate\n');
  });

  // Red team: as root the plugin unmounted the tmpfs (it held every capability in the namespace the
  // mount was made in); as another user the mount failed, so plugins ran with no sandbox at all.
  // Later, as root, it unmounted its own /proc and saw the machine's processes under it.
  const asRoot = process.getuid?.() === 0;
  it.skipIf(!fullSandbox || !asRoot)(
    "hides the data dir and the machine's processes from a plugin of a root daemon and of any user's, and neither can unmount what hides them",
    () => {
      const root = tempDir();
      const data = join(root, 'data');
      mkdirSync(join(data, 'plugins', 'p'), { recursive: true });
      writeFileSync(join(data, 'settings.json'), '{"password":"pw-2"}');
      chmodSync(root, 0o755);
      chownSync(data, 65534, 65534);
      chownSync(join(data, 'plugins'), 65534, 65534);
      chownSync(join(data, 'plugins', 'p'), 65534, 65534);
      chownSync(join(data, 'settings.json'), 65534, 65534);
      const folder = { path: join(data, 'plugins', 'p'), real: join(data, 'plugins', 'p') };
      const script =
        `umount -l ${data} 2>/dev/null; echo "umount $?"; cat ${data}/settings.json 2>/dev/null || echo hidden; ` +
        `umount -l /proc 2>/dev/null; echo "umount $?"; [ -e /proc/${process.pid} ] && echo machine || echo own; ` +
        // What the kernel runs as root when a program dumps core: a root plugin set it to run its own.
        '(cat /proc/sys/kernel/core_pattern > /proc/sys/kernel/core_pattern) 2>/dev/null && echo settable || echo read-only';
      const { command, args } = shellInside(data, folder, script);
      for (const as of [[], ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups']]) {
        const run = spawnSync(as[0] ?? command, [...as.slice(1), ...(as.length ? [command] : []), ...args], {
          cwd: folder.real,
          encoding: 'utf8',
        });
        expect(run.status, `${as.join(' ') || 'root'}: ${run.stderr}`).toBe(0);
        expect(run.stdout, as.join(' ') || 'root').toMatch(/^umount [1-9]\d*\nhidden\numount [1-9]\d*\nown\nread-only\n$/);
      }
    },
  );

  it('refuses a plugin folder that leads into the data dir elsewhere than to a folder of its plugins', () => {
    for (const real of ['/srv/data', '/srv/data/secrets', '/srv/data/plugins']) {
      expect(() => sandboxedCommand('p', ASKED_NOTHING, 'isolate', available, hidden, { path: '/srv/data/plugins/p', real }, node)).toThrow(
        `plugin 'p' was not started: its folder /srv/data/plugins/p leads to ${real}, a part of the data dir that is not a plugin's folder`,
      );
    }
    for (const real of ['/srv/data/plugins/p', '/srv/data/plugins/p/sub', '/home/ada/checkout/p', '/srv/data-other']) {
      expect(
        sandboxedCommand('p', ASKED_NOTHING, 'isolate', available, hidden, { path: '/srv/data/plugins/p', real }, node).command,
      ).toMatch(SYSTEM_UNSHARE);
    }
  });

  // Red team: the kept folders were writable (a plugin could rewrite the daemon's install, run
  // unsandboxed at the next start), and a plugin folder holding the data dir showed it again.
  it.skipIf(!fullSandbox || support.sharedFolders !== undefined)(
    "shows a plugin none of its user's private folders but what it runs from (read-only) and its own folder; the home capability shows the home",
    () => {
      const home = tempDir();
      const other = tempDir();
      for (const folder of ['.ssh', 'tools/node/bin', 'data/plugins/p']) mkdirSync(join(home, folder), { recursive: true });
      writeFileSync(join(home, '.ssh', 'id_ed25519'), 'home-key');
      writeFileSync(join(home, 'tools', 'node', 'bin', 'node'), 'runtime');
      writeFileSync(join(home, 'data', 'settings.json'), 'settings');
      writeFileSync(join(home, 'data', 'plugins', 'p', 'main.js'), 'mine');
      writeFileSync(join(other, 'agent.sock'), 'socket');
      const data = join(home, 'data');
      const folder = { path: join(data, 'plugins', 'p'), real: join(data, 'plugins', 'p') };
      const look =
        `ls -A ${home}; cat ${home}/tools/node/bin/node main.js; echo; ` +
        `for f in ${home}/.ssh/id_ed25519 ${data}/settings.json ${other}/agent.sock; do cat "$f" 2>/dev/null || printf gone; echo; done; ` +
        `(echo more >> ${home}/tools/node/bin/node) 2>/dev/null && echo writable || echo read-only; echo note > ${data}/state/p/note.txt && echo wrote`;
      const state = stateOf(data);
      const run = (wantsHome: boolean) => {
        const folders = { homes: [home], others: [other], kept: [join(home, 'tools')], shown: [] };
        const hidden = { dataDir: data, pluginsDir: join(data, 'plugins'), folders };
        const own = { ...folder, state };
        const { command, args } = sandboxedCommand('p', { network: false, home: wantsHome }, 'isolate', available, hidden, own, {
          command: '/bin/sh',
          args: ['-c', look],
        });
        const ran = spawnSync(command, args, { cwd: folder.real, encoding: 'utf8' });
        expect(ran.status, ran.stderr).toBe(0);
        return ran.stdout.split('\n');
      };
      // The data dir shows as the path to the plugin's folder, made in the empty home.
      expect(run(false)).toEqual(['data', 'tools', 'runtimemine', 'gone', 'gone', 'gone', 'read-only', 'wrote', '']);
      // Seeing the home, it still cannot rewrite what plugins run from; the data dir and the other private folders stay hidden.
      expect(run(true)).toEqual(['.ssh', 'data', 'tools', 'runtimemine', 'home-key', 'gone', 'gone', 'read-only', 'wrote', '']);
      expect(readFileSync(join(home, 'tools', 'node', 'bin', 'node'), 'utf8')).toBe('runtime');
      expect(readFileSync(join(state, 'note.txt'), 'utf8')).toBe('note\n');
    },
  );

  it.skipIf(!fullSandbox || support.sharedFolders !== undefined)(
    'hides the data dir from a plugin whose folder holds it (a developer running homed in the checkout of their plugin)',
    () => {
      const home = tempDir();
      const data = join(home, 'checkout', 'data');
      mkdirSync(join(data, 'plugins'), { recursive: true });
      writeFileSync(join(data, 'settings.json'), 'settings');
      writeFileSync(join(home, 'checkout', 'main.js'), 'mine');
      symlinkSync(join(home, 'checkout'), join(data, 'plugins', 'p'));
      const folder = { path: join(data, 'plugins', 'p'), real: join(home, 'checkout') };
      const folders = { homes: [home], others: [], kept: [], shown: [] };
      const look = `cat main.js; echo; cat ${data}/settings.json 2>/dev/null || echo gone; ls ${data}/plugins/p/main.js`;
      const hidden = { dataDir: data, pluginsDir: join(data, 'plugins'), folders };
      const { command, args } = sandboxedCommand('p', ASKED_NOTHING, 'isolate', available, hidden, folder, {
        command: '/bin/sh',
        args: ['-c', look],
      });
      const ran = spawnSync(command, args, { cwd: folder.real, encoding: 'utf8' });
      expect([ran.status, ran.stdout]).toEqual([0, `mine\ngone\n${data}/plugins/p/main.js\n`]);
    },
  );

  // Red team: a plugin folder holding the daemon's install (installed as a dependency of the plugin's project) made it writable again.
  it.skipIf(!fullSandbox || support.sharedFolders !== undefined)(
    'keeps what plugins run from read-only inside a plugin folder that holds it, and its state folder writable',
    () => {
      const project = tempDir();
      mkdirSync(join(project, 'node_modules', 'hologram'), { recursive: true });
      writeFileSync(join(project, 'node_modules', 'hologram', 'homed.mjs'), 'daemon');
      const folders = { homes: [], others: [], kept: [join(project, 'node_modules', 'hologram'), tempDir()], shown: [] };
      const look =
        `(echo trojan >> node_modules/hologram/homed.mjs) 2>/dev/null && echo writable || echo read-only; ` +
        // Nor by moving the folder above it aside and planting another in its place.
        `mv node_modules node_modules.old 2>/dev/null && echo moved; ` +
        'echo note > "$STATE/note.txt" && cat "$STATE/note.txt"';
      const data = tempDir();
      const state = stateOf(data);
      const hidden = { dataDir: data, pluginsDir: join(data, 'plugins'), folders };
      const { command, args } = sandboxedCommand(
        'p',
        ASKED_NOTHING,
        'isolate',
        available,
        hidden,
        { path: project, real: project, state },
        {
          command: '/bin/sh',
          args: ['-c', look],
        },
      );
      const ran = spawnSync(command, args, { cwd: project, encoding: 'utf8', env: { ...process.env, STATE: state } });
      expect([ran.status, ran.stdout]).toEqual([0, 'read-only\nnote\n']);
      expect(readFileSync(join(project, 'node_modules', 'hologram', 'homed.mjs'), 'utf8')).toBe('daemon');
    },
  );

  it.skipIf(!canIsolate || spawnSync('ipcmk', ['--help']).error !== undefined)(
    "gives a plugin IPC of its own: its user's other programs' shared memory is not there",
    () => {
      const made = spawnSync('ipcmk', ['-M', '4096'], { encoding: 'utf8' });
      const id = /(\d+)/.exec(made.stdout)?.[1];
      expect(id).toBeDefined();
      try {
        const listed = `ipcs -m | awk '$2 == ${id}' | grep -q . && echo seen || echo none`;
        expect(spawnSync('sh', ['-c', listed], { encoding: 'utf8' }).stdout).toBe('seen\n');
        const folder = tempDir();
        expect(runInside(tempDir(), { path: folder, real: folder }, listed)).toBe('none\n');
      } finally {
        spawnSync('ipcrm', ['-m', id!]);
      }
    },
  );

  it('says, of a daemon run as root, that its plugins are root too', () => {
    if (support.kind !== 'available') return;
    expect(support.root !== undefined).toBe(process.getuid?.() === 0);
    if (support.root)
      expect(support.root).toMatch(
        /^homed runs as root, so its plugins do too, and the sandbox cannot hold root: .*run homed as a user of its own$/,
      );
  });

  // Red team: a plugin rewrote its own manifest and started next time with `home` and `network`;
  // and with the daemon's TMPDIR outside the hidden folders, one plugin rewrote another's tsx cache there.
  it.skipIf(!fullSandbox || support.sharedFolders !== undefined)(
    'keeps a plugin from rewriting its manifest, and gives it a temporary folder of its own whatever TMPDIR the daemon has',
    () => {
      const folder = tempDir();
      writeFileSync(join(folder, 'plugin.json'), '{"name":"p"}');
      const temp = tempDir();
      const daemonTemp = tempDir();
      const folders = { homes: [], others: [temp], kept: [], shown: [], temp };
      const data = tempDir();
      const look =
        `(echo '{"capabilities":["home"]}' > plugin.json) 2>/dev/null && echo rewrote || echo read-only; ` +
        `echo note > ${data}/state/p/note.txt && echo wrote; echo "$TMPDIR"; echo cache > "$TMPDIR/tsx-cache" && echo cached`;
      const { command, args } = sandboxedCommand(
        'p',
        ASKED_NOTHING,
        'isolate',
        available,
        { dataDir: data, pluginsDir: join(data, 'plugins'), folders },
        { path: folder, real: folder, state: stateOf(data) },
        { command: '/bin/sh', args: ['-c', look] },
      );
      const ran = spawnSync(command, args, { cwd: folder, encoding: 'utf8', env: { ...process.env, TMPDIR: daemonTemp } });
      expect([ran.status, ran.stdout]).toEqual([0, `read-only\nwrote\n${temp}\ncached\n`]);
      expect(readFileSync(join(folder, 'plugin.json'), 'utf8')).toBe('{"name":"p"}');
      // What it put in its temporary folder is in neither the daemon's nor the real one.
      expect([existsSync(join(daemonTemp, 'tsx-cache')), existsSync(join(temp, 'tsx-cache'))]).toEqual([false, false]);
    },
  );

  it('refuses a plugin whose folder holds a private folder, which giving it back would show', () => {
    const withFolders = { ...hidden, folders: { homes: ['/home/ada'], others: ['/tmp'], kept: [], shown: [] } };
    const start = (real: string) =>
      sandboxedCommand('p', ASKED_NOTHING, 'isolate', available, withFolders, { path: '/srv/data/plugins/p', real }, node);
    for (const real of ['/home', '/home/ada', '/']) {
      expect(() => start(real)).toThrow(
        /its folder \/srv\/data\/plugins\/p leads to \S+, which holds \/(home\/ada|tmp), hidden from plugins/,
      );
    }
    expect(start('/home/ada/code/p').command).toMatch(SYSTEM_UNSHARE);
  });

  it('refuses a plugin whose folder is one plugins run from: its own, writable, would be bound over it', () => {
    const withFolders = { ...hidden, folders: { homes: [], others: [], kept: ['/opt/hologram'], shown: [] } };
    expect(() =>
      sandboxedCommand('p', ASKED_NOTHING, 'isolate', available, withFolders, { path: '/srv/data/plugins/p', real: '/opt/hologram' }, node),
    ).toThrow('leads to /opt/hologram, which plugins run from, and none may rewrite');
  });

  it('takes network as a capability in a manifest', () => {
    const manifest = parseManifest({ name: 'web', version: '1.0.0', entry: 'main.js', capabilities: ['tools', 'network'] }, 'web');
    expect(manifest.capabilities).toEqual(['tools', 'network']);
  });
});
