/**
 * Hostile subprocess plugins against homed, the way an attacker's plugin would try it: each
 * attempt is refused or contained, recorded in the log with a reason, the daemon goes on
 * answering, and `homed replay --verify` still passes.
 */
import { describe, expect, it } from 'vitest';
import { askSocket, logOf, testDataDir, useDaemons, verifyReplay } from '../support/homedSession.ts';
import { afterToolResult, startLlmServer } from '../support/llmServer/index.ts';
import { finished, hostPidOfTag, processState, runHomed, spawnNode, WAITER } from '../support/processes.ts';
import { useTempDir } from '../support/tempDir.ts';
import { DEFAULT_STAGE_TIMEOUT_MS } from '../../actors/index.ts';
import { MAX_WAITING_CALLS_PER_PLUGIN } from '../../actors/turn/turnRunner.ts';
import { STAGE_BUDGET_MS } from '../../plugins/host/callCharges.ts';
import { probeSandbox } from '../../plugins/host/processSandbox.ts';

/** Stage timeouts whose wait gets a plugin's stage handlers detached. */
const STAGE_TIMEOUTS_TO_DETACH = STAGE_BUDGET_MS / DEFAULT_STAGE_TIMEOUT_MS;

const tempDir = useTempDir();

const daemons = useDaemons();
const sandboxSupport = probeSandbox('isolate');
/** Plugins here run sandboxed, each in a PID namespace of its own. */
const canConfine = sandboxSupport.kind === 'available' && sandboxSupport.unconfined === undefined;

