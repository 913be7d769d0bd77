/**
 * The web UI's settings (`plugins.webui.*` in settings.json): where it listens. A value of the
 * wrong kind stops the plugin with what to write instead; the daemon runs on without it.
 */
import { HologramError } from '../../../events/index.ts';

export const DEFAULT_WEBUI_HOST = '127.0.0.1';
export const DEFAULT_WEBUI_PORT = 8080;

export class WebuiSettingError extends HologramError {
  readonly code = 'WEBUI_SETTING';
}

export type WebuiSettings = Readonly<{ host: string; port: number }>;

const HOST = /^[A-Za-z0-9.:[\]-]{1,253}$/;

/** Addresses only this machine can reach. */
export const isLoopback = (host: string): boolean =>
  host === 'localhost' || host === '::1' || host === '[::1]' || /^127(?:\.\d{1,3}){3}$/.test(host);

export const webuiSettingsFrom = (port: unknown, host: unknown): WebuiSettings => {
  if (port !== undefined && port !== null && !(Number.isInteger(port) && (port as number) >= 0 && (port as number) <= 65535)) {
    throw new WebuiSettingError(
      `plugins.webui.port is ${JSON.stringify(port)}: give a whole number from 1 to 65535 (0 takes any free port); the default is ${DEFAULT_WEBUI_PORT}`,
    );
  }
  if (host !== undefined && host !== null && !(typeof host === 'string' && HOST.test(host))) {
    throw new WebuiSettingError(
      `plugins.webui.host is ${JSON.stringify(host)}: give an address to listen on, such as "${DEFAULT_WEBUI_HOST}" (this machine only, the default) or "0.0.0.0" (every network)`,
    );
  }
  return { host: (host as string | undefined) ?? DEFAULT_WEBUI_HOST, port: (port as number | undefined) ?? DEFAULT_WEBUI_PORT };
};
