/* driver.mjs WASMDIR LIST -- tests/wasm/test_wasm.py's side under Node: every file of LIST (JSON
 * lines: {"path": ..., "options": {limits, policy, sequence}}) through build/wasm/npzstream.mjs in
 * every way a caller can push it, one record a line: "INDEX MODE STATUS PROGRESS JSON" (PROGRESS:
 * "ok" or what was wrong with the onProgress calls; JSON: the report's exact text, which ends the
 * line), or "INDEX MODE E NAME MESSAGE" when the module threw.
 *   whole   Validator: the file in one push, then finish()
 *   1       validate(Uint8Array, {chunkSize: 1})
 *   7       validate(async iterable of 7-byte chunks)
 *   4096    validate(ReadableStream of 4096-byte chunks)
 *   blob    validate(Blob)
 *   read    Validator.readFrom, the reader giving 1 to 13 bytes at a time (never more than asked) */
import fs from 'node:fs';
import path from 'node:path';
import {pathToFileURL} from 'node:url';

const [dir, list] = process.argv.slice(2);
const {validate, Validator} = await import(pathToFileURL(path.resolve(dir, 'npzstream.mjs')).href);

async function* pieces(b, n) {
    for (let off = 0; off < b.length; off += n) yield b.subarray(off, off + n);
}

function stream(b, n) {
    let off = 0;
    return new ReadableStream({
        pull(c) {
            if (off >= b.length) c.close();
            else { c.enqueue(b.slice(off, off + n)); off += n; }
        },
    });
}

/* The onProgress calls must count up to what was read, with the total when the source says it. */
function watcher(total) {
    const seen = [];
    return {
        onProgress: (p) => seen.push(p),
        check(size, report) {
            let last = 0;
            for (const p of seen) {
                if (p.total !== total) return `total ${p.total}, not ${total}`;
                if (!(p.done > last) || p.done > size) return `done ${p.done} after ${last} (size ${size})`;
                last = p.done;
            }
            if (report.ok && last !== size) return `accepted after ${last} of ${size} bytes`;
            if (size > 0 && !seen.length) return 'no progress reported';
            return 'ok';
        },
    };
}

const modes = {
    whole: async (b, o) => {
        const v = await Validator.create(o);
        return [v.push(b) || v.finish(), 'ok'];
    },
    1: async (b, o) => {
        const w = watcher(b.length);
        const r = await validate(b, {...o, chunkSize: 1, onProgress: w.onProgress});
        return [r, w.check(b.length, r)];
    },
    7: async (b, o) => {
        const w = watcher(null);
        const r = await validate(pieces(b, 7), {...o, onProgress: w.onProgress});
        return [r, w.check(b.length, r)];
    },
    4096: async (b, o) => {
        const w = watcher(null);
        const r = await validate(stream(b, 4096), {...o, onProgress: w.onProgress});
        return [r, w.check(b.length, r)];
    },
    read: async (b, o) => {
        const v = await Validator.create(o);
        let off = 0;
        let k = 0;
        const r = v.readFrom((view) => {
            const n = Math.min(view.length, b.length - off, 1 + (k++ * 7) % 13);
            view.set(b.subarray(off, off + n));
            off += n;
            return n;
        });
        return [r, r.ok && off !== b.length ? `accepted after reading ${off} of ${b.length} bytes` : 'ok'];
    },
    blob: async (b, o) => {
        const w = watcher(b.length);
        const r = await validate(new Blob([b]), {...o, onProgress: w.onProgress});
        return [r, w.check(b.length, r)];
    },
};

/* readFrom's reader must return a count of 0 to view.length: anything else throws RangeError
 * and leaves the validator open, to be closed; a line "X readFrom-count WHAT" says how it went */
async function readerMisuse() {
    const bad = [];
    for (const give of [-1, 1.5, NaN, 'x', (1 << 20) + 1]) {
        const v = await Validator.create();
        try {
            v.readFrom(() => give);
            bad.push(`${give}:no-throw`);
        } catch (e) {
            if (!(e instanceof RangeError)) bad.push(`${give}:${e.name}`);
        }
        v.close();
    }
    return bad.length ? bad.join(',') : 'ok';
}

const out = [`X readFrom-count ${await readerMisuse()}\n`];
const files = fs.readFileSync(list, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
for (const [i, f] of files.entries()) {
    const b = new Uint8Array(fs.readFileSync(f.path));
    for (const [name, run] of Object.entries(modes)) {
        try {
            const [r, progress] = await run(b, f.options || {});
            out.push(`${i} ${name} ${r.status} ${progress.replace(/ /g, '_')} ${r.json}`);
        } catch (e) {
            out.push(`${i} ${name} E ${e.name} ${String(e.message).replace(/\n/g, ' ')}\n`);
        }
    }
    if (out.length >= 512) fs.writeSync(1, out.splice(0).join(''));
}
fs.writeSync(1, out.join(''));
