/**
 * The security proxy's parts one at a time on the security.proxy figure's call, hot and in
 * process: the parts as one block (the policy's verdict on the tool for the owner, the
 * alias fill of the arguments, the scrub of the ~2 KB result), then the sandbox's check of the
 * path (as written and as it resolves) and the content review of the scrubbed result.
 */
import { decideToolFor, type SecurityPolicy } from '../machines/security/index.ts';
import type { SecretAliases } from '../actors/security/secretAliases.ts';
import type { SecurityProxy } from '../actors/security/securityProxy.ts';

/** The "(policy + scrub + fill)", timed as one block, then the sandbox and the review. */
export const PARTS = ['named', 'sandbox', 'review'] as const;
export type Part = (typeof PARTS)[number];

/** Rules as a daemon might hold them: shell tools denied, one tool waiting for approval. */
export const POLICY: SecurityPolicy = { tools: { deny: ['shell_*'] }, principals: { owner: { approve: ['files_delete'] } } };

export type PartCall = Readonly<{
  tool: string;
  args: Readonly<Record<string, unknown>>;
  /** What the tool answers (with the filled secret's value in it, as a file read back holds it). */
  result: string;
  access: Readonly<{ write: readonly string[] }>;
}>;

export type PartTimes = Readonly<Record<Part, number[]>>;

/** µs of each part, `calls` times; throws if a part did not do its work (nothing filled, a refusal, a finding). */
export const partLatencies = (calls: number, proxy: SecurityProxy, aliases: SecretAliases, call: PartCall): PartTimes => {
  const times: Record<Part, number[]> = { named: [], sandbox: [], review: [] };
  const timed = <T>(part: Part, run: () => T): T => {
    const t0 = performance.now();
    const value = run();
    times[part].push((performance.now() - t0) * 1000);
    return value;
  };
  for (let i = 0; i < calls; i++) {
    const { verdict, filled, content } = timed('named', () => {
      const verdict = decideToolFor(POLICY, { name: 'owner' }, call.tool);
      const { filled } = aliases.fill(call.args, call.tool);
      return { verdict, filled, content: aliases.scrub(call.result, { fresh: false }) };
    });
    const { args } = aliases.fill(call.args, call.tool);
    const refused = timed('sandbox', () => proxy.sandboxRefusal(call.access, args));
    const { findings } = timed('review', () => proxy.review(content, 'tool_result'));
    if (!verdict.allowed || filled.length !== 1 || refused !== undefined || content === call.result || findings.length > 0) {
      throw new Error(
        `security.proxy parts: a part did not do its work (policy ${verdict.allowed}, filled ${filled.join()}, ` +
          `sandbox ${refused ?? 'ok'}, scrubbed ${content !== call.result}, findings ${findings.length})`,
      );
    }
  }
  return times;
};
