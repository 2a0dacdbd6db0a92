import { Ajv } from 'ajv';
import { fillSchema } from './schema-filler.js';

const ajv = new Ajv({ strict: false, allErrors: true });

function expectValid(schema: Record<string, unknown>, value: unknown): void {
  const validate = ajv.compile(schema);
  const ok = validate(value);
  if (!ok) throw new Error(`${JSON.stringify(value)} fails: ${ajv.errorsText(validate.errors)}`);
}

// Tool schemas as declared in the recorded vLLM traffic (shared/fixtures/vllm).
const getWeather = {
  type: 'object',
  additionalProperties: false,
  properties: {
    location: { type: 'string', description: 'City name' },
    unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
  },
  required: ['location'],
};
const sendEmail = {
  type: 'object',
  additionalProperties: false,
  properties: {
    body: { type: 'string' },
    cc: { type: 'array', items: { type: 'string' } },
    subject: { type: 'string' },
    to: { type: 'array', items: { type: 'string' } },
  },
  required: ['to', 'subject', 'body'],
};
const getErrorLogs = {
  type: 'object',
  additionalProperties: false,
  properties: {
    job_id: { type: 'string' },
    max_entries: { type: 'integer' },
    severity: { type: 'string', enum: ['WARN', 'ERROR', 'FATAL', 'ALL'] },
  },
  required: ['job_id', 'severity', 'max_entries'],
};
const restartJob = {
  type: 'object',
  additionalProperties: false,
  properties: {
    job_id: { type: 'string' },
    memory_override_gb: { type: 'integer' },
    priority: { type: 'string', enum: ['low', 'normal', 'high'] },
    skip_completed_stages: { type: 'boolean' },
  },
  required: ['job_id', 'memory_override_gb', 'skip_completed_stages', 'priority'],
};

describe('fillSchema', () => {
  it('fills the recorded tools validly, drawing values from the prompt', () => {
    const weather = fillSchema(getWeather, 'What is the weather in San Francisco?');
    expectValid(getWeather, weather);
    expect(weather).toEqual({ location: 'San Francisco' });

    const email = fillSchema(sendEmail, 'Send an email to alice@example.com with subject "Daily Report".');
    expectValid(sendEmail, email);
    expect(email).toMatchObject({ to: ['alice@example.com'], subject: 'Daily Report' });

    const logs = fillSchema(getErrorLogs, 'Pull the error logs for job-382. Use severity ERROR and max 20 entries.');
    expectValid(getErrorLogs, logs);
    expect(logs).toEqual({ job_id: 'job-382', severity: 'WARN', max_entries: 20 });

    const restart = fillSchema(restartJob, 'Restart job-382 with 64 GB memory.');
    expectValid(restartJob, restart);
    expect(restart).toMatchObject({ job_id: 'job-382', memory_override_gb: 64, skip_completed_stages: true, priority: 'low' });
  });

  it('falls back to "example" for strings when the prompt offers nothing', () => {
    expect(fillSchema({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, '')).toEqual({ city: 'example' });
  });

  it('honours const, enum, nested objects, arrays, anyOf/oneOf and $ref', () => {
    const schema = {
      type: 'object',
      $defs: { point: { type: 'object', properties: { x: { type: 'number' }, y: { type: 'number', minimum: 5 } }, required: ['x', 'y'] } },
      properties: {
        kind: { const: 'shape' },
        colour: { enum: ['red', 'green'] },
        origin: { $ref: '#/$defs/point' },
        tags: { type: 'array', items: { type: 'string' }, minItems: 3, uniqueItems: true },
        matrix: { type: 'array', items: { type: 'array', items: { type: 'integer', minimum: 2, maximum: 4 }, minItems: 2 } },
        size: { anyOf: [{ type: 'integer', exclusiveMinimum: 10 }, { type: 'string' }] },
        mode: { oneOf: [{ type: 'boolean' }, { type: 'null' }] },
        nested: {
          type: 'object',
          properties: { inner: { type: 'object', properties: { deep: { type: ['string', 'null'], minLength: 12 } }, required: ['deep'] } },
          required: ['inner'],
        },
        optional: { type: 'string' },
      },
      required: ['kind', 'colour', 'origin', 'tags', 'matrix', 'size', 'mode', 'nested'],
    };
    const value = fillSchema(schema, 'Draw it') as Record<string, any>;
    expectValid(schema, value);
    expect(value).not.toHaveProperty('optional');
    expect(value.kind).toBe('shape');
    expect(value.colour).toBe('red');
    expect(value.tags).toHaveLength(3);
    expect(value.size).toBe(11);
    expect(typeof value.mode).toBe('boolean');
    expect(value.nested.inner.deep.length).toBeGreaterThanOrEqual(12);
  });

  it('fills every declared property when the schema lists no required ones', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' }, b: { type: 'integer', maximum: 0 } } };
    const value = fillSchema(schema, 'anything');
    expectValid(schema, value);
    expect(Object.keys(value as object)).toEqual(['a', 'b']);
  });

  it('stops at a safe depth on recursive schemas', () => {
    const schema = {
      type: 'object',
      $defs: { node: { type: 'object', properties: { child: { $ref: '#/$defs/node' } }, required: ['child'] } },
      properties: { root: { $ref: '#/$defs/node' } },
      required: ['root'],
    };
    expect(() => fillSchema(schema, '')).not.toThrow();
  });

  it('uses the prompt verbatim for free-text fields and formats for emails, urls and dates', () => {
    const schema = {
      type: 'object',
      properties: {
        query: { type: 'string' },
        contact: { type: 'string', format: 'email' },
        site: { type: 'string', format: 'uri' },
        when: { type: 'string', format: 'date-time' },
        code: { type: 'string', maxLength: 3 },
      },
      required: ['query', 'contact', 'site', 'when', 'code'],
    };
    const value = fillSchema(schema, 'latest vLLM release notes') as Record<string, string>;
    expect(value.query).toBe('latest vLLM release notes');
    expect(value.contact).toBe('user@example.com');
    expect(value.site).toBe('https://example.com');
    expect(value.code.length).toBeLessThanOrEqual(3);
    const formats = new Ajv({ strict: false });
    formats
      .addFormat('email', /@/)
      .addFormat('uri', /^https?:/)
      .addFormat('date-time', /T/);
    expect(formats.validate(schema, value)).toBe(true);
  });
});
