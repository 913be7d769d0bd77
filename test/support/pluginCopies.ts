/**
 * A fixture plugin installed as a user installs one: a folder of its own (in DIR/plugins or a
 * checkout elsewhere) with its manifest, a package.json and an entry that runs the fixture's code
 * from the repo. Unlike a link to the fixture's folder (which is in the daemon's install), the
 * folder is the plugin's own: the one its sandbox lets it write, where a test and it share files.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO } from './processes.ts';

/**
 * Installs fixture plugin `fixture` (of test/fixtures/plugins/host) in `folder`, its manifest with
 * `manifest`'s fields over the fixture's, its entry setting `env` before the fixture's code runs.
 * @returns the manifest as written
 */
export const installPluginCopy = (
  folder: string,
  fixture: string,
  manifest: Readonly<Record<string, unknown>> = {},
  env: Readonly<Record<string, string>> = {},
): string => {
  const from = join(REPO, 'test/fixtures/plugins/host', fixture);
  const written = JSON.stringify({ ...JSON.parse(readFileSync(join(from, 'plugin.json'), 'utf8')), ...manifest }, null, 2);
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'plugin.json'), written);
  writeFileSync(join(folder, 'package.json'), '{"type":"module"}');
  const settings = Object.entries(env).map(([name, value]) => `process.env[${JSON.stringify(name)}] = ${JSON.stringify(value)};\n`);
  writeFileSync(
    join(folder, 'main.ts'),
    `${settings.join('')}await import(${JSON.stringify(pathToFileURL(join(from, 'main.ts')).href)});\n`,
  );
  return written;
};
