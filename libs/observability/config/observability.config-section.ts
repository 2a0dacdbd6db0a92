import { IsBoolean, IsIn, IsInt, IsOptional, IsString, IsUrl, Max, Min } from 'class-validator';
import { defineConfigSection } from '#config/config-section.js';
import type { Env } from '#config/config-section.js';

/** The `observability` section: request log, metrics, traces. */
export class ObservabilityConfig {
  /** Log lines: `json` (one object per line), `text`, or `auto`: JSON unless stdout is a terminal. */
  @IsIn(['auto', 'json', 'text']) logFormat: 'auto' | 'json' | 'text' = 'auto';
  /**
   * The least severe lines written: `error`, `warn`, `info`, or `debug`, which
   * adds what Nest says while it boots (each module and route mapped).
   */
  @IsIn(['error', 'warn', 'info', 'debug']) logLevel: 'error' | 'warn' | 'info' | 'debug' = 'info';
  /** One log line per request. */
  @IsBoolean() requestLog = true;
  /** Prometheus metrics at `GET /metrics`. */
  @IsBoolean() metrics = true;
  /**
   * A second port that serves only the metrics, without an API key, for a
   * scraper on the cluster network (`GET /metrics` on the main port needs a
   * tenant key when keys are set). Unset: no such port.
   */
  @IsOptional() @IsInt() @Min(0) @Max(65535) metricsPort?: number;
  /**
   * An `owner` label (the key's hash, shortened as in the log) on the token
   * counter. Off by default: every owner is a series of its own, so the
   * cardinality is the operator's choice.
   */
  @IsBoolean() metricsOwnerLabel = false;
  /** Distinct `model` label values per process; models past it count as `(other)`, since the model is a client-sent string. */
  @IsInt() @Min(1) @Max(10_000) metricsMaxModels = 32;
  /** OTLP/HTTP traces endpoint (e.g. `http://collector:4318/v1/traces`); tracing is off without it. */
  @IsOptional() @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true }) otlpTracesUrl?: string;
  /** `service.name` of the exported spans. */
  @IsString() serviceName = 'switchyard';
}

/** Nest token for the validated `observability` section. */
export const OBSERVABILITY_SETTINGS = Symbol('OBSERVABILITY_SETTINGS');

/** The OpenTelemetry convention: a base endpoint, to which the signal's path is appended. */
function tracesUrlFromBase(env: Env): Record<string, unknown> | undefined {
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!base || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return undefined;
  return { otlpTracesUrl: `${base.replace(/\/+$/, '')}/v1/traces` };
}

export const observabilityConfigSection = defineConfigSection({
  key: 'observability',
  type: ObservabilityConfig,
  token: OBSERVABILITY_SETTINGS,
  env: [
    { env: 'LOG_FORMAT', path: 'logFormat', kind: 'string' },
    { env: 'LOG_LEVEL', path: 'logLevel', kind: 'string' },
    { env: 'REQUEST_LOG', path: 'requestLog', kind: 'bool' },
    { env: 'METRICS', path: 'metrics', kind: 'bool' },
    { env: 'METRICS_PORT', path: 'metricsPort', kind: 'int' },
    { env: 'METRICS_OWNER_LABEL', path: 'metricsOwnerLabel', kind: 'bool' },
    { env: 'METRICS_MAX_MODELS', path: 'metricsMaxModels', kind: 'int' },
    { env: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', path: 'otlpTracesUrl', kind: 'string' },
    { env: 'OTEL_SERVICE_NAME', path: 'serviceName', kind: 'string' },
  ],
  fromEnv: tracesUrlFromBase,
});

/** The `observability` section of a raw or validated section value (defaults when absent). */
export const parseObservabilitySettings = observabilityConfigSection.parse;
/** The observability settings of a gateway config, for code outside the Nest container. */
export const readObservabilitySettings = observabilityConfigSection.read;
