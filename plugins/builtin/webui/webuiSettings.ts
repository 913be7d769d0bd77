/**
 * The web UI's settings (`plugins.webui.*` in settings.json): where it listens. They are checked
 * by the daemon's one settings schema (actors/settings/settingsSchema.ts), at start and when the
 * settings are saved; a value that still does not fit when the plugin starts stops the plugin
 * with what to write instead, and the daemon runs on without it.
 */
import { checkSettings, SETTINGS_SCHEMA } from '../../../actors/index.ts';
import { HologramError } from '../../../events/index.ts';

export const DEFAULT_WEBUI_HOST = '127.0.0.1';
export const DEFAULT_WEBUI_PORT = 8080;

export class WebuiSettingError extends HologramError {
  readonly code = 'WEBUI_SETTING';
}

export type WebuiSettings = Readonly<{ host: string; port: number }>;

/** Addresses only this machine can reach. */
export const isLoopback = (host: string): boolean =>
  host === 'localhost' || host === '::1' || host === '[::1]' || /^127(?:\.\d{1,3}){3}$/.test(host);

const given = (name: string, value: unknown): Record<string, unknown> => (value === undefined || value === null ? {} : { [name]: value });

/** @throws WebuiSettingError naming each setting that does not fit the schema, and what it must be. */
export const webuiSettingsFrom = (port: unknown, host: unknown): WebuiSettings => {
  const webui = { ...given('port', port), ...given('host', host) };
  const problems = checkSettings({ plugins: { webui } }, SETTINGS_SCHEMA);
  if (problems.length > 0) {
    throw new WebuiSettingError(
      `${problems.map((p) => `${p.key}: ${p.problem}`).join('; ')}; the defaults are port ${DEFAULT_WEBUI_PORT} (0 takes any free port) and host "${DEFAULT_WEBUI_HOST}"`,
    );
  }
  return { host: (host as string | undefined) ?? DEFAULT_WEBUI_HOST, port: (port as number | undefined) ?? DEFAULT_WEBUI_PORT };
};
