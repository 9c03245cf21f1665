/* npzstream.js -- the JavaScript API of the WebAssembly build (build/wasm/npzstream.mjs is the
 * compiled core followed by this file).  The verdict is the C library's, compiled to wasm with
 * Debian's zlib; the report is printed by the command line's own code (wasm/shim.c), so it is
 * byte for byte what `npzstream check --json FILE` prints.
 *
 *   const report = await validate(file, {limits, policy, onProgress});  // report.ok, .members, .error
 *   const v = await Validator.create({limits, policy}); v.push(chunk) ... v.finish();
 *   v.readFrom((view) => fs.readSync(fd, view));  // Node: read into the wasm's memory, no copy
 *
 * `npzsCore` (the emscripten factory) is defined before this file by the build. */
/* global npzsCore */

const READ = 1 << 20; /* bytes read from a Blob or an ArrayBuffer at a time */
const READ_INTO = 256 << 10; /* readFrom's reads: the native command's size, a buffer the L2 cache holds */
let loading = null;
let core = null;

/* Load and instantiate the wasm (once); resolves when `new Validator()` can be called. */
export function ready() {
    if (!loading)
        loading = npzsCore().then((m) => {
            core = m;
            return m;
        });
    return loading;
}

/* A malformed policy: where (line, column, offset in the text; the field, as "members.w.shape[1]")
 * and what. */
export class PolicyError extends Error {
    constructor(info) {
        super(info.line ? `policy:${info.line}:${info.column}: ${info.path}${info.path ? ': ' : ''}${info.message}`
                        : `policy: ${info.message}`);
        this.name = 'PolicyError';
        Object.assign(this, info);
    }
}

/* What this build cannot do (SHA-256: the wasm build has no OpenSSL): `rule` is the library's. */
export class UnsupportedError extends Error {
    constructor(message, rule) {
        super(message);
        this.name = 'UnsupportedError';
        this.rule = rule;
    }
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/* A policy's bytes, as the library's compiler takes them (it reads UTF-8 itself, and refuses what
 * the native command refuses: invalid UTF-8, a BOM, NUL, ...): bytes as they are (a file's
 * contents: never decoded here), a string as UTF-8, an object as its JSON text.  A string that is
 * not well-formed Unicode (a lone surrogate) has no UTF-8 form: refused, never replaced. */
function policyBytes(policy) {
    if (policy instanceof Uint8Array) return policy;
    if (policy instanceof ArrayBuffer) return new Uint8Array(policy);
    if (ArrayBuffer.isView(policy)) return new Uint8Array(policy.buffer, policy.byteOffset, policy.byteLength);
    const text = typeof policy === 'string' ? policy : JSON.stringify(policy);
    if (typeof text !== 'string') throw new TypeError('npzstream: a policy is its JSON text (bytes or a string) or an object');
    if (/\p{Surrogate}/u.test(text))
        throw new TypeError('npzstream: the policy text has a lone surrogate (not Unicode): give its bytes, or a well-formed string');
    return encoder.encode(text);
}

/* fn(pointer, length) over a copy of the bytes b in the wasm's memory, NUL-terminated (a C string
 * when b has no NUL), freed after. */
function withBytes(m, b, fn) {
    const p = m._malloc(b.length + 1);
    if (!p) throw new Error('npzstream: out of memory');
    try {
        m.HEAPU8.set(b, p);
        m.HEAPU8[p + b.length] = 0;
        return fn(p, b.length);
    } finally {
        m._free(p);
    }
}

function withCString(m, s, fn) {
    return withBytes(m, encoder.encode(s), fn);
}

/* A size as the command line takes it: digits, then nothing or one suffix of K M G T P E (powers
 * of 1000) or Ki Mi Gi Ti Pi Ei (powers of 1024); or a non-negative integer (number or bigint). */
export function parseSize(v) {
    if (typeof v === 'bigint') {
        if (v < 0n) throw new RangeError(`npzstream: a size is not negative: ${v}`);
        return v;
    }
    if (typeof v === 'number') {
        if (!Number.isSafeInteger(v) || v < 0) throw new RangeError(`npzstream: not a size: ${v}`);
        return BigInt(v);
    }
    if (typeof v === 'boolean') return v ? 1n : 0n; /* lenient flags */
    const m = /^([0-9]+)(?:([KMGTPE])(i?))?$/.exec(String(v));
    if (!m) throw new RangeError(`npzstream: not a size (digits, optionally K M G or Ki Mi Gi ...): ${v}`);
    const k = m[2] ? 'KMGTPE'.indexOf(m[2]) + 1 : 0;
    return BigInt(m[1]) * (m[3] ? 1024n : 1000n) ** BigInt(k);
}

function readText(m, h) {
    const p = m._nzs_take(h);
    const n = m._nzs_taken(h);
    return decoder.decode(m.HEAPU8.subarray(p, p + n));
}

const live = typeof FinalizationRegistry === 'function' ? new FinalizationRegistry(([m, h]) => m._nzs_free(h)) : null;

/* One input, pushed as it arrives.  push(chunk) returns null while the verdict is open, or the
 * report as soon as it is known (a rejection can come early; later chunks are then not read);
 * finish() declares the end of the input and returns the report.  Options:
 *   limits: {max_total_bytes: '512Mi', max_members: 100, lenient_npy_trailing: true, ...} (the
 *           fields of npzs_limits, as the Python package names them; sizes as the CLI takes them)
 *   policy: a policy (README.md, "Policies"): its bytes (a Uint8Array, as read from a file: the
 *           library reads them as the native command does), its text (a well-formed string), or
 *           an object
 *   hash:   true asks for SHA-256: refused here (UnsupportedError), the wasm build has none
 *   sequence: true reads .npy arrays back to back (repeated np.save to one stream; --sequence)
 *   text:   true gives the text of `npzstream check FILE` (report.text) instead of the JSON
 *   label:  the file's name in that text ("-" by default): a string, or its bytes as the file
 *           system has them (said as the native command says them) */
export class Validator {
    static async create(options = {}) {
        await ready();
        return new Validator(options);
    }

