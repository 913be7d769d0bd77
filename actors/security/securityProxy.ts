/**
 * The security firewall as a proxy: the security module wraps, at assembly, the mount points
 * through which anything crosses between the kernel and the outside: inputs (the scheduler's
 * submit), tools (the plugins' callTool and stage handlers), output (the plugins' deliver) and
 * the model (the llm chain). No module reaches the unwrapped facility. What the proxy decides
 * travels with what it lets through (a tool result's `filled`, `findings`, `refused`; an
 * input's `findings`), so the turn records it as facts and replay reproduces it.
 */
import type { SecurityFinding } from '../../events/index.ts';
import {
  absolutePath,
  blockedNotice,
  blocksContent,
  type DaemonPaths,
  daemonFileRefusal,
  daemonPathOf,
  decideSandbox,
  fillVerdict,
  isPrivileged,
  normalisePath,
  OWNER,
  refusalAsWritten,
  refusedByFirewall,
  reviewContent,
  secretsNotFilledFor,
  type ReviewRules,
  type SandboxBase,
  type SandboxRules,
  type ToolAccess,
  type TurnSandbox,
} from '../../machines/security/index.ts';
import type { ApprovalAnswer, ToolInvocation, ToolResult } from '../../machines/turn/index.ts';
import type { PluginsFacility } from '../kernel/pluginsFacility.ts';
import type { LlmFacility, ModelChain } from '../llm/llmFacility.ts';
import type { SchedulerFacility } from '../modules/schedulerModule.ts';
import { boundedError, boundedResult } from '../turn/boundedResult.ts';
import type { TurnPlugins } from '../turn/turnEffects.ts';
import { realDaemonPaths, realPathOf } from './realPaths.ts';
import { type ResolveHost, resolvedHostRefusal } from './resolvedHosts.ts';
import type { SecretAliases } from './secretAliases.ts';

export type SecurityOptions = Readonly<{
  aliases: SecretAliases;
  review: ReviewRules;
  rules: SandboxRules;
  base: SandboxBase;
  /** Paths no tool may touch whatever the roots say (the vault, the log, settings; the data dir but its roots). */
  daemon: DaemonPaths;
  /** Plugin-declared principals the owner vouches for (`security.owners`): their inputs may have secrets filled in, as the owner's may. */
  owners?: readonly string[];
  /** How host names are looked up (the system's resolver unless a test gives another). */
  resolve?: ResolveHost;
}>;

export class SecurityProxy {
  /** The rules and protected paths with symbolic links resolved, for judging resolved paths. */
  private readonly real: Readonly<{ rules: SandboxRules; daemon: DaemonPaths }>;

  /** The sandbox as a turn judges paths as written. */
  private readonly sandbox: TurnSandbox;

  constructor(private readonly options: SecurityOptions) {
    const { rules } = options;
    this.sandbox = { rules, base: options.base, ...options.daemon };
    this.real = {
      rules: {
        ...rules,
        ...(rules.read ? { read: rules.read.map(realPathOf) } : {}),
        ...(rules.write ? { write: rules.write.map(realPathOf) } : {}),
      },
      daemon: realDaemonPaths(options.daemon),
    };
  }

  /** The plaintext of secret `name` (for a module that sends it itself, as the llm sources' keys). */
  secret(name: string): string {
    return this.options.aliases.secret(name);
  }

  scrub(text: string): string {
    return this.options.aliases.scrub(text);
  }

  /** `text`, cut short at its end, scrubbed and without an end that could begin a value. */
  scrubCut(text: string): string {
    return this.options.aliases.scrubCut(text);
  }

  /** Scrubs `value` as `@{name}` from now on, though the vault does not hold it (a model source's key from the environment). */
  scrubAlso(name: string, value: string): void {
    this.options.aliases.scrubAlso(name, value);
  }

  /** Every string inside `value` scrubbed. */
  scrubDeep<T>(value: T): T {
    return this.options.aliases.scrubDeep(value);
  }

  /** What content review finds in `text` from `source`, and whether it blocks it. */
  review(text: string, source: 'input' | 'tool_result'): Readonly<{ findings: readonly SecurityFinding[]; blocked: boolean }> {
    const findings = reviewContent(text, this.options.review, source);
    return { findings, blocked: findings.length > 0 && blocksContent(findings, this.options.review) };
  }

  /**
   * Inputs enter the log with secret values as aliases (in every field) and with what review found
   * in their text; an input review blocks enters as the notice its sender gets, so its text is in no event.
   */
  guardInputs(scheduler: SchedulerFacility): SchedulerFacility {
    return {
      ...scheduler,
      submit: (descriptor) => {
        // Every field, not the text alone: a plugin names the target its reply goes to, and the conversation is made of it.
        const scrubbed = this.scrubDeep(descriptor);
        const { payload } = scrubbed;
        if (!payload) return scheduler.submit(scrubbed);
        return scheduler.submit({ ...scrubbed, payload: { ...payload, ...this.reviewedWords(payload.text) } });
      },
    };
  }

