/* wasm-validate.mjs WASMDIR FILE RUNS -- bench/wasm.py's timing under Node: FILE validated RUNS
 * times in one process by build/wasm/npzstream.mjs (the wasm loaded once, as a page or a server
 * keeps it), read 1 MiB at a time and pushed as npzstream-check.mjs does; prints
 * {"seconds": [...], "ok": true} (one time a run, the read included). */
import fs from 'node:fs';
import path from 'node:path';
import {pathToFileURL} from 'node:url';

const [dir, file, runs] = process.argv.slice(2);
const {Validator, ready} = await import(pathToFileURL(path.resolve(dir, 'npzstream.mjs')).href);
await ready();
const buf = Buffer.allocUnsafe(1 << 20);
const seconds = [];
let ok = true;
for (let r = 0; r < Number(runs); r++) {
    const t0 = process.hrtime.bigint();
    const fd = fs.openSync(file, 'r');
    const v = new Validator();
    let rep = null;
    for (let n; !rep && (n = fs.readSync(fd, buf, 0, buf.length, null)) > 0;) rep = v.push(buf.subarray(0, n));
    rep = rep || v.finish();
    fs.closeSync(fd);
    seconds.push(Number(process.hrtime.bigint() - t0) / 1e9);
    ok = ok && rep.ok;
}
console.log(JSON.stringify({seconds, ok}));
