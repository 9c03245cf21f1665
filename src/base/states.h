/*
 * states.h -- the one table of parser states (X-macros).  A row of the top-level table is
 *   X(NAME, step, scope, record, "what it waits for / does")
 *   step    the step function the dispatcher calls in this state (npzs.c, npzs_next_), one per row;
 *   scope   what an error raised in it belongs to (npzs_error_member): ARCHIVE (no member),
 *           MEMBER (the member being read), ENTRY (the central directory entry being read, the
 *           member it repeats);
 *   record  the part of a ZIP record whose bytes the state takes (NPZS_RECORD_MAP, npzstream.h:
 *           npzstream trace prints each part once the parser leaves it; NONE: no record).
 * From the table come the state enum, the names and docs, the step prototypes, the dispatcher's
 * cases, the error scope, the trace labels and the fuzz harnesses' state prefixes
 * (fuzz/make_corpus.py reads the names here).  The content machine and the parallel helper's
 * scout have tables of their own below, gated the same way (fuzz/state_gate.c).
 *
 * Top-level graph (error edges omitted; every state can fail):
 *
 *   START --0x93--> NPY_CONTENT --content done--> NPY_MEMBER_END --> NPY_TAIL --finish--> END_EMIT --> DONE
 *     |
 *     +--'P'--> ZIP_SIG --PK34--> ZIP_LFH --> ZIP_LFH_NAME --> ZIP_LFH_EXTRA --> ZIP_MEMBER_BEGIN
 *                 ^                                                             |
 *                 |                                     +-----------------------+
 *                 |                                     v
 *                 |                     ZIP_STORED | ZIP_DEFLATED --> ZIP_CONTENT_END --bit 3--> ZIP_DD
 *                 |                                                         |                    |
 *                 +---------------------- ZIP_MEMBER_END <------------------+--------------------+
 *               ZIP_SIG --PK12--> ZIP_CDH --> ZIP_CDH_NAME --> ZIP_CDH_EXTRA --> ZIP_CDH_COMMENT --> ZIP_SIG
 *               ZIP_SIG --PK66--> ZIP_Z64_EOCD --> ZIP_SIG(PK67) --> ZIP_Z64_LOC --> ZIP_SIG(PK56)
 *               ZIP_SIG --PK56--> ZIP_EOCD --> ZIP_EOCD_COMMENT --> ZIP_TAIL --finish--> END_EMIT --> DONE
 *
 * Member content (npy or blob) runs in its own small machine (content states
 * below), fed by NPY_CONTENT, ZIP_STORED or ZIP_DEFLATED.
 */
#ifndef NPZS_STATES_H
#define NPZS_STATES_H

#define NPZS_STATE_MAP(X) \
    X(START, npzs__st_start, ARCHIVE, SIG, "first byte: 0x93 selects .npy, 'P' selects .npz") \
    X(NPY_CONTENT, npzs__npy_content, MEMBER, NONE, "plain .npy: input feeds the content machine directly") \
    X(NPY_MEMBER_END, npzs__npy_member_end, MEMBER, NONE, "plain .npy: emit MEMBER_END") \
    X(NPY_TAIL, npzs__npy_tail, MEMBER, NONE, "plain .npy complete: only end of input may follow") \
    X(ZIP_SIG, npzs__zip_sig, ARCHIVE, SIG, "4-byte record signature; which ones are legal depends on phase") \
    X(ZIP_LFH, npzs__zip_lfh, MEMBER, LFH, "26 fixed bytes of a local file header") \
    X(ZIP_LFH_NAME, npzs__zip_lfh_name, MEMBER, LFH_NAME, "local header name bytes") \
    X(ZIP_LFH_EXTRA, npzs__zip_lfh_extra, MEMBER, LFH_EXTRA, "local header extra fields (strict TLV walk)") \
    X(ZIP_MEMBER_BEGIN, npzs__zip_member_begin, MEMBER, NONE, "emit MEMBER_BEGIN") \
    X(ZIP_STORED, npzs__zip_stored, MEMBER, NONE, "stored member data, passed through zero-copy") \
    X(ZIP_DEFLATED, npzs__zip_deflated, MEMBER, NONE, "deflated member data, inflated through the output window") \
    X(ZIP_CONTENT_END, npzs__zip_content_end, MEMBER, NONE, "member data ended: content and size checks") \
    X(ZIP_DD, npzs__zip_dd, MEMBER, DD, "data descriptor (signature optional, 4- or 8-byte sizes)") \
    X(ZIP_MEMBER_END, npzs__zip_member_end, MEMBER, NONE, "CRC and sizes checked: emit MEMBER_END") \
    X(ZIP_CDH, npzs__zip_cdh, ENTRY, CDH, "46 fixed bytes of a central directory header") \
    X(ZIP_CDH_NAME, npzs__zip_cdh_name, ENTRY, CDH_NAME, "central directory name, compared with the local header") \
    X(ZIP_CDH_EXTRA, npzs__zip_cdh_extra, ENTRY, CDH_EXTRA, "central directory extra fields (ZIP64 sizes, offset)") \
    X(ZIP_CDH_COMMENT, npzs__zip_cdh_comment, ENTRY, CDH_COMMENT, "central directory entry comment (skipped)") \
    X(ZIP_Z64_EOCD, npzs__zip_z64_eocd, ARCHIVE, Z64_EOCD, "ZIP64 end of central directory record") \
    X(ZIP_Z64_LOC, npzs__zip_z64_loc, ARCHIVE, Z64_LOC, "ZIP64 end of central directory locator") \
    X(ZIP_EOCD, npzs__zip_eocd, ARCHIVE, EOCD, "end of central directory record") \
    X(ZIP_EOCD_COMMENT, npzs__zip_eocd_comment, ARCHIVE, EOCD_COMMENT, \
      "archive comment: must hold no ZIP signature, end at EOF") \
    X(ZIP_TAIL, npzs__zip_tail, ARCHIVE, NONE, "archive complete: only end of input may follow") \
    X(END_EMIT, npzs__st_end_emit, ARCHIVE, NONE, "emit END") \
    X(DONE, npzs__st_done, ARCHIVE, NONE, "END delivered") \
    X(FAILED, npzs__st_failed, ARCHIVE, NONE, "sticky error")

