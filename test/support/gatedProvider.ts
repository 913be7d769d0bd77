/**
 * An in-process LLM source whose calls wait until the test answers them: it streams pieces,
 * then finishes with the text streamed so far (and tool calls), or fails. An aborted call
 * rejects at once with `ProviderCallAborted` and is no longer held. Nothing is answered by
 * itself, so what a turn gets from the model, and when, is the test's choice.
 */
import { ProviderCallAborted, ProviderCallFailed, type CallOptions, type Provider } from '../../adapters/llm/provider.ts';
import type { CompletionRequest, CompletionResponse, ToolCall } from '../../adapters/llm/llmTypes.ts';

export type HeldCall = Readonly<{
  id: number;
  request: CompletionRequest;
  /** The pieces streamed so far. */
  pieces: readonly string[];
}>;

type Entry = {
  call: HeldCall & { pieces: string[] };
  options: CallOptions;
  resolve(response: CompletionResponse): void;
  reject(error: unknown): void;
};

export class GatedProvider implements Provider {
  readonly name = 'gated';
  readonly contextWindow = undefined;
  readonly credentialFingerprint = 'gated';
  private readonly entries: Entry[] = [];
  private nextId = 1;

  /** The calls waiting for an answer, oldest first. */
  get held(): readonly HeldCall[] {
    return this.entries.map((e) => e.call);
  }

  complete(request: CompletionRequest, options: CallOptions = {}): Promise<CompletionResponse> {
    return new Promise<CompletionResponse>((resolve, reject) => {
      if (options.signal?.aborted) return reject(new ProviderCallAborted(this.name));
      const entry: Entry = { call: { id: this.nextId++, request, pieces: [] }, options, resolve, reject };
      this.entries.push(entry);
      options.signal?.addEventListener('abort', () => {
        if (this.take(entry.call.id)) reject(new ProviderCallAborted(this.name));
      });
    });
  }

  /** Streams one more piece of call `id`'s answer. */
  piece(id: number, text: string): void {
    const entry = this.entry(id);
    entry.call.pieces.push(text);
    entry.options.onDelta?.({ text });
  }

  /** Ends call `id`: its text is every piece streamed. */
  finish(id: number, toolCalls: readonly ToolCall[] = []): void {
    const entry = this.entry(id);
    this.take(id);
    entry.resolve({ text: entry.call.pieces.join(''), toolCalls, finishReason: toolCalls.length > 0 ? 'tool_calls' : 'stop' });
  }

  fail(id: number, reason: string): void {
    const entry = this.entry(id);
    this.take(id);
    entry.reject(new ProviderCallFailed(this.name, reason));
  }

  /** The kernel that made these calls is gone: forget them (they are never answered). */
  forgetAll(): void {
    this.entries.splice(0);
  }

  private entry(id: number): Entry {
    const entry = this.entries.find((e) => e.call.id === id);
    if (!entry)
      throw new Error(`the gated provider holds no call ${id}; it holds ${this.entries.map((e) => e.call.id).join(', ') || 'none'}`);
    return entry;
  }

  private take(id: number): Entry | undefined {
    const index = this.entries.findIndex((e) => e.call.id === id);
    return index < 0 ? undefined : this.entries.splice(index, 1)[0];
  }
}
