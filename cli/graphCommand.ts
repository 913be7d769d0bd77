/** `homed graph`: prints the kernel's module layers and each module's facilities. */
import { formatLayers, planLayers } from '../machines/kernel/index.ts';
import { GIVEN_FACILITIES } from '../actors/kernel/index.ts';
import { parse } from './args.ts';
import { daemonModules } from './daemonModules.ts';

export const GRAPH_HELP = `Usage: homed graph [--data DIR]

Prints the module layers the kernel starts (modules of one layer start in parallel), then
what each module requires and provides. Facilities given before assembly: ${GIVEN_FACILITIES.join(', ')}.
The graph is the same for every data dir (--data is taken, and changes nothing).
`;

export const graphCommand = (args: string[], write: (line: string) => void): number => {
  const { values } = parse(args, { data: { type: 'string' }, help: { type: 'boolean', short: 'h' } });
  if (values.help) {
    write(GRAPH_HELP);
    return 0;
  }
  const modules = daemonModules();
  write(formatLayers(planLayers(modules, GIVEN_FACILITIES)));
  write('');
  for (const m of [...modules].sort((a, b) => a.name.localeCompare(b.name))) {
    write(`${m.name}: requires ${m.requires.join(', ') || '(nothing)'}; provides ${m.provides.join(', ') || '(nothing)'}`);
  }
  return 0;
};
