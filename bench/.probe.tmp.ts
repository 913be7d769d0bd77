import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection } from 'node:net';
import { createInterface } from 'node:readline';
import { spawn } from 'node:child_process';
import { startLlmServer } from '../test/support/llmServer/index.ts';
const server = await startLlmServer([{ when: () => true, reply: { text: 'Noted.' }, repeat: true }]);
const dir = mkdtempSync(join(tmpdir(), 'mt-'));
writeFileSync(
  join(dir, 'settings.json'),
  JSON.stringify({ llm: { sources: [{ name: 'l', adapter: 'openai', baseUrl: server.baseUrl('openai'), model: 'm' }] } }),
);
const d = spawn(
  process.execPath,
  [...(process.env.PROF ? ['--cpu-prof', '--cpu-prof-dir=/tmp/m/prof'] : []), 'bin/homed.js', 'run', '--data', dir],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
await new Promise<void>((r) =>
  d.stdout!.on('data', (c) => {
    if (String(c).includes('homed: ready')) r();
  }),
);
const sock = createConnection(join(dir, 'homed.sock'));
const rl = createInterface({ input: sock });
const waitEnd = () =>
  new Promise<void>((r) => {
    const f = (l: string) => {
      if (JSON.parse(l).type === 'end') {
        rl.off('line', f);
        r();
      }
    };
    rl.on('line', f);
  });
const times: number[] = [];
const N = Number(process.env.N ?? 30);
for (let i = 0; i < N; i++) {
  const t0 = performance.now();
  const p = waitEnd();
  sock.write(JSON.stringify({ type: 'message', text: `hello number ${i}`, from: 'bench' }) + '\n');
  await p;
  times.push(performance.now() - t0);
}
times.sort((a, b) => a - b);
console.log('p50', times[Math.floor(N / 2)]!.toFixed(1), 'p90', times[Math.floor(N * 0.9)]!.toFixed(1));
sock.end();
await new Promise((r) => setTimeout(r, 300));
d.kill('SIGINT');
await new Promise((r) => d.on('close', r));
await server.close();
console.log(dir);
