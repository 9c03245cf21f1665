/* fuzz_policy_run: random policies over random archives.
 * Input: [8 control bytes][fuzz_split's layout: ctl, schedule, file].  The control bytes build a
 * policy (valid by construction: members by pattern, dtypes, shapes with shared names, dims,
 * finite, ranges, byte and member caps, blobs allowed or not or by kind, a required member, the
 * format, hashing) and its JSON is compiled.  Oracles:
 *   - the verdict with the policy is the verdict without it, or a policy rejection;
 *   - whole and under the schedule (and in 1-byte pushes) the same events, data before an
 *     error included, the same verdict, code, offset and member;
 *   - with only MEMBER_END asked for: the same verdict and offsets;
 *   - through the parallel helper: the same events. */
#include <stdio.h>
#include <string.h>

#include "common.h"

#define PICK(t, v) (t)[(v) % (sizeof(t) / sizeof((t)[0]))]
/* a pin binds one exact array: its dtype, shape and order come with it (and no other dtype or shape) */
#define PIN \
    "\"dtype\": [\"<i4\"], \"shape\": [2], \"fortran_order\": false, " \
    "\"sha256\": \"34fb5c825de7ca4aea6e712f19d439c1da0c92c37b423936c5f618545ca4fa1f\", "

static const char *const keys[] = {"*", "a", "a*", "?", "[ab]*", "w", "*.npy", "[!a]*", "b"};
static const char *const dtypes[] =
    {"",
     "\"dtype\": [\"<i4\"], ",
     "\"dtype\": [\"float32\", \"<f8\"], ",
     "\"dtype\": [\"int32\", \"uint8\", \"bool\"], ",
     "\"dtype\": [[[\"a\", \"<i4\"]]], ",
     "\"dtype\": [\"|S3\", \"str\", \"<M8[s]\"], ",
     "\"dtype\": [\"bfloat16\", \"void\"], ",
     "\"dtype\": [\"datetime64\", \"timedelta64[ns]\", \"|V2\"], ",
     ("\"dtype\": [{\"fields\": [[\"a\", \"<i4\"], [\"b\", {\"base\": \"|u1\", \"shape\": [2]}, [1]]], "
      "\"offsets\": [0, 4], \"itemsize\": 8, \"titles\": [\"A\", null]}], ")};
static const char *const shapes[] = {"",
                                     "\"shape\": [\"N\"], ",
                                     "\"shape\": [\"N\", \"N\"], ",
                                     "\"shape\": [\"...\", 2], ",
                                     "\"shape\": [2], ",
                                     "\"shape\": [\"*\", \"M\"], ",
                                     "\"shape\": [], "};
static const char *const values[] = {"",
                                     "\"finite\": true, ",
                                     "\"range\": [0, 9], ",
                                     "\"range\": [-1.5, 1e3], ",
                                     "\"finite\": true, \"range\": [null, 100], ",
                                     "\"range\": [2, null], "};
static const char *const extras[] /* the pin last */ = {"",
                                                        "\"max_bytes\": 8, ",
                                                        "\"elements\": [1, 4], ",
                                                        "\"fortran_order\": false, ",
                                                        "\"byte_order\": \"little\", ",
                                                        "\"kind\": \"blob\", \"blob_kinds\": [\"text\"], ",
                                                        "\"optional\": true, ",
                                                        PIN};
