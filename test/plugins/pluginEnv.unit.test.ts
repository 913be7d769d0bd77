/** What a subprocess plugin's environment holds: the allow-list, what its manifest asks for, never the daemon's keys. */
import { describe, expect, it } from 'vitest';
import { apiKeyVariables, PLUGIN_INSTANCE_ENV, PLUGIN_STATE_ENV, pluginEnvironment } from '../../plugins/host/pluginEnv.ts';

const daemonEnv = {
  PATH: '/usr/bin',
  HOME: '/home/ada',
  LANG: 'en_GB.UTF-8',
  TZ: 'Europe/London',
  TMPDIR: '/tmp/ada',
  OPENAI_API_KEY: 'sk-daemon',
  AWS_SECRET_ACCESS_KEY: 'aws-secret',
  NODE_OPTIONS: '--require /tmp/evil.js',
  WEATHER_CITY: 'Oslo',
};

describe('a plugin environment', () => {
  it('passes the allow-list and the instance marker, and nothing else of the daemon', () => {
    const { env, withheld } = pluginEnvironment([], daemonEnv, new Set(), 'instance-1');
    expect(env).toEqual({
      PATH: '/usr/bin',
      HOME: '/home/ada',
      LANG: 'en_GB.UTF-8',
      TZ: 'Europe/London',
      TMPDIR: '/tmp/ada',
      [PLUGIN_INSTANCE_ENV]: 'instance-1',
    });
    expect(withheld).toEqual([]);
  });

  it("adds what the manifest asks for, except a variable holding one of the daemon's keys, which it names", () => {
    const keys = apiKeyVariables([{ apiKeyEnv: 'OPENAI_API_KEY' }, { apiKey: 'inline' }, null]);
    const { env, withheld } = pluginEnvironment(
      ['WEATHER_CITY', 'OPENAI_API_KEY', 'UNSET_ONE', PLUGIN_INSTANCE_ENV],
      daemonEnv,
      keys,
      'i-2',
    );
    expect(env.WEATHER_CITY).toBe('Oslo');
    expect(env).not.toHaveProperty('OPENAI_API_KEY');
    expect(env).not.toHaveProperty('UNSET_ONE');
    expect(env[PLUGIN_INSTANCE_ENV]).toBe('i-2');
    expect(withheld).toEqual([{ name: 'OPENAI_API_KEY', why: expect.stringContaining('OPENAI_API_KEY holds an API key of the daemon') }]);
  });

  it('withholds a variable whose value holds a vault secret, whatever its name', () => {
    const holdsSecret = (value: string) => value.includes('Oslo');
    const { env, withheld } = pluginEnvironment(['WEATHER_CITY', 'HOME'], daemonEnv, new Set(), 'i-3', holdsSecret);
    expect(env).not.toHaveProperty('WEATHER_CITY');
    expect(withheld).toEqual([{ name: 'WEATHER_CITY', why: expect.stringContaining('whose value holds a secret of the vault') }]);
  });

  it('names its state folder, which no manifest can set otherwise', () => {
    const forged = { ...daemonEnv, [PLUGIN_STATE_ENV]: '/home/you' };
    expect(pluginEnvironment([PLUGIN_STATE_ENV], forged, new Set(), 'i-4', undefined, '/data/state/weather').env[PLUGIN_STATE_ENV]).toBe(
      '/data/state/weather',
    );
    expect(pluginEnvironment([PLUGIN_STATE_ENV], forged, new Set(), 'i-5').env).not.toHaveProperty(PLUGIN_STATE_ENV);
  });
});
