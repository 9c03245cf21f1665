/* tests/api/contract.c -- the API's contract: error names and messages, invalid limits and
 * allocators, the event order, NPZS_DONE, trailing bytes, sticky errors, struct sizes of older
 * callers, npzs_data_into's and npzs_events' misuse, truncation at every length, bad arguments,
 * the accessors and the state table's public view. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "api.h"

void test_contract(void) {
    /* error names are the CLI contract */
    static const char *const names[] = {"truncated",      "bad_magic",       "bad_version",   "header_too_large",
                                        "bad_header",     "pickle",          "bad_shape",     "size_overflow",
                                        "zip_bad_header", "zip_unsupported", "crc_mismatch",  "size_mismatch",
                                        "cd_mismatch",    "duplicate_name",  "trailing_data", "limit",
                                        "inflate",        "bad_name"};
    for (int i = 0; i < 18; i++)
        CHECK(strcmp(npzs_error_name(-1 - i), names[i]) == 0, "error %d is named %s", -1 - i, npzs_error_name(-1 - i));
    CHECK(strcmp(npzs_error_name(12345), "unknown") == 0, "unknown error name");

    npzs_limits lim;
    npzs_limits_default(&lim);
    lim.max_ndim = 65;
    CHECK(npzs_new(&lim, NULL) == NULL, "max_ndim above 64 must be refused");
    npzs_limits_default(&lim);
    lim.inflate_window = 0;
    CHECK(npzs_new(&lim, NULL) == NULL, "inflate_window 0 must be refused");
    npzs_allocator half = {check_malloc, NULL, NULL};
    CHECK(npzs_new(NULL, &half) == NULL, "an allocator without free must be refused");

    /* a tiny valid .npy */
    static const char hdr[] = "{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }";
    uint8_t f[128];
    size_t hl = sizeof hdr - 1;
    memcpy(f, "\x93NUMPY\x01\x00", 8);
    f[8] = (uint8_t)hl;
    f[9] = 0;
    memcpy(f + 10, hdr, hl);
    memcpy(f + 10 + hl, "\x01\x00\x02\x00", 4);
    size_t flen = 10 + hl + 4;

    npzs_parser *p = npzs_new(NULL, NULL);
    npzs_event ev;
    npzs_in in = {f, flen, 0};
    int types[8], nt = 0, rc;
    while ((rc = npzs_next(p, &in, &ev)) == NPZS_EVENT && nt < 8) types[nt++] = (int)ev.type;
    CHECK(rc == NPZS_NEED_INPUT && nt == 4, "events before finish: rc %d, %d events", rc, nt);
    CHECK(nt == 4 && types[0] == NPZS_EV_MEMBER_BEGIN && types[1] == NPZS_EV_HEADER && types[2] == NPZS_EV_DATA &&
              types[3] == NPZS_EV_MEMBER_END,
          "event order");
    npzs_finish(p);
    rc = npzs_next(p, NULL, &ev);
    CHECK(rc == NPZS_EVENT && ev.type == NPZS_EV_END && ev.format == NPZS_FORMAT_NPY, "END after finish");
    CHECK(npzs_next(p, NULL, &ev) == NPZS_DONE, "DONE after END");
    uint8_t extra = 0;
    npzs_in more = {&extra, 1, 0};
    CHECK(npzs_error_rule(p) == NULL, "no rule before an error");
    CHECK(npzs_next(p, &more, &ev) == NPZS_E_TRAILING_DATA, "a byte after END is trailing data");
    CHECK(npzs_error_rule(p) && strcmp(npzs_error_rule(p), "S-NPY-TRAIL.after-end") == 0, "rule %s",
          npzs_error_rule(p) ? npzs_error_rule(p) : "(null)");
    CHECK(npzs_next(p, NULL, &ev) == NPZS_E_TRAILING_DATA, "errors are sticky");
    npzs_free(p);
    /* the same after an archive's END (an empty archive: its end record alone) */
    {
        static const uint8_t empty[22] = {'P', 'K', 5, 6};
        npzs_parser *q = npzs_new(NULL, NULL);
        npzs_in e = {empty, sizeof empty, 0};
        while (npzs_next(q, &e, &ev) == NPZS_EVENT) {}
        npzs_finish(q);
        rc = npzs_next(q, NULL, &ev);
        CHECK(rc == NPZS_EVENT && ev.type == NPZS_EV_END && ev.format == NPZS_FORMAT_NPZ, "empty archive END");
        npzs_in m2 = {&extra, 1, 0};
        CHECK(npzs_next(q, &m2, &ev) == NPZS_E_TRAILING_DATA && npzs_error_rule(q) &&
                  strcmp(npzs_error_rule(q), "S-ZIP-TRAIL.after-end") == 0,
              "a byte after an archive's END: %s", npzs_error_rule(q) ? npzs_error_rule(q) : "(null)");
        npzs_free(q);
    }

    /* versions and struct sizes: the header's macros pass sizeof(npzs_limits); a 0.1.0 binary's
     * struct (up to inflate_window) is read and written only that far */
    CHECK(npzs_version() == NPZS_VERSION_NUM, "npzs_version %#lx", npzs_version());
    {
        size_t v010 = offsetof(npzs_limits, inflate_window) + sizeof(uint32_t);
        npzs_limits big[2];
        memset(big, 0xAB, sizeof big);
        npzs_limits_default_(&big[0], v010);
        const uint8_t *b = (const uint8_t *)&big[0];
        int untouched = 1;
        for (size_t k = v010; k < sizeof big; k++) untouched &= b[k] == 0xAB;
        CHECK(untouched && big[0].max_ndim == 32, "limits_default with a 0.1.0 size writes past it");
        big[0].lenient = 0xFFFFFFFFu; /* beyond a 0.1.0 struct: must not be read */
        npzs_parser *q = npzs_new_(&big[0], v010, NULL);
        CHECK(q != NULL, "a 0.1.0-sized npzs_limits is accepted");
        npzs_free(q);
        CHECK(npzs_new_(&big[0], sizeof(npzs_limits) + 8, NULL) == NULL,
              "a larger npzs_limits than the library knows is refused");
        CHECK(npzs_new_(&big[0], v010 - 4, NULL) == NULL, "a npzs_limits smaller than 0.1.0's is refused");
        npzs_limits_default(&lim);
        lim.lenient = 0x80;
        CHECK(npzs_new(&lim, NULL) == NULL, "an unknown lenient bit is refused");
    }

    /* npzs_limits_check names the first field npzs_new refuses, one bad field at a time */
    {
        npzs_limits_default(&lim);
        CHECK(npzs_limits_check(&lim) == NULL, "the defaults are valid");
        static const struct {
            const char *field;
            int which;
            uint64_t v;
        } bad[] = {
            {"max_header_size", 0, 0},  {"max_header_size", 0, (UINT64_C(1) << 30) + 1},
            {"max_ndim", 1, 65},        {"max_fields", 2, 0},
            {"max_depth", 3, 0},        {"max_depth", 3, 1001},
            {"max_members", 4, 0},      {"max_name_len", 5, 0},
            {"max_name_len", 5, 65536}, {"max_extra_len", 6, 65536},
            {"inflate_window", 7, 0},   {"lenient", 8, 0x10},
            {"max_memory", 9, 100},
        };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
            npzs_limits l;
            npzs_limits_default(&l);
            uint64_t v = bad[i].v;
            switch (bad[i].which) {
            case 0: l.max_header_size = v; break;
            case 1: l.max_ndim = (uint32_t)v; break;
            case 2: l.max_fields = (uint32_t)v; break;
            case 3: l.max_depth = (uint32_t)v; break;
            case 4: l.max_members = (uint32_t)v; break;
            case 5: l.max_name_len = (uint32_t)v; break;
            case 6: l.max_extra_len = (uint32_t)v; break;
            case 7: l.inflate_window = (uint32_t)v; break;
            case 8: l.lenient = (uint32_t)v; break;
            default: l.max_memory = v; break;
            }
            const char *got = npzs_limits_check(&l);
            CHECK(got && strcmp(got, bad[i].field) == 0, "limits_check of a bad %s: %s", bad[i].field,
                  got ? got : "NULL");
            npzs_parser *q = npzs_new(&l, NULL);
            CHECK(q == NULL, "npzs_new accepts a bad %s", bad[i].field);
            npzs_free(q);
        }
        CHECK(strcmp(npzs_limits_check_(&lim, sizeof lim + 8) ? npzs_limits_check_(&lim, sizeof lim + 8) : "",
                     "size") == 0,
              "a struct size the library does not know is 'size'");
    }

    /* the event's size: the macro passes sizeof(npzs_event); another size is refused, never written */
    {
        npzs_parser *q = npzs_new(NULL, NULL);
        npzs_event evs[2];
        memset(evs, 0x5A, sizeof evs);
        npzs_in e0 = {f, flen, 0};
        rc = npzs_next_(q, &e0, &evs[0], sizeof(npzs_event) - 8);
        const uint8_t *eb = (const uint8_t *)evs;
        int untouched = 1;
        for (size_t k = 0; k < sizeof evs; k++) untouched &= eb[k] == 0x5A;
        CHECK(rc == NPZS_E_BAD_CALL && untouched && e0.pos == 0 && npzs_error_rule(q) &&
                  strcmp(npzs_error_rule(q), "CALL.event-size") == 0,
              "a smaller npzs_event: rc %d, rule %s", rc, npzs_error_rule(q) ? npzs_error_rule(q) : "NULL");
        npzs_free(q);
        q = npzs_new(NULL, NULL);
        CHECK(npzs_next_(q, &e0, &evs[0], sizeof(npzs_event) + 8) == NPZS_E_BAD_CALL, "a larger npzs_event is refused");
        npzs_free(q);
    }

    /* npzs_data_into: only right after an array's HEADER, with room for all of it */
    {
        uint8_t dst[4];
        for (int when = 0; when < 4; when++) { /* 0 before HEADER, 1 too small, 2 after a DATA, 3 right */
            npzs_parser *q = npzs_new(NULL, NULL);
            npzs_in qi = {f, flen, 0};
            npzs_finish(q);
            int r2 = 0, into = -99, datas = 0, at_dst = 0;
            if (when == 0) into = npzs_data_into(q, dst, sizeof dst);
            while ((r2 = npzs_next(q, &qi, &ev)) == NPZS_EVENT) {
                if (ev.type == NPZS_EV_HEADER && (when == 1 || when == 3))
                    into = npzs_data_into(q, dst, when == 1 ? sizeof dst - 1 : sizeof dst);
                if (ev.type == NPZS_EV_DATA) {
                    datas++;
                    at_dst += ev.data == dst + ev.pos;
                    if (when == 2) into = npzs_data_into(q, dst, sizeof dst);
                }
            }
            const char *rule = npzs_error_rule(q);
            if (when == 3)
                CHECK(into == 0 && r2 == NPZS_DONE && datas && at_dst == datas && memcmp(dst, f + flen - 4, 4) == 0,
                      "data_into: data not in the destination");
            else
                CHECK(into == NPZS_E_BAD_CALL && r2 == NPZS_E_BAD_CALL && rule && strcmp(rule, "CALL.data-into") == 0,
                      "data_into misuse %d: %d %d %s", when, into, r2, rule ? rule : "NULL");
            npzs_free(q);
        }
    }

    /* npzs_data_into, stored data pushed whole: copied a slice at a time (NPZS_COPY_SLICE), each
     * slice's CRC-32 taken right after its copy (from the cache, not from memory again): every
     * DATA event is at most a slice, at dst + pos, and the bytes and CRC-32 are the input's */
    {
        size_t n = 3 * NPZS_COPY_SLICE + 77, len = 0, slices = 0, most = 0, got = 0;
        char shape[80];
        snprintf(shape, sizeof shape, "{'descr': '|u1', 'fortran_order': False, 'shape': (%zu,), }", n);
        uint8_t *f2 = npy_of(shape, n, &len);
        for (size_t i = 0; i < n; i++) f2[len - n + i] = (uint8_t)(i * 131u + (i >> 9));
        uint8_t *dst = malloc(n);
        npzs_parser *q = npzs_new(NULL, NULL);
        npzs_in qi = {f2, len, 0};
        npzs_finish(q);
        int r2, at_dst = 1;
        uint32_t crc = 0;
        while ((r2 = npzs_next(q, &qi, &ev)) == NPZS_EVENT) {
            if (ev.type == NPZS_EV_HEADER) CHECK(npzs_data_into(q, dst, n) == 0, "data_into refused");
            if (ev.type == NPZS_EV_DATA) {
                slices++;
                got += ev.len;
                most = ev.len > most ? ev.len : most;
                at_dst &= ev.data == dst + ev.pos && !ev.zero_copy;
            }
            if (ev.type == NPZS_EV_MEMBER_END) crc = ev.data_crc32;
        }
        CHECK(r2 == NPZS_DONE && got == n && memcmp(dst, f2 + len - n, n) == 0 && at_dst, "data_into: the copy");
        CHECK(most <= NPZS_COPY_SLICE && slices == 4, "data_into: %zu slices, the largest %zu bytes", slices, most);
        CHECK(crc == (uint32_t)crc32(0, f2 + len - n, (uInt)n), "data_into: the CRC-32 of the sliced copy");
        npzs_free(q);
        free(dst);
        free(f2);
    }

    /* trailing byte before finish */
    p = npzs_new(NULL, NULL);
    f[flen] = 0;
    npzs_in in2 = {f, flen + 1, 0};
    while ((rc = npzs_next(p, &in2, &ev)) == NPZS_EVENT) {}
    CHECK(rc == NPZS_E_TRAILING_DATA && npzs_error_offset(p) == flen, "trailing data offset %llu",
          (unsigned long long)npzs_error_offset(p));
    CHECK(strlen(npzs_error_message(p)) > 0, "error message");
    npzs_free(p);

    /* truncation at every length */
    int ok = 1;
    for (size_t cut = 0; cut < flen; cut++) {
        p = npzs_new(NULL, NULL);
        npzs_in in3 = {f, cut, 0};
        npzs_finish(p);
        while ((rc = npzs_next(p, &in3, &ev)) == NPZS_EVENT) {}
        if (rc != NPZS_E_TRUNCATED || npzs_error_offset(p) != cut) {
            ok = 0;
            printf("  cut %zu: rc %d off %llu\n", cut, rc, (unsigned long long)npzs_error_offset(p));
        }
        npzs_free(p);
    }
    CHECK(ok, "truncation at every length is 'truncated' at the input length");

    /* bad arguments */
    p = npzs_new(NULL, NULL);
    npzs_in badin = {NULL, 5, 0};
    CHECK(npzs_next(p, &badin, &ev) == NPZS_E_BAD_CALL, "NULL src with a size is a bad call");
    npzs_free(p);
    p = npzs_new(NULL, NULL);
    CHECK(npzs_next(p, &in, NULL) == NPZS_E_BAD_CALL, "NULL event is a bad call");
    npzs_free(p);
    CHECK(npzs_next(NULL, &in, &ev) == NPZS_E_BAD_CALL, "NULL parser is a bad call");
    npzs_free(NULL);

    /* accessors */
    CHECK(strcmp(npzs_strerror(NPZS_E_PICKLE), "object arrays (pickle) are refused") == 0, "strerror");
    CHECK(strcmp(npzs_strerror(0), "no error") == 0 && strcmp(npzs_strerror(999), "unknown error") == 0,
          "strerror of 0 and of an unknown code");
    p = npzs_new(NULL, NULL);
    CHECK(strcmp(npzs_state_name(p), "START") == 0, "initial state name %s", npzs_state_name(p));
    CHECK(npzs_format_of(p) == NPZS_FORMAT_UNKNOWN && npzs_error(p) == 0 && npzs_error_member(p) == -1,
          "a new parser has no format and no error");
    CHECK(strcmp(npzs_error_message(p), "no error") == 0, "message without an error");
    npzs_in in4 = {f, 20, 0};
    while ((rc = npzs_next(p, &in4, &ev)) == NPZS_EVENT) {}
    CHECK(rc == NPZS_NEED_INPUT && npzs_consumed(p) == 20 && npzs_format_of(p) == NPZS_FORMAT_NPY, "consumed %llu",
          (unsigned long long)npzs_consumed(p));
    CHECK(strcmp(npzs_state_name(p), "NPY_CONTENT") == 0, "state name %s", npzs_state_name(p));
    npzs_free(p);
    /* a header error: content offset and member of a plain .npy */
    uint8_t g[128];
    memcpy(g, f, flen);
    g[10 + 11] = '?'; /* inside the descr string */
    p = npzs_new(NULL, NULL);
    npzs_in in5 = {g, flen, 0};
    while ((rc = npzs_next(p, &in5, &ev)) == NPZS_EVENT) {}
    size_t nl = 1;
    CHECK(rc == NPZS_E_BAD_HEADER && npzs_error_content_offset(p) == 20 && npzs_error_offset(p) == 20 &&
              npzs_error_member(p) == 0 && npzs_error_member_name(p, &nl) == NULL && nl == 0,
          "header error: rc %d coff %llu", rc, (unsigned long long)npzs_error_content_offset(p));
    CHECK(strcmp(npzs_state_name(p), "FAILED") == 0, "failed state name");
    npzs_free(p);

    /* state names exist for every state */
    for (int i = 0; i < NPZS_NSTATES; i++) CHECK(npzs__state_id(i) && npzs__state_doc(i), "state %d has a name", i);
    /* the public view of the table (trace): every row named, its record part labelled, the parts
     * in the rows the table gives them */
    CHECK(npzs_state_count() == NPZS_NSTATES && !npzs_state_id(-1) && !npzs_state_id(NPZS_NSTATES) &&
              npzs_state_index(NULL) == -1,
          "npzs_state_count and the rows' range");
    for (int i = 0; i < npzs_state_count(); i++)
        CHECK(npzs_state_id(i) && npzs_record_label(npzs_state_record(i)), "row %d: a name and a record label", i);
    CHECK(npzs_state_record(NPZS_S_ZIP_LFH - NPZS_S__BASE - 1) == NPZS_REC_LFH &&
              npzs_state_record(NPZS_S_ZIP_CDH_NAME - NPZS_S__BASE - 1) == NPZS_REC_CDH_NAME &&
              npzs_state_record(NPZS_S_ZIP_STORED - NPZS_S__BASE - 1) == NPZS_REC_NONE &&
              !strcmp(npzs_record_label(NPZS_REC_EOCD), "end record") && !npzs_record_label(NPZS_REC__END),
          "the record column");
    {
        npzs_parser *sp = npzs_new(NULL, NULL);
        CHECK(sp && !strcmp(npzs_state_id(npzs_state_index(sp)), "START") &&
                  !strcmp(npzs_state_id(npzs_state_index(sp)), npzs_state_name(sp)),
              "a new parser is in START");
        npzs_free(sp);
    }
}

