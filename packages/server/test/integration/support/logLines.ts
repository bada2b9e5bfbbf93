import { Writable } from 'node:stream';

/** A log destination for `startGatehouse({ logStream })` that parses each JSON line into `lines`. */
export function logLines(lines: Array<Record<string, unknown>>): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
}