  /** The model is asked with every secret value as its alias, and its answer is read the same way. */
  guardModel(llm: LlmFacility): LlmFacility {
    if (!('chain' in llm)) return llm;
    const { chain } = llm;
    const guarded: ModelChain = {
      primary: () => chain.primary(),
      complete: async (request, options = {}) => {
        const { onDelta } = options;
        // Streamed text is scrubbed as one text: the end of each piece that could begin a value is held for the next.
        const text = this.options.aliases.streamScrub();
        const scrubbed = onDelta
          ? {
              ...options,
              onDelta: (delta: Parameters<typeof onDelta>[0]) => {
                const rest = this.options.aliases.scrubDeep({ ...delta, text: undefined });
                const out = delta.text === undefined ? undefined : text.push(delta.text);
                if (out || Object.values(rest).some((v) => v !== undefined)) onDelta({ ...rest, ...(out ? { text: out } : {}) });
              },
            }
          : options;
        let answer: Awaited<ReturnType<ModelChain['complete']>>;
        try {
          // The tools too: a plugin's schema was written by the plugin, and may hold what one of its tools was filled.
          const { messages, tools } = request;
          const asked = { ...request, messages: this.scrubDeep(messages), ...(tools ? { tools: this.scrubDeep(tools) } : {}) };
          answer = await chain.complete(asked, scrubbed);
        } catch (error) {
          // A provider's error can quote the key it was sent (in any form); it is recorded and shown from here.
          throw this.scrubbedError(error);
        }
        const tail = text.end();
        if (tail) onDelta?.({ text: tail });
        return { ...answer, text: this.scrub(answer.text), toolCalls: this.options.aliases.scrubDeep(answer.toolCalls) };
      },
    };
    return { ...llm, chain: guarded };
  }

  /** `error` with secret values as aliases in its message, its stack and its own fields; its class and code kept. */
  private scrubbedError(error: unknown): unknown {
    if (!(error instanceof Error)) return typeof error === 'string' ? this.scrub(error) : this.scrubDeep(error);
    error.message = this.scrub(error.message);
    if (error.stack !== undefined) error.stack = this.scrub(error.stack);
    const fields = error as unknown as Record<string, unknown>;
    for (const key of Object.keys(error)) fields[key] = this.scrubDeep(fields[key]);
    return error;
  }

  /** Tools run through the proxy (fill, sandbox, scrub, review), handlers' changes are scrubbed, output leaves scrubbed. */
  guardPlugins(plugins: PluginsFacility): PluginsFacility {
    return {
      ...plugins,
      turns: this.guardTools(plugins.turns),
      deliver: (delivery) => plugins.deliver({ ...delivery, text: this.scrub(delivery.text) }),
      useApprovals: (desk) =>
        plugins.useApprovals({
          pending: () => desk.pending().map((p) => ({ ...p, args: this.scrubDeep(p.args) })),
          answer: (answer) => desk.answer(this.reviewAnswer(answer)),
          stopParked: (which) => desk.stopParked(which),
          resumedTaskOf: (input) => desk.resumedTaskOf(input),
        }),
    };
  }

  /**
   * A person's answer to an approval enters the log as their messages do: its reason with secret
   * values as aliases and with what review found in it, or, blocked, as the notice instead.
   */
  private reviewAnswer(answer: ApprovalAnswer): ApprovalAnswer {
    const scrubbed = this.scrubDeep(answer);
    if (scrubbed.reason === undefined) return scrubbed;
    const { text: reason, ...found } = this.reviewedWords(scrubbed.reason);
    return { ...scrubbed, reason, ...found };
  }

  /** A person's scrubbed words as they enter the log: with what review found in them, or the notice instead when it blocks. */
  private reviewedWords(scrubbed: string): Readonly<{ text: string; findings?: readonly SecurityFinding[]; blocked?: true }> {
    const { findings, blocked } = this.review(scrubbed, 'input');
    return {
      text: blocked ? blockedNotice(findings, 'input') : scrubbed,
      ...(findings.length ? { findings } : {}),
      ...(blocked ? { blocked: true as const } : {}),
    };
  }

  guardTools(turns: TurnPlugins): TurnPlugins {
    return {
      // The vault's grants and the sandbox go with the tools, so the turn decides, and records, which
      // secrets a call gets and whether its paths as written are allowed, before it runs.
      toolset: () => ({ ...turns.toolset(), secrets: this.options.aliases.grants(), sandbox: this.sandbox }),
      accessOf: (name) => turns.accessOf(name),
      runHandler: async (input, signal) => this.options.aliases.scrubDeep(await turns.runHandler(input, signal)),
      callTool: (invocation, signal, origin) => this.callTool(turns, invocation, signal, origin),
    };
  }

