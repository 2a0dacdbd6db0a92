// Sends one body with KEYS unknown top-level keys to the gateway, over HTTP
// (`http URL`) or as a WebSocket `response.create` frame (`ws URL`), from a
// process of its own: building and sending megabytes is not the gateway's
// work, and the garbage it leaves must not land in the heap of the process
// whose /health is being timed. Prints "sent" once the bytes are out, then
// the answer as one JSON line: {status, body} or the first frame.
import http from 'node:http';
import WebSocket from 'ws';

const [mode, url, keys] = [process.argv[2], process.argv[3], Number(process.argv[4])];
const body = { model: 'm', input: '[[say ok]]', store: false };
for (let i = 0; i < keys; i++) body[`unknown_field_${i}`] = i;

if (mode === 'ws') {
  const ws = new WebSocket(url);
  ws.once('open', () => {
    ws.send(JSON.stringify({ type: 'response.create', ...body }), () => process.stdout.write('sent\n'));
  });
  ws.once('message', (data) => {
    process.stdout.write(`${data.toString()}\n`);
    ws.close();
  });
} else {
  const payload = Buffer.from(JSON.stringify(body));
  const target = new URL(url);
  let answered = false;
  const answer = (status, text) => {
    if (answered) return;
    answered = true;
    process.stdout.write(`${JSON.stringify({ status, body: text })}\n`);
  };
  const req = http.request(
    {
      host: target.hostname,
      port: target.port,
      path: target.pathname,
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'application/json', 'content-length': payload.length },
    },
    (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => answer(res.statusCode, text));
    },
  );
  // The gateway may answer and close before the last bytes are taken: that is not a failure to report.
  req.on('error', (err) => setTimeout(() => answer(0, String(err)), 1_000));
  req.end(payload);
  // Handed to the socket: most of it is in flight now.
  process.stdout.write('sent\n');
}
