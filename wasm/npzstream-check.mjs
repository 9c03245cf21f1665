#!/usr/bin/env node
/* npzstream-check.mjs [--json] [--policy FILE] [--sequence] [--feed N] [LIMITS] [FILE|-]...
 *
 * The WebAssembly build as a command, under Node.js: for each FILE, exactly what
 * `npzstream check --json FILE` prints (with --json; else what `npzstream check FILE` prints),
 * one file after the other.  Exit status as the native command's: 0 all accepted, 1 any rejected,
 * 2 usage or I/O error (the worst of all files).  LIMITS are the native flags (--max-total-bytes
 * 512Mi, --max-members=100, --lenient-npy-trailing, ...). */
import fs from 'node:fs';
import {Validator, PolicyError, UnsupportedError, parseSize, ready} from './npzstream.mjs';

const LIMITS = {
    '--max-header-size': 'max_header_size', '--max-ndim': 'max_ndim', '--max-fields': 'max_fields',
    '--max-depth': 'max_depth', '--max-members': 'max_members', '--max-name-len': 'max_name_len',
    '--max-extra-len': 'max_extra_len', '--max-total-bytes': 'max_total_bytes',
    '--inflate-window': 'inflate_window', '--max-memory': 'max_memory',
};
const WIDE = new Set(['--max-header-size', '--max-total-bytes', '--max-memory']); /* 64-bit fields */
const LENIENT = {
    '--lenient-npy-trailing': 'lenient_npy_trailing', '--lenient-header-newline': 'lenient_header_newline',
    '--lenient-fast-inflate': 'lenient_fast_inflate', '--inflate-zlib': 'inflate_zlib',
};
/* the C library's strerror texts for what open() and read() report (the native command prints them) */
const STRERROR = {
    ENOENT: 'No such file or directory', EACCES: 'Permission denied', EISDIR: 'Is a directory',
    ENOTDIR: 'Not a directory', ELOOP: 'Too many levels of symbolic links', ENAMETOOLONG: 'File name too long',
    EMFILE: 'Too many open files', ENFILE: 'Too many open files in system', EIO: 'Input/output error',
    ENXIO: 'No such device or address', EPERM: 'Operation not permitted', EINVAL: 'Invalid argument',
    ENODEV: 'No such device', EOVERFLOW: 'Value too large for defined data type',
};
/* what the native command adds to a read of a directory (cli/cli.h, CLI_TREE_HINT): its words */
const TREE_HINT = " (to read a tree: npzstream scan -r DIR, or find DIR -name '*.np[yz]' -print0 | npzstream check " +
    '--files-from - -0)';
const readFailure = (e) => `read: ${STRERROR[e.code] || e.message}${e.code === 'EISDIR' ? TREE_HINT : ''}`;
const READ_SIZE = 256 << 10;
const USAGE = 'usage: npzstream-check.mjs [--json] [--policy FILE] [--sequence] [--feed N] [LIMITS] [FILE|-]...\n' +
    'Validates NumPy .npy or .npz files with the WebAssembly build: prints for each FILE what\n' +
    '`npzstream check [--json] FILE` prints.  Exit status: 0 accepted, 1 rejected, 2 usage or I/O error.\n';

function write(fd, s) {
    const b = Buffer.from(s, 'utf8');
    for (let off = 0; off < b.length;) {
        try {
            off += fs.writeSync(fd, b, off);
        } catch (e) {
            if (e.code !== 'EAGAIN') throw e;
        }
    }
}

/* The arguments as bytes: Node decodes its command line as UTF-8, turning a name that is not
 * (a file called caf\xe9.npz) into another name (caf\ufffd.npz), which may be another file.  On
 * Linux /proc/self/cmdline has them as they were given; its last arguments are the command's,
 * each of which decodes to the string Node gives (else the strings are all there is). */
function rawArgs(args) {
    let raw;
    try {
        raw = fs.readFileSync('/proc/self/cmdline');
    } catch {
        return args.map((s) => Buffer.from(s, 'utf8'));
    }
    const parts = [];
    for (let at = 0; at < raw.length;) {
        const end = raw.indexOf(0, at);
        parts.push(raw.subarray(at, end < 0 ? raw.length : end));
        at = end < 0 ? raw.length : end + 1;
    }
    const mine = parts.slice(parts.length - args.length);
    const same = parts.length >= args.length && mine.every((b, i) => new TextDecoder().decode(b) === args[i]);
    return same ? mine : args.map((s) => Buffer.from(s, 'utf8'));
}

function usageError(msg) {
    write(2, `npzstream: ${msg}\n`);
    process.exit(2);
}