describe('a hostile plugin', () => {
  it("cannot take a built-in's tool or channel name, and of two claims of one name sent at once exactly one wins", async () => {
    const dir = testDataDir(tempDir(), { plugins: ['thief'] });
    const daemon = await daemons.start(dir);
    expect(daemon.output).toMatch(/plugin thief: files_read: REGISTRATION_REFUSED .*tool 'files_read' is already registered by 'files'/);
    expect(daemon.output).toMatch(/plugin thief: cli channel: REGISTRATION_REFUSED .*channel 'cli' is already registered by 'cli'/);
    const twins = [...daemon.output.matchAll(/plugin thief: twin \d: (\S+)/g)].map((m) => m[1]);
    expect(twins.sort()).toEqual(['REGISTRATION_REFUSED', 'accepted']);

    const tools = await finished(spawnNode([WAITER, '--data', dir, '--tools']));
    expect(tools.stdout).not.toMatch(/^files_read\s+thief/m);
    expect(tools.stdout.match(/^thief_twin\s+thief/gm)).toHaveLength(1);

    const log = await logOf(dir, '--stream', 'plugins');
    expect(log.filter((e) => e.type === 'PluginToolRegistered' && e.data.plugin === 'thief').map((e) => e.data.name)).toEqual([
      'thief_twin',
    ]);
    const misbehaved = log.filter((e) => e.type === 'PluginMisbehaved' && e.data.plugin === 'thief');
    expect(misbehaved.map((e) => e.data.code)).toEqual(['NAME_TAKEN', 'NAME_TAKEN', 'NAME_TAKEN']);
    await daemons.stop(daemon);
    await verifyReplay(dir);
  });

  it('denies a tool call with a before_toolcall change whose other fields are nil: the call never runs', async () => {
    const server = await startLlmServer([{ toolCalls: [{ id: 'call_peek', name: 'nilgate_peek', arguments: {} }] }]);
    daemons.onCleanup(() => server.close());
    const dir = testDataDir(tempDir(), { llm: server, plugins: ['nilgate'] });
    const daemon = await daemons.start(dir);
    const waiter = await finished(spawnNode([WAITER, '--data', dir, 'peek at the secret']));
    // Every call of the round was denied, so the turn ends there, saying why.
    expect(waiter.stdout).toMatch(/every tool call was denied \(.*peeking is not allowed/);
    expect(waiter.stdout).not.toContain('the secret is 42');
    const log = await logOf(dir);
    expect(log.find((e) => e.type === 'ToolCallDenied')!.data).toMatchObject({ callId: 'call_peek', reason: 'peeking is not allowed' });
    expect(JSON.stringify(log)).not.toContain('the secret is 42');
    await daemons.stop(daemon);
    await verifyReplay(dir);
  });

  it("gets neither the daemon's environment nor its keys: an allow-list, what its manifest asks for, and only its own settings without secrets", async () => {
    const dir = testDataDir(tempDir(), {
      plugins: ['spy'],
      settings: { plugins: { spy: { greeting: 'hello', apiKey: 'sk-own-secret' } } },
      sources: [
        { name: 'inline', adapter: 'openai', baseUrl: 'http://127.0.0.1:9/v1', model: 'm', apiKey: 'sk-inline-secret' },
        { name: 'fromenv', adapter: 'openai', baseUrl: 'http://127.0.0.1:9/v1', model: 'm', apiKeyEnv: 'SPY_PROVIDER_KEY' },
      ],
    });
    const daemon = await daemons.start(dir, { env: { SPY_PROVIDER_KEY: 'sk-env-secret', SPY_WANTED: 'visible', SPY_UNASKED: 'hidden' } });
    const env = JSON.parse(daemon.output.match(/plugin spy: env (.*)/)![1]!) as Record<string, string>;
    expect(Object.keys(env).sort()).toEqual(expect.arrayContaining(['HOLOGRAM_PLUGIN_INSTANCE', 'PATH', 'SPY_WANTED']));
    expect(
      Object.keys(env).every((name) =>
        ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR', 'SPY_WANTED', 'HOLOGRAM_PLUGIN_INSTANCE', 'HOLOGRAM_PLUGIN_STATE'].includes(
          name,
        ),
      ),
    ).toBe(true);
    expect(env.SPY_WANTED).toBe('visible');
    // Its own subtree, without its secret; nothing outside it (the llm sources) at all.
    expect(daemon.output).toContain('plugin spy: settings own {"greeting":"hello"}');
    expect(daemon.output).toContain('plugin spy: settings llm null');
    expect(daemon.output).toContain('plugin spy: settings escape null');
    expect(daemon.output).toContain('plugin spy: settings key null');
    expect(daemon.output).not.toContain('sk-own-secret');
    expect(daemon.output).not.toContain('sk-inline-secret');
    expect(daemon.output).not.toContain('sk-env-secret');
    const withheld = (await logOf(dir, '--type', 'PluginMisbehaved')).map((e) => e.data);
    expect(withheld).toEqual([
      expect.objectContaining({ plugin: 'spy', code: 'ENV_WITHHELD', message: expect.stringContaining('SPY_PROVIDER_KEY') }),
    ]);
    await daemons.stop(daemon);
    await verifyReplay(dir);
  });

  it('sending 25,000 unknown notifications costs five events and one summary, and the daemon goes on answering', async () => {
    const server = await startLlmServer([{ text: 'Still here.' }]);
    daemons.onCleanup(() => server.close());
    const dir = testDataDir(tempDir(), { llm: server, plugins: ['flooder'] });
    const daemon = await daemons.start(dir);
    expect(daemon.output).toMatch(/plugin flooder \(subprocess\): running, tools flooder_ping/);
    const replies = await askSocket(dir, 'are you there?');
    expect(
      replies
        .filter((r) => r.type === 'chunk')
        .map((r) => r.text)
        .join(''),
    ).toBe('Still here.');
    await daemons.stop(daemon);
    const log = await logOf(dir, '--stream', 'plugins');
    expect(log.filter((e) => e.type === 'PluginMisbehaved').map((e) => e.data.code)).toEqual(Array(5).fill('UNKNOWN_NOTIFY'));
    expect(log.filter((e) => e.type === 'PluginMisbehaviourSummarised').map((e) => e.data)).toEqual([
      expect.objectContaining({ plugin: 'flooder', suppressed: 24_995, byCode: { UNKNOWN_NOTIFY: 24_995 } }),
    ]);
    const { stdout } = await daemon.exited;
    expect(stdout.match(/plugin flooder: UNKNOWN_NOTIFY/g)).toHaveLength(5);
    // The names it gave forge no line, and turn none right to left.
    expect(stdout).not.toMatch(/^homed: plugin cli \(subprocess\): forged/m);
    expect(stdout).not.toContain('\u202e');
    expect(stdout).toContain("sent unknown notification 'gossip⏎homed: plugin cli (subprocess): forged⟨U+202E⟩'");
    await verifyReplay(dir);
  });

  it(`has its stage handlers detached once ${STAGE_TIMEOUTS_TO_DETACH} turns waited on one that never answers; its tool stays, and later turns do not wait`, async () => {
    const server = await startLlmServer([{ when: () => true, reply: { text: 'Hello.' }, repeat: true }]);
    daemons.onCleanup(() => server.close());
    const dir = testDataDir(tempDir(), { llm: server, plugins: ['staller'] });
    const daemon = await daemons.start(dir);
    for (let turn = 0; turn <= STAGE_TIMEOUTS_TO_DETACH; turn++) {
      const replies = await askSocket(dir, `hello ${turn}`);
      expect(replies.filter((r) => r.type === 'chunk').map((r) => r.text)).toEqual(['Hello.']);
    }
    const tools = await finished(spawnNode([WAITER, '--data', dir, '--tools']));
    expect(tools.stdout).toMatch(/^staller_ping\s+staller/m);
    const listed = await runHomed(['plugins', '--data', dir]);
    expect(listed.stdout).toMatch(
      /^ {2}stages detached: its stage handlers held turns up 15 s within 10 minutes.*; 'homed plugins reload staller' lets it register them again$/m,
    );
    await daemons.stop(daemon);

    // As the log last recorded it, with homed stopped.
    expect((await runHomed(['plugins', '--data', dir])).stdout).toContain('stages detached: its stage handlers held turns up 15 s');
    const log = await logOf(dir);
    const handlerId = log.find((e) => e.type === 'PluginStageRegistered' && e.data.plugin === 'staller')!.data.handlerId as string;
    const detached = log.filter((e) => e.type === 'PluginStagesDetached');
    expect(detached.map((e) => e.data)).toEqual([
      { plugin: 'staller', handlers: [handlerId], reason: expect.stringContaining('(the last: a timeout)') },
    ]);
    expect(log.filter((e) => e.type === 'PluginMisbehaved').map((e) => e.data.code)).toEqual(['STAGE_UNANSWERED']);
    // The turns before it asked the handler and timed out; the one after asked nobody.
    const asked = log.filter((e) => e.type === 'StageStarted' && (e.data.handlers as string[]).includes(handlerId));
    expect(asked).toHaveLength(STAGE_TIMEOUTS_TO_DETACH);
    expect(log.filter((e) => e.type === 'StageTimedOut')).toHaveLength(STAGE_TIMEOUTS_TO_DETACH);
    expect(asked.every((e) => e.seq < detached[0]!.seq)).toBe(true);
    expect(log.filter((e) => e.type === 'TurnCompleted')).toHaveLength(STAGE_TIMEOUTS_TO_DETACH + 1);
    await verifyReplay(dir);
  }, 120_000);

  it('writing text to stdout gets it stopped at once and restarted: the call fails now, not after 60 s', async () => {
    const server = await startLlmServer([
      { toolCalls: [{ id: 'call_talk', name: 'babbler_talk', arguments: {} }] },
      { text: 'The tool broke.' },
    ]);
    daemons.onCleanup(() => server.close());
    const dir = testDataDir(tempDir(), { llm: server, plugins: ['babbler'] });
    const daemon = await daemons.start(dir);
    const started = Date.now();
    const waiter = await finished(spawnNode([WAITER, '--data', dir, 'talk to me']));
    expect(waiter.stdout).toBe('The tool broke.\n');
    // Far below the tool call's 60 s timeout: the garbage closed the connection at once.
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(JSON.stringify(server.requests[1]!.body)).toMatch(/tool 'babbler_talk' failed: .*not a frame/);
    await expect
      .poll(async () => (await logOf(dir, '--type', 'PluginStarted')).filter((e) => e.data.plugin === 'babbler').length, {
        timeout: 15_000,
      })
      .toBe(2);
    const log = await logOf(dir);
    expect(log.find((e) => e.type === 'PluginMisbehaved')!.data).toMatchObject({ plugin: 'babbler', code: 'FRAMING_LOST' });
    expect(log.find((e) => e.type === 'PluginCrashed')!.data).toMatchObject({
      plugin: 'babbler',
      error: expect.stringContaining('"DEBUG: babbler_talk called'),
    });
    await daemons.stop(daemon);
    await verifyReplay(dir);
  });

  it('is stopped for good, with what to fix, when its handshake can never succeed (a protocol version, a name not its own)', async () => {
    const dir = testDataDir(tempDir(), { plugins: ['oldproto', 'impostor'] });
    const daemon = await daemons.start(dir);
    expect(daemon.output).toMatch(
      /plugin oldproto: start failed: plugin 'oldproto' is not restarted until it is fixed: .*speaks plugin protocol 2/,
    );
    const listing = await runHomed(['plugins', '--data', dir]);
    expect(listing.stdout).toMatch(/^oldproto\s+subprocess\s+stopped\s+restarts 0$/m);
    expect(listing.stdout).toMatch(/^impostor\s+subprocess\s+stopped\s+restarts 0$/m);
    const log = await logOf(dir);
    for (const plugin of ['oldproto', 'impostor']) {
      const facts = log.filter((e) => e.stream.startsWith(`plugin-${plugin}:`) && e.type !== 'InputDelivered');
      expect(facts.map((e) => [e.type, e.data.reason])).toEqual([
        ['PluginStarting', undefined],
        ['PluginStopped', 'refused'],
      ]);
    }
    const stopped = (plugin: string) => log.find((e) => e.type === 'PluginStopped' && e.data.plugin === plugin)!.data.error;
    expect(stopped('oldproto')).toContain('rebuild the plugin against protocol 1');
    expect(stopped('impostor')).toContain("said hello as 'files', but its manifest names it 'impostor'");
    await daemons.stop(daemon);
    await verifyReplay(dir);
  });

  /** The machine's pids of the two processes tagged in the output by the pattern's two groups; each is killed at cleanup if it still runs. */
  const hostPidsIn = (output: string, pattern: RegExp): [number, number] => {
    const [first, second] = pattern
      .exec(output)!
      .slice(1, 3)
      .map((tag) => {
        const pid = hostPidOfTag(tag!);
        daemons.onCleanup(async () => void (processState(pid) === 'alive' && process.kill(pid, 'SIGKILL')));
        return pid;
      });
    return [first!, second!];
  };

  /** The orphaner's two sleepers, as the machine numbers them, and the plugin's pid as `homed plugins` lists it. */
  const orphanerOf = async (dir: string, output: string) => {
    const [grandchild, detached] = hostPidsIn(
      output,
      /plugin orphaner: grandchild (\S+)\n[\s\S]*plugin orphaner: detached grandchild (\S+)/,
    );
    const plugin = Number((await runHomed(['plugins', '--data', dir])).stdout.match(/^orphaner .* pid (\d+)/m)![1]);
    return { grandchild, detached, plugin };
  };

  /** Every process group spawned was closed, ended or reaped, when the daemon stopped cleanly. */
  const expectGroupsClosed = async (dir: string, spawned: number) => {
    const open = await logOf(dir, '--stream', 'plugins');
    expect(open.filter((e) => e.type === 'PluginProcessSpawned')).toHaveLength(spawned);
    expect(open.filter((e) => e.type === 'PluginProcessGroupEnded' || e.type === 'PluginProcessGroupReaped')).toHaveLength(spawned);
  };

  it.skipIf(!canConfine)(
    'leaves nothing a sandboxed plugin started running, in its group or a session of its own, whether the daemon is SIGKILLed or stops',
    async () => {
      const dir = testDataDir(tempDir(), { plugins: ['orphaner', 'clinger'] });
      const first = await daemons.start(dir);
      const before = await orphanerOf(dir, first.output);
      const [clinger, sleeper] = hostPidsIn(first.output, /plugin clinger: clinging: (\S+), sleeper (\S+)/);
      expect([before.grandchild, before.detached, clinger, sleeper].map(processState)).toEqual(['alive', 'alive', 'alive', 'alive']);
      first.process.kill('SIGKILL');
      await first.exited;
      // The orphaner leaves when its stdin closes; the clinger stays, but not past its daemon. Each PID namespace ends with its plugin.
      await expect
        .poll(() => [before.plugin, before.grandchild, before.detached, clinger, sleeper].map(processState), { timeout: 5_000 })
        .toEqual(['gone', 'gone', 'gone', 'gone', 'gone']);

      const second = await daemons.start(dir);
      const after = await orphanerOf(dir, second.output);
      expect([after.grandchild, after.detached].map(processState)).toEqual(['alive', 'alive']);
      await daemons.stop(second);
      expect([after.plugin, after.grandchild, after.detached].map(processState)).toEqual(['gone', 'gone', 'gone']);
      await expectGroupsClosed(dir, 4);
      await verifyReplay(dir);
    },
  );

  it('leaves nothing of its process group running past the next start when the daemon is SIGKILLed and plugins are not sandboxed: it is reaped', async () => {
    const dir = testDataDir(tempDir(), { plugins: ['orphaner'], settings: { security: { sandbox: { plugins: 'off' } } } });
    const first = await daemons.start(dir);
    // Said at the start, as every way a plugin goes unsandboxed is.
    expect(first.output).toContain('plugins: security.sandbox.plugins is "off": subprocess plugins run without a sandbox');
    const { grandchild, plugin } = await orphanerOf(dir, first.output);
    first.process.kill('SIGKILL');
    await first.exited;
    // The plugin leaves when its stdin closes; what it forked does not.
    await expect.poll(() => processState(plugin), { timeout: 5_000 }).toBe('gone');
    expect(processState(grandchild)).toBe('alive');
    const second = await daemons.start(dir);
    // Unsandboxed, the sleeper in a session of its own outlives even a clean stop: the test ends it.
    await orphanerOf(dir, second.output);
    expect(second.output).toContain(`plugin orphaner: process group ${plugin} of a previous daemon: killed ${grandchild}`);
    await expect.poll(() => processState(grandchild), { timeout: 2_000 }).toBe('gone');
    const reaped = await logOf(dir, '--type', 'PluginProcessGroupReaped');
    expect(reaped.map((e) => e.data)).toEqual([
      expect.objectContaining({ plugin: 'orphaner', pid: plugin, killed: [grandchild], spared: 0 }),
    ]);
    await daemons.stop(second);
    // A clean stop ended every group it spawned: the next start has nothing to reap.
    await expectGroupsClosed(dir, 2);
    await verifyReplay(dir);
  });
});

