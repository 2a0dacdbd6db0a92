import { readFileSync } from 'node:fs';
import path from 'node:path';
import { lastValueFrom, type Observable, toArray } from 'rxjs';
import { parse as parseYaml } from 'yaml';
import type { ModelEvent, ModelRequest } from '#core/protocol/model-events.js';

/** CI copies `shared/` beside the repository, so fixtures resolve from the working directory. */
export const VLLM_FIXTURES = path.resolve(process.cwd(), '../shared/fixtures/vllm');

/** Recorded YAML is untyped by nature; tests read it like JSON. */
export function loadVllmFixture(name: string): any {
  return parseYaml(readFileSync(path.join(VLLM_FIXTURES, name), 'utf8'));
}

export function modelRequest(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model: 'test-model',
    input: [{ type: 'message', role: 'user', content: 'Hello' }],
    tools: [],
    stream: false,
    ...overrides,
  };
}

export function collect(events: Observable<ModelEvent>): Promise<ModelEvent[]> {
  return lastValueFrom(events.pipe(toArray()));
}
