import { encode } from 'gpt-tokenizer';
import { makeDocx, makeFlateBombPdf, makePdf, makeZipBombDocx } from '../../../../test/support/file-search/documents.js';
import { ExtractionPool } from './extraction-pool.js';
import { AUTO_CHUNKING, DEFAULT_LIMITS, ExtractionError } from './ingestion-contract.js';

// The spec's own copy of gpt-tokenizer (Jest's module registry) checks the thread's counts.
const pool = new ExtractionPool({ size: 2, memoryMb: 256, limits: DEFAULT_LIMITS });
afterAll(() => pool.close());

const ONE_CHUNK = { maxChunkSizeTokens: 4096, chunkOverlapTokens: 0, auto: false };
const textOf = async (name: string, bytes: Buffer) => (await pool.prepare(name, bytes, ONE_CHUNK, 60_000)).map((c) => c.text).join('\n');
const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i}`).join(' ');

async function failure(name: string, bytes: Buffer, p = pool, timeoutMs = 60_000): Promise<ExtractionError> {
  const e = await p.prepare(name, bytes, AUTO_CHUNKING, timeoutMs).catch((err) => err);
  expect(e).toBeInstanceOf(ExtractionError);
  return e;
}

describe('extraction, in the ingestion thread', () => {
  it('reads a PDF over several pages, without the page markers', async () => {
    const lines = Array.from({ length: 60 }, (_, i) => `Line ${i} of the pump manual.`);
    const text = await textOf('manual.pdf', await makePdf(lines));
    expect(text).toContain('Line 0 of the pump manual.');
    expect(text).toContain('Line 59 of the pump manual.');
    expect(text).not.toMatch(/-- \d+ of \d+ --/);
  });

  it('recognises a PDF by its bytes whatever its name', async () => {
    expect(await textOf('upload', await makePdf(['Named oddly']))).toContain('Named oddly');
  });

  it('reads a DOCX', async () => {
    expect(await textOf('notes.docx', await makeDocx(['First paragraph.', 'Second paragraph.']))).toBe('First paragraph.\n\nSecond paragraph.');
  });

  it('reads HTML as text, without scripts, styles or markup', async () => {
    const text = await textOf('page.html', Buffer.from('<html><head><style>p{}</style></head><body><p>Hello <b>there</b></p><script>alert(1)</script></body></html>'));
    expect(text).toBe('Hello there');
  });

  it('reads Markdown, plain text and source code as they are', async () => {
    expect(await textOf('a.md', Buffer.from('\uFEFF# Title\n\nBody'))).toBe('# Title\n\nBody');
    expect(await textOf('main.rs', Buffer.from('fn main() {}'))).toBe('fn main() {}');
    expect(await textOf('Makefile', Buffer.from('all:\n\ttrue'))).toBe('all:\n\ttrue');
  });

  it('fails a broken PDF or DOCX as invalid_file, a binary under a text name too, an unknown type as unsupported_file', async () => {
    expect((await failure('x.pdf', Buffer.from('%PDF-1.4 garbage'))).code).toBe('invalid_file');
    expect((await failure('x.docx', Buffer.from('not a zip'))).code).toBe('invalid_file');
    expect((await failure('x.txt', Buffer.from([0x61, 0, 0x62]))).code).toBe('invalid_file');
    const unsupported = await failure('photo.jpeg', Buffer.from([0xff, 0xd8, 0xff]));
    expect(unsupported.code).toBe('unsupported_file');
    expect(unsupported.message).toContain('.jpeg');
  });

  it('refuses HTML nested deeper than the limit as invalid_file, and reads HTML just within it', async () => {
    const nested = (depth: number) => Buffer.from('<div>'.repeat(depth) + 'deep text' + '</div>'.repeat(depth));
    expect(await textOf('ok.html', nested(500))).toBe('deep text');
    const e = await failure('deep.html', nested(500_000));
    expect(e).toMatchObject({ code: 'invalid_file', message: expect.stringContaining('more than 1024 deep') });
    // Unclosed elements count as open, as a browser would nest them.
    expect((await failure('open.html', Buffer.from('<div>'.repeat(5000)))).code).toBe('invalid_file');
  });

  it('refuses a file with more tokens than the limit', async () => {
    const small = new ExtractionPool({ size: 1, memoryMb: 256, limits: { ...DEFAULT_LIMITS, maxTokens: 1000 } });
    try {
      expect(await failure('big.txt', Buffer.from(words(5000)), small)).toMatchObject({ code: 'invalid_file', message: expect.stringContaining('more than 1000 tokens') });
    } finally {
      await small.close();
    }
  });

  it('ends a thread that runs out of heap and fails the file as invalid_file; the next file gets a fresh thread', async () => {
    // 64 MB of a CJK character: ~134 MB as a string, far over the thread's 64 MB heap.
    const tiny = new ExtractionPool({ size: 1, memoryMb: 64, limits: DEFAULT_LIMITS });
    try {
      const e = await failure('huge.txt', Buffer.from('\u4e00'.repeat(20_000_000)), tiny);
      expect(e.message).toMatch(/more than 64 MB|parser/);
      expect((await tiny.prepare('after.txt', Buffer.from('still works'), AUTO_CHUNKING, 60_000)).map((c) => c.text)).toEqual(['still works']);
    } finally {
      await tiny.close();
    }
  }, 60_000);

  it('fails a file past its deadline as invalid_file', async () => {
    const e = await failure('slow.txt', Buffer.from(words(200_000)), pool, 100);
    expect(e.message).toContain('took longer than 100 ms');
  });
});

describe('chunking, in the ingestion thread', () => {
  const chunk = async (text: string, strategy = AUTO_CHUNKING) => (await pool.prepare('t.txt', Buffer.from(text), strategy, 60_000)).map((c) => c.text);

  it('keeps a short text in one chunk; a blank one has none', async () => {
    expect(await chunk('just a few words')).toEqual(['just a few words']);
    expect(await chunk('   ')).toEqual([]);
  });

  it('cuts token windows of the declared size, overlapping by the declared amount', async () => {
    const text = words(2000);
    const total = encode(text).length;
    const strategy = { maxChunkSizeTokens: 200, chunkOverlapTokens: 50, auto: false };
    const chunks = await chunk(text, strategy);
    expect(chunks.length).toBe(Math.ceil((total - 200) / 150) + 1);
    for (const c of chunks) expect(encode(c).length).toBeLessThanOrEqual(200);
    // Consecutive chunks share their overlap: the start of one is inside the previous.
    const tail = chunks[0].split(' ').slice(-5).join(' ');
    expect(chunks[1]).toContain(tail);
    expect(chunks.at(-1)).toContain('word1999');
  });

  it('auto is 800 tokens with 400 of overlap', async () => {
    const chunks = await chunk(words(3000));
    expect(Math.max(...chunks.map((c) => encode(c).length))).toBeLessThanOrEqual(800);
    expect(encode(chunks[0]).length).toBeGreaterThan(790);
  });

  it('keeps every character of a long unbroken run, cut into bounded pieces before tokenizing', async () => {
    const run = 'x'.repeat(100_000);
    const chunks = await chunk(run, { maxChunkSizeTokens: 800, chunkOverlapTokens: 0, auto: false });
    expect(chunks.join('')).toBe(run);
    const cjk = '\u4e00\u4e8c\u{20000}'.repeat(10_000);
    expect((await chunk(cjk, { maxChunkSizeTokens: 800, chunkOverlapTokens: 0, auto: false })).join('')).toBe(cjk);
  });

  it('grows linearly: 10x and 100x the text give about 10x and 100x the chunks', async () => {
    const strategy = { maxChunkSizeTokens: 100, chunkOverlapTokens: 0, auto: false };
    const [one, ten, hundred] = await Promise.all([300, 3000, 30000].map(async (n) => (await chunk(words(n), strategy)).length));
    expect(ten / one).toBeGreaterThan(8);
    expect(hundred / ten).toBeGreaterThan(9);
  });
});

describe('the lexical index entry, cut in the ingestion thread', () => {
  it('gives each chunk its Porter stems with counts and its length, stop words left out', async () => {
    const [c] = await pool.prepare('t.txt', Buffer.from('The refunds are refunded: refunding a REFUND of the credits'), AUTO_CHUNKING, 60_000);
    expect(c.terms.length).toBe(5);
    expect(new Map(c.terms.counts)).toEqual(
      new Map([
        ['refund', 4],
        ['credit', 1],
      ]),
    );
  });

  it('runs its threads at the nice value asked for, leaving the gateway thread as it was', async () => {
    const { getPriority } = await import('node:os');
    const before = getPriority();
    const nice = new ExtractionPool({ size: 1, memoryMb: 256, limits: DEFAULT_LIMITS, niceness: 10 });
    try {
      await nice.prepare('a.txt', Buffer.from('background work'), AUTO_CHUNKING, 60_000);
      // What the thread itself reads back after lowering its priority.
      expect(nice.threadNiceness).toBe(10);
      expect(getPriority()).toBe(before);
    } finally {
      await nice.close();
    }
  });
});

describe('bounded inflation: a flate bomb fails before it is parsed', () => {
  const CAP = 1024 * 1024;
  const bounded = new ExtractionPool({ size: 1, memoryMb: 256, limits: { ...DEFAULT_LIMITS, maxInflatedBytes: CAP } });
  afterAll(() => bounded.close());

  it('refuses a PDF whose page stream inflates past the cap as invalid_file, at 10x and 100x the inflation too', async () => {
    for (const inflated of [2, 20, 200].map((mb) => mb * 1024 * 1024)) {
      const bomb = await makeFlateBombPdf(inflated);
      // Small on disk: the ratio is the attack.
      expect(bomb.length).toBeLessThan(inflated / 200);
      const e = await failure('bomb.pdf', bomb, bounded);
      expect(e).toMatchObject({ code: 'invalid_file', message: expect.stringContaining(`inflates past ${CAP} bytes`) });
    }
  }, 60_000);

  it('refuses a DOCX whose document part inflates past the cap, and reads ordinary PDFs and DOCX files under it', async () => {
    const e = await failure('bomb.docx', await makeZipBombDocx(20 * 1024 * 1024), bounded);
    expect(e).toMatchObject({ code: 'invalid_file', message: expect.stringContaining('inflates past') });
    const pdf = await bounded.prepare('ok.pdf', await makePdf(['Within the bound.']), AUTO_CHUNKING, 60_000);
    expect(pdf.map((c) => c.text).join('')).toContain('Within the bound.');
    const docx = await bounded.prepare('ok.docx', await makeDocx(['Also within it.']), AUTO_CHUNKING, 60_000);
    expect(docx.map((c) => c.text).join('')).toBe('Also within it.');
  }, 60_000);

  it('the thread that refused a bomb takes the next file at once', async () => {
    const order: string[] = [];
    const bomb = bounded.prepare('bomb.pdf', await makeFlateBombPdf(50 * 1024 * 1024), AUTO_CHUNKING, 60_000, 'a').catch((err: ExtractionError) => order.push(`bomb:${err.code}`));
    const small = bounded.prepare('note.txt', Buffer.from('fourteen bytes'), AUTO_CHUNKING, 60_000, 'b').then((c) => order.push(`note:${c[0].text}`));
    await Promise.all([bomb, small]);
    expect(order).toEqual(['bomb:invalid_file', 'note:fourteen bytes']);
  }, 60_000);
});

describe('fair shares of the extraction threads', () => {
  const slow = () => Buffer.from(words(60_000));

  it("keeps a thread for another owner: B's one file finishes before any of A's backlog", async () => {
    const pool2 = new ExtractionPool({ size: 2, memoryMb: 256, limits: DEFAULT_LIMITS });
    try {
      expect(pool2.threadsPerOwner).toBe(1);
      const order: string[] = [];
      const a = Array.from({ length: 4 }, (_, i) => pool2.prepare(`a${i}.txt`, slow(), AUTO_CHUNKING, 60_000, 'tenant-a').then(() => order.push(`a${i}`)));
      const b = pool2.prepare('b.txt', Buffer.from('fourteen bytes'), AUTO_CHUNKING, 60_000, 'tenant-b').then(() => order.push('b'));
      await Promise.all([...a, b]);
      expect(order[0]).toBe('b');
      expect(order.slice(1)).toEqual(['a0', 'a1', 'a2', 'a3']);
    } finally {
      await pool2.close();
    }
  }, 120_000);

  it('serves owners in turn, one job each, whatever order their backlogs arrived in', async () => {
    const one = new ExtractionPool({ size: 1, memoryMb: 256, limits: DEFAULT_LIMITS });
    try {
      const order: string[] = [];
      const job = (owner: string, i: number) => one.prepare(`${owner}${i}.txt`, Buffer.from(`${owner} ${i}`), AUTO_CHUNKING, 60_000, owner).then(() => order.push(`${owner}${i}`));
      const all = [...[0, 1, 2].map((i) => job('a', i)), ...[0, 1, 2].map((i) => job('c', i)), job('d', 0)];
      await Promise.all(all);
      expect(order).toEqual(['a0', 'c0', 'd0', 'a1', 'c1', 'a2', 'c2']);
    } finally {
      await one.close();
    }
  }, 60_000);

  it('lets one owner use every thread when threadsPerOwner says so', async () => {
    const wide = new ExtractionPool({ size: 2, threadsPerOwner: 2, memoryMb: 256, limits: DEFAULT_LIMITS });
    try {
      const jobs = [0, 1].map((i) => wide.prepare(`w${i}.txt`, slow(), AUTO_CHUNKING, 60_000, 'solo'));
      // Both started: nothing is left waiting for a thread.
      await new Promise((r) => setTimeout(r, 50));
      expect(wide.waiting).toBe(0);
      await Promise.all(jobs);
    } finally {
      await wide.close();
    }
  }, 60_000);
});

describe('idle threads are released', () => {
  /** Polls `threads` until it equals `n`; a bound, not a speed: the idle time is 200 ms. */
  async function threadsReach(p: ExtractionPool, n: number, withinMs = 20_000): Promise<number> {
    const until = Date.now() + withinMs;
    while (p.threads !== n && Date.now() < until) await new Promise((r) => setTimeout(r, 25));
    return p.threads;
  }

  it('ends an extraction thread after idleMs without a job, and the next job starts a fresh one', async () => {
    const brief = new ExtractionPool({ size: 2, memoryMb: 256, limits: DEFAULT_LIMITS, idleMs: 200 });
    try {
      expect(brief.threads).toBe(0);
      const first = await brief.prepare('manual.pdf', await makePdf(['Pump manual, page one.']), ONE_CHUNK, 60_000);
      expect(first[0].text).toContain('Pump manual');
      // The thread is still there right after its job (its idle time runs from now).
      expect(brief.threads).toBe(1);
      expect(await threadsReach(brief, 0)).toBe(0);
      const again = await brief.prepare('note.txt', Buffer.from('second job'), ONE_CHUNK, 60_000);
      expect(again[0].text).toBe('second job');
      expect(brief.threads).toBe(1);
      expect(await threadsReach(brief, 0)).toBe(0);
    } finally {
      await brief.close();
    }
  }, 60_000);

  it('ends the chunk writer with the last extraction thread', async () => {
    const writing = new ExtractionPool({ size: 1, memoryMb: 256, limits: DEFAULT_LIMITS, idleMs: 200, writer: true });
    try {
      await writing.prepare('a.txt', Buffer.from('one'), ONE_CHUNK, 60_000);
      expect(writing.threads).toBe(2);
      expect(await threadsReach(writing, 0)).toBe(0);
      // A fresh writer and thread pair: the job after the release works.
      expect((await writing.prepare('b.txt', Buffer.from('two'), ONE_CHUNK, 60_000))[0].text).toBe('two');
      expect(writing.threads).toBe(2);
    } finally {
      await writing.close();
    }
  }, 60_000);

  it('keeps threads without idleMs', async () => {
    const kept = new ExtractionPool({ size: 1, memoryMb: 256, limits: DEFAULT_LIMITS });
    try {
      await kept.prepare('a.txt', Buffer.from('one'), ONE_CHUNK, 60_000);
      await new Promise((r) => setTimeout(r, 400));
      expect(kept.threads).toBe(1);
    } finally {
      await kept.close();
    }
  }, 60_000);
});
