/** A hub's call budgets: a plugin is barred when its charges reach a budget, once, until a fresh start. */
import { describe, expect, it } from 'vitest';
import { CALLS_WINDOW_MS, CallBudgets, STAGE_BUDGET_MS, TOOL_TIMEOUTS_BUDGET } from '../../plugins/host/callCharges.ts';

describe('CallBudgets', () => {
  it('bars a plugin from a kind when its charges reach the budget, says why once, and leaves the other kind', () => {
    const budgets = new CallBudgets();
    expect(budgets.charge('stages', 'p', 0, STAGE_BUDGET_MS - 1, 'a timeout')).toBeUndefined();
    expect(budgets.isBarred('stages', 'p')).toBe(false);
    expect(budgets.charge('stages', 'p', 1, 1, 'an answer after 251 ms')).toMatch(/held turns up 15 s .*the last: an answer after 251 ms/);
    expect(budgets.isBarred('stages', 'p')).toBe(true);
    expect(budgets.charge('stages', 'p', 2, STAGE_BUDGET_MS, 'a timeout')).toBeUndefined();
    expect(budgets.isBarred('tools', 'p')).toBe(false);
    expect(budgets.isBarred('stages', 'q')).toBe(false);
  });

  it('forgets charges older than the window, and everything at a fresh start', () => {
    const budgets = new CallBudgets();
    for (let i = 1; i < TOOL_TIMEOUTS_BUDGET; i++) budgets.charge('tools', 'p', 0, 1, 'a tool call timed out');
    expect(budgets.charge('tools', 'p', CALLS_WINDOW_MS, 1, 'a tool call timed out')).toBeUndefined();
    expect(budgets.charge('tools', 'p', CALLS_WINDOW_MS + 1, 1, 'a tool call timed out')).toMatch(/got no answer in time/);
    budgets.freshStart('p');
    expect(budgets.isBarred('tools', 'p')).toBe(false);
    expect(budgets.charge('tools', 'p', CALLS_WINDOW_MS + 2, 1, 'a tool call timed out')).toBeUndefined();
  });
});