describe('a plugin naming addresses that would forge lines', () => {
  // Red team round 15: a reply target is shown in waiter's /approvals, the web UI and homed's log; with a line break
  // or an escape in it, a plugin wrote lines that read as homed's.
  it('has every input whose reply target or conversation holds a control character refused, saying what an address is', async () => {
    const server = await startLlmServer([{ when: () => true, repeat: true, reply: { text: 'hi' } }]);
    daemons.onCleanup(() => server.close());
    const dir = testDataDir(tempDir(), { llm: server, plugins: ['forger'] });
    const daemon = await daemons.start(dir);
    await expect.poll(async () => (await logOf(dir, '--type', 'TurnCompleted')).length, { timeout: 30_000 }).toBe(1);
    await daemons.stop(daemon);
    const { stdout } = await daemon.exited;
    for (const i of [0, 1, 2]) {
      expect(stdout).toContain(`plugin forger: forged ${i}: refused: `);
    }
    expect(stdout).toContain("an input's replyTo.target holds a control or formatting character");
    expect(stdout).toContain("an input's conversation holds a control or formatting character");
    expect(stdout).toContain('plugin forger: fine: accepted');
    // Nothing of the forged addresses reached the person: no line of homed's reads as the forged one, no escape was written.
    expect(stdout).not.toMatch(/^homed: stopping: the vault/m);
    expect(stdout).not.toContain('\u001b[');
    expect((await logOf(dir, '--type', 'TurnRequested')).map((e) => e.data.input)).toEqual(['hello']);
    await verifyReplay(dir);
  });
});