  private async callTool(
    turns: TurnPlugins,
    invocation: ToolInvocation,
    signal: AbortSignal,
    origin: Parameters<TurnPlugins['callTool']>[2],
  ): Promise<ToolResult> {
    const met = this.options.aliases.fill(invocation.args, invocation.name);
    const { args, filled } = met;
    // The values filled in are scrubbed from what comes back even if the vault loses them meanwhile (a secret rotated or removed).
    const also = filled.length > 0 ? met.forms : undefined;
    // A turn with no recorded principal is the owner's, as the turn runner reads it.
    const principal = origin?.principal ?? OWNER;
    const notFilled = isPrivileged({ owners: this.options.owners ?? [] }, principal) ? undefined : secretsNotFilledFor(principal);
    const verdict = fillVerdict(met, notFilled, (name) => this.options.aliases.toolsOf(name), invocation.name);
    if (verdict.kind === 'refuse') return this.refusal(verdict.reason);
    const access = turns.accessOf(invocation.name);
    const refused = this.sandboxRefusal(access, args);
    if (refused) return this.refusal(args === invocation.args ? refused : this.filledRefusal(access, invocation.args));
    // Judged on the arguments as written: a filled secret is no part of a host.
    const unresolved = access?.network?.length
      ? await resolvedHostRefusal(access, invocation.args, this.options.rules, this.options.resolve)
      : undefined;
    if (unresolved) return this.refusal(unresolved);
    let result: ToolResult;
    try {
      result = await turns.callTool({ ...invocation, args }, signal, origin);
    } catch (error) {
      // Cut once scrubbed, as an answer is (the plugin sends it whole, up to the protocol's bound).
      throw new Error(boundedError(this.options.aliases.scrub((error as Error)?.message ?? String(error), { also })));
    }
    // Cut once scrubbed: cut first, all of a value but its last characters could end what is kept. Looked at afresh
    // (no file system call while the vault is watched): a call naming no alias had the fill look at no vault.
    const content = boundedResult(this.options.aliases.scrub(result.content, { also }));
    // Reviewed as the tool wrote it: an alias the scrub just put in ('echo @{KEY}') is not a request for a secret.
    const { findings, blocked } = this.review(boundedResult(result.content), 'tool_result');
    return {
      content: blocked ? blockedNotice(findings, 'tool_result') : content,
      ...(result.isError ? { isError: true } : {}),
      ...(filled.length ? { filled } : {}),
      ...(findings.length ? { findings } : {}),
      ...(blocked ? { blocked: true } : {}),
    };
  }

  /**
   * Why a call refused once its secrets were filled in, said of its arguments as the model wrote
   * them: a reason quoting a filled path (cut short when long) could hold part of a value, which
   * no scrub would know for one.
   */
  private filledRefusal(access: ToolAccess | undefined, written: Readonly<Record<string, unknown>>): string {
    return (
      this.sandboxRefusal(access, written) ??
      'a path argument leads outside the sandbox once the secrets it names are filled in; a secret is no part of a path'
    );
  }

  private refusal(reason: string): ToolResult {
    const scrubbed = this.scrub(reason);
    return { content: refusedByFirewall(scrubbed), isError: true, refused: scrubbed };
  }

  /**
   * Why the sandbox refuses the call, judged on the paths as written and again as they resolve
   * (a link inside a root that leads out of it, or to the daemon's own files, is refused).
   */
  sandboxRefusal(access: ToolAccess | undefined, args: Readonly<Record<string, unknown>>): string | undefined {
    if (!access) return undefined;
    const asWritten = refusalAsWritten(access, args, this.sandbox);
    if (asWritten !== undefined) return asWritten;
    const { base } = this.options;
    const resolved: Record<string, unknown> = { ...args };
    let moved = false;
    for (const argument of [...(access.read ?? []), ...(access.write ?? [])]) {
      if (!Object.hasOwn(args, argument)) continue;
      // Resolved from the path as the tool opens it: a `..` after a link goes up from where the link leads.
      const values = [args[argument]].flat().map((value) => {
        const absolute = typeof value === 'string' ? absolutePath(value, base) : null;
        return absolute === null ? { path: null, real: null } : { path: normalisePath(absolute, base), real: realPathOf(absolute) };
      });
      for (const { real } of values) {
        const guarded = real && daemonPathOf(real, this.real.daemon);
        if (guarded) return daemonFileRefusal(argument, guarded);
      }
      moved ||= values.some((v) => v.real !== v.path);
      resolved[argument] = Array.isArray(args[argument]) ? values.map((v) => v.real) : values[0]?.real;
    }
    // No path leads anywhere through a link: judged as written, it is judged.
    if (!moved) return undefined;
    const real = decideSandbox(access, resolved, this.real.rules, base);
    return real.allowed ? undefined : `${real.reason} (the path leads there through a symbolic link)`;
  }
}
