/* wasm-validate.mjs WASMDIR FILE RUNS -- bench/wasm.py's timing under Node: FILE validated RUNS
 * times in one process by build/wasm/npzstream.mjs (the wasm loaded once, as a page or a server
 * keeps it), read as npzstream-check.mjs reads a file (Validator.readFrom: 256 KiB reads straight
 * into the wasm's memory); prints
 * {"seconds": [...], "ok": true} (one time a run, the read included). */
import fs from 'node:fs';
import path from 'node:path';
import {pathToFileURL} from 'node:url';

const [dir, file, runs] = process.argv.slice(2);
const {Validator, ready} = await import(pathToFileURL(path.resolve(dir, 'npzstream.mjs')).href);
await ready();
const seconds = [];
let ok = true;
for (let r = 0; r < Number(runs); r++) {
    const t0 = process.hrtime.bigint();
    const fd = fs.openSync(file, 'r');
    const v = new Validator();
    const rep = v.readFrom((view) => fs.readSync(fd, view, 0, view.length, null));
    fs.closeSync(fd);
    seconds.push(Number(process.hrtime.bigint() - t0) / 1e9);
    ok = ok && rep.ok;
}
console.log(JSON.stringify({seconds, ok}));
