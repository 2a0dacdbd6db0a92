import {
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { Type } from 'class-transformer';

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
  @IsOptional() @IsIn(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']) effort?: string | null;
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
  @IsOptional() @ValidateNested() @Type(() => ReasoningDto) reasoning?: ReasoningDto | null;
  @IsOptional() @IsIn(['disabled', 'auto']) truncation?: 'disabled' | 'auto' | null;
  @IsOptional() @IsObject() metadata?: Record<string, unknown> | null;
  @IsOptional() @IsBoolean() store?: boolean | null;
  @IsOptional() @IsString() @MaxLength(256) previous_response_id?: string | null;
  @IsOptional() @IsArray() @IsIn(INCLUDE_VALUES as unknown as string[], { each: true }) include?: string[] | null;
  @IsOptional() @IsBoolean() stream?: boolean | null;
  @IsOptional() @ValidateNested() @Type(() => StreamOptionsDto) stream_options?: StreamOptionsDto | null;
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
