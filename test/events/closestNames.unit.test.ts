/** "Did you mean": which names a mistyped one is offered. */
import { describe, expect, it } from 'vitest';
import { closestNames } from '../../events/index.ts';

const TYPES = ['KernelStarted', 'KernelStopped', 'InputDelivered', 'InputQueued', 'PluginCrashed'];

describe('closestNames', () => {
  it('offers names within two edits, nearest first, ignoring case', () => {
    expect(closestNames('KernelStartd', TYPES)).toEqual(['KernelStarted']);
    expect(closestNames('kernelstopped', TYPES)).toEqual(['KernelStopped']);
    expect(closestNames('shceduler', ['kernel', 'scheduler', 'plugins'])).toEqual(['scheduler']);
  });

  it('offers names that contain the one given, or are contained in it', () => {
    expect(closestNames('Input', TYPES)).toEqual(['InputDelivered', 'InputQueued']);
    expect(closestNames('scheduler:boot-1', ['scheduler', 'kernel'])).toEqual(['scheduler']);
  });

  it('offers nothing for a name far from every candidate, and at most `max`', () => {
    expect(closestNames('NoSuchType', TYPES)).toEqual([]);
    expect(closestNames('e', TYPES, 2)).toHaveLength(2);
  });
});
