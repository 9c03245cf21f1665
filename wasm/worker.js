/* worker.js -- the Web Worker side of the demo (build/wasm/npzstream-worker.js is the compiled
 * core, npzstream.js without its exports, then this file: a classic script, so that it also runs
 * from a page opened as file://).  One message a file: {id, source, options} in, then
 * {id, progress: {done, total}}... and {id, report, json} or {id, error}.  The page stays free:
 * the reading and the parsing happen here. */
/* global validate, ruleHint, ready */
self.onmessage = async (e) => {
    const {id, source, options} = e.data;
    let last = 0;
    try {
        await ready();
        const report = await validate(source, {
            ...options,
            onProgress: (p) => {
                const now = Date.now(); /* at most 20 messages a second, and the last one */
                if (now - last >= 50 || p.done === p.total) {
                    last = now;
                    self.postMessage({id, progress: p});
                }
            },
        });
        const hint = report.error && report.error.rule ? ruleHint(report.error.rule) : null;
        self.postMessage({id, report, json: report.json, hint});
    } catch (err) {
        self.postMessage({id, error: {name: err.name, message: err.message, rule: err.rule || null}});
    }
};