    #m;
    #h;
    #report = null;
    #text;

    constructor(options = {}) {
        const m = core;
        if (!m) throw new Error('npzstream: the wasm is not loaded yet: use await Validator.create(...) or await ready()');
        const h = m._nzs_new();
        if (!h) throw new Error('npzstream: out of memory');
        try {
            for (const [k, v] of Object.entries(options.limits || {})) {
                const rc = withCString(m, k, (kp) => withCString(m, parseSize(v).toString(), (vp) => m._nzs_set(h, kp, vp)));
                if (rc === -1) throw Object.assign(new RangeError(`npzstream: unknown limit ${k}`), {field: k});
                if (rc !== 0) throw Object.assign(new RangeError(`npzstream: ${k} ${v}: out of the field's range`), {field: k});
            }
            if (options.policy !== undefined && options.policy !== null) {
                if (withBytes(m, policyBytes(options.policy), (p, n) => m._nzs_policy(h, p, n)) !== 0) {
                    const fault = readText(m, h);
                    throw fault ? new PolicyError(JSON.parse(fault)) : new Error('npzstream: out of memory');
                }
            }
            this.#text = !!options.text;
            const flags = (this.#text ? 1 : 0) | (options.hash ? 2 : 0) | (options.sequence ? 4 : 0);
            const label = options.label ?? '-';
            const rc = withBytes(m, typeof label === 'string' ? encoder.encode(label) : bytesOf(label), (lp) => m._nzs_start(h, flags, lp));
            if (rc === -1) {
                const bad = readText(m, h);
                throw Object.assign(new RangeError(bad ? `npzstream: ${bad}: out of the range the library accepts`
                                                       : 'npzstream: sequence does not go with lenient_npy_trailing'),
                                    {field: bad || 'sequence'});
            }
            if (rc === -3)
                throw new UnsupportedError('npzstream: SHA-256 is not available in the WebAssembly build (it has no ' +
                                           'OpenSSL): hash on the server', 'CALL.hash');
            if (rc !== 0) throw new Error('npzstream: out of memory');
        } catch (e) {
            m._nzs_free(h);
            throw e;
        }
        this.#m = m;
        this.#h = h;
        this.bytes = 0; /* bytes pushed */
        live?.register(this, [m, h], this);
    }

    /* Input bytes the parser has taken so far. */
    get consumed() {
        return this.#h ? this.#m._nzs_consumed(this.#h) : this.bytes;
    }

    /* The report once the verdict is known, else null. */
    get report() {
        return this.#report;
    }

    push(chunk) {
        if (this.#report) return this.#report;
        if (!this.#h) throw new Error('npzstream: push after close()');
        const b = bytesOf(chunk);
        const m = this.#m;
        const h = this.#h;
        const at = m._nzs_in(h);
        const cap = m._nzs_in_cap();
        for (let off = 0; off < b.length;) {
            const n = Math.min(cap, b.length - off);
            m.HEAPU8.set(b.subarray(off, off + n), at);
            off += n;
            this.bytes += n;
            const rc = m._nzs_push(h, n);
            if (rc >= 0) return this.#settle(rc);
        }
        return null;
    }

    /* The whole input read straight into the validator's buffer in the wasm's memory (no copy,
     * as push() makes): read(view) writes up to view.length bytes at the start of view and
     * returns how many, 0 at the end of the input; Node's `(view) => fs.readSync(fd, view)` is
     * one.  Returns the report: reading stops as soon as the verdict is known, and finish() is
     * called at the end.  What read() throws goes to the caller (then close() the validator). */
    readFrom(read) {
        if (this.#report) return this.#report;
        if (!this.#h) throw new Error('npzstream: readFrom after close()');
        const m = this.#m;
        const h = this.#h;
        const at = m._nzs_in(h);
        const cap = Math.min(m._nzs_in_cap(), READ_INTO);
        for (;;) {
            /* a new view each time: the wasm's memory may have grown (and moved) in a push */
            const n = read(m.HEAPU8.subarray(at, at + cap));
            if (!Number.isInteger(n) || n < 0 || n > cap)
                throw new RangeError(`npzstream: readFrom: read() returned ${n}, not a count of 0 to ${cap} bytes`);
            if (n === 0) return this.finish();
            this.bytes += n;
            const rc = m._nzs_push(h, n);
            if (rc >= 0) return this.#settle(rc);
        }
    }

    finish() {
        if (this.#report) return this.#report;
        if (!this.#h) throw new Error('npzstream: finish after close()');
        return this.#settle(this.#m._nzs_finish(this.#h));
    }

    /* Release the wasm memory of this validation (finish() and a verdict do it). */
    close() {
        if (!this.#h) return;
        live?.unregister(this);
        this.#m._nzs_free(this.#h);
        this.#h = 0;
    }

    #settle(status) {
        const out = readText(this.#m, this.#h);
        this.close();
        if (!out) throw new Error('npzstream: out of memory'); /* no verdict was printed */
        const report = this.#text ? {ok: status === 0, text: out} : JSON.parse(out);
        /* the exact bytes of `npzstream check --json`, and its exit status (0, 1, 2) */
        Object.defineProperty(report, 'json', {value: this.#text ? null : out});
        Object.defineProperty(report, 'status', {value: status});
        this.#report = report;
        return report;
    }
}

function bytesOf(chunk) {
    if (chunk instanceof Uint8Array) return chunk;
    if (chunk instanceof ArrayBuffer) return new Uint8Array(chunk);
    if (ArrayBuffer.isView(chunk)) return new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    throw new TypeError('npzstream: a chunk is a Uint8Array, an ArrayBuffer or a typed array');
}

function isBlob(s) {
    return typeof Blob !== 'undefined' && s instanceof Blob;
}

/* The total size when the source knows it (a Blob, a buffer), else null. */
function totalOf(source) {
    if (isBlob(source)) return source.size;
    if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) return source.byteLength;
    return null;
}

/* The source's bytes as chunks, read one at a time (never the whole source at once). */
async function* chunksOf(source) {
    if (isBlob(source)) {
        for (let off = 0; off < source.size; off += READ)
            yield new Uint8Array(await source.slice(off, off + READ).arrayBuffer());
    } else if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) {
        const b = bytesOf(source);
        for (let off = 0; off < b.length; off += READ) yield b.subarray(off, off + READ);
    } else if (source && typeof source.getReader === 'function') {
        const reader = source.getReader();
        let ended = false;
        try {
            for (;;) {
                const {done, value} = await reader.read();
                if (done) {
                    ended = true;
                    return;
                }
                yield value;
            }
        } finally {
            if (!ended) reader.cancel().catch(() => {}); /* the verdict came before the end */
            reader.releaseLock();
        }
    } else if (source && (typeof source[Symbol.asyncIterator] === 'function' || typeof source[Symbol.iterator] === 'function')) {
        if (typeof source === 'string') throw new TypeError('npzstream: a source is bytes, not a string');
        for await (const chunk of source) yield chunk;
    } else {
        throw new TypeError('npzstream: a source is a Blob or File, a ReadableStream, an ArrayBuffer or typed array, ' +
                            'or an (async) iterable of byte chunks');
    }
}

/* Validate a whole source: a File or Blob, a ReadableStream of bytes, an ArrayBuffer or
 * Uint8Array, or an async iterable of chunks.  Options: those of Validator, and
 *   onProgress({done, total}): after each chunk (total null when the source does not say)
 *   chunkSize: push at most this many bytes at a time (the report never depends on it)
 *   signal:    an AbortSignal
 * Returns the report of `npzstream check --json` (report.json: its exact text). */
export async function validate(source, options = {}) {
    const v = await Validator.create(options);
    const total = totalOf(source);
    const step = options.chunkSize > 0 ? options.chunkSize : Infinity;
    const progress = options.onProgress;
    let done = 0;
    try {
        for await (const chunk of chunksOf(source)) {
            options.signal?.throwIfAborted();
            const b = bytesOf(chunk);
            let report = null;
            for (let off = 0; off < b.length && !report; off += step)
                report = v.push(step >= b.length ? b : b.subarray(off, off + step));
            done += b.length;
            if (progress) progress({done, total});
            if (report) return report;
        }
        return v.finish();
    } finally {
        v.close();
    }
}

/* What a user can do about a rejection by rule id (the library's hint), and the rule's message. */
export function ruleHint(rule) {
    if (!core) throw new Error('npzstream: await ready() first');
    const p = withCString(core, rule, (rp) => core._nzs_rule_hint(rp));
    return p ? core.UTF8ToString(p) : null;
}

export function ruleMessage(rule) {
    if (!core) throw new Error('npzstream: await ready() first');
    const p = withCString(core, rule, (rp) => core._nzs_rule_message(rp));
    return p ? core.UTF8ToString(p) : null;
}

/* The library's version (NPZS_VERSION, "0.8.0"). */
export function version() {
    if (!core) throw new Error('npzstream: await ready() first');
    const v = core._nzs_version();
    return `${v >> 16}.${(v >> 8) & 255}.${v & 255}`;
}

/* Bytes of the wasm's memory now (it grows with what the parsers hold, bounded by their limits,
 * and never shrinks). */
export function memoryBytes() {
    if (!core) throw new Error('npzstream: await ready() first');
    return core.HEAPU8.length;
}

/* Whether this build computes SHA-256: false for the wasm build (no OpenSSL). */
export function sha256Available() {
    if (!core) throw new Error('npzstream: await ready() first');
    return core._nzs_sha256_built() !== 0;
}
