/**
 * The page, its script and its style, all served by the daemon. The script is the TypeScript
 * under app/, bundled by esbuild the first time a browser asks for it and kept in memory.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Assets } from './webuiServer.ts';

const APP = fileURLToPath(new URL('./app/', import.meta.url));

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Hologram</title>
<link rel="stylesheet" href="/app.css">
<link rel="icon" href="data:,">
</head>
<body>
<noscript>The Hologram web UI needs JavaScript.</noscript>
<div id="app"></div>
<script type="module" src="/app.js"></script>
</body>
</html>
`;

export const bundleApp = async (): Promise<string> => {
  // esbuild loads on the first page request, not at every daemon start.
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: [`${APP}main.ts`],
    bundle: true,
    write: false,
    format: 'esm',
    target: 'es2022',
    minify: true,
    legalComments: 'none',
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text;
};

export const webuiAssets = (): Assets => {
  let script: Promise<string> | undefined;
  const style = readFileSync(`${APP}style.css`, 'utf8');
  return {
    page: () => PAGE,
    style: () => style,
    script: () => {
      script ??= bundleApp().catch((error: unknown) => {
        script = undefined;
        throw error;
      });
      return script;
    },
  };
};
