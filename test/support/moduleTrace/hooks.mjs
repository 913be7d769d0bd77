/** The module hooks register.mjs installs: every resolution, appended to the trace file as it happens. */
import { appendFileSync } from 'node:fs';

/** @type {string | undefined} */
let file;

/** @type {import('node:module').InitializeHook<{ file?: string }>} */
export const initialize = (data) => {
  file = data.file;
};

/** @type {import('node:module').ResolveHook} */
export const resolve = async (specifier, context, nextResolve) => {
  const resolved = await nextResolve(specifier, context);
  if (file !== undefined) appendFileSync(file, `${resolved.url}\n`);
  return resolved;
};
