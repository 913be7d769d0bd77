/**
 * Keeps the read models current: inline projections move inside each append transaction,
 * async ones tail the log. On start both catch up from their checkpoints, which heals a
 * crash between an append and an async projection update.
 */
import type { Subscription } from '../../events/index.ts';
import { allProjections, memoryProjections, type Projection } from '../../projections/index.ts';
import { Facility } from '../kernel/facilities.ts';
import type { KernelModule } from '../kernel/kernelModule.ts';
import { ProjectionRunner } from '../projections/projectionRunner.ts';
import { setting } from './config.ts';

export type ProjectionsFacility = Readonly<{ inline: ProjectionRunner; async: ProjectionRunner; subscription: Subscription }>;

/** Projections applied inside the append transaction unless settings say otherwise. */
export const DEFAULT_INLINE_PROJECTIONS = ['kernel', 'scheduler'];

/**
 * Always inline, whatever the settings: the memory tiers are read by the actor that decides
 * the next memory event, right after it appended the last one.
 */
export const ALWAYS_INLINE_PROJECTIONS = memoryProjections().map((p) => p.name);

export const projectionsModule = (projections: readonly Projection[] = allProjections()): KernelModule => {
  let subscription: Subscription | undefined;
  let headSeq: (() => Promise<number>) | undefined;
  return {
    name: 'projections',
    requires: [Facility.eventLog, Facility.config],
    provides: [Facility.projections],
    async init(context) {
      const store = context.require(Facility.eventLog);
      headSeq = () => store.headSeq();
      const inlineNames = [
        ...setting(context.require(Facility.config), 'projections.inline', DEFAULT_INLINE_PROJECTIONS),
        ...ALWAYS_INLINE_PROJECTIONS,
      ];
      const inline = new ProjectionRunner(
        store.db,
        projections.filter((p) => inlineNames.includes(p.name)),
        { trail: true },
      );
      const tailing = new ProjectionRunner(
        store.db,
        projections.filter((p) => !inlineNames.includes(p.name)),
        { trail: true, durability: 'rebuildable' },
      );
      for (const name of [...inline.prepare(), ...tailing.prepare()]) {
        context.log(`projection ${name}: version changed, rebuilding from the log`);
      }
      inline.attachInline(store);
      const head = await store.headSeq();
      await tailing.catchUp(store, {
        onProgress: (position) => {
          if (head > 10_000) context.log(`projections: caught up to ${position}/${head}`);
        },
      });
      subscription = tailing.follow(store, (error) => context.fail(error));
      context.provide(Facility.projections, { inline, async: tailing, subscription } satisfies ProjectionsFacility);
    },
    async stop() {
      if (!subscription) return;
      // A clean stop leaves the tailing read models at the head, so the next start has nothing to catch up.
      // A subscription that failed has reported it through context.fail already; stopping is all that is left.
      await subscription.caughtUp(await headSeq!()).catch(() => undefined);
      await subscription.stop();
    },
  };
};
