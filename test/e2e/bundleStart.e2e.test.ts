/**
 * homed starts from its bundle as waiter does (see the last block). waiter starts from its bundle (plain JavaScript: no tsx, no TypeScript source loaded) when the
 * bundle was built from the sources as they are, says and exits exactly what the sources run
 * through tsx do, and runs the sources through tsx again as soon as one the bundle was made of
 * changes. How fast it starts is the bench's waiter.start figure, never a test's assertion.
 */
import { cpSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type BundleManifest, BUNDLES } from '../../bin/bundles.js';
import { testDataDir, useDaemons } from '../support/homedSession.ts';
import { startLlmServer } from '../support/llmServer/index.ts';
import { ranFrom, runTracingModules, type TracedRun } from '../support/moduleTrace/index.ts';
import { hasNoStackTrace, REPO, WAITER } from '../support/processes.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const MANIFEST_FILE = BUNDLES.waiter.manifest;
const daemons = useDaemons();
const VERSION = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }).version;

/** The environment without $HOLOGRAM_DATA, so waiter falls back to its default data dir. */
const { HOLOGRAM_DATA: _ignored, ...envWithoutDataDir } = process.env;

/** A waiter command, its stdin, the exit status it must end with (see WAITER_HELP's list) and what its output must say. */
type Run = Readonly<{ args: readonly string[]; input?: string; closeStdout?: boolean; code: number; says?: RegExp }>;

/** `waiter ARGS` as a user runs it: bin/waiter.js of the checkout at `root`. */
const waiter = (root: string, { args, input, closeStdout }: Run): Promise<TracedRun> =>
  runTracingModules([join(root, 'bin/waiter.js'), ...args], { input, closeStdout, env: envWithoutDataDir });

/** The same command from the TypeScript sources through tsx, whatever the bundle: what waiter did before it had one. */
const waiterThroughTsx = (root: string, { args, input, closeStdout }: Run): Promise<TracedRun> =>
  runTracingModules(['--import', 'tsx', join(root, 'cli/waiter.ts'), ...args], { input, closeStdout, env: envWithoutDataDir });

const HELP: Run = { args: ['--help'], code: 0 };

const outcome = ({ code, signal, stdout, stderr }: TracedRun) => ({ code, signal, stdout, stderr });

/** Expects the bundle to say and exit exactly what the sources through tsx do, for each run. */
const expectSameAsTsx = async (root: string, runs: readonly Run[]): Promise<void> => {
  for (const run of runs) {
    const bundled = await waiter(root, run);
    const sources = await waiterThroughTsx(root, run);
    const what = `waiter ${run.args.join(' ').slice(0, 80)}`;
    expect(ranFrom('waiter', bundled.modules, root), what).toBe('bundle');
    expect(bundled.code, `${what}: ${bundled.stderr}`).toBe(run.code);
    expect(hasNoStackTrace(bundled.stderr), `${what}: ${bundled.stderr}`).toBe(true);
    if (run.says) expect(bundled.stdout + bundled.stderr, what).toMatch(run.says);
    expect(outcome(bundled), what).toEqual(outcome(sources));
  }
};

/**
 * A checkout of its own holding what waiter needs (the bundle's inputs, bin/, the bundle and
 * its manifest as the global setup built them), with node_modules linked: a test can edit its
 * sources without touching the real ones. Its files are new copies, so every mtime differs.
 */
const copyCheckout = (): string => {
  const root = join(tempDir(), 'checkout');
  const manifest = JSON.parse(readFileSync(join(REPO, MANIFEST_FILE), 'utf8')) as BundleManifest;
  const files = [
    ...manifest.inputs.map((input) => input.path),
    'bin/waiter.js',
    'bin/bundles.js',
    'package.json',
    'tsconfig.json',
    'dist/waiter.mjs',
    'dist/waiter.mjs.map',
    MANIFEST_FILE,
  ];
  for (const file of files) {
    expect(file.startsWith('..'), `${file} is inside the checkout`).toBe(false);
    mkdirSync(join(root, file, '..'), { recursive: true });
    cpSync(join(REPO, file), join(root, file));
  }
  symlinkSync(join(REPO, 'node_modules'), join(root, 'node_modules'));
  return root;
};

