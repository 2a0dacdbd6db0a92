import { FunctionToolHandler } from '#tools/function/function.tool-handler.js';
import { ToolPreparationService } from '../registry/tool-preparation.service.js';
import { explorerWith, finished, messageEvents, testConfig } from '../testing/fixtures.js';
import { initialRoundState, roundReducer, type RoundStep } from './round-classification.js';
import { type ResponseStreamEvent } from './response-events.js';
import { ResponseOutput } from './response-output.js';
import type { ResponseRequest } from './response-request.js';

describe('round classification: annotations', () => {
  async function accumulate(annotate?: (text: string) => Array<Record<string, unknown>>) {
    const registry = await new ToolPreparationService(explorerWith([new FunctionToolHandler()], []), testConfig()).prepare([], {
      history: [],
      signal: new AbortController().signal,
      requestId: 'r',
    });
    const emitted: ResponseStreamEvent[] = [];
    // The run's edge numbers the events and keeps the output, as it does for a run.
    const ledger = new ResponseOutput('resp_test', 0, {} as ResponseRequest);
    const reduce = roundReducer(registry, { include: [], reasoningEvents: 'openai', annotate });
    const last = [...messageEvents('m', ['See ', 'a.md']), finished].reduce<RoundStep>(
      (step, event) => {
        const next = reduce(step.state, event);
        for (const e of next.events) emitted.push(ledger.stamp(e)!);
        return next;
      },
      { state: initialRoundState, events: [], calls: [] },
    );
    const round = last.state;
    return { emitted, ledger, round };
  }

  it('puts the annotations on the final part and announces each after the deltas, before output_text.done', async () => {
    const seen: string[] = [];
    const { emitted, ledger, round } = await accumulate((text) => {
      seen.push(text);
      return [{ type: 'file_citation', file_id: 'file-1', filename: 'a.md', index: 4 }];
    });
    expect(seen).toEqual(['See a.md']);
    const types = emitted.map((e) => e.type);
    expect(types.slice(types.indexOf('response.output_text.delta'))).toEqual([
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.annotation.added',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
    ]);
    const added = emitted.find((e) => e.type === 'response.output_text.annotation.added')!;
    expect(added).toMatchObject({ output_index: 0, content_index: 0, annotation_index: 0, annotation: { type: 'file_citation', index: 4 } });
    expect((ledger.items[0] as any).content[0].annotations).toEqual([{ type: 'file_citation', file_id: 'file-1', filename: 'a.md', index: 4 }]);
    // The model's own transcript stays plain text.
    expect((round.modelItems[0] as any).content[0].annotations).toEqual([]);
  });

  it('leaves a message without annotations when nothing annotates', async () => {
    const { emitted, ledger } = await accumulate();
    expect(emitted.some((e) => e.type === 'response.output_text.annotation.added')).toBe(false);
    expect((ledger.items[0] as any).content[0].annotations).toEqual([]);
  });
});
