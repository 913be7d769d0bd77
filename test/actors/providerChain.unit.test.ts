import { describe, expect, it } from 'vitest';
import { AllProvidersFailed, ProviderChain, type ChainAttempt, type SourceRefusal } from '../../actors/llm/providerChain.ts';
import { openRefusalJournal } from '../../actors/llm/refusalJournal.ts';
import { createDefaultCatalog, InMemoryEventStore, LLM_SOURCES_STREAM, SequentialIds, VirtualClock } from '../../events/index.ts';
import type { CompletionRequest, CompletionResponse } from '../../adapters/llm/llmTypes.ts';
import {
  ProviderCallAborted,
  ProviderCallFailed,
  ProviderHttpError,
  type CallOptions,
  type Provider,
} from '../../adapters/llm/provider.ts';

const request: CompletionRequest = { model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: false };
const answer = (text: string): CompletionResponse => ({ text, toolCalls: [], finishReason: 'stop' });

/** A source that plays scripted outcomes, one per call, and counts its calls. */
const source = (name: string, outcomes: (CompletionResponse | Error | 'wait-for-abort')[], key = 'k1') => {
  const provider = {
    name,
    contextWindow: 8_000,
    credentialFingerprint: key,
    calls: 0,
    complete(_request: CompletionRequest, options: CallOptions = {}): Promise<CompletionResponse> {
      const outcome = outcomes[provider.calls++] ?? new Error('script exhausted');
      if (outcome === 'wait-for-abort') {
        return new Promise((_, reject) => options.signal!.addEventListener('abort', () => reject(new ProviderCallAborted(name))));
      }
      return outcome instanceof Error ? Promise.reject(outcome) : Promise.resolve(outcome);
    },
  };
  return provider satisfies Provider;
};

describe('ProviderChain', () => {
  it('asks sources in order and answers from the first that succeeds', async () => {
    const a = source('a', [new ProviderCallFailed('a', 'connection refused')]);
    const b = source('b', [answer('from b')]);
    const attempts: ChainAttempt[] = [];
    const result = await new ProviderChain([a, b]).complete(request, { onAttempt: (x) => attempts.push(x) });
    expect(result).toMatchObject({ text: 'from b', source: 'b' });
    expect(attempts.map((x) => `${x.source}:${x.outcome}`)).toEqual(['a:failed', 'b:answered']);
  });

  it('marks a source refusing the credentials (401/403) unavailable until its key changes', async () => {
    const a = source('a', [new ProviderHttpError('a', 401, 'bad key'), answer('a again')]);
    const b = source('b', [answer('b1'), answer('b2')]);
    const chain = new ProviderChain([a, b]);
    expect((await chain.complete(request)).source).toBe('b');
    expect((await chain.complete(request)).source).toBe('b');
    expect(a.calls).toBe(1); // not asked again with the same key
    a.credentialFingerprint = 'k2';
    expect((await chain.complete(request)).source).toBe('a');
  });

  it('keeps asking a source that failed for another reason (a 500 passes)', async () => {
    const a = source('a', [new ProviderHttpError('a', 500, 'oops'), answer('a ok')]);
    const b = source('b', [answer('b ok')]);
    const chain = new ProviderChain([a, b]);
    await chain.complete(request);
    expect((await chain.complete(request)).source).toBe('a');
  });

  it('does not fall through or retry a cancelled call', async () => {
    const a = source('a', ['wait-for-abort']);
    const b = source('b', [answer('b')]);
    const controller = new AbortController();
    const call = new ProviderChain([a, b]).complete(request, { signal: controller.signal });
    controller.abort();
    await expect(call).rejects.toThrow(ProviderCallAborted);
    expect(b.calls).toBe(0);
  });

  it('names every source and its failure when all fail, and never a key', async () => {
    const a = source('a', [new ProviderHttpError('a', 403, 'forbidden')], 'sk-secret');
    const b = source('b', [new ProviderCallFailed('b', 'timeout')]);
    const error = await new ProviderChain([a, b]).complete(request).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AllProvidersFailed);
    expect((error as Error).message).toContain("a: LLM source 'a' answered HTTP 403");
    expect((error as Error).message).toContain("b: LLM source 'b' failed: timeout");
    expect((error as Error).message).not.toContain('sk-secret');
  });

  it('with no source at all, says how to configure one', async () => {
    await expect(new ProviderChain([]).complete(request)).rejects.toThrow(/settings.json \(llm.sources\) or pass --llm/);
  });

  it('records a refusal before asking the next source, and a chain restored from the log skips it', async () => {
    const store = new InMemoryEventStore(createDefaultCatalog(), new VirtualClock(0), new SequentialIds('t'));
    const order: string[] = [];
    const a = source('a', [new ProviderHttpError('a', 401, 'bad key'), answer('a again')], 'fp-1');
    const b = source('b', [answer('b1'), answer('b2')]);
    const journal = await openRefusalJournal(store, new VirtualClock(0), (refusal) => order.push(`recorded ${refusal.source}`));
    const first = new ProviderChain([a, b], journal);
    const result = await first.complete(request, { onAttempt: (x) => order.push(`${x.source}:${x.outcome}`) });
    expect(result.source).toBe('b');
    expect(order).toEqual(['recorded a', 'a:failed', 'b:answered']);
    const recorded = await store.readStream(LLM_SOURCES_STREAM);
    expect(recorded.map((event) => event.data as SourceRefusal)).toEqual([
      { source: 'a', fingerprint: 'fp-1', reason: expect.stringContaining('401') },
    ]);

    const restarted = new ProviderChain([a, b], await openRefusalJournal(store, new VirtualClock(0)));
    expect((await restarted.complete(request)).source).toBe('b');
    expect(a.calls).toBe(1);
    a.credentialFingerprint = 'fp-2';
    expect((await new ProviderChain([a, b], await openRefusalJournal(store, new VirtualClock(0))).complete(request)).source).toBe('a');
  });

  it('does not go on to the next source when the refusal cannot be recorded', async () => {
    const a = source('a', [new ProviderHttpError('a', 403, 'forbidden')]);
    const b = source('b', [answer('b')]);
    const journal = { refused: new Map<string, string>(), record: () => Promise.reject(new Error('disk full')) };
    await expect(new ProviderChain([a, b], journal).complete(request)).rejects.toThrow('disk full');
    expect(b.calls).toBe(0);
  });
});