describe('waiter from its bundle', () => {
  it('runs --help from dist/waiter.mjs, loading neither tsx nor a TypeScript source, and prints what the sources do', async () => {
    const bundled = await runTracingModules([WAITER, '--help']);
    expect(ranFrom('waiter', bundled.modules, REPO), bundled.modules.join('\n')).toBe('bundle');
    expect(bundled.modules.some((url) => url.includes('/node_modules/'))).toBe(false);
    const sources = await waiterThroughTsx(REPO, HELP);
    expect(bundled.code).toBe(0);
    expect(bundled.stdout).toContain('Exit status:');
    expect(outcome(bundled)).toEqual(outcome(sources));
  });

  it('fails as the sources do: bad usage (2), no daemon, a socket nobody listens on, the default data dir (1), a reader gone (141)', async () => {
    const root = copyCheckout();
    const notADaemon = join(tempDir(), 'stale');
    mkdirSync(notADaemon);
    writeFileSync(join(notADaemon, 'homed.sock'), 'a file, not a socket');
    await expectSameAsTsx(root, [
      { args: ['-h'], code: 0 },
      { args: ['--version'], code: 0, says: new RegExp(`^waiter ${VERSION.replaceAll('.', '\\.')}\n$`) },
      // The reader gone before the help is written (waiter --help | true): 141, and nothing on stderr.
      { args: ['--help'], closeStdout: true, code: 141 },
      { args: ['--bogus'], code: 2, says: /^waiter: unknown option --bogus\nRun 'waiter --help' for usage\.\n$/ },
      { args: ['--stop', '--tools'], code: 2 },
      { args: ['--data'], code: 2 },
      { args: ['--data', tempDir(), 'hello?'], code: 1, says: /^waiter: no homed is running on / },
      { args: ['--data', notADaemon, '--plugins'], code: 1 },
      // No --data and no $HOLOGRAM_DATA: the default dir, resolved from the bundle's URL as from the sources'.
      { args: ['--tools'], code: 1, says: /no homed is running on \S+\/\.hologram / },
    ]);
  });

  it('talks to a running homed as the sources do: a message, --tools, --plugins, stdin lines, a line over 1 MiB', async () => {
    const llm = await startLlmServer([{ when: () => true, reply: { text: 'the same answer' }, repeat: true }]);
    daemons.onCleanup(() => llm.close());
    const dir = testDataDir(tempDir(), { llm });
    const daemon = await daemons.start(dir);
    await expectSameAsTsx(REPO, [
      { args: ['--data', dir, 'hello', 'there'], code: 0, says: /^the same answer\n$/ },
      { args: ['--data', dir, '--tools'], code: 0, says: /^timer_list {2,}timer /m },
      { args: ['--data', dir, '--plugins'], code: 0, says: /^cli {2,}builtin/m },
      {
        args: ['--data', dir],
        input: '/tools\n\n/plugins\nhello\n/quit\nnot sent\n',
        code: 0,
        says: /^timer_list {2,}timer [\s\S]*^cli {2,}builtin[\s\S]*\nthe same answer\n$/m,
      },
      // Over 1 MiB on stdin (an argument that long is more than the kernel passes): refused before it is sent, and waiter goes on but exits 1.
      { args: ['--data', dir], input: `${'x'.repeat(1024 * 1024 + 1)}\nhello\n`, code: 1, says: /at most 1 MiB per request/ },
    ]);
    await daemons.stop(daemon);
  }, 180_000);
});

describe('waiter with a bundle older than its sources', () => {
  it('runs the sources through tsx once a file the bundle was made of changes, and the bundle again once it is back', async () => {
    const root = copyCheckout();
    // Copies have new mtimes: the check hashes them, finds the same bytes, and keeps the bundle.
    expect(ranFrom('waiter', (await waiter(root, HELP)).modules, root)).toBe('bundle');

    // An edit to a file waiter.ts imports (not waiter.ts itself): the change must reach the output.
    const args = join(root, 'cli/args.ts');
    const original = readFileSync(args);
    writeFileSync(args, `${original}\nprocess.stderr.write('args.ts was edited\\n');\n`);
    const edited = await waiter(root, HELP);
    expect(ranFrom('waiter', edited.modules, root), edited.modules.join('\n')).toBe('tsx');
    expect(edited.code).toBe(0);
    expect(edited.stderr).toBe('args.ts was edited\n');
    expect(edited.stdout).toContain('Usage: waiter');

    writeFileSync(args, original);
    expect(ranFrom('waiter', (await waiter(root, HELP)).modules, root)).toBe('bundle');
  });

  it('runs the sources through tsx when an input is gone, or the manifest is missing or is not JSON', async () => {
    const gone = copyCheckout();
    rmSync(join(gone, 'cli/listings.ts'));
    // The sources cannot run either: tsx says which import is missing, as it did before there was a bundle.
    const withoutInput = await waiter(gone, HELP);
    expect(ranFrom('waiter', withoutInput.modules, gone)).toBe('tsx');
    expect(withoutInput.code).not.toBe(0);
    expect(withoutInput.stderr).toContain('listings');

    const unlisted = copyCheckout();
    rmSync(join(unlisted, MANIFEST_FILE));
    const withoutManifest = await waiter(unlisted, HELP);
    expect(ranFrom('waiter', withoutManifest.modules, unlisted)).toBe('tsx');
    expect(withoutManifest.code).toBe(0);

    const garbled = copyCheckout();
    writeFileSync(join(garbled, MANIFEST_FILE), '{"version": 1, "bundle":');
    expect(ranFrom('waiter', (await waiter(garbled, HELP)).modules, garbled)).toBe('tsx');
  }, 120_000);
});

describe('homed from its bundle', () => {
  const homedThroughTsx = (args: readonly string[]): Promise<TracedRun> =>
    runTracingModules(['--import', 'tsx', join(REPO, 'cli/homed.ts'), ...args], { env: envWithoutDataDir });

  it('runs --help, a typo and a command on a data dir from dist/homed.mjs, with no TypeScript source, as the sources do', async () => {
    const dir = tempDir();
    for (const args of [['--help'], ['--version'], ['--bogus'], ['log', '--data', dir]]) {
      const bundled = await runTracingModules([join(REPO, 'bin/homed.js'), ...args], { env: envWithoutDataDir });
      expect(ranFrom('homed', bundled.modules, REPO), bundled.modules.join('\n')).toBe('bundle');
      expect(hasNoStackTrace(bundled.stderr), bundled.stderr).toBe(true);
      expect(outcome(bundled), args.join(' ')).toEqual(outcome(await homedThroughTsx(args)));
    }
  });
});
