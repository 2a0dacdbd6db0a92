import { loadGatewayConfig } from '#config/config.loader.js';
import { observabilityConfigSection, readObservabilitySettings } from './observability.config-section.js';

const sections = [observabilityConfigSection];
const load = (env: Record<string, string>) => readObservabilitySettings(loadGatewayConfig({ sections, env }));

describe('the observability config section', () => {
  it('reads its settings, with the OpenTelemetry endpoint convention', () => {
    const defaults = load({});
    expect(defaults).toMatchObject({ logFormat: 'auto', requestLog: true, metrics: true, serviceName: 'switchyard' });
    expect(defaults.otlpTracesUrl).toBeUndefined();
    expect(load({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/', LOG_FORMAT: 'json', REQUEST_LOG: 'false', METRICS: 'no', OTEL_SERVICE_NAME: 'gw' })).toMatchObject({
      otlpTracesUrl: 'http://collector:4318/v1/traces',
      logFormat: 'json',
      requestLog: false,
      metrics: false,
      serviceName: 'gw',
    });
    expect(load({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:4318/traces' }).otlpTracesUrl).toBe('http://b:4318/traces');
  });

  it('names the bad setting and its variable', () => {
    expect(() => load({ REQUEST_LOG: 'maybe' })).toThrow(/observability\.requestLog \(REQUEST_LOG\): must be true or false \(got "maybe"\)/);
    expect(() => load({ LOG_FORMAT: 'xml' })).toThrow(/observability\.logFormat \(LOG_FORMAT\): must be one of "auto", "json", "text" \(got "xml"\)/);
    expect(() => load({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'collector' })).toThrow(/observability\.otlpTracesUrl \(OTEL_EXPORTER_OTLP_TRACES_ENDPOINT\)/);
  });

  it('refuses an unknown key with the closest valid name', () => {
    expect(() => loadGatewayConfig({ sections, overrides: { observability: { metric: false } } })).toThrow(
      'unknown config key "observability.metric" (did you mean "observability.metrics"?)',
    );
  });
});
