/** Which addresses listen on a TCP port, as the kernel reports them (Linux /proc/net/tcp, tcp6). */
import { readFileSync } from 'node:fs';

const LISTEN = '0A';

/** /proc's little-endian hex IPv4 address ("0100007F") as "127.0.0.1". */
const ipv4 = (hex: string): string =>
  (hex.match(/../g) ?? [])
    .map((byte) => Number.parseInt(byte, 16))
    .reverse()
    .join('.');

const IPV6_NAMES: Readonly<Record<string, string>> = {
  '00000000000000000000000000000000': '::',
  '00000000000000000000000001000000': '::1',
};

/** Every local address with a socket listening on `port`: "127.0.0.1", "0.0.0.0", "::", "::1" (other IPv6 as /proc's hex). */
export const listeningAddresses = (port: number): string[] => {
  const found: string[] = [];
  for (const [file, name] of [
    ['/proc/net/tcp', ipv4],
    ['/proc/net/tcp6', (hex: string) => IPV6_NAMES[hex] ?? hex],
  ] as const) {
    let table: string;
    try {
      table = readFileSync(file, 'utf8');
    } catch {
      continue; // no IPv6 on this machine
    }
    for (const row of table.trim().split('\n').slice(1)) {
      const [, local, , state] = row.trim().split(/\s+/);
      const [address, hexPort] = (local ?? '').split(':');
      if (state === LISTEN && Number.parseInt(hexPort ?? '', 16) === port) found.push(name(address ?? ''));
    }
  }
  return found;
};

/** A TCP port nobody listens on now (the kernel's pick). */
export const freePort = async (): Promise<number> => {
  const { createServer } = await import('node:net');
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
};
