/**
 * The shapes a setting can have, as data: the daemon checks settings.json against them at start,
 * and a settings page can be drawn from them. `doc` says what the setting does, for both.
 */
export type SettingsField =
  | Readonly<{ type: 'integer'; min?: number; max?: number; doc: string }>
  | Readonly<{ type: 'number'; min?: number; doc: string }>
  | Readonly<{ type: 'boolean'; doc: string }>
  /** `check` returns what is wrong with the value, or null. */
  | Readonly<{ type: 'string'; nonEmpty?: boolean; check?: (value: string) => string | null; doc: string }>
  | Readonly<{ type: 'enum'; values: readonly string[]; doc: string }>
  /** `uniqueBy`: a key of the list's objects whose values must all differ. */
  | Readonly<{ type: 'list'; of: SettingsField; nonEmpty?: boolean; uniqueBy?: string; doc: string }>
  /**
   * Known keys; any other key is a problem (with the closest known name). `required`: keys that
   * must be there; `exclusive`: keys of which at most one may be given (each says the same thing another way).
   */
  | Readonly<{
      type: 'object';
      fields: Readonly<Record<string, SettingsField>>;
      required?: readonly string[];
      exclusive?: readonly string[];
      doc: string;
    }>
  /** Free keys, each value of one shape (a plugin's own settings, by plugin name). */
  | Readonly<{ type: 'map'; of: SettingsField; known?: Readonly<Record<string, SettingsField>>; doc: string }>
  /** Whatever JSON the owner of the key reads and checks itself. */
  | Readonly<{ type: 'json'; doc: string }>;
