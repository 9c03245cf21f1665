/*
 * rules.h -- every check of the parser, one entry each: X(NAME, "id", "message").
 *
 * The id is stable (tests, the CLI's JSON and npzs_error_rule() report it): a group and a check,
 * "GROUP.check".  Groups that start with "S-" are the rules where npzstream is stricter than
 * some np.load of the reference matrix (SECURITY.md lists each with why and its test); the
 * others are checks every reader shares (NumPy or zipfile refuses the same input), limits
 * (LIMIT.*), allocation failures (NOMEM.*) and API misuse (CALL.*).  The message is the static
 * text npzs_error_message() returns.  Append only; ids never change meaning.
 */
#ifndef NPZS_RULES_H
#define NPZS_RULES_H

#define NPZS_RULE_MAP(X) \
    X(TRUNC_EMPTY, "TRUNC.empty-input", "empty input") \
    X(TRUNC_ARRAY, "TRUNC.array", "input ended inside the array") \
    X(TRUNC_ARCHIVE, "TRUNC.archive", "input ended inside the archive") \
    X(MAGIC_FIRST, "MAGIC.not-npy-or-npz", "not a .npy or .npz file") \
    X(MAGIC_NPY, "MAGIC.npy", "not a .npy file: the magic is not \\x93NUMPY") \
    X(NPY_VERSION, "NPY-VERSION.unsupported", "unsupported .npy version (only 1.0, 2.0, 3.0)") \
    X(HDR_TOO_LARGE_BYTES, "HDR-SIZE.bytes", "the .npy header is larger than max_header_size") \
    X(HDR_TOO_LARGE_CHARS, "HDR-SIZE.characters", "the .npy header has more characters than max_header_size") \
    X(HDR_UTF8, "HDR-TEXT.utf8", "v3.0 header is not valid UTF-8") \
    X(HDR_NOT_DICT, "S-HDR-WS.before-dict", "the header is not a dict literal") \
    X(HDR_AFTER_DICT, "S-HDR-WS.after-dict", "unexpected text after the header dict") \
    X(HDR_WS_CHAR, "S-HDR-WS.whitespace", "whitespace other than space, tab and newline") \
    X(STR_PREFIX, "S-HDR-SYNTAX.string-prefix", "a string prefix (u, b, r, f) before a quote") \
    X(STR_CONCAT, "S-HDR-SYNTAX.concatenation", "two strings in a row (implicit concatenation)") \
    X(HDR_PAREN, "S-HDR-SYNTAX.parentheses", "a value in parentheses that only group") \
    X(HDR_COMMENT, "S-HDR-SYNTAX.comment", "a comment in the header") \
    X(HDR_CONTINUATION, "S-HDR-SYNTAX.continuation", "a backslash line continuation in the header") \
    X(STR_EXPECTED, "S-HDR-SYNTAX.expected-string", "expected a quoted string") \
    X(STR_TRIPLE, "S-HDR-SYNTAX.triple-quote", "triple-quoted strings are not accepted") \
    X(STR_UNTERMINATED, "S-HDR-SYNTAX.unterminated", "unterminated string") \
    X(STR_CONTROL, "S-HDR-SYNTAX.control-char", "control character inside a string") \
    X(STR_ESCAPE, "S-HDR-SYNTAX.escape", "escape sequence not written by repr()") \
    X(STR_ESCAPE_SHORT, "S-HDR-SYNTAX.escape-truncated", "truncated escape") \
    X(STR_ESCAPE_HEX, "S-HDR-SYNTAX.escape-hex", "bad hex digit in an escape") \
    X(DESCR_TITLE_TYPE, "S-DESCR-FORM.title", "a field title must be a string") \
    X(STR_ESCAPE_RANGE, "S-HDR-SYNTAX.escape-range", "escape beyond U+10FFFF") \
    X(INT_EXPECTED, "S-HDR-SYNTAX.expected-int", "expected a decimal integer") \
    X(FIELD_TUPLE_NO_COMMA, "S-HDR-SYNTAX.parenthesized-int", \
      "not a tuple: (n) is the integer n; a field shape may be written n") \
    X(INT_NEGATIVE, "S-HDR-INT.negative", "negative number") \
    X(INT_PLUS, "S-HDR-INT.plus", "unary plus") \
    X(INT_LEADING_ZERO, "S-HDR-INT.leading-zeros", "leading zeros in an integer") \
    X(INT_NOT_DECIMAL, "S-HDR-INT.not-decimal", "only plain decimal integers are accepted") \
    X(INT_SUFFIX, "S-HDR-INT.suffix", "unexpected characters after an integer") \
    X(INT_TOO_LARGE, "HDR-INT.too-large", "integer larger than 2**63-1") \
    X(HDR_DUP_DESCR, "S-HDR-DUPKEY.descr", "duplicate key 'descr'") \
    X(HDR_DUP_FORTRAN, "S-HDR-DUPKEY.fortran_order", "duplicate key 'fortran_order'") \
    X(HDR_DUP_SHAPE, "S-HDR-DUPKEY.shape", "duplicate key 'shape'") \
    X(HDR_DICT_COMMA, "HDR-DICT.expected-comma", "expected ',' or '}'") \
    X(HDR_DICT_COLON, "HDR-DICT.expected-colon", "expected ':' after a key") \
    X(HDR_FORTRAN, "HDR-DICT.fortran-order", "fortran_order must be True or False") \
    X(HDR_KEY, "HDR-DICT.unknown-key", "unknown key (only descr, fortran_order, shape)") \
    X(HDR_MISSING_KEY, "HDR-DICT.missing-key", "the header lacks one of descr, fortran_order, shape") \
    X(TUPLE_NO_COMMA, "HDR-SHAPE.not-a-tuple", "not a tuple: (n) needs a trailing comma") \
    X(TUPLE_COMMA, "HDR-SHAPE.expected-comma", "expected ',' or ')'") \
    X(HDR_ARRAY_SIZE, "HDR-SHAPE.size-overflow", "the array size overflows a 64-bit signed integer") \
    X(HDR_SHAPE_TUPLE, "HDR-SHAPE.not-a-tuple-value", "shape must be a tuple") \
    X(NDIM, "S-NDIM.array", "too many dimensions") \
    X(FIELD_NDIM, "S-NDIM.field", "too many dimensions in a field's shape") \
    X(DESCR_EMPTY, "S-DESCR-ALIAS.empty", "empty descr") \
    X(DESCR_NO_TYPE, "S-DESCR-ALIAS.no-type", "descr has no type") \
    X(DESCR_OBJECT_FORM, "S-DESCR-ALIAS.object-size", "malformed object type") \
    X(DESCR_NO_SIZE, "S-DESCR-ALIAS.no-size", "descr needs an explicit size (aliases are refused)") \
    X(DESCR_SIZE_ZERO, "S-DESCR-ALIAS.leading-zero", "leading zero in the descr size") \
    X(DESCR_NO_ORDER, "S-DESCR-ALIAS.no-byte-order", "descr needs a byte-order character") \
    X(DESCR_CODE, "S-DESCR-ALIAS.type-code", "unknown type code in descr") \
    X(DESCR_DT_FORM, "S-DESCR-ALIAS.datetime-form", "malformed datetime unit") \
    X(DESCR_DT_MULT_LARGE, "S-DESCR-ALIAS.datetime-multiplier", "datetime multiplier too large") \
    X(DESCR_DT_MULT, "S-DESCR-ALIAS.datetime-multiplier-zero", "bad datetime multiplier") \
    X(DESCR_DT_UNIT, "S-DESCR-ALIAS.datetime-unit", "unknown datetime unit") \
    X(DESCR_DT_GENERIC, "S-DESCR-ALIAS.datetime-generic", "generic unit with a multiplier") \
    X(DESCR_TEXT, "S-DESCR-ALIAS.text", "unexpected characters in descr") \
    X(DESCR_NATIVE, "S-DESCR-ALIAS.native-order", "native byte order ('|' or '=') on a multi-byte type") \
    X(DESCR_BAD_SIZE, "S-DESCR-ALIAS.size", "unsupported size for this type code") \
    X(DESCR_SV_SIZE, "S-DESCR-SIZE.string", "string/void size too large") \
    X(DESCR_WIDTH_SIZE, "S-DESCR-SIZE.width", "string/void size too large") \
    X(DESCR_U_SIZE, "S-DESCR-SIZE.unicode", "unicode size too large") \
    X(DESCR_SHAPE_ONE, "S-DESCR-FORM.shape-1", \
      "a field shape of 1 (NumPy 1.x: no subarray, 2.x: shape (1,)); write (1,) or leave it out") \
    X(DESCR_TYPE_FORM, "S-DESCR-FORM.type", "expected a type string, a field list or a subarray tuple") \
    X(DESCR_FIELD_TUPLE, "S-DESCR-FORM.field", "a field must be a tuple") \
    X(DESCR_EMPTY_NAME, "S-DESCR-FORM.empty-name", "empty field name on a non-padding field") \
    X(HDR_DESCR_FORM, "S-DESCR-FORM.top", "descr must be a type string or a field list") \
    X(DESCR_LIST_COMMA, "DESCR-SYNTAX.list-comma", "expected ',' or ']' in a field list") \
    X(DESCR_TITLE_COMMA, "DESCR-SYNTAX.title-comma", "expected ',' between title and name") \
    X(DESCR_TITLE_CLOSE, "DESCR-SYNTAX.title-close", "expected ')' after (title, name)") \
    X(DESCR_NAME_COMMA, "DESCR-SYNTAX.name-comma", "expected ',' after a field name") \
    X(DESCR_FIELD_CLOSE, "DESCR-SYNTAX.field-close", "expected ')' at the end of a field") \
    X(DESCR_SUB_COMMA, "DESCR-SYNTAX.subarray-comma", "expected ',' in a subarray type") \
    X(DESCR_SUB_CLOSE, "DESCR-SYNTAX.subarray-close", "expected ')' after a subarray type") \
    X(DESCR_WIDTH_TUPLE, "DESCR-SHAPE.width-tuple", "a zero-size type takes its width as an integer, not a tuple") \
    X(FIELD_TUPLE_COMMA, "DESCR-SHAPE.expected-comma", "expected ',' or ')'") \
    X(DESCR_DIM, "DESCR-SIZE.dimension", "a subarray dimension does not fit a C int") \
    X(DESCR_COUNT_OVF, "DESCR-SIZE.count-overflow", "subarray element count overflows") \
    X(DESCR_COUNT, "DESCR-SIZE.count", "subarray element count does not fit a C int") \
    X(DESCR_FIELD_SIZE, "DESCR-SIZE.field", "field size too large") \
    X(DESCR_STRUCT_SIZE, "DESCR-SIZE.struct", "structured itemsize too large") \
    X(DESCR_DUP_NAME, "DESCR-FIELD.duplicate-name", "duplicate field name or title") \
    X(PICKLE, "PICKLE.object", "object arrays are refused (they need pickle)") \
    X(NPY_TRAIL, "S-NPY-TRAIL.after-array", "bytes after the end of the array") \
    X(NPY_TRAIL_AFTER_END, "S-NPY-TRAIL.after-end", "bytes after the end") \
    X(ZIP_MEMBER_TRAIL, "S-ZIP-MEMBER-TRAIL.after-array", "member content continues after the end of the array") \
    X(ZIP_CONTENT_SHORT, "S-ZIP-LOCAL.content-short", "member content ends before the array its .npy header declares") \
    X(Z64_SHORT, "S-ZIP-LAYOUT.zip64-short", "ZIP64 end record too short") \
    X(Z64_CD, "S-ZIP-LAYOUT.zip64-directory", "ZIP64 end record: central directory size or offset is wrong") \
    X(LOC_OFFSET, "S-ZIP-LAYOUT.locator-offset", "ZIP64 locator does not point at the ZIP64 end record") \
    X(EOCD_CD_SIZE, "S-ZIP-LAYOUT.directory-size", "end record central directory size is wrong") \
    X(EOCD_CD_OFFSET, "S-ZIP-LAYOUT.directory-offset", "end record central directory offset is wrong") \
    X(COMMENT_PAST_END, "S-ZIP-LAYOUT.comment-past-end", \
      "input ended inside the archive comment (its length runs past the end)") \
    X(LFH_AFTER_CD, "S-ZIP-LAYOUT.local-after-directory", "local header after the central directory") \
    X(SIG_UNEXPECTED, "S-ZIP-LAYOUT.signature", "unexpected record signature") \
    X(NAME_NUL, "S-ZIP-NAME.nul", "member name contains a NUL byte") \
    X(NAME_CONTROL, "S-ZIP-NAME.control", "member name contains a control character") \
    X(NAME_BACKSLASH, "S-ZIP-NAME.backslash", "member name contains a backslash") \
    X(NAME_DOTDOT, "S-ZIP-NAME.dotdot", "member name has a '..' path component") \
    X(NAME_ABSOLUTE, "S-ZIP-NAME.absolute", "member name is an absolute path") \
    X(NAME_EMPTY_KEY, "S-ZIP-NAME.empty-key", "member name '.npy' gives the empty np.load key") \
    X(NAME_DIRECTORY, "S-ZIP-NAME.directory", "member name ends with '/' (a directory entry)") \
    X(NAME_CP437, "S-ZIP-NAME.no-utf8-flag", "non-ASCII member name without the UTF-8 flag (bit 11)") \
    X(NAME_UTF8, "S-ZIP-NAME.utf8", "member name is not valid UTF-8") \
    X(NAME_EMPTY, "S-ZIP-NAME.empty", "empty member name") \
    X(NAME_DUPLICATE, "S-ZIP-DUP.name-or-key", \
      "member name or key already used (np.load would return only one of them)") \
    X(EXTRA_LEFTOVER, "S-ZIP-EXTRA.leftover", "extra field: leftover bytes after the last field") \
    X(EXTRA_TWO_ZIP64, "S-ZIP-EXTRA.two-zip64", "extra field: two ZIP64 fields") \
    X(EXTRA_ZIP64_LOCAL, "S-ZIP-EXTRA.local-zip64-length", "local ZIP64 extra field must hold both sizes (16 bytes)") \
    X(EXTRA_ZIP64_CENTRAL, "S-ZIP-EXTRA.central-zip64-length", \
      "central ZIP64 extra field length differs from what its sentinels imply") \
    X(EXTRA_UNICODE, "S-ZIP-EXTRA.unicode-path", \
      "Info-ZIP Unicode path/comment extra field (readers disagree on which name wins)") \
    X(EXTRA_OVERRUN, "ZIP-EXTRA.overrun", "extra field: a field runs past the block") \
    X(EXTRA_OVERRUN_LOCAL, "S-ZIP-EXTRA.overrun-local", "local extra field: a field runs past the block") \
    X(ZIP_LFH_VERSION, "S-ZIP-FEATURES.local-version", "local header needs a ZIP version above 6.3") \
    X(ZIP_ENCRYPTED, "S-ZIP-FEATURES.encrypted", "encrypted member") \
    X(ZIP_PATCHED, "S-ZIP-FEATURES.patched", "patched data (flag bit 5)") \
    X(ZIP_METHOD, "S-ZIP-FEATURES.method", \
      "compression method other than stored or deflate (as bzip2 12, LZMA 14, Zstandard 93)") \
    X(ZIP_FLAGS, "S-ZIP-FEATURES.flags", "unknown general purpose flag bits") \
    X(DISK_CD, "S-ZIP-FEATURES.disk-central", "multi-disk archive") \
    X(DISK_Z64, "S-ZIP-FEATURES.disk-zip64", "multi-disk archive") \
    X(DISK_LOC, "S-ZIP-FEATURES.disk-locator", "multi-disk archive") \
    X(DISK_EOCD, "S-ZIP-FEATURES.disk-end-record", "multi-disk archive") \
    X(Z64_EXTENSIBLE, "S-ZIP-FEATURES.zip64-extensible", "ZIP64 end record with extensible data") \
    X(ZIP_CD_VERSION, "ZIP-FEATURES.central-version", "central directory needs a ZIP version above 6.3") \
    X(DD_BLOB, "S-ZIP-DD-BLOB.stored", \
      "a stored member with a data descriptor must be a .npy (its end cannot be found otherwise)") \
    X(LFH_ZIP64_SIZES, "S-ZIP-CRC.local-zip64", "local header sizes disagree with its ZIP64 extra field") \
    X(LFH_STORED_SIZES, "S-ZIP-CRC.stored-sizes", "stored member with different compressed and uncompressed sizes") \
    X(CRC_LOCAL, "S-ZIP-CRC.local", "CRC-32 differs from the local header's") \
    X(SIZE_LOCAL_C, "S-ZIP-CRC.local-csize", "compressed size differs from the local header's") \
    X(SIZE_LOCAL_U, "S-ZIP-CRC.local-usize", "size differs from the local header's") \
    X(SIZE_LOCAL_Z64, "S-ZIP-CRC.local-zip64-sizes", "sizes differ from the local ZIP64 extra field") \
    X(INFLATE_LONGER, "S-ZIP-CRC.inflated-longer", "inflated member is larger than the local header says") \
    X(INFLATE_SIZE, "S-ZIP-CRC.inflated-size", "inflated size differs from the local header's") \
    X(CRC_DD, "S-ZIP-CRC.descriptor", "CRC-32 differs from the data descriptor's") \
    X(SIZE_DD, "S-ZIP-CRC.descriptor-sizes", "sizes differ from the data descriptor's") \
    X(DEFLATE_SHORT, "S-ZIP-LOCAL.deflate-unterminated", \
      "the deflate stream does not end at the member's compressed size") \
    X(DEFLATE_END_EARLY, "S-ZIP-DEFLATE-END.early", "the deflate stream ends before the member's compressed size") \
    X(INFLATE_DATA, "S-ZIP-LOCAL.inflate", "invalid deflate data") \
    X(CD_FEWER, "S-ZIP-CD.fewer-entries", "the central directory lists fewer members than the stream holds") \
    X(CD_EXTRA_ENTRY, "S-ZIP-CD.extra-entry", "central directory record without a local header in the stream") \
    X(CD_FLAGS, "S-ZIP-CD.flags", "central directory flags differ from the local header's") \
    X(CD_METHOD, "S-ZIP-CD.method", "central directory method differs from the local header's") \
    X(CD_CRC, "S-ZIP-CD.crc", "central directory CRC-32 differs from the member's") \
    X(CD_NAME_LEN, "S-ZIP-CD.name-length", "central directory name differs from the local header's") \
    X(CD_NAME, "S-ZIP-CD.name", "central directory name differs from the local header's") \
    X(CD_OFFSET, "S-ZIP-CD.offset", "central directory offset does not point at the member's local header") \
    X(CD_SIZES, "S-ZIP-CD.sizes", "central directory sizes differ from the member's") \
    X(Z64_COUNT, "S-ZIP-COUNT.zip64", "ZIP64 end record member count differs from the stream") \
    X(EOCD_COUNT, "S-ZIP-COUNT.end-record", "end record member count differs from the stream") \
    X(COMMENT_SIG, "S-ZIP-COMMENT.signature", "the archive comment contains a ZIP record signature") \
    X(EOCD_FIND_FAILS_FIXED, "S-ZIP-EOCD-FIND.fails-fixed", \
      "zipfile's end-record search (with the gh-139700 fix) fails on this archive") \
    X(EOCD_FIND_FAILS, "S-ZIP-EOCD-FIND.fails", "zipfile's end-record search fails on this archive") \
    X(EOCD_FIND_OTHER, "S-ZIP-EOCD-FIND.other-end-record", \
      "zipfile's end-record search takes another end record (a signature after the real one)") \
    X(EOCD_FIND_LOCATOR, "S-ZIP-EOCD-FIND.locator", \
      "zipfile reads the bytes before the end record as a ZIP64 locator") \
    X(EOCD_FIND_Z64, "S-ZIP-EOCD-FIND.zip64-end-record", "zipfile takes another ZIP64 end record") \
    X(EOCD_FIND_CD, "S-ZIP-EOCD-FIND.directory", "zipfile reads the central directory elsewhere") \
    X(EOCD_FIND_MULTIDISK, "ZIP-EOCD-FIND.multidisk", \
      "zipfile reads the bytes before the end record as a ZIP64 locator for several disks") \
    X(ZIP_TRAIL, "S-ZIP-TRAIL.after-archive", "bytes after the end of the archive") \
    X(ZIP_TRAIL_AFTER_END, "S-ZIP-TRAIL.after-end", "bytes after the end") \
    X(LIMIT_TOTAL_ARRAY, "LIMIT.max_total_bytes.array", "the array is larger than max_total_bytes allows") \
    X(LIMIT_FIELDS, "LIMIT.max_fields", "too many field names (max_fields)") \
    X(LIMIT_DEPTH, "LIMIT.max_depth", "dtype nesting deeper than max_depth") \
    X(LIMIT_MEMBERS, "LIMIT.max_members", "more members than max_members") \
    X(LIMIT_MEMORY, "LIMIT.max_memory", "the parser would hold more memory than max_memory") \
    X(LIMIT_NAME, "LIMIT.max_name_len", "member name longer than max_name_len") \
    X(LIMIT_EXTRA, "LIMIT.max_extra_len", "extra field longer than max_extra_len") \
    X(LIMIT_EXTRA_CD, "LIMIT.max_extra_len.central", "extra field longer than max_extra_len") \
    X(LIMIT_TOTAL_MEMBER, "LIMIT.max_total_bytes.member", "member larger than max_total_bytes allows") \
    X(LIMIT_TOTAL_INFLATE, "LIMIT.max_total_bytes.inflated", "inflated output exceeds max_total_bytes") \
    X(NOMEM_HEADER, "NOMEM.header", "allocating the header buffer failed") \
    X(NOMEM_FIELDS, "NOMEM.field-names", "allocating the field list failed") \
    X(NOMEM_DESCR, "NOMEM.descr-stack", \
      "allocating the descr parser's stack or the dtype tree failed, or one of their pools passed 128 MiB") \
    X(NOMEM_TAIL, "NOMEM.end-search", "out of memory for the end-record search") \
    X(NOMEM_RECORDS_SIZE, "NOMEM.records-size", "allocation too large") \
    X(NOMEM_RECORDS, "NOMEM.records", "out of memory for member records") \
    X(NOMEM_NAME, "NOMEM.name", "out of memory for the name buffer") \
    X(NOMEM_EXTRA, "NOMEM.extra", "out of memory for the extra buffer") \
    X(NOMEM_NAMES, "NOMEM.names", "out of memory for member names") \
    X(NOMEM_WINDOW, "NOMEM.inflate-window", "out of memory for the inflate window") \
    X(NOMEM_ZIN, "NOMEM.inflate-input", "out of memory for the inflate input") \
    X(NOMEM_INFLATE, "NOMEM.inflate", "out of memory inside inflate") \
    X(NOMEM_NAME_TABLE, "NOMEM.name-table", "out of memory for the name table") \
    X(NOMEM_POLICY, "NOMEM.policy", "out of memory for the policy's state") \
    X(CALL_STATE, "CALL.state", "corrupt parser state") \
    X(CALL_ZLIB, "CALL.zlib", "zlib refused to start or reset inflate") \
    X(CALL_ARG, "CALL.argument", "bad argument") \
    X(CALL_DATA_INTO, "CALL.data-into", "npzs_data_into outside an array's data, or a destination too small") \
    X(CALL_SEQUENCE, "CALL.sequence", "npzs_npy_sequence after the first byte, or with NPZS_LENIENT_NPY_TRAILING") \
    X(CALL_EVENT_SIZE, "CALL.event-size", "npzs_event of a size this library does not know") \
    X(CALL_CONTENT_STATE, "CALL.content-state", "corrupt content state") \
    X(CALL_DESCR_STACK, "CALL.descr-stack", "descr parser stack overflow") \
    X(CALL_DESCR_FRAME, "CALL.descr-frame", "corrupt descr parser frame") \
    X(CALL_PAR_FREE, "CALL.par-free", \
      "npzs_par_free inside a member its helper inflated: the input cannot go on without it") \
    X(CALL_EVENTS, "CALL.events", "npzs_events with a bit that names no event") \
    X(CALL_PAR_TAKE, "CALL.par-take", "npzs_par_take_data outside an array's data, or twice") \
    X(POLICY_FORMAT, "POLICY.format", "the input is not of the format the policy names") \
    X(POLICY_REQUIRED, "POLICY.required", "a member the policy requires is missing") \
    X(POLICY_MEMBERS, "POLICY.members", "a member the policy does not list (allow_other_members is false)") \
    X(POLICY_MAX_MEMBERS, "POLICY.max-members", "more members than the policy's max_members") \
    X(POLICY_BLOB, "POLICY.blob", "a member that is not a .npy array, where the policy allows no blobs") \
    X(POLICY_BLOB_KIND, "POLICY.blob-kind", "a blob of a kind the policy does not allow (a pickle, say)") \
    X(POLICY_KIND, "POLICY.kind", "an array where the policy wants a blob") \
    X(POLICY_DTYPE, "POLICY.dtype", "a dtype the policy does not allow") \
    X(POLICY_BYTE_ORDER, "POLICY.byte-order", "a byte order the policy does not allow") \
    X(POLICY_FORTRAN, "POLICY.fortran-order", "an array order (C or Fortran) the policy does not allow") \
    X(POLICY_NDIM, "POLICY.ndim", "a number of dimensions the policy's shape does not allow") \
    X(POLICY_SHAPE, "POLICY.shape", "a dimension differs from the policy's shape") \
    X(POLICY_SHAPE_VAR, "POLICY.shape-var", \
      "a named dimension differs from its value in an earlier member or dimension") \
    X(POLICY_DIM_RANGE, "POLICY.dim-range", "a named dimension outside its range in the policy's dims") \
    X(POLICY_ELEMENTS, "POLICY.elements", "an element count outside the policy's elements range") \
    X(POLICY_MEMBER_BYTES, "POLICY.member-bytes", "a member larger than the policy's max_bytes") \
    X(POLICY_TOTAL_BYTES, "POLICY.total-bytes", "more member bytes in all than the policy's max_total_bytes") \
    X(POLICY_NAN, "POLICY.nan", "a NaN (or a datetime's NaT) where the policy wants finite values") \
    X(POLICY_INF, "POLICY.inf", "an infinity where the policy wants finite values") \
    X(POLICY_RANGE, "POLICY.range", "a value outside the policy's range") \
    X(POLICY_CHECK_TYPE, "POLICY.check-type", \
      "finite or range asked of a dtype whose values are not checked (long double, structured, text, void; range on complex or datetimes)") \
    X(POLICY_SHA256, "POLICY.sha256", "the array's SHA-256 differs from the value the policy pins") \
    X(CALL_POLICY, "CALL.policy", "npzs_policy_use after the first byte") \
    X(CALL_HASH, "CALL.hash", "npzs_hash after the first byte, with an unknown bit, or in a build without SHA-256") \
    X(INV_FRAMING, "INV.framing", \
      "kept going: bytes that start no ZIP record where one was expected (nothing after them can be listed)") \
    X(INV_CENTRAL_ONLY, "INV.central-only", \
      "kept going: a central directory entry whose local header the stream never met") \
    X(INV_METHOD, "INV.method", \
      "kept going: a member compressed with a method other than stored and deflate, or encrypted (its content is not checked)") \
    X(INV_SIZE, "INV.size", \
      "kept going: the member's data disagrees with the sizes its header or data descriptor declares") \
    X(INV_CRC, "INV.crc", \
      "kept going: the member's CRC-32 differs from the one its header or data descriptor declares") \
    X(INV_INFLATE, "INV.inflate", "kept going: the member's deflate data is invalid") \
    X(INV_TRUNCATED, "INV.truncated", "kept going: the input ended inside this member or record") \
    X(INV_LIMIT, "INV.limit", \
      "kept going: a limit (max_members, max_name_len, max_total_bytes) stopped the listing here") \
    X(SCAN_PICKLE_FILE, "SCAN.pickle-file", "the file is a pickle: a loader that unpickles it runs the code it names") \
    X(SCAN_PICKLE_MEMBER, "SCAN.pickle-member", \
      "a member is a pickle: np.load returns its bytes, a later loader (torch.load, pickle.load) would run it") \
    X(SCAN_PICKLE_NESTED, "SCAN.pickle-nested", "a pickle inside a zip or gzip member") \
    X(SCAN_NESTED_DEPTH, "SCAN.nested-depth", "a zip or gzip nested deeper than --nested-depth: not looked into") \
    X(SCAN_NESTED_BYTES, "SCAN.nested-bytes", "a nested zip or gzip larger than --nested-bytes: not looked into") \
    X(SCAN_NESTED_BAD, "SCAN.nested-invalid", \
      "a nested gzip member whose data is invalid or cut short: not looked into") \
    X(SCAN_FILE_SIZE, "SCAN.max-file-size", "a file larger than --max-file-size: skipped, not read") \
    X(SCAN_TIMEOUT, "SCAN.timeout", "a file not finished within --timeout seconds: skipped") \
    X(SCAN_SYMLINK, "SCAN.symlink", "a symbolic link: not followed, skipped") \
    X(SCAN_NOT_REGULAR, "SCAN.not-regular", "not a regular file (a FIFO, a device, a socket): skipped")