function parseArgs(argv) {
    const a = {json: false, sequence: false, feed: 0, limits: {}, policy: null, files: []};
    const raw = rawArgs(argv);
    let only = false;
    for (let i = 0; i < argv.length; i++) {
        const s = argv[i];
        if (only || s[0] !== '-' || s === '-') { a.files.push({name: s, bytes: raw[i]}); continue; }
        if (s === '--') { only = true; continue; }
        if (s === '--json') { a.json = true; continue; }
        if (s === '--sequence') { a.sequence = true; continue; }
        if (s === '-h' || s === '--help') { write(1, USAGE); process.exit(0); }
        if (s === '--sha256') usageError('--sha256: the WebAssembly build has no SHA-256 (it has no OpenSSL)');
        if (LENIENT[s]) { a.limits[LENIENT[s]] = true; continue; }
        const eq = s.indexOf('=');
        const flag = eq > 0 ? s.slice(0, eq) : s;
        if (!(flag in LIMITS) && flag !== '--feed' && flag !== '--policy') {
            write(2, `npzstream: unknown option ${s}\n${USAGE}`);
            process.exit(2);
        }
        const val = eq > 0 ? s.slice(eq + 1) : argv[++i];
        if (flag === '--policy') {
            if (!val) usageError('--policy needs a file (JSON, README.md "Policies")');
            let text;
            try {
                const name = eq > 0 ? raw[i].subarray(eq + 1) : raw[i]; /* the name's bytes */
                /* a FIFO, a device or a directory is refused at once, never waited on (as natively) */
                if (!fs.statSync(name).isFile()) usageError(`--policy ${val}: not a regular file (a policy is read from a file)`);
                text = fs.readFileSync(name);
            } catch (e) {
                usageError(`--policy ${val}: ${STRERROR[e.code] || e.message}`);
            }
            if (text.length > (1 << 20)) usageError(`--policy ${val}: larger than 1 MiB`);
            a.policy = new Uint8Array(text.buffer, text.byteOffset, text.length); /* its bytes, as the native command reads them */
            a.policyPath = val;
            continue;
        }
        let v;
        try {
            v = parseSize(val ?? '');
        } catch {
            usageError(`${flag} needs a non-negative integer, optionally with a suffix (K M G T P E, or Ki Mi Gi Ti Pi Ei)`);
        }
        if (flag === '--feed') a.feed = Number(v);
        else if (!WIDE.has(flag) && v > 0xffffffffn) usageError(`${flag} ${v}: too large (at most 4294967295)`); /* never clamped */
        else a.limits[LIMITS[flag]] = v;
    }
    if (!a.files.length) a.files.push({name: '-', bytes: Buffer.from('-')});
    return a;
}

/* One validator for the options: a usage error (a bad limit or policy) ends the command. */
function validator(a, label) {
    try {
        return new Validator({limits: a.limits, policy: a.policy, sequence: a.sequence, text: !a.json, label});
    } catch (e) {
        if (e instanceof PolicyError)
            usageError(e.line ? `--policy ${a.policyPath}:${e.line}:${e.column}: ${e.path}${e.path ? ': ' : ''}${e.message}`
                              : `--policy ${a.policyPath}: ${e.message}`);
        const flag = Object.keys(LIMITS).find((f) => LIMITS[f] === e.field);
        if (flag) usageError(`${flag}: out of the range the library accepts`);
        if (e instanceof RangeError || e instanceof UnsupportedError) usageError(e.message.replace(/^npzstream: /, ''));
        throw e;
    }
}

/* A file's name as the native command's text shows it (src/bytes/text.h): a control, a bidi control, a
 * line separator or a lone surrogate as \xHH (below 0x80) or \uHHHH, a backslash doubled. */
const HIDDEN = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\\]|[\ud800-\udfff]/gu;
function text(s) {
    return s.replace(HIDDEN, (c) => {
        const n = c.codePointAt(0);
        return c === '\\' ? '\\\\' : n < 0x80 ? '\\x' + n.toString(16).padStart(2, '0') : '\\u' + n.toString(16).padStart(4, '0');
    });
}

function ioFailure(a, label, why) {
    if (a.json)
        write(1, '{"ok": false, "format": null, "members": [], "error": {"code": "io", "offset": 0, ' +
                 `"member": null, "message": ${JSON.stringify(why)}}}\n`);
    write(2, `npzstream: ${text(label)}: ${why}\n`);
    return 2;
}

function pushAll(v, b, feed) {
    if (!feed) return v.push(b);
    let r = null;
    for (let off = 0; off < b.length && !r; off += feed) r = v.push(b.subarray(off, off + feed));
    return r;
}

async function checkStdin(a) {
    const v = validator(a, '-');
    let r = null;
    try {
        for await (const chunk of process.stdin) if ((r = pushAll(v, chunk, a.feed))) break;
    } catch (e) {
        v.close();
        return ioFailure(a, '-', readFailure(e));
    }
    return report(r || v.finish());
}

/* path: {name, bytes}: the file opened by its bytes; the label in the report is its bytes too (the
 * library's text says them as the native command does), name in messages of this file's own. */
function checkFile(a, path, buf) {
    let fd;
    try {
        fd = fs.openSync(path.bytes, 'r');
    } catch (e) {
        return ioFailure(a, path.name, STRERROR[e.code] || e.message);
    }
    const v = validator(a, path.bytes);
    let r = null;
    try {
        if (!a.feed) {
            /* read into the wasm's memory: no copy */
            r = v.readFrom((view) => fs.readSync(fd, view, 0, view.length, null));
        } else {
            for (;;) {
                const n = fs.readSync(fd, buf, 0, buf.length, null);
                if (n === 0) break;
                if ((r = pushAll(v, buf.subarray(0, n), a.feed))) break;
            }
        }
    } catch (e) {
        v.close();
        return ioFailure(a, path.name, readFailure(e));
    } finally {
        fs.closeSync(fd);
    }
    return report(r || v.finish());
}

function report(r) {
    write(1, r.json ?? r.text);
    return r.status;
}

async function main() {
    const a = parseArgs(process.argv.slice(2));
    await ready();
    validator(a, '-').close(); /* the options' faults first, as the native command finds them */
    const buf = Buffer.allocUnsafe(READ_SIZE);
    let status = 0;
    for (const f of a.files) status = Math.max(status, f.name === '-' ? await checkStdin(a) : checkFile(a, f, buf));
    return status;
}

main().then((s) => process.exit(s), (e) => {
    write(2, `npzstream: ${e && e.message ? e.message : e}\n`);
    process.exit(2);
});
