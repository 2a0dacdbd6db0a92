import { IsInt, IsOptional, Min, ValidateBy } from 'class-validator';
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

/** A rule phrased as the catalog has always phrased it. */
function Is(name: string, message: string, valid: (value: unknown) => boolean): PropertyDecorator {
  return ValidateBy({ name, validator: { validate: valid } }, { message });
}

const isOneOf = (values: readonly string[]) => (v: unknown) => values.includes(v as string);

/** One entry of `models`, under the public name clients use. */
export class CatalogEntry {
  @Is('isUpstreamModel', "must be the model server's name for it", (v) => typeof v === 'string' && v.trim() !== '') upstreamModel!: string;
  @IsOptional() @IsInt({ message: 'must be a positive integer' }) @Min(1, { message: 'must be a positive integer' }) contextWindow?: number;
  @IsOptional() @IsInt({ message: 'must be a positive integer' }) @Min(1, { message: 'must be a positive integer' }) maxOutputTokens?: number;
  @IsOptional()
  @Is('isModalities', `must be a non-empty list of ${INPUT_MODALITIES.join(', ')}`, (v) => Array.isArray(v) && v.length > 0 && v.every(isOneOf(INPUT_MODALITIES)))
  inputModalities?: Array<(typeof INPUT_MODALITIES)[number]>;
  @IsOptional()
  @Is(
    'isReasoning',
    `must be true, false or a list of efforts (${REASONING_EFFORTS.join(', ')})`,
    (v) => typeof v === 'boolean' || (Array.isArray(v) && v.every(isOneOf(REASONING_EFFORTS))),
  )
  reasoning?: boolean | Array<(typeof REASONING_EFFORTS)[number]>;
}

/** Rules across an entry's settings, and the names themselves. */
function catalogProblems(entries: Record<string, CatalogEntry>): string[] {
  return Object.entries(entries).flatMap(([name, entry]) => [
    ...(name.trim() ? [] : ['models: a model name must not be empty']),
    ...(Number.isInteger(entry.contextWindow) && Number.isInteger(entry.maxOutputTokens) && entry.maxOutputTokens! > entry.contextWindow!
      ? [`models.${name}.maxOutputTokens: must not exceed its contextWindow (${entry.contextWindow})`]
      : []),
  ]);
}

/** The catalog of validated entries; a setting left out stays out of `/v1/models`. */
function catalogOf(entries: Record<string, CatalogEntry>): ModelCatalog {
  return new ModelCatalog(
    Object.entries(entries).map(([name, entry]) => ({ name, ...(Object.fromEntries(Object.entries(entry).filter(([, v]) => v !== undefined)) as Omit<CatalogModel, 'name'>) })),
  );
}

/** The `models` section (`--config FILE`): public names, each an entry; it has no environment variables. */
export const modelsConfigSection = defineConfigSection({
  key: 'models',
  entryType: CatalogEntry,
  token: MODEL_CATALOG,
  check: catalogProblems,
  settings: catalogOf,
});