static const char *const tops[] = {"",
                                   "\"allow_other_members\": false, ",
                                   "\"allow_blobs\": false, ",
                                   "\"allow_blobs\": [\"text\", \"empty\"], ",
                                   "\"max_members\": 2, ",
                                   "\"max_total_bytes\": 200, ",
                                   "\"format\": \"npz\", ",
                                   "\"hash\": \"sha256\", ",
                                   "\"dims\": {\"N\": [2, 3], \"M\": 2}, "};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 8) return 0;
    const uint8_t *c = data;
    char json[2048];
    int k = snprintf(json, sizeof json, "{%s%s\"members\": {", PICK(tops, c[0]), PICK(tops, c[0] >> 4));
    int nspec = 1 + (c[1] & 1);
    for (int i = 0; i < nspec; i++) {
        const uint8_t *s = c + 2 + 3 * i;
        const char *key = PICK(keys, s[0]);
        if (i && !strcmp(key, PICK(keys, c[2]))) key = "zz"; /* not two specs of one key (a duplicate JSON key) */
        char fields[1024];
        const char *extra = PICK(extras, s[2] >> 4);
        int pin = extra == extras[sizeof extras / sizeof extras[0] - 1];
        int f = snprintf(fields, sizeof fields, "%s%s%s%s", pin ? "" : PICK(dtypes, s[1]),
                         pin ? "" : PICK(shapes, s[1] >> 4), PICK(values, s[2]), extra);
        if (f >= 2) fields[f - 2] = 0; /* the last ", " */
        k += snprintf(json + k, sizeof json - (size_t)k, "%s\"%s\": {%s}", i ? ", " : "", key, fields);
    }
    snprintf(json + k, sizeof json - (size_t)k, "}}");
    npzs_policy_error e;
    npzs_policy *pol = npzs_policy_new(json, strlen(json), NULL, &e);
    if (!pol) {
        /* a combination the compiler refuses on purpose (a blob with a dtype, an optional pattern,
         * a hash without SHA-256): never a syntax fault of ours, nor a pin without its array */
        if (strstr(e.message, "JSON") || strstr(e.message, "expected ','") || strstr(e.message, "pinned sha256"))
            fz_die("policy %s: %s", json, e.message);
        return 0;
    }
    fz_split_in in;
    if (!fz_split_input(data + 8, size - 8, &in)) {
        npzs_policy_free(pol);
        return 0;
    }
    fz_opts o;
    fz_opts_init(&o);
    fz_result bare, whole, split;
    fz_run(in.file, in.file_n, &o, &bare);
    o.policy = pol;
    fz_run(in.file, in.file_n, &o, &whole);
    if (whole.err != NPZS_E_POLICY &&
        (whole.accepted != bare.accepted || whole.err != bare.err || whole.err_off != bare.err_off))
        fz_die("policy %s: verdict %d@%llu, without it %d@%llu", json, whole.err, (unsigned long long)whole.err_off,
               bare.err, (unsigned long long)bare.err_off);
    o.sched = in.sched;
    o.sched_n = in.sched_n;
    o.finish_null = in.ctl & 1;
    o.into = (in.ctl >> 1) & 1;
    fz_run(in.file, in.file_n, &o, &split);
    if (!fz_same(&whole, &split)) {
        fprintf(stderr, "policy: %s\n", json);
        fz_report_mismatch(in.file, in.file_n, NULL, in.sched, in.sched_n, &whole, &split);
    }
    if (in.ctl & 4) { /* 1-byte pushes */
        static const uint8_t one[] = {1};
        o.sched = one;
        o.sched_n = 1;
        o.into = 0;
        fz_run(in.file, in.file_n, &o, &split);
        if (!fz_same(&whole, &split)) fz_die("policy %s: 1-byte pushes differ", json);
    }
    fz_opts m;
    fz_opts_init(&m);
    m.policy = pol;
    m.mask = NPZS_EV_BIT(NPZS_EV_MEMBER_END);
    m.mask_parser = 1;
    m.sched = in.sched;
    m.sched_n = in.sched_n;
    fz_result mr;
    fz_run(in.file, in.file_n, &m, &mr);
    if (mr.accepted != whole.accepted || mr.err != whole.err || mr.err_off != whole.err_off ||
        mr.err_member != whole.err_member)
        fz_die("policy %s: MEMBER_END alone gives another verdict", json);
    if (in.ctl & 8) {
        fz_opts q;
        fz_opts_init(&q);
        q.policy = pol;
        q.par = 1;
        q.par_threads = 1 + ((in.ctl >> 4) & 1);
        q.par_held = (in.ctl & 32) ? 4096 : UINT64_C(1) << 30;
        fz_result pr;
        fz_run(in.file, in.file_n, &q, &pr);
        if (!fz_same(&whole, &pr)) fz_die("policy %s: through the helper, other events", json);
    }
    npzs_policy_free(pol);
    return 0;
}
