/* npzstream.d.mts -- TypeScript declarations of build/wasm/npzstream.mjs (wasm/npzstream.js). */

/** A size: a non-negative integer, or digits with K M G T P E (powers of 1000) or Ki ... Ei (1024). */
export type Size = number | bigint | string;

/** The fields of npzs_limits (README.md, "ls, extract, help and the limits"), and the lenient flags. */
export interface Limits {
    max_header_size?: Size;
    max_ndim?: Size;
    max_fields?: Size;
    max_depth?: Size;
    max_members?: Size;
    max_name_len?: Size;
    max_extra_len?: Size;
    max_total_bytes?: Size;
    inflate_window?: Size;
    max_memory?: Size;
    lenient_npy_trailing?: boolean;
    lenient_header_newline?: boolean;
    lenient_fast_inflate?: boolean;
    /** Inflate with zlib alone instead of the library's decoder (whose verdict and bytes are zlib's). */
    inflate_zlib?: boolean;
}

export interface ValidatorOptions {
    limits?: Limits;
    /** A policy (README.md, "Policies"): its bytes (as read from a file: the library reads them as
     * the native command does, invalid UTF-8, a BOM or NUL refused alike), its JSON text (a
     * well-formed string: one with a lone surrogate is a TypeError), or the same structure as an
     * object. */
    policy?: Uint8Array | ArrayBuffer | ArrayBufferView | string | object | null;
    /** SHA-256 of every member: not in the wasm build (UnsupportedError, rule CALL.hash). */
    hash?: boolean;
    /** .npy arrays back to back on one stream (repeated np.save; the CLI's --sequence). */
    sequence?: boolean;
    /** The text of `npzstream check FILE` (report.text) instead of the JSON object. */
    text?: boolean;
    /** The file's name in that text ("-" by default): a string, or its bytes as the file system has them. */
    label?: string | Uint8Array;
}

export interface Progress {
    /** Bytes read and checked so far. */
    done: number;
    /** The source's size, or null when it does not say (a stream, an iterable). */
    total: number | null;
}

export interface ValidateOptions extends ValidatorOptions {
    onProgress?: (p: Progress) => void;
    /** Push at most this many bytes at a time (the report never depends on it). */
    chunkSize?: number;
    signal?: AbortSignal;
}

export type Source =
    | Blob
    | ReadableStream<Uint8Array>
    | ArrayBuffer
    | ArrayBufferView
    | AsyncIterable<Uint8Array | ArrayBuffer | ArrayBufferView>
    | Iterable<Uint8Array | ArrayBuffer | ArrayBufferView>;

/** A member of the `npzstream check --json` object (README.md, "The command line"). */
export interface Member {
    name: string | null;
    name_b64?: string;
    key: string | null;
    key_b64?: string;
    kind: "array" | "blob";
    method: "stored" | "deflated";
    version?: [number, number];
    dtype?: string;
    shape?: number[];
    fortran_order?: boolean;
    nbytes?: number;
    size?: number;
    data_crc32: number;
    sniff: "npy" | "empty" | "pickle" | "zip" | "gzip" | "text" | "binary" | "unknown";
    sha256?: string;
}

export interface RejectionInfo {
    code: string;
    offset: number;
    member: string | null;
    member_b64?: string;
    member_index?: number;
    message: string;
    content_offset?: number;
    rule?: string;
    detail?: string;
    hint?: string;
    /** A rejection a limit decided (added in 0.8.0): the limit, its value in force, what the input needed. */
    limit?: { name: string; value: number; needed: number };
}

/** The object `npzstream check --json FILE` prints, parsed (numbers past 2^53 lose precision:
 *  `json` has the exact text). */
export interface Report {
    ok: boolean;
    format: "npy" | "npz" | null;
    members: Member[];
    ignored_bytes?: number;
    error: RejectionInfo | null;
    /** The exact bytes the native command prints (null with the text option). */
    readonly json: string | null;
    /** The native command's exit status: 0 accepted, 1 rejected, 2 out of memory. */
    readonly status: 0 | 1 | 2;
}

export interface TextReport {
    ok: boolean;
    text: string;
    readonly json: null;
    readonly status: 0 | 1 | 2;
}

/** Load the wasm (once). */
export function ready(): Promise<unknown>;

/** Validate a whole source, pushing its chunks as they arrive; stops reading at an early rejection. */
export function validate(source: Source, options?: ValidateOptions): Promise<Report>;

export class Validator {
    /** Load the wasm when needed, then make a validator. */
    static create(options?: ValidatorOptions): Promise<Validator>;
    /** After `await ready()`. */
    constructor(options?: ValidatorOptions);
    /** Bytes pushed so far. */
    readonly bytes: number;
    /** Input bytes the parser has taken so far. */
    readonly consumed: number;
    /** The report once the verdict is known, else null. */
    readonly report: Report | null;
    /** null while the verdict is open; the report as soon as it is known (later chunks are not read). */
    push(chunk: Uint8Array | ArrayBuffer | ArrayBufferView): Report | null;
    /**
     * The whole input read straight into the validator's buffer in the wasm's memory, with no
     * copy: `read(view)` writes up to `view.length` bytes at the start of `view` and returns how
     * many, 0 at the end of the input (Node: `(view) => fs.readSync(fd, view)`).  Returns the
     * report; reading stops as soon as the verdict is known.
     */
    readFrom(read: (view: Uint8Array) => number): Report;
    /** The end of the input: the verdict. */
    finish(): Report;
    /** Release the wasm memory (finish() and a verdict do it). */
    close(): void;
}

export class PolicyError extends Error {
    line: number;
    column: number;
    offset: number;
    path: string;
}

export class UnsupportedError extends Error {
    rule: string;
}

/** What a user can do about a rejection with this rule id (the library's hint). */
export function ruleHint(rule: string): string | null;
/** The rule's message. */
export function ruleMessage(rule: string): string | null;
export function parseSize(v: Size | boolean): bigint;
/** The library's version (NPZS_VERSION), "0.8.0". */
export function version(): string;
/** Bytes of the wasm's memory now (grown to what the parsers held; bounded by their limits). */
export function memoryBytes(): number;
/** false: the wasm build computes no SHA-256. */
export function sha256Available(): boolean;
