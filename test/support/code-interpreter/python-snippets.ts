/**
 * Python programs the code interpreter suites run. Pyodide ships no
 * matplotlib, so the PNG is drawn with the standard library alone (zlib +
 * struct): a real image file that any decoder reads.
 */
export const WRITE_PNG = String.raw`
import struct, zlib
w, h = 16, 8
rows = b''.join(b'\x00' + b''.join(bytes((x * 16 % 256, y * 32 % 256, 128)) for x in range(w)) for y in range(h))
def chunk(kind, data):
    c = kind + data
    return struct.pack('>I', len(data)) + c + struct.pack('>I', zlib.crc32(c) & 0xffffffff)
png = b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0)) + chunk(b'IDAT', zlib.compress(rows)) + chunk(b'IEND', b'')
with open('/mnt/data/gradient.png', 'wb') as f:
    f.write(png)
print('wrote', len(png), 'bytes')
`;

export const WRITE_CSV = String.raw`
import csv
with open('/mnt/data/squares.csv', 'w', newline='') as f:
    wr = csv.writer(f)
    wr.writerow(['n', 'square'])
    for n in range(1, 6):
        wr.writerow([n, n * n])
total = sum(n * n for n in range(1, 6))
print('total', total)
`;

export const READ_CSV = String.raw`
import csv
rows = list(csv.DictReader(open('/mnt/data/squares.csv')))
print('rows', len(rows), 'last', rows[-1]['square'], 'total still', total)
`;
