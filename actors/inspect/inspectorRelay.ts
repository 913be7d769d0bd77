/**
 * The relay between the daemon's actors and a browser running the Stately inspector: an HTTP
 * page that embeds the inspector, and a WebSocket hub that passes each message on to every
 * other client (keeping the last MAX_BUFFERED for late joiners). It listens on the host it is
 * given, and takes WebSocket connections only from itself (no Origin: the daemon) or from its
 * own page, so a web site open in the same browser cannot read the machines' events.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

const MAX_BUFFERED = 200;
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
const INSPECTOR_UI = 'https://stately.ai/inspect';

export type Relay = Readonly<{ port: number; close(): void }>;

/** The page: the inspector in an iframe, fed from the relay on the same host and port it was loaded from. */
const bridgePage = (): string => `<!DOCTYPE html>
<html>
<head>
  <title>Hologram: Stately inspector</title>
  <style>* { margin: 0; padding: 0; } html, body { height: 100%; } iframe { width: 100%; height: 100%; border: none; }</style>
</head>
<body>
  <iframe id="inspector" src="${INSPECTOR_UI}"></iframe>
  <script>
    const iframe = document.getElementById('inspector');
    const buffer = [];
    let connected = false;
    window.addEventListener('message', (e) => {
      if (e.data && e.data.type === '@statelyai.connected') {
        connected = true;
        for (const event of buffer) iframe.contentWindow.postMessage(event, '*');
        buffer.length = 0;
      }
    });
    const ws = new WebSocket('ws://' + location.host);
    ws.onmessage = (event) => {
      const data = JSON.parse(event.data);
      if (connected) iframe.contentWindow.postMessage(data, '*');
      else buffer.push(data);
    };
  </script>
</body>
</html>`;

/** No Origin (a program such as the daemon itself), or the relay's own page. */
const fromItself = (request: IncomingMessage): boolean => {
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  try {
    return new URL(origin).host === request.headers.host;
  } catch {
    return false;
  }
};

/** Listens on `host:port` (0: any free port); rejects with the listen error (EADDRINUSE, EADDRNOTAVAIL…). */
export const startRelay = async (host: string, port: number): Promise<Relay> => {
  // ws loads only for --inspect: a daemon without it does not pay for the package.
  const { WebSocket, WebSocketServer } = await import('ws');
  return new Promise((resolve, reject) => {
    const http = createServer((_request, response) => {
      response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      response.end(bridgePage());
    });
    const hub = new WebSocketServer({
      server: http,
      maxPayload: MAX_MESSAGE_BYTES,
      verifyClient: ({ req }: { req: IncomingMessage }) => fromItself(req),
    });
    const buffered: string[] = [];
    hub.on('connection', (client) => {
      client.on('error', () => client.terminate());
      for (const message of buffered) client.send(message);
      client.on('message', (data) => {
        const message = String(data);
        buffered.push(message);
        if (buffered.length > MAX_BUFFERED) buffered.shift();
        for (const other of hub.clients) if (other !== client && other.readyState === WebSocket.OPEN) other.send(message);
      });
    });
    hub.on('error', () => undefined); // the http server's error, reported below
    http.once('error', reject);
    http.listen(port, host, () => {
      http.off('error', reject);
      http.on('error', () => undefined);
      resolve({
        port: (http.address() as AddressInfo).port,
        close: () => {
          for (const client of hub.clients) client.terminate();
          hub.close();
          http.close();
        },
      });
    });
  });
};
