/*
 * states.h -- the one list of parser states (X-macro).  Each entry:
 *   X(NAME, "what it waits for / does")
 * It generates the state enum, the name table and the test-build visit map.
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

#define NPZS_STATE_MAP(X)                                                         \
    X(START, "first byte: 0x93 selects .npy, 'P' selects .npz")                  \
    X(NPY_CONTENT, "plain .npy: input feeds the content machine directly")       \
    X(NPY_MEMBER_END, "plain .npy: emit MEMBER_END")                            \
    X(NPY_TAIL, "plain .npy complete: only end of input may follow")             \
    X(ZIP_SIG, "4-byte record signature; which ones are legal depends on phase") \
    X(ZIP_LFH, "26 fixed bytes of a local file header")                          \
    X(ZIP_LFH_NAME, "local header name bytes")                                   \
    X(ZIP_LFH_EXTRA, "local header extra fields (strict TLV walk)")              \
    X(ZIP_MEMBER_BEGIN, "emit MEMBER_BEGIN")                                     \
    X(ZIP_STORED, "stored member data, passed through zero-copy")                \
    X(ZIP_DEFLATED, "deflated member data, inflated through the output window")  \
    X(ZIP_CONTENT_END, "member data ended: content and size checks")             \
    X(ZIP_DD, "data descriptor (signature optional, 4- or 8-byte sizes)")        \
    X(ZIP_MEMBER_END, "CRC and sizes checked: emit MEMBER_END")                  \
    X(ZIP_CDH, "46 fixed bytes of a central directory header")                   \
    X(ZIP_CDH_NAME, "central directory name, compared with the local header")    \
    X(ZIP_CDH_EXTRA, "central directory extra fields (ZIP64 sizes, offset)")     \
    X(ZIP_CDH_COMMENT, "central directory entry comment (skipped)")              \
    X(ZIP_Z64_EOCD, "ZIP64 end of central directory record")                     \
    X(ZIP_Z64_LOC, "ZIP64 end of central directory locator")                     \
    X(ZIP_EOCD, "end of central directory record")                               \
    X(ZIP_EOCD_COMMENT, "archive comment: must hold no ZIP signature, end at EOF") \
    X(ZIP_TAIL, "archive complete: only end of input may follow")                \
    X(END_EMIT, "emit END")                                                      \
    X(DONE, "END delivered")                                                     \
    X(FAILED, "sticky error")

#define NPZS_CSTATE_MAP(X)                                                        \
    X(C_SNIFF, "first 6 content bytes: npy magic or blob")                       \
    X(C_PRE, "npy magic, version and header length")                             \
    X(C_HDR, "npy header text, staged up to its declared length")                \
    X(C_HEADER_EVENT, "emit HEADER")                                             \
    X(C_DATA, "array data bytes, emitted as DATA chunks")                        \
    X(C_DONE, "array complete: any further content byte is trailing data")       \
    X(C_BLOB_SNIFF, "a blob's first 16 bytes, staged for its sniff (npzs_sniff)") \
    X(C_BLOB_STAGED, "emit the staged sniff bytes of a blob")                    \
    X(C_BLOB, "blob bytes, emitted as BLOB chunks")

enum npzs_state {
    NPZS_S__BASE = 16180, /* zeroed memory is never a valid state */
#define NPZS_X_STATE(name, doc) NPZS_S_##name,
    NPZS_STATE_MAP(NPZS_X_STATE)
#undef NPZS_X_STATE
    NPZS_S__END
};

enum npzs_cstate {
    NPZS_C__BASE = 100,
#define NPZS_X_CSTATE(name, doc) NPZS_##name,
    NPZS_CSTATE_MAP(NPZS_X_CSTATE)
#undef NPZS_X_CSTATE
    NPZS_C__END
};

#define NPZS_NSTATES ((int)(NPZS_S__END - NPZS_S__BASE - 1))
#define NPZS_NCSTATES ((int)(NPZS_C__END - NPZS_C__BASE - 1))

#endif
