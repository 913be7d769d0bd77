/**
 * The security firewall as a kernel module: right after config, before every module that reads
 * credentials or runs tools. It guards the scheduler (inputs), the llm (the model) and the
 * plugins (tools, stage handlers, output), so every module that uses them gets them through
 * the proxy. Settings: `security.review`, `security.sandbox`; tool rules by principal are read
 * where a turn builds its toolset.
 */
import { join, resolve } from 'node:path';
import { homedir } from 'node:os';
import { SECRETS_DIR } from '../../adapters/secrets/secretVault.ts';
import { type DaemonPaths, isUnder, type ReviewRules, type SandboxBase, type SandboxRules } from '../../machines/security/index.ts';
import { Facility } from '../kernel/facilities.ts';
import type { KernelModule } from '../kernel/kernelModule.ts';
import { SecretAliases } from '../security/secretAliases.ts';
import { SecurityProxy } from '../security/securityProxy.ts';
import { EVENT_LOG_FILE, INDEX_SNAPSHOT_FILE, SETTINGS_FILE, setting, type Settings, VECTOR_CACHE_FILE } from './config.ts';

/** The files plugin's default root, relative to the data dir: where tools may read and write unless settings say more. */
export const DEFAULT_FILES_ROOT = 'files';

/** A root as settings give it: `~` and `~/…` under your home, a relative one under the data dir. */
const rootPath = (root: string, dataDir: string): string =>
  root === '~' || root.startsWith('~/') ? join(homedir(), root.slice(1)) : resolve(dataDir, root);

/**
 * The sandbox from settings. Roots default to the files plugin's (its `roots` setting, else
 * `<dataDir>/files`), and a relative path is taken from the first of those, as that plugin does.
 */
export const sandboxFrom = (
  settings: Settings,
  dataDir: string,
): Readonly<{ rules: SandboxRules; base: SandboxBase; daemon: DaemonPaths }> => {
  const filesRoots = setting<readonly string[] | undefined>(settings, 'plugins.files.roots', undefined) ?? [DEFAULT_FILES_ROOT];
  const roots = filesRoots.filter((r): r is string => typeof r === 'string').map((r) => resolve(dataDir, r));
  const read = setting<readonly string[]>(settings, 'security.sandbox.read', roots).map((r) => rootPath(r, dataDir));
  const write = setting<readonly string[]>(settings, 'security.sandbox.write', roots).map((r) => rootPath(r, dataDir));
  return {
    rules: {
      read,
      write,
      network:
        setting<readonly string[] | undefined>(settings, 'security.sandbox.hosts', undefined) ??
        setting<boolean>(settings, 'security.sandbox.network', false),
      loopback: setting<boolean>(settings, 'security.sandbox.loopback', false),
    },
    base: { cwd: roots[0] ?? dataDir, home: homedir() },
    daemon: daemonPathsOf(dataDir, [...roots, ...read, ...write]),
  };
};

/** The daemon's own files, which no tool may touch whatever its roots: the vault, settings, the log and its WAL, and the memory's caches. */
const daemonFilesOf = (dataDir: string): string[] =>
  [
    SECRETS_DIR,
    SETTINGS_FILE,
    EVENT_LOG_FILE,
    `${EVENT_LOG_FILE}-wal`,
    `${EVENT_LOG_FILE}-shm`,
    VECTOR_CACHE_FILE,
    INDEX_SNAPSHOT_FILE,
  ].map((f) => join(dataDir, f));

/**
 * The daemon's paths no tool may touch: its named files, and the whole data dir but the files
 * root and the other roots inside it (`roots`, as the sandbox and the files plugin have them),
 * unless such a root lies within a named file's folder.
 */
export const daemonPathsOf = (dataDir: string, roots: readonly string[]): DaemonPaths => {
  const protectedPaths = daemonFilesOf(dataDir);
  const open = [join(dataDir, DEFAULT_FILES_ROOT), ...roots.map((root) => resolve(dataDir, root))];
  const openInside = [...new Set(open)].filter(
    (root) => root !== dataDir && isUnder(root, dataDir) && !protectedPaths.some((own) => isUnder(root, own)),
  );
  return { protectedPaths, dataDir, openInside };
};

export const securityModule = (): KernelModule => {
  let aliases: SecretAliases | undefined;
  return {
    name: 'security',
    requires: [Facility.config, Facility.dataDir],
    provides: [Facility.security],
    guards: [Facility.scheduler, Facility.llm, Facility.plugins],
    init(context) {
      const settings = context.require(Facility.config);
      const dataDir = context.require(Facility.dataDir);
      aliases = new SecretAliases(dataDir);
      if (!aliases.watch()) context.log(`security: cannot watch ${join(dataDir, SECRETS_DIR)}; the vault is looked at on every use`);
      const proxy = new SecurityProxy({
        aliases,
        review: setting<ReviewRules>(settings, 'security.review', {}),
        ...sandboxFrom(settings, dataDir),
        owners: setting<readonly string[]>(settings, 'security.owners', []),
      });
      context.guard(Facility.scheduler, (scheduler) => proxy.guardInputs(scheduler));
      context.guard(Facility.llm, (llm) => proxy.guardModel(llm));
      context.guard(Facility.plugins, (plugins) => proxy.guardPlugins(plugins));
      context.provide(Facility.security, proxy);
    },
    stop() {
      aliases?.close();
    },
  };
};