/* What a user can do about a rule (npzs_rule_hint, `npzstream explain`): X("prefix", "hint"), the
 * longest prefix of the rule id that is listed wins.  Written for the person who has the file,
 * not for ZIP or NumPy experts. */
#define NPZS_HINT_MAP(X) \
    X("TRUNC.", "the file was cut short: download or copy it again") \
    X("MAGIC.", "this is not a NumPy file (a .npy starts with \\x93NUMPY, an .npz with PK): check what was sent") \
    X("NPY-VERSION.", "write the file again with np.save (formats 1.0, 2.0 and 3.0 are read)") \
    X("HDR-SIZE.", \
      "the header is longer than max_header_size (10000, NumPy's own limit): raise it only for a file you trust (--max-header-size, max_header_size=)") \
    X("HDR-", \
      "the .npy header is malformed: the file was damaged or not written by NumPy; write it again with np.save") \
    X("DESCR-", "the dtype in the .npy header is malformed: write the file again with np.save") \
    X("S-HDR-", \
      "a header NumPy itself never writes (SECURITY.md says why it is refused): write the file again with np.save") \
    X("S-HDR-WS.after-dict", \
      "written by npyjs or a similar writer: --lenient-header-newline (lenient_header_newline=True) accepts it") \
    X("S-DESCR-", "a dtype NumPy never writes this way: write the file again with np.save") \
    X("S-DESCR-ALIAS.", \
      "the dtype must be spelled as NumPy writes it ('<f8', not 'float64'): write the file again with np.save") \
    X("S-NDIM.", \
      "more dimensions than NumPy 1.x reads (32): raise --max-ndim (max_ndim=) up to 64 if your readers are NumPy 2") \
    X("S-NPY-TRAIL.", \
      "bytes follow the array (a file overwritten in place?): --lenient-npy-trailing (lenient_npy_trailing=True) ignores them, as np.load does") \
    X("PICKLE.", \
      "object arrays are stored with pickle, which can run code when loaded: save plain arrays instead; load it with np.load(allow_pickle=True) only if you trust who made it") \
    X("ZIP-", "the archive is malformed: write it again with np.savez") \
    X("S-ZIP-", \
      "an archive layout np.savez never writes (SECURITY.md says why it is refused): write it again with np.savez") \
    X("S-ZIP-CRC.", \
      "the archive is damaged (its checksums or sizes disagree with its data): download or copy it again") \
    X("S-ZIP-CD.", \
      "the archive is damaged or edited (its directory disagrees with its members): download it again or write it with np.savez") \
    X("S-ZIP-LOCAL.", \
      "the archive is damaged (a member's data is not what its header says): download or copy it again") \
    X("S-ZIP-FEATURES.", \
      "a ZIP feature np.savez never uses (another compression, encryption, multiple disks): write it again with np.savez or np.savez_compressed") \
    X("S-ZIP-NAME.", \
      "a member name np.savez never writes (a path, '..', a directory, control characters): write the archive again with np.savez") \
    X("S-ZIP-DUP.", \
      "two members share a name or key, and np.load would return only one: write the archive again with np.savez") \
    X("S-ZIP-MEMBER-TRAIL.", \
      "a member holds more bytes than its array: the archive was edited; write it again with np.savez") \
    X("S-ZIP-TRAIL.", \
      "bytes follow the end of the archive: the file was appended to or damaged; write it again with np.savez") \
    X("LIMIT.max_total_bytes", \
      "the arrays are larger in all than max_total_bytes (1 GiB by default): if you trust the file, raise it (npzstream --max-total-bytes 4Gi; Python max_total_bytes=\"4Gi\"; C npzs_limits.max_total_bytes)") \
    X("LIMIT.max_bytes", \
      "the arrays to keep are larger than max_bytes (1 GiB by default): if you trust the file, raise it (max_bytes=\"4Gi\")") \
    X("LIMIT.max_members", \
      "more members than max_members (100000): if you trust the file, raise it (--max-members, max_members=)") \
    X("LIMIT.max_memory", \
      "the parser would need more memory than max_memory (256 MiB): raise it (--max-memory, max_memory=) for a file you trust") \
    X("LIMIT.max_name_len", \
      "a member name longer than max_name_len (4096 bytes): raise it (--max-name-len, max_name_len=) for a file you trust") \
    X("LIMIT.max_extra_len", \
      "a ZIP extra field longer than max_extra_len: raise it (--max-extra-len, max_extra_len=) for a file you trust") \
    X("LIMIT.max_fields", \
      "a structured dtype with more fields than max_fields (100000): raise it (--max-fields, max_fields=) for a file you trust") \
    X("LIMIT.max_depth", \
      "a structured dtype nested deeper than max_depth (32): raise it (--max-depth, max_depth=) for a file you trust") \
    X("POLICY.", \
      "the file breaks your policy (the detail says where): it is not the file you expect; fix the file, or the policy if it is too strict") \
    X("NOMEM.", "the machine ran out of memory: retry with more free memory") \
    X("CALL.", \
      "a bug in the program that uses npzstream (the API was called the wrong way): report it to its authors") \
    X("INV.", \
      "the archive is damaged after the first error: the members listed past it are what the stream could still frame; do not load it") \
    X("SCAN.pickle", \
      "a pickle can run any code when loaded: do not load this file with torch.load, pickle.load or np.load(allow_pickle=True) unless you trust who made it; hand the pickle to a pickle scanner to see what it calls") \
    X("SCAN.nested", \
      "a container inside a member could not be looked into within the scan's bounds: raise --nested-depth or --nested-bytes for a file you trust, or treat it as unsafe") \
    X("SCAN.max-file-size", "raise --max-file-size to scan it") \
    X("SCAN.timeout", "raise --timeout to scan it") \
    X("SCAN.symlink", "scan the file the link points to by its own name") \
    X("SCAN.not-regular", "copy its bytes to a regular file, or pipe them to npzstream scan -")

enum npzs_rule {
    NPZS_R_NONE = 0,
#define NPZS_X_RULE(name, id, msg) NPZS_R_##name,
    NPZS_RULE_MAP(NPZS_X_RULE)
#undef NPZS_X_RULE
        NPZS_R__END
};

/* tables.c: a rule's id and message (NULL for none) */
const char *npzs__rule_id(int rule);
const char *npzs__rule_msg(int rule);

#endif