describe('a plugin piling up replies that wait for approval', () => {
  // A red-team run: a guest whose every call waits for approval sent 150 inputs, and 182 calls
  // waited in the owner's /approvals (a parked reply holds no input's place, so the flood bound missed them); bounded
  // per principal, a plugin declaring twelve profiles had 96 waiting; per reply, one asking for 40 calls at once had 320.
  it('gets at most MAX_WAITING_CALLS_PER_PLUGIN calls waiting, whichever of its profiles and replies they are of; the rest are refused, saying why', async () => {
    let calls = 0;
    const three = () => Array.from({ length: 3 }, () => ({ id: `c${calls++}`, name: 'timer_list', arguments: {} }));
    const server = await startLlmServer([
      { when: afterToolResult, repeat: true, reply: { text: 'That needs the owner.' } },
      { when: () => true, repeat: true, reply: () => ({ toolCalls: three() }) },
    ]);
    daemons.onCleanup(() => server.close());
    const dir = testDataDir(tempDir(), { llm: server, plugins: ['parker'] });
    const daemon = await daemons.start(dir);
    const settled = async () =>
      (await logOf(dir, '--type', 'ApprovalRequested')).length + (await logOf(dir, '--type', 'ToolCallRefused')).length;
    await expect.poll(settled, { timeout: 60_000, interval: 500 }).toBe(36);
    const asked = await logOf(dir, '--type', 'ApprovalRequested');
    expect(asked).toHaveLength(MAX_WAITING_CALLS_PER_PLUGIN);
    const refused = await logOf(dir, '--type', 'ToolCallRefused');
    expect(refused).toHaveLength(36 - MAX_WAITING_CALLS_PER_PLUGIN);
    for (const { data } of refused) {
      expect(data.reason).toContain(
        `${MAX_WAITING_CALLS_PER_PLUGIN} calls of replies to the inputs of plugin parker may wait for a person's approval at once`,
      );
    }
    // Its two profiles both had replies waiting: the bound is the plugin's, not each profile's.
    const principals = (await logOf(dir, '--type', 'TurnRequested')).map((e) => e.data.principal);
    expect(new Set(principals)).toEqual(new Set(['parker.guest', 'parker.visitor']));
    // The owner's own calls are not held by the guest's: the owner's reply comes.
    expect((await askSocket(dir, 'hello')).some((r) => r.type === 'end')).toBe(true);
    await daemons.stop(daemon);
    await verifyReplay(dir);
  });
});
