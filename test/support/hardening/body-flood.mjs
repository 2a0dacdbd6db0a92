// Sends COUNT POSTs of SIZE bytes at once to URL, from a process of its own so that
// the uploads' CPU is not counted against the gateway under test. Prints "sending"
// once every request is under way, then the statuses as JSON (0 for a connection
// closed mid-upload).
import http from 'node:http';

const [url, count, size] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4])];
const target = new URL(url);
const body = Buffer.alloc(size, 'a');
body.write('{"model":"m","input":"', 0);

const one = () =>
  new Promise((resolve) => {
    const req = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': body.length },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.setTimeout(30_000, () => req.destroy());
    req.on('error', () => resolve(0));
    req.end(body);
  });

const pending = Array.from({ length: count }, one);
process.stdout.write('sending\n');
const statuses = await Promise.all(pending);
process.stdout.write(JSON.stringify(statuses) + '\n');
