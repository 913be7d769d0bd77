/**
 * The inspector relay: it passes the daemon's messages on to the browser page it serves, and
 * takes WebSocket connections only from a program (no Origin) or its own page, so a web site
 * open in the same browser cannot read the machines' events.
 */
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type Relay, startRelay } from '../../actors/inspect/inspectorRelay.ts';

const relays: Relay[] = [];
afterEach(() => {
  for (const relay of relays.splice(0)) relay.close();
});

/** A WebSocket to the relay, once open; `messages` holds what it received from the start. */
const open = (port: number, origin?: string): Promise<WebSocket & { messages: string[] }> =>
  new Promise((resolve, reject) => {
    const socket = Object.assign(new WebSocket(`ws://127.0.0.1:${port}`, origin === undefined ? {} : { origin }), {
      messages: [] as string[],
    });
    socket.on('message', (data) => socket.messages.push(String(data)));
    socket.once('open', () => resolve(socket));
    socket.once('unexpected-response', (_request, response) => reject(new Error(`refused with HTTP ${response.statusCode}`)));
    socket.once('error', reject);
  });

const received = async (socket: { messages: string[] }): Promise<string[]> => {
  for (let i = 0; i < 1_000 && socket.messages.length === 0; i++) await new Promise((resolve) => setImmediate(resolve));
  return socket.messages;
};

describe('the inspector relay', () => {
  it('relays what the daemon sends to its own page, and replays it to a page that joins late', async () => {
    const relay = await startRelay('127.0.0.1', 0);
    relays.push(relay);
    const daemon = await open(relay.port);
    const page = await open(relay.port, `http://127.0.0.1:${relay.port}`);
    daemon.send('{"type":"@xstate.snapshot"}');
    expect(await received(page)).toEqual(['{"type":"@xstate.snapshot"}']);
    const late = await open(relay.port, `http://127.0.0.1:${relay.port}`);
    expect(await received(late)).toEqual(['{"type":"@xstate.snapshot"}']);
    expect(daemon.messages, 'the sender does not get its own messages back').toEqual([]);
    for (const socket of [daemon, page, late]) socket.close();
  });

  it('refuses a WebSocket from another web site', async () => {
    const relay = await startRelay('127.0.0.1', 0);
    relays.push(relay);
    await expect(open(relay.port, 'http://evil.example')).rejects.toThrow('refused with HTTP 401');
  });

  it('serves the page that embeds the inspector, fed from the host it was loaded from', async () => {
    const relay = await startRelay('127.0.0.1', 0);
    relays.push(relay);
    const page = await (await fetch(`http://127.0.0.1:${relay.port}/`)).text();
    expect(page).toContain('https://stately.ai/inspect');
    expect(page).toContain("new WebSocket('ws://' + location.host)");
  });
});
