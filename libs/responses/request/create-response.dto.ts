import { IsArray, IsBoolean, IsIn, IsInt, IsNumber, IsObject, IsOptional, IsString, Max, MaxLength, Min, ValidateNested, getMetadataStorage } from 'class-validator';

/** Values of `include[]` the gateway knows; anything else is a 400. */
export const INCLUDE_VALUES = [
  'reasoning.encrypted_content',
  'web_search_call.action.sources',
  'web_search_call.results',
  'file_search_call.results',
  'code_interpreter_call.outputs',
  'message.output_text.logprobs',
  'message.input_image.image_url',
  'computer_call_output.output.image_url',
] as const;

export class ReasoningDto {
  /** OpenAI's whole scale; mapped onto the model server's (`create-response.parser.ts`). */
  @IsOptional() @IsIn(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max', 'ultra']) effort?: string | null;
  @IsOptional() @IsIn(['auto', 'concise', 'detailed']) summary?: string | null;
  @IsOptional() @IsIn(['auto', 'concise', 'detailed']) generate_summary?: string | null;
}

export class StreamOptionsDto {
  @IsOptional() @IsBoolean() include_obfuscation?: boolean;
}

/**
 * The scalar and simple-object fields of `POST /v1/responses`. Polymorphic
 * fields (`input` items, `tools`, `tool_choice`, `text.format`) are checked by
 * their own parsers, which know the per-type rules.
 */
export class CreateResponseDto {
  @IsOptional() @IsString() @MaxLength(256) model?: string;
  @IsOptional() @IsString() instructions?: string | null;
  @IsOptional() @IsArray() tools?: unknown[] | null;
  @IsOptional() @IsBoolean() parallel_tool_calls?: boolean | null;
  @IsOptional() @IsNumber({ allowNaN: false, allowInfinity: false }) @Min(0) @Max(2) temperature?: number | null;
  @IsOptional() @IsNumber({ allowNaN: false, allowInfinity: false }) @Min(0) @Max(1) top_p?: number | null;
  @IsOptional() @IsInt() @Min(1) max_output_tokens?: number | null;
  @IsOptional() @IsInt() @Min(0) max_tool_calls?: number | null;
  @IsOptional() @IsObject() text?: Record<string, unknown> | null;
  @IsOptional() @ValidateNested() reasoning?: ReasoningDto | null;
  @IsOptional() @IsIn(['disabled', 'auto']) truncation?: 'disabled' | 'auto' | null;
  @IsOptional() @IsObject() metadata?: Record<string, unknown> | null;
  @IsOptional() @IsBoolean() store?: boolean | null;
  @IsOptional() @IsString() @MaxLength(256) previous_response_id?: string | null;
  @IsOptional() @IsArray() @IsIn(INCLUDE_VALUES as unknown as string[], { each: true }) include?: string[] | null;
  @IsOptional() @IsBoolean() stream?: boolean | null;
  @IsOptional() @ValidateNested() stream_options?: StreamOptionsDto | null;
  @IsOptional() @IsString() @MaxLength(1024) prompt_cache_key?: string | null;
  @IsOptional() @IsString() @MaxLength(256) safety_identifier?: string | null;
  @IsOptional() @IsString() @MaxLength(256) user?: string | null;
  @IsOptional() @IsIn(['auto', 'default', 'flex', 'scale', 'priority']) service_tier?: string | null;
  @IsOptional() @IsBoolean() background?: boolean | null;
  @IsOptional() @IsBoolean() generate?: boolean | null;
  @IsOptional() @IsInt() @Min(0) @Max(20) top_logprobs?: number | null;
  @IsOptional() @IsNumber({ allowNaN: false, allowInfinity: false }) @Min(-2) @Max(2) presence_penalty?: number | null;
  @IsOptional() @IsNumber({ allowNaN: false, allowInfinity: false }) @Min(-2) @Max(2) frequency_penalty?: number | null;
}

/**
 * The fields a DTO class declares, read from its class-validator decorators,
 * so that a field added to a DTO is picked up without a second list to keep.
 */
const declared = new Map<Function, readonly string[]>();
function declaredFields(cls: Function): readonly string[] {
  let fields = declared.get(cls);
  if (!fields) {
    fields = [
      ...new Set(
        getMetadataStorage()
          .getTargetValidationMetadatas(cls, '', true, false)
          .map((m) => m.propertyName),
      ),
    ];
    declared.set(cls, fields);
  }
  return fields;
}

function pick<T extends object>(target: T, raw: Record<string, unknown>, fields: readonly string[]): T {
  for (const field of fields) {
    if (Object.hasOwn(raw, field)) (target as Record<string, unknown>)[field] = raw[field];
  }
  return target;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * The DTO for class-validator, built by reading only the fields it declares.
 * The body is untrusted: a generic transformer walks every key of every
 * object (quadratic in the key count, and `constructor` as a key broke it),
 * while this costs one look-up per declared field whatever the body holds.
 * Every other field keeps its raw value and is read by its own parser.
 */
export function toCreateResponseDto(raw: Record<string, unknown>): CreateResponseDto {
  const dto = pick(new CreateResponseDto(), raw, declaredFields(CreateResponseDto));
  if (isPlainObject(dto.reasoning)) dto.reasoning = pick(new ReasoningDto(), dto.reasoning, declaredFields(ReasoningDto));
  if (isPlainObject(dto.stream_options)) dto.stream_options = pick(new StreamOptionsDto(), dto.stream_options, declaredFields(StreamOptionsDto));
  return dto;
}

const isBoolean = (v: unknown): boolean => typeof v === 'boolean';

/**
 * `@IsString() @MaxLength(max)`, or stricter: class-validator counts a surrogate pair (and an emoji
 * presentation selector) as no more than one character, so a string within `max` UTF-16 units is
 * within its bound too; a longer one goes to class-validator, which has the last word.
 */
const stringUpTo =
  (max: number) =>
  (v: unknown): boolean =>
    typeof v === 'string' && v.length <= max;

/**
 * Fields whose whole rule above is a type check (and a length bound): what
 * nearly every request sends. Each test is at least as strict as the
 * decorators, so passing it means class-validator would pass the field too.
 */
const PLAIN_RULES: Readonly<Record<string, (v: unknown) => boolean>> = {
  model: stringUpTo(256),
  instructions: (v) => typeof v === 'string',
  // A continuation names its previous response; agents send the other three on every turn.
  previous_response_id: stringUpTo(256),
  prompt_cache_key: stringUpTo(1024),
  safety_identifier: stringUpTo(256),
  user: stringUpTo(256),
  tools: (v) => Array.isArray(v),
  store: isBoolean,
  stream: isBoolean,
  parallel_tool_calls: isBoolean,
  background: isBoolean,
  generate: isBoolean,
};

/**
 * True when every DTO field the body carries is one of `PLAIN_RULES` and
 * passes it (or is null, which `@IsOptional` allows): `validateSync` would
 * find nothing, and the create route skips it (3 % of a request's CPU).
 * Any other field, or a value that fails here, goes through class-validator,
 * whose first violation is the 400 as before.
 */
export function plainCreateFields(raw: Record<string, unknown>): boolean {
  const fields = declaredFields(CreateResponseDto);
  for (const key in raw) {
    // Own keys only: a body may name `valueOf` or `constructor`, which every object inherits.
    const rule = Object.hasOwn(PLAIN_RULES, key) ? PLAIN_RULES[key] : undefined;
    const value = raw[key];
    if (rule) {
      if (value !== null && value !== undefined && !rule(value)) return false;
    } else if (fields.includes(key)) {
      return false;
    }
  }
  return true;
}
