/** Why a plugin did not start: a failed handshake (retried like a crash), or a refusal no retry fixes (not retried). */
import { HologramError } from '../../events/index.ts';

export class PluginHandshakeFailed extends HologramError {
  readonly code = 'PLUGIN_HANDSHAKE_FAILED';
}

/** A start that no retry can fix (a protocol version, a name, an entry that cannot run): the plugin is stopped, not restarted. */
export class PluginStartRefused extends HologramError {
  readonly code = 'PLUGIN_START_REFUSED';
  /** `then`: what to do once it is fixed (by default, start it again; a fix in settings.json needs a restart of homed). */
  constructor(plugin: string, why: string, cause?: unknown, then = `run 'homed plugins start ${plugin}'`) {
    super(`plugin '${plugin}' is not restarted until it is fixed: ${why}; then ${then}`, { cause });
  }
}
