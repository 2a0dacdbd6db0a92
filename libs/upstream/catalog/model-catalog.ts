import { defineConfigSection } from '#config/config-section.js';

/** Reasoning efforts a catalog entry may list (OpenAI's names, which the clients send). */
export const REASONING_EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'] as const;
export const INPUT_MODALITIES = ['text', 'image'] as const;

/** One model as clients see it, and the upstream model that serves it. */
export interface CatalogModel {
  /** The name clients use, in requests, responses and `/v1/models`. */
  name: string;
  /** The name the model server knows it by. */
  upstreamModel: string;
  contextWindow?: number;
  maxOutputTokens?: number;
  inputModalities?: Array<(typeof INPUT_MODALITIES)[number]>;
  /** `true`/`false`, or the efforts the model accepts. */
  reasoning?: boolean | Array<(typeof REASONING_EFFORTS)[number]>;
}

/**
 * The `models` section: public model names and what serves them. Clients
 * built for hosted models trust names and metadata (Codex's model families,
 * Claude Code's context window, the SDKs' reasoning settings); the catalog
 * lets an operator serve a self-hosted model under such a name, with its
 * real window. Empty when the section is absent.
 */
export class ModelCatalog {
  private readonly byName: ReadonlyMap<string, CatalogModel>;

  constructor(models: readonly CatalogModel[] = []) {
    this.byName = new Map(models.map((model) => [model.name, model]));
  }

  get size(): number {
    return this.byName.size;
  }

  get models(): CatalogModel[] {
    return [...this.byName.values()];
  }

  find(name: string): CatalogModel | undefined {
    return this.byName.get(name);
  }

  /** The model server's name for a public one; names the catalog does not hold go on as they are. */
  upstreamName(name: string): string {
    return this.byName.get(name)?.upstreamModel ?? name;
  }
}

export const MODEL_CATALOG = Symbol('MODEL_CATALOG');

const ENTRY_KEYS = ['upstreamModel', 'contextWindow', 'maxOutputTokens', 'inputModalities', 'reasoning'] as const;

function isObject(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === 'object' && !Array.isArray(value);
}

function positiveInteger(value: unknown): boolean {
  return Number.isInteger(value) && (value as number) > 0;
}

export function parseModelCatalog(section: unknown): ModelCatalog {
  if (section === undefined || section === null) return new ModelCatalog();
  if (!isObject(section)) throw new Error('models must be an object keyed by the public model name');
  const problems: string[] = [];
  const models: CatalogModel[] = [];
  for (const [name, raw] of Object.entries(section)) {
    const at = `models.${name}`;
    if (!name.trim()) problems.push('models: a model name must not be empty');
    if (!isObject(raw)) {
      problems.push(`${at} must be an object with at least upstreamModel`);
      continue;
    }
    if (typeof raw.upstreamModel !== 'string' || !raw.upstreamModel.trim()) problems.push(`${at}.upstreamModel must be the model server's name for it`);
    for (const field of ['contextWindow', 'maxOutputTokens'] as const) {
      if (raw[field] !== undefined && !positiveInteger(raw[field])) problems.push(`${at}.${field} must be a positive integer`);
    }
    const modalities = raw.inputModalities;
    if (modalities !== undefined && (!Array.isArray(modalities) || modalities.length === 0 || !modalities.every((m) => (INPUT_MODALITIES as readonly unknown[]).includes(m)))) {
      problems.push(`${at}.inputModalities must be a non-empty list of ${INPUT_MODALITIES.join(', ')}`);
    }
    const reasoning = raw.reasoning;
    if (
      reasoning !== undefined &&
      typeof reasoning !== 'boolean' &&
      (!Array.isArray(reasoning) || !reasoning.every((e) => (REASONING_EFFORTS as readonly unknown[]).includes(e)))
    ) {
      problems.push(`${at}.reasoning must be true, false or a list of efforts (${REASONING_EFFORTS.join(', ')})`);
    }
    if (positiveInteger(raw.contextWindow) && positiveInteger(raw.maxOutputTokens) && (raw.maxOutputTokens as number) > (raw.contextWindow as number)) {
      problems.push(`${at}.maxOutputTokens must not exceed its contextWindow`);
    }
    models.push({ name, ...(raw as Omit<CatalogModel, 'name'>) });
  }
  if (problems.length > 0) throw new Error(problems.join('\n'));
  return new ModelCatalog(models);
}

/** The `models` section (`--config FILE`); it has no environment variables. */
export const modelsConfigSection = defineConfigSection<ModelCatalog>({
  key: 'models',
  token: MODEL_CATALOG,
  keys: { '*': Object.fromEntries(ENTRY_KEYS.map((key) => [key, true as const])) },
  parse: (section) => parseModelCatalog(section),
});
