/** Small things many end-to-end suites need: a client function tool and a stream collector. */

export const weatherTool = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Get current weather for a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  strict: true,
};

/** Drains an SDK stream (or any async iterable) into an array of events. */
export async function collect(stream: AsyncIterable<any>): Promise<any[]> {
  const events: any[] = [];
  for await (const event of stream) events.push(event);
  return events;
}
