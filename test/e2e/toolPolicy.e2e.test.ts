/**
 * The tool policy through homed: a tool `security.tools.deny` names is not offered to the model,
 * and a call to it anyway is answered with the rule that refused it, without running; the log
 * replays with the refusal.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SecretVault } from '../../adapters/secrets/secretVault.ts';
import { logOf, testDataDir, useDaemons, verifyReplay } from '../support/homedSession.ts';
import { type RecordedRequest, startLlmServer } from '../support/llmServer/index.ts';
import { finished, spawnNode, WAITER } from '../support/processes.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const daemons = useDaemons();

const offered = (request: RecordedRequest): string[] =>
  ((request.body as { tools?: { function?: { name?: string } }[] }).tools ?? []).map((t) => t.function?.name ?? '');

describe('security.tools through homed', () => {
  it('does not offer a denied tool, answers a call to it with the rule, and never runs it', async () => {
    const server = await startLlmServer([
      { toolCalls: [{ id: 'call_write', name: 'files_write', arguments: { path: 'x.txt', content: 'written anyway' } }] },
      { text: 'I could not write it.' },
    ]);
    daemons.onCleanup(() => server.close());
    const dir = testDataDir(tempDir(), { llm: server, settings: { security: { tools: { deny: ['files_write', 'memory_*'] } } } });
    const daemon = await daemons.start(dir);
    const reply = await finished(spawnNode([WAITER, '--data', dir, 'write x.txt please']));
    expect(reply.stdout).toBe('I could not write it.\n');

    const tools = offered(server.requests[0]!);
    expect(tools).toContain('files_read');
    expect(tools.filter((t) => t === 'files_write' || t.startsWith('memory_'))).toEqual([]);
    const told = JSON.stringify(server.requests[1]!.body);
    expect(told).toContain("tool 'files_write' is refused by the security policy: security.tools.deny has 'files_write'");
    expect(existsSync(join(dir, 'files', 'x.txt'))).toBe(false);
    expect(await logOf(dir, '--type', 'ToolCalled')).toEqual([]);
    await daemons.stop(daemon);
    await verifyReplay(dir);
  });

  // A red team's guest had the model send on every output channel (its own, the waiter sessions')
  // though security.tools denied output_send__*: a channel's tools went round the policy.
  it("holds an output channel's tools to the policy as any other tool", async () => {
    const server = await startLlmServer([
      { toolCalls: [{ id: 'call_send', name: 'output_send__cli', arguments: { payload: 'SENT ANYWAY', type: 'text' } }] },
      { text: 'I could not send it.' },
    ]);
    daemons.onCleanup(() => server.close());
    const dir = testDataDir(tempDir(), { llm: server, settings: { security: { tools: { deny: ['output_send__*'] } } } });
    const daemon = await daemons.start(dir);
    const reply = await finished(spawnNode([WAITER, '--data', dir, 'send it on the cli channel']));
    expect(reply.stdout).toBe('I could not send it.\n');
    expect(offered(server.requests[0]!).filter((t) => t.startsWith('output_send__'))).toEqual([]);
    expect(JSON.stringify(server.requests[1]!.body)).toContain(
      "tool 'output_send__cli' is refused by the security policy: security.tools.deny has 'output_send__*'",
    );
    expect(JSON.stringify(await logOf(dir, '--type', 'OutputSent'))).not.toContain('SENT ANYWAY');
    // The rule names tools there are: it is not reported as a typo.
    expect(daemon.output).not.toContain("has 'output_send__*', which names none");
    await daemons.stop(daemon);
    await verifyReplay(dir);
  });

  // A profile locked down with "allow": [] was let through every tool: an empty list counted as none given.
  it('allows no tool with an empty allow list', async () => {
    const server = await startLlmServer([
      { toolCalls: [{ id: 'call_write', name: 'files_write', arguments: { path: 'x.txt', content: 'written anyway' } }] },
      { text: 'No tools here.' },
    ]);
    daemons.onCleanup(() => server.close());
    const dir = testDataDir(tempDir(), { llm: server, settings: { security: { tools: { allow: [] } } } });
    const daemon = await daemons.start(dir);
    const reply = await finished(spawnNode([WAITER, '--data', dir, 'write x.txt please']));
    expect(reply.stdout).toBe('No tools here.\n');
    expect(offered(server.requests[0]!)).toEqual([]);
    expect(JSON.stringify(server.requests[1]!.body)).toContain(
      "tool 'files_write' is refused by the security policy: it is not in security.tools.allow (empty: no tool)",
    );
    expect(existsSync(join(dir, 'files', 'x.txt'))).toBe(false);
    await daemons.stop(daemon);
  });

  // A hostile tester's 'file_write' (for files_write) in security.tools.approve was taken without a
  // word, and the write ran unapproved: the approve failed open.
  it('says at start which rules name no tool, with the tool meant, so a typo does not fail open unseen', async () => {
    const settings = {
      security: {
        tools: { approve: ['file_write'], deny: ['files_*', 'zzz_*'] },
        principals: { guest: { allow: ['memory_recal'] }, onwer: { deny: ['files_write'] }, owner: { deny: ['zzz_*'] } },
        owners: ['qq.owner'],
      },
    };
    const dir = testDataDir(tempDir(), { settings });
    // A secret set for a misspelt tool would never be filled in (a newcomer's report).
    SecretVault.open(dir).set('WEATHER_KEY', 'sk-weather-0123456789', ['files_rite', 'files_read']);
    const daemon = await daemons.start(dir);
    expect(daemon.output).toContain(
      "security: secret WEATHER_KEY is set for 'files_rite', which names none of the tools registered now (did you mean 'files_write'",
    );
    expect(daemon.output).not.toContain("set for 'files_read'");
    expect(daemon.output).toContain(
      "security: security.tools.approve has 'file_write', which names none of the tools registered now (did you mean 'files_write'",
    );
    expect(daemon.output).toContain(
      "security: security.tools.deny has 'zzz_*', which names none of the tools registered now (see 'waiter /tools')",
    );
    expect(daemon.output).toContain(
      "security.principals.guest.allow has 'memory_recal', which names none of the tools registered now (did you mean 'memory_recall'",
    );
    expect(daemon.output).not.toContain("has 'files_*'");
    // A principal no plugin declares is most likely a typo too: its rules would never apply.
    expect(daemon.output).toContain(
      "security: security.principals names 'onwer', which is not owner, internal or a profile a plugin declares now (did you mean 'owner'?)",
    );
    expect(daemon.output).toContain("security: security.principals names 'guest', which is not owner");
    expect(daemon.output).toContain("security: security.owners names 'qq.owner', which is not owner");
    expect(daemon.output).not.toContain("names 'owner'");
    await daemons.stop(daemon);
  });
});