/* npzs_events: a bit that names no event is a bad call (sticky, CALL.events); END comes
 * whatever the mask. */
void test_events_call(void) {
    npzs_parser *p = npzs_new(NULL, NULL);
    CHECK(npzs_events(p, 0) == 0 && npzs_events(p, NPZS_EV_ALL) == 0, "npzs_events: valid masks refused");
    int rc = npzs_events(p, NPZS_EV_ALL | 1u);
    const char *rule = npzs_error_rule(p);
    CHECK(rc == NPZS_E_BAD_CALL && rule && !strcmp(rule, "CALL.events") && npzs_events(p, 0) == NPZS_E_BAD_CALL,
          "npzs_events with bit 0: %d %s", rc, rule ? rule : "NULL");
    npzs_free(p);
    p = npzs_new(NULL, NULL);
    rc = npzs_events(p, 1u << 7);
    CHECK(rc == NPZS_E_BAD_CALL, "npzs_events with bit 7: %d", rc);
    npzs_free(p);
    CHECK(npzs_events(NULL, 0) == NPZS_E_BAD_CALL, "npzs_events(NULL)");
    size_t len;
    uint8_t *a = npy_of("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", 8, &len);
    p = npzs_new(NULL, NULL);
    npzs_events(p, 0);
    npzs_in in = {a, len, 0};
    npzs_event ev;
    npzs_finish(p);
    rc = npzs_next(p, &in, &ev);
    CHECK(rc == NPZS_EVENT && ev.type == NPZS_EV_END && ev.members == 1 && in.pos == len,
          "npzs_events(0): the first event is END (%d, type %d)", rc, rc == NPZS_EVENT ? (int)ev.type : 0);
    npzs_free(p);
    free(a);
}
