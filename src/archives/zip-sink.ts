import { once } from 'node:events';
import { createWriteStream, WriteStream } from 'node:fs';
import { PassThrough, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import yazl from 'yazl';

/**
 * A ZIP written to a file one entry at a time, in bounded memory: each entry is a stream yazl
 * reads when its turn comes, and `add` resolves once yazl has read all of it, so the next entry
 * is not even produced before then. yazl writes ZIP64 where sizes need it (an archive past
 * 4 GB stays readable), and a central directory that every unzip tool reads.
 */
export class ZipSink {
  private readonly zip = new yazl.ZipFile();
  private readonly written: Promise<void>;
  private failed: unknown = null;

  constructor(path: string) {
    this.written = pipeline(this.zip.outputStream, createWriteStream(path, { mode: 0o600 }));
    this.written.catch((err: unknown) => {
      this.failed = err;
    });
  }

  /** Adds an entry from text or bytes, or from a stream of them. */
  async add(
    name: string,
    source: string | Buffer | AsyncIterable<string | Buffer> | Readable,
    options: { compress: boolean; mtime: Date },
  ): Promise<void> {
    if (this.failed) throw this.failed;
    const entry = new PassThrough();
    const ended = once(entry, 'end');
    this.zip.addReadStream(entry, name, { compress: options.compress, mtime: options.mtime });
    if (typeof source === 'string' || Buffer.isBuffer(source)) {
      entry.end(source);
    } else {
      for await (const chunk of source) {
        if (!entry.write(chunk)) await Promise.race([once(entry, 'drain'), this.written]);
        if (this.failed) throw this.failed;
      }
      entry.end();
    }
    await Promise.race([ended, this.written.then(() => undefined)]);
    if (this.failed) throw this.failed;
  }

  /** Writes the central directory and closes the file. */
  async finish(): Promise<void> {
    this.zip.end();
    await this.written;
  }
}

/** A text file written line by line with back-pressure, to be added to the ZIP whole later. */
export class Spool {
  private readonly out: WriteStream;
  lines = 0;

  constructor(readonly path: string) {
    this.out = createWriteStream(path, { mode: 0o600 });
  }

  async write(text: string): Promise<void> {
    if (!this.out.write(text)) await once(this.out, 'drain');
  }

  async line(value: unknown): Promise<void> {
    this.lines++;
    await this.write(`${JSON.stringify(value)}\n`);
  }

  async close(): Promise<void> {
    if (this.out.writableFinished) return;
    const finished = once(this.out, 'finish');
    this.out.end();
    await finished;
  }
}
