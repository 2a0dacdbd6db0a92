// Parses a batch input file (JSONL) in a worker thread, off the gateway's event loop: one JSON
// request per line, `{custom_id, method, url, body}`. Answers the requests to store (bodies as JSON
// text) or the errors that fail the batch, each naming its line (1-based) and field, as OpenAI does.
import { parentPort, workerData } from 'node:worker_threads';

const { bytes, endpoint, maxRequests, maxErrors } = workerData;

function parse() {
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  const requests = [];
  const errors = [];
  const seen = new Set();
  let model;
  const fail = (line, code, message, param = null) => {
    if (errors.length < maxErrors) errors.push({ code, line, message, param });
  };
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i].trim();
    if (raw === '') continue;
    const line = i + 1;
    let request;
    try {
      request = JSON.parse(raw);
    } catch {
      fail(line, 'invalid_json_line', 'This line is not valid JSON.');
      continue;
    }
    if (!request || typeof request !== 'object' || Array.isArray(request)) {
      fail(line, 'invalid_request', 'Each line must be a JSON object with custom_id, method, url and body.');
      continue;
    }
    const { custom_id: customId, method, url, body } = request;
    if (typeof customId !== 'string' || customId === '' || customId.length > 512) {
      fail(line, 'invalid_request', 'custom_id must be a non-empty string of at most 512 characters.', 'custom_id');
      continue;
    }
    if (seen.has(customId)) {
      fail(line, 'duplicate_custom_id', `The custom_id '${customId.slice(0, 64)}' appears more than once; each request needs its own.`, 'custom_id');
      continue;
    }
    seen.add(customId);
    if (method !== 'POST') {
      fail(line, 'invalid_method', "method must be 'POST'.", 'method');
      continue;
    }
    if (url !== endpoint) {
      fail(line, 'mismatched_endpoint', `url must be the batch's endpoint, ${endpoint}.`, 'url');
      continue;
    }
    if (!body || typeof body !== 'object' || Array.isArray(body)) {
      fail(line, 'invalid_request', 'body must be a JSON object.', 'body');
      continue;
    }
    if (model === undefined && typeof body.model === 'string') model = body.model;
    if (requests.length >= maxRequests) {
      fail(line, 'too_many_requests', `A batch holds at most ${maxRequests} requests (batches.maxRequestsPerBatch).`);
      break;
    }
    requests.push({ line, customId, body: JSON.stringify(body) });
  }
  if (requests.length === 0 && errors.length === 0) fail(null, 'empty_file', 'The input file holds no requests.');
  return errors.length > 0 ? { errors } : { requests, model };
}

parentPort.postMessage(parse());
