/* types.mts -- tests/wasm/test_wasm.py compiles this with tsc against build/wasm/npzstream.d.mts: every
 * documented use type-checks (and a misuse, appended by the test, must not). */
import {validate, Validator, PolicyError, UnsupportedError, ruleHint, memoryBytes, type Report} from './npzstream.mjs';
async function f(file: Blob, chunks: AsyncIterable<Uint8Array>): Promise<boolean> {
    const r: Report = await validate(file, {limits: {max_total_bytes: '512Mi', max_members: 100n, lenient_npy_trailing: true},
                                            policy: {members: {}}, onProgress: (p) => console.log(p.done, p.total ?? -1)});
    const v = await Validator.create({policy: '{}'});
    for await (const c of chunks) { const early = v.push(c); if (early) return early.ok; }
    const last = v.finish();
    if (last.error) console.log(last.error.rule, last.error.hint, ruleHint(last.error.rule ?? ''), memoryBytes());
    try { await validate(new Uint8Array(1), {hash: true}); } catch (e) {
        if (e instanceof UnsupportedError) console.log(e.rule); else if (e instanceof PolicyError) console.log(e.line, e.path); }
    return r.ok && r.members.every((m) => m.kind === 'array' ? m.dtype !== undefined : m.size !== undefined);
}
export {f};
