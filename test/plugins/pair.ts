/** Two connections joined by PassThrough streams, as kernel and plugin, plus raw access to the plugin's outbound pipe; and the kernel's side of a real child process. */
import { spawn, type ChildProcessByStdio, type SpawnOptions } from 'node:child_process';
import { PassThrough, type Readable, type Writable } from 'node:stream';
import { PluginConnection, type ConnectionOptions, type PluginProtocolError } from '../../plugins/protocol/index.ts';

export const connectedPair = (options: ConnectionOptions = {}) => {
  const toPlugin = new PassThrough();
  const toKernel = new PassThrough();
  const kernel = new PluginConnection(toKernel, toPlugin, options);
  const plugin = new PluginConnection(toPlugin, toKernel, options);
  const kernelErrors: PluginProtocolError[] = [];
  const pluginErrors: PluginProtocolError[] = [];
  kernel.on('protocolError', (e) => kernelErrors.push(e));
  plugin.on('protocolError', (e) => pluginErrors.push(e));
  return { kernel, plugin, toPlugin, toKernel, kernelErrors, pluginErrors };
};

/** Lets queued stream I/O and promise callbacks run (PassThrough delivers on later ticks). */
export const flush = async (rounds = 5): Promise<void> => {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve));
};

/** One connection (the kernel's, say) whose peer is the test itself, writing and reading raw bytes. */
export const rawPeer = (options: ConnectionOptions = {}) => {
  const inbound = new PassThrough();
  const outbound = new PassThrough();
  const connection = new PluginConnection(inbound, outbound, options);
  const errors: PluginProtocolError[] = [];
  connection.on('protocolError', (e) => errors.push(e));
  return { connection, inbound, outbound, errors };
};

export type PluginChild = ChildProcessByStdio<Writable, Readable, Readable>;

/** Spawns `node ARGS` and speaks the protocol over its stdio, as the host does; its stderr is kept for failure messages. */
export const childPeer = (args: readonly string[], options: Omit<SpawnOptions, 'stdio'> = {}) => {
  const child = spawn(process.execPath, args, { ...options, stdio: ['pipe', 'pipe', 'pipe'] }) as PluginChild;
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const connection = new PluginConnection(child.stdout, child.stdin);
  const errors: PluginProtocolError[] = [];
  connection.on('protocolError', (e) => errors.push(e));
  return { child, connection, errors, exited, stderr: () => stderr };
};
