/**
 * The built-in web UI: an HTTP server (127.0.0.1:8080 unless `plugins.webui.host` / `.port` say
 * otherwise) with the chat, the live event log and each turn's trajectory. Messages sent from it
 * are inputs from the owner whose replies come back on the `webui` channel, streamed to every
 * open page; everything else the page shows is read from the log. Its URL, with the token that
 * signs a browser in, is printed at start.
 */
import type { Clock, Timers } from '../../../events/index.ts';
import { PluginStartRefused } from '../../host/startErrors.ts';
import { type BuiltinPlugin, pluginStateDir, type KernelControl } from '../../sdk/builtinPlugin.ts';
import type { PluginManifest } from '../../sdk/manifestTypes.ts';
import type { PluginApi } from '../../sdk/pluginApi.ts';
import { KEEPALIVE_MS, LiveStreams } from './liveStreams.ts';
import { WEBUI_CHANNEL, WebuiApi } from './webuiApi.ts';
import { webuiAssets } from './webuiAssets.ts';
import { WebuiServer } from './webuiServer.ts';
import { isLoopback, WebuiSettingError, webuiSettingsFrom } from './webuiSettings.ts';
import { webuiToken } from './webuiToken.ts';

const NAME = 'webui';
const MACHINES_EVERY_MS = 250;

export const webuiManifest: PluginManifest = {
  name: NAME,
  version: '1.0.0',
  entry: 'builtin:webui',
  kind: 'builtin',
  platforms: [],
  requires_facilities: [],
  capabilities: ['channels', 'input', 'interrupt', 'settings'],
  auto_start: true,
  auto_restart: true,
  description: 'The web UI: chat, the live event log and trajectories in a browser',
};

type WebuiEnv = Readonly<{ dataDir: string; control?: KernelControl; timers: Timers; clock: Clock }>;

export const startWebui = async (api: PluginApi, env: WebuiEnv): Promise<{ stop(): Promise<void> }> => {
  const { control } = env;
  if (!control) throw new PluginStartRefused(NAME, 'this kernel gives the web UI no controls');
  let settings: ReturnType<typeof webuiSettingsFrom>;
  try {
    settings = webuiSettingsFrom(await api.setting('port'), await api.setting('host'));
  } catch (error) {
    if (error instanceof WebuiSettingError) throw new PluginStartRefused(NAME, error.message);
    throw error;
  }
  const token = await webuiToken(pluginStateDir(env.dataDir, NAME));
  const live = new LiveStreams(control.log, (line) => api.log(line));
  await api.registerOutputChannel(
    { name: WEBUI_CHANNEL, capabilities: ['text', 'progress'], metaDoc: 'target: the conversation (webui:owner); none: every open page' },
    (delivery) => live.deliver(delivery),
  );
  const server = new WebuiServer({
    ...settings,
    token,
    api: new WebuiApi(api, control, () => new Promise<void>((resolve) => env.timers.setTimer(resolve, 0))),
    live,
    assets: webuiAssets(),
    log: (line) => api.log(line),
  });
  let port: number;
  try {
    port = await server.listen();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') {
      throw new PluginStartRefused(
        NAME,
        `${settings.host}:${settings.port} is in use (another homed?); set plugins.webui.port to a free port, or 0 for any`,
        error,
        `restart homed (settings.json is read at start), or free that port and run 'homed plugins start ${NAME}'`,
      );
    }
    throw new PluginStartRefused(NAME, `cannot listen on ${settings.host}:${settings.port}: ${(error as Error).message}`, error);
  }
  const shown = settings.host.includes(':') ? `[${settings.host}]` : settings.host === '0.0.0.0' ? '127.0.0.1' : settings.host;
  api.log(`open http://${shown}:${port}/?token=${token}`);
  if (!isLoopback(settings.host)) {
    api.log(`listening on ${settings.host}: other machines reach the web UI; the token above is what keeps them out, keep it private`);
  }
  let keepAlive = env.timers.setTimer(function beat() {
    live.keepAlive();
    keepAlive = env.timers.setTimer(beat, KEEPALIVE_MS);
  }, KEEPALIVE_MS);
  // The machines' states go out at most every MACHINES_EVERY_MS, and only when they moved.
  let sentChanges = -1;
  let machines = env.timers.setTimer(function tick() {
    const changes = control.machines.changes();
    if (changes !== sentChanges && live.size > 0) {
      sentChanges = changes;
      live.machines(control.machines.live());
    }
    machines = env.timers.setTimer(tick, MACHINES_EVERY_MS);
  }, MACHINES_EVERY_MS);
  return {
    stop: async () => {
      env.timers.clearTimer(keepAlive);
      env.timers.clearTimer(machines);
      await live.closeAll();
      await server.close();
    },
  };
};

export const webuiPlugin: BuiltinPlugin = {
  manifest: webuiManifest,
  start: (api, env) => startWebui(api, env),
};