#define NPZS_CSTATE_MAP(X) \
    X(C_SNIFF, "first 6 content bytes: npy magic or blob") \
    X(C_PRE, "npy magic, version and header length") \
    X(C_HDR, "npy header text, staged up to its declared length") \
    X(C_HEADER_EVENT, "emit HEADER") \
    X(C_DATA, "array data bytes, emitted as DATA chunks") \
    X(C_DONE, "array complete: any further content byte is trailing data") \
    X(C_BLOB_SNIFF, "a blob's first 16 bytes, staged for its sniff (npzs_sniff)") \
    X(C_BLOB_STAGED, "emit the staged sniff bytes of a blob") \
    X(C_BLOB, "blob bytes, emitted as BLOB chunks")

enum npzs_state {
    NPZS_S__BASE = 16180, /* zeroed memory is never a valid state */
#define NPZS_X_STATE(name, step, scope, rec, doc) NPZS_S_##name,
    NPZS_STATE_MAP(NPZS_X_STATE)
#undef NPZS_X_STATE
        NPZS_S__END
};

/* What an error raised in a state belongs to (the scope column). */
enum npzs_scope { NPZS_SCOPE_ARCHIVE, NPZS_SCOPE_MEMBER, NPZS_SCOPE_ENTRY };

/* The record column names a part of NPZS_RECORD_MAP (npzstream.h: NPZS_REC_*). */

enum npzs_cstate {
    NPZS_C__BASE = 100,
#define NPZS_X_CSTATE(name, doc) NPZS_##name,
    NPZS_CSTATE_MAP(NPZS_X_CSTATE)
#undef NPZS_X_CSTATE
        NPZS_C__END
};

/* The parallel helper's scout (scout.c): it reads the local headers in the bytes the helper takes
 * ahead of the parser, to find the deflated members worth inflating on a worker. */
#define NPZS_SCOUT_MAP(X) \
    X(SC_HDR, "30 fixed bytes of a local header (a record that is not one: SC_OFF)") \
    X(SC_VAR, "the local header's name and extra field") \
    X(SC_WAIT, "a job for the member waits for memory the parser holds, or for a worker") \
    X(SC_SKIP, "member data not inflated ahead (stored, small, unknown size): counted past") \
    X(SC_JOB, "member data copied into its job, inflated as it comes or once whole") \
    X(SC_OFF, "lost (a data descriptor, a record it cannot read): waits for the parser")

enum npzs_scstate {
    NPZS_SC__BASE = 200,
#define NPZS_X_SCSTATE(name, doc) NPZS_##name,
    NPZS_SCOUT_MAP(NPZS_X_SCSTATE)
#undef NPZS_X_SCSTATE
        NPZS_SC__END
};

#define NPZS_NSTATES ((int)(NPZS_S__END - NPZS_S__BASE - 1))
#define NPZS_NCSTATES ((int)(NPZS_C__END - NPZS_C__BASE - 1))
#define NPZS_NSCSTATES ((int)(NPZS_SC__END - NPZS_SC__BASE - 1))

/* tables.c: a state's name, document, scope (enum npzs_scope) and record part (enum
 * npzs_record_part), by index (0 .. NPZS_NSTATES - 1); the content machine's and the scout's names */
const char *npzs__state_id(int i);
const char *npzs__state_doc(int i);
int npzs__state_scope(int i);
int npzs__state_record(int i);
const char *npzs__record_label(int r);
const char *npzs__cstate_id(int i);
const char *npzs__scstate_id(int i);

#endif
