/**
 * A flood of misbehaviour costs a bounded number of events: the first five of a window are
 * recorded, the rest counted and summarised once when the window closes (on the hub's timers),
 * when the plugin goes, or when the hub stops. A complaint noted `once` is recorded once a window.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createDefaultCatalog, InMemoryEventStore, PLUGIN_REGISTRY_STREAM, SequentialIds, VirtualClock } from '../../events/index.ts';
import { noteMisbehaviour, summariseMisbehaviour, type MisbehaviourWindow } from '../../machines/pluginSupervisor/index.ts';
import { PluginHub } from '../../plugins/host/pluginHub.ts';
import { createManualTimers } from '../support/manualTimers.ts';

const hubs: PluginHub[] = [];
afterEach(async () => {
  await Promise.all(hubs.splice(0).map((hub) => hub.stop()));
});

const given = async (scrub?: <T>(value: T) => T) => {
  const store = new InMemoryEventStore(createDefaultCatalog(), new VirtualClock(0), new SequentialIds('evt'));
  const clock = new VirtualClock(1_000);
  const timers = createManualTimers();
  const lines: string[] = [];
  const hub = new PluginHub({
    store,
    clock,
    ids: new SequentialIds('input'),
    timers,
    log: (line) => lines.push(line),
    ...(scrub ? { scrub } : {}),
  });
  hubs.push(hub);
  await hub.restore();
  const events = async () =>
    (await store.readStream(PLUGIN_REGISTRY_STREAM)).map((e) => ({ type: e.type, data: e.data as Record<string, unknown> }));
  return { hub, clock, timers, lines, events };
};

describe('what a plugin wrote', () => {
  it('enters the log through the scrub: a complaint quoting a secret value and a reason naming one hold the alias', async () => {
    const scrub = <T>(value: T): T => JSON.parse(JSON.stringify(value).replaceAll('sk-held-5512', '@{HELD}')) as T;
    const { hub, events } = await given(scrub);
    await hub.misbehaved('babbler', 'FRAMING_LOST', 'the peer wrote bytes that are not a frame: "key sk-held-5512"');
    await hub.detach('babbler', 'it said bye (sk-held-5512)');
    const recorded = JSON.stringify(await events());
    expect(recorded).toContain('not a frame: \\"key @{HELD}\\"');
    expect(recorded).not.toContain('sk-held-5512');
  });
});

describe('misbehaviour is rate-limited', () => {
  it('25,000 unknown notifications become five PluginMisbehaved events and one summary', async () => {
    const { hub, clock, timers, lines, events } = await given();
    const complaints: Promise<void>[] = [];
    for (let i = 0; i < 25_000; i++) {
      if (i === 20_000) clock.advance(1_500);
      complaints.push(hub.misbehaved('flooder', i % 2 ? 'UNKNOWN_NOTIFY' : 'MALFORMED_FRAME', `complaint ${i}`));
    }
    await Promise.all(complaints);
    expect((await events()).map((e) => e.type)).toEqual(Array(5).fill('PluginMisbehaved'));
    expect((await events())[4]!.data.message).toContain('are counted, not recorded one by one');
    expect(lines).toHaveLength(5);

    timers.advance(60_000);
    await expect.poll(async () => (await events()).length).toBe(6);
    expect((await events())[5]).toEqual({
      type: 'PluginMisbehaviourSummarised',
      data: { plugin: 'flooder', suppressed: 24_995, byCode: { UNKNOWN_NOTIFY: 12_498, MALFORMED_FRAME: 12_497 }, from: 1_000, to: 2_500 },
    });
    expect(timers.armed).toBe(0);

    await hub.misbehaved('flooder', 'UNKNOWN_NOTIFY', 'a new window');
    expect((await events()).at(-1)).toMatchObject({ type: 'PluginMisbehaved', data: { message: 'a new window' } });
  });

  it("counts each plugin apart, and summarises a plugin's window when it goes and when the hub stops", async () => {
    const { hub, events } = await given();
    for (let i = 0; i < 7; i++) await hub.misbehaved('a', 'UNKNOWN_NOTIFY', 'a');
    for (let i = 0; i < 8; i++) await hub.misbehaved('b', 'UNKNOWN_NOTIFY', 'b');
    await hub.detach('a', 'crashed');
    const summaries = async () => (await events()).filter((e) => e.type === 'PluginMisbehaviourSummarised').map((e) => e.data);
    expect(await summaries()).toEqual([expect.objectContaining({ plugin: 'a', suppressed: 2 })]);
    await hub.stop();
    expect(await summaries()).toEqual([expect.objectContaining({ plugin: 'a' }), expect.objectContaining({ plugin: 'b', suppressed: 3 })]);
  });
});

describe('a complaint noted once a window (a flood, refused part by part)', () => {
  it('is recorded the first time, counted after, and recorded again in the next window; other codes are not affected', async () => {
    const { hub, timers, lines, events } = await given();
    for (let i = 0; i < 1_000; i++) await hub.misbehaved('spammer', 'INPUT_FLOOD', `refused ${i}`, { once: true });
    await hub.misbehaved('spammer', 'UNKNOWN_NOTIFY', 'gossip');
    expect((await events()).map((e) => [e.type, e.data.code, e.data.message])).toEqual([
      ['PluginMisbehaved', 'INPUT_FLOOD', 'refused 0'],
      ['PluginMisbehaved', 'UNKNOWN_NOTIFY', 'gossip'],
    ]);
    expect(lines).toHaveLength(2);

    timers.advance(60_000);
    await expect.poll(async () => (await events()).length).toBe(3);
    expect((await events())[2]).toMatchObject({
      type: 'PluginMisbehaviourSummarised',
      data: { plugin: 'spammer', suppressed: 999, byCode: { INPUT_FLOOD: 999 } },
    });
    await hub.misbehaved('spammer', 'INPUT_FLOOD', 'the next window', { once: true });
    expect((await events()).at(-1)).toMatchObject({ type: 'PluginMisbehaved', data: { code: 'INPUT_FLOOD', message: 'the next window' } });
  });
});

describe('a misbehaviour window', () => {
  it('records the first five in full, counts the rest by code, and summarises only what it did not record', () => {
    let window: MisbehaviourWindow | null = null;
    const notes = ['A', 'A', 'B', 'A', 'B', 'B', 'C', 'B'].map((code, at) => {
      const note = noteMisbehaviour(window, code, at * 10);
      window = note.window;
      return note;
    });
    expect(notes.map((n) => n.record)).toEqual([true, true, true, true, true, false, false, false]);
    expect(notes.map((n) => n.opened)).toEqual([true, false, false, false, false, false, false, false]);
    expect(notes.findIndex((n) => n.last)).toBe(4);
    expect(summariseMisbehaviour(window!)).toEqual({ suppressed: 3, byCode: { B: 2, C: 1 }, from: 0, to: 70 });
    expect(summariseMisbehaviour(noteMisbehaviour(null, 'A', 0).window)).toBeNull();
  });
});
