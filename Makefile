# npzstream -- see README.md.  `make` builds the library and CLI, `make test` runs every test.
# CC, CFLAGS, LDFLAGS and LDLIBS are the caller's (make CFLAGS=-O0 works); the flags the build
# needs are in NPZS_FLAGS.  mk/*.mk hold the optional targets (install, examples, bench, cover,
# the differential campaign, the reference matrix), fuzz/fuzz.mk the fuzzing targets.
CC      ?= cc
PYTHON  ?= /usr/bin/python3
CFLAGS  ?= -O2 -g
WARN     = -Wall -Wextra -Wpedantic -Wconversion -Wshadow -Wimplicit-fallthrough -Wstrict-prototypes
CSTD     = -std=c11
WERROR  ?= $(if $(CI),-Werror,)
INC      = -Iinclude
# ISA-L (Debian: libisal-dev) is used where it is installed, only for NPZS_LENIENT_FAST_INFLATE
# (an opt-in: zlib stays the inflater); make ISAL=0 builds without it.
ifeq ($(origin ISAL),undefined)
ISAL    := $(shell printf '\043include <isa-l/igzip_lib.h>\nint main(void) { struct inflate_state s; isal_inflate_init(&s); return 0; }\n' | $(CC) -x c - -o /dev/null -lisal 2>/dev/null && echo 1)
endif
ISAL_DEF = $(if $(filter 1,$(ISAL)),-DNPZS_HAVE_ISAL,)
# OpenSSL's libcrypto (Debian: libssl-dev) gives SHA-256 of array data (npzs_hash, a policy's
# "hash" and pinned values) where its headers are installed; make OPENSSL=0 builds without it (hashing
# is then refused, never faked).  libcrypto is not linked: src/bytes/sha256.c loads it the first time a
# hash is asked for (start-up costs nothing without one: bench/README.md, issue 44), so the library
# needs dlopen (in the C library since glibc 2.34, -ldl before).
ifeq ($(origin OPENSSL),undefined)
OPENSSL := $(shell printf '\043include <openssl/opensslv.h>\n\043include <openssl/sha.h>\nint main(void) { return (int)sizeof(SHA256_CTX) == 0; }\n' | $(CC) -x c - -o /dev/null 2>/dev/null && echo 1)
endif
# libseccomp (Debian: libseccomp-dev) gives the command line its system-call filter (cli/sandbox.c:
# it knows each architecture's call numbers and argument layouts) where it is installed; make
# SECCOMP=0 builds without (then only Landlock confines, where the kernel has it).  Only the command
# line links it, never the library.
ifeq ($(origin SECCOMP),undefined)
SECCOMP := $(shell printf '\043include <seccomp.h>\nint main(void) { return seccomp_init(0) == 0; }\n' | $(CC) -x c - -o /dev/null -lseccomp 2>/dev/null && echo 1)
endif
SECCOMP_DEF = $(if $(filter 1,$(SECCOMP)),-DNPZS_HAVE_SECCOMP,)
CLI_LIBS = $(if $(filter 1,$(SECCOMP)),-lseccomp,)
DL_LIB  := $(shell printf '\043include <dlfcn.h>\nint main(void) { return dlopen(0, RTLD_NOW) != 0; }\n' | $(CC) -x c - -o /dev/null 2>/dev/null || echo -ldl)
SSL_DEF  = $(if $(filter 1,$(OPENSSL)),-DNPZS_HAVE_OPENSSL,)
SSL_LIB  = $(if $(filter 1,$(OPENSSL)),$(DL_LIB),)
FEAT_DEF = $(ISAL_DEF) $(SSL_DEF)
# The command-line tool is compiled with the library's sources in one link-time-optimised program
# where the compiler can (gcc, clang): the dozen calls a member makes between the library's files
# (records, names, content) are inlined, and the states-reached bitmaps only the tests read are
# left out (NPZS_NO_VISIT, src/internal.h).  make LTO= builds it without.
ifeq ($(origin LTO),undefined)
LTO     := $(shell printf 'int main(void) { return 0; }\n' | $(CC) -x c - -flto=auto -o /dev/null 2>/dev/null && echo -flto=auto)
endif
CLI_LTO  = $(if $(LTO),$(LTO) -DNPZS_NO_VISIT,)
NPZS_FLAGS = $(CSTD) $(WARN) $(WERROR) $(INC) -fvisibility=hidden $(FEAT_DEF)
LDLIBS  += $(if $(filter 1,$(ISAL)),-lisal,) $(SSL_LIB) -lz -lm -pthread
SONAME   = libnpzstream.so.0

# the library: a folder per layer under src/, the API and dispatcher (src/npzs.c) on top
# (README.md, "Layout"); every source of every layer is built
SRC      = src/npzs.c $(sort $(wildcard src/*/*.c))
HDR      = include/npzstream.h include/npzstream_par.h include/npzstream_vlen.h include/npzstream_inv.h src/internal.h \
           $(sort $(wildcard src/*/*.h))
# the report (what is printed of an input: the CLI's and the WebAssembly module's), and the CLI
REPORT_SRC = report/report.c report/keep.c report/parts.c report/write.c
CLI_SRC  = cli/main.c cli/opts.c cli/io.c cli/run.c cli/batch.c cli/output.c cli/sandbox.c cli/cmd_check.c cli/cmd_ls.c \
           cli/cmd_extract.c cli/cmd_trace.c cli/cmd_vlen.c cli/cmd_refs.c cli/cmd_scan.c $(REPORT_SRC)
CLI_HDR  = $(wildcard cli/*.h report/*.h)
B        = build

# the one default goal: mk/*.mk, included below, define rules before `all`
.DEFAULT_GOAL := all

# The sanitizer build: the library compiled once with ASan and UBSan (build/san/libnpzstream.a),
# every sanitizer binary linked against it; a test build, with the test hooks (NPZS_TESTING).
TEST_DEF = -DNPZS_TESTING
SAN      = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
SAN_FLAGS = $(CSTD) -O1 -g $(WARN) $(WERROR) $(INC) $(FEAT_DEF) $(SAN) -DNPZS_CONTRACTS $(TEST_DEF)
BS       = $(B)/san
SAN_OBJ  = $(SRC:src/%.c=$(BS)/%.o)
SAN_LIB  = $(BS)/libnpzstream.a

TEST_DEPS =
include $(sort $(wildcard mk/*.mk))
OBJ      = $(SRC:src/%.c=$(B)/%.o)
PIC_OBJ  = $(SRC:src/%.c=$(B)/pic/%.o)


.PHONY: all test check demo clean
all: $(B)/libnpzstream.a $(B)/libnpzstream.so $(B)/npzstream

$(B)/%.o: src/%.c $(HDR) | $(B)
	@mkdir -p $(dir $@)
	$(CC) $(NPZS_FLAGS) $(CFLAGS) -c $< -o $@
$(B)/pic/%.o: src/%.c $(HDR) | $(B)
	@mkdir -p $(dir $@)
	$(CC) $(NPZS_FLAGS) $(CFLAGS) -fPIC -c $< -o $@
$(B)/libnpzstream.a: $(OBJ)
	rm -f $@ && ar rcs $@ $^
$(B)/libnpzstream.so: $(PIC_OBJ)
	$(CC) $(CFLAGS) $(LDFLAGS) -shared -Wl,-soname,$(SONAME) -o $@ $^ $(LDLIBS)
$(B)/npzstream: $(CLI_SRC) $(CLI_HDR) $(SRC) $(HDR) | $(B)
	$(CC) $(NPZS_FLAGS) $(SECCOMP_DEF) $(CFLAGS) $(CLI_LTO) $(LDFLAGS) -o $@ $(CLI_SRC) $(if $(LTO),$(SRC),$(B)/libnpzstream.a) $(LDLIBS) $(CLI_LIBS)
$(B):
	@mkdir -p $(B)

$(BS)/%.o: src/%.c $(HDR)
	@mkdir -p $(dir $@)
	$(CC) $(SAN_FLAGS) -c $< -o $@
$(SAN_LIB): $(SAN_OBJ)
	rm -f $@ && ar rcs $@ $^
$(BS)/npzstream: $(CLI_SRC) $(CLI_HDR) $(SAN_LIB) $(HDR)
	$(CC) $(SAN_FLAGS) $(SECCOMP_DEF) -o $@ $(CLI_SRC) $(SAN_LIB) $(LDLIBS) $(CLI_LIBS)

# The library with its test hooks (NPZS_TESTING: the states reached, the header memo's switch,
# the helper's thresholds, the fast decoder's hand-over to zlib), which the C suites, the fuzzers
# and the sanitizer build are compiled with: the library its users get ($(B)/libnpzstream.a and
# .so) defines none of them (tests/cli/test_install.py checks the installed copy with nm).
BX       = $(B)/testing
TEST_LIB = $(BX)/libnpzstream.a
$(BX)/%.o: src/%.c $(HDR)
	@mkdir -p $(dir $@)
	$(CC) $(NPZS_FLAGS) $(CFLAGS) $(TEST_DEF) -c $< -o $@
$(TEST_LIB): $(SRC:src/%.c=$(BX)/%.o)
	rm -f $@ && ar rcs $@ $^

# The C suites, all on one harness (tests/c/check.h: CHECK, --only, --list, the last line
# `NAME: N passed, M failed`), compiled with NPZS_TESTING against the library's test build: the
# test hooks are for them (their declarations, in src/internal.h, src/par/par.h and
# src/zip/fastinf.h, are seen only under it).
# $(call c_suite,NAME,SOURCES,FLAGS) builds $(B)/NAME against the library's test build and $(BS)/NAME
# against its sanitizer build.
TEST_HDR = tests/c/check.h tests/api/api.h fuzz/common.h $(HDR)
define c_suite
$(B)/$(1): $(2) $(TEST_HDR) $(TEST_LIB)
	$(CC) $(NPZS_FLAGS) $(CFLAGS) $(TEST_DEF) $(3) -o $$@ $(2) $(TEST_LIB) $(LDLIBS)
$(BS)/$(1): $(2) $(TEST_HDR) $(SAN_LIB)
	$(CC) $(SAN_FLAGS) $(3) -o $$@ $(2) $(SAN_LIB) $(LDLIBS)
endef
# the API suite (tests/api: one file per concern, with the fuzz driver's oracles)
TEST_API_SRC = $(sort $(wildcard tests/api/*.c)) fuzz/common.c fuzz/zfview.c
$(eval $(call c_suite,test_api,$(TEST_API_SRC),-Isrc -Ifuzz))
# the vlen API suite
$(eval $(call c_suite,test_vlen_api,tests/vlen/test_vlen_api.c,))
TEST_DEPS += $(B)/test_vlen_api $(BS)/test_vlen_api
# policies, hashes and sniffing (tests/policy/test_policy.c, with the fuzz driver)
TEST_POLICY_SRC = tests/policy/test_policy.c fuzz/common.c fuzz/zfview.c
$(eval $(call c_suite,test_policy,$(TEST_POLICY_SRC),-Isrc -Ifuzz))
TEST_DEPS += $(B)/test_policy $(BS)/test_policy
# the inventory walker (tests/inv/test_inv.c: every INV.* rule, every push size, allocation failures)
TEST_INV_SRC = tests/inv/test_inv.c fuzz/common.c fuzz/zfview.c
$(eval $(call c_suite,test_inv,$(TEST_INV_SRC),-Isrc -Ifuzz))
TEST_DEPS += $(B)/test_inv $(BS)/test_inv
# the library once more with a libcrypto that cannot be loaded (its name is one no system has):
# hashing refused, as where libcrypto is missing at run time (test_policy --sha256-absent, and the
# command line's refusals in tests/policy/test_policy_cli.py)
BNC      = $(B)/nocrypto
$(BNC)/bytes/sha256.o: src/bytes/sha256.c $(HDR)
	@mkdir -p $(dir $@)
	$(CC) $(NPZS_FLAGS) $(CFLAGS) $(TEST_DEF) -DNPZS_CRYPTO_SONAME='"libcrypto-absent.so.0"' -c $< -o $@
$(BNC)/libnpzstream.a: $(filter-out $(BX)/bytes/sha256.o,$(SRC:src/%.c=$(BX)/%.o)) $(BNC)/bytes/sha256.o
	rm -f $@ && ar rcs $@ $^
$(BNC)/npzstream: $(CLI_SRC) $(wildcard cli/*.h) $(BNC)/libnpzstream.a $(HDR)
	$(CC) $(NPZS_FLAGS) $(SECCOMP_DEF) $(CFLAGS) $(LDFLAGS) -o $@ $(CLI_SRC) $(BNC)/libnpzstream.a $(LDLIBS) $(CLI_LIBS)
$(BNC)/test_policy: $(TEST_POLICY_SRC) $(TEST_HDR) $(BNC)/libnpzstream.a
	$(CC) $(NPZS_FLAGS) $(CFLAGS) $(TEST_DEF) -Isrc -Ifuzz -o $@ $(TEST_POLICY_SRC) $(BNC)/libnpzstream.a $(LDLIBS)
# the default decoder against zlib on hand-made deflate streams (tests/inflate)
TEST_INFLATE_SRC = tests/inflate/test_fastinf.c fuzz/common.c fuzz/zfview.c fuzz/fastinf_diff.c fuzz/deflate_model.c
TEST_INFLATE_HDR = fuzz/common.h fuzz/fastinf_diff.h fuzz/deflate_model.h tests/c/check.h
$(B)/test_fastinf: $(TEST_INFLATE_SRC) $(TEST_INFLATE_HDR) $(TEST_LIB) $(HDR)
	$(CC) $(NPZS_FLAGS) $(CFLAGS) $(TEST_DEF) -Isrc -Ifuzz -o $@ $(TEST_INFLATE_SRC) $(TEST_LIB) $(LDLIBS)
$(BS)/test_fastinf: $(TEST_INFLATE_SRC) $(TEST_INFLATE_HDR) $(SAN_LIB) $(HDR)
	$(CC) $(SAN_FLAGS) -Isrc -Ifuzz -o $@ $(TEST_INFLATE_SRC) $(SAN_LIB) $(LDLIBS)
TEST_DEPS += $(B)/test_fastinf $(BS)/test_fastinf
# the C-only vector runner (tests/vectors: every hand-built case, at every push size)
$(eval $(call c_suite,run_vectors,tests/vectors/run_vectors.c,))
TEST_DEPS += $(B)/run_vectors $(BS)/run_vectors
# the proof's preconditions at run time: each broken one aborts in the sanitizer build
$(eval $(call c_suite,test_contracts,tests/contracts/test_contracts.c,-Isrc))
TEST_DEPS += $(BS)/test_contracts
# the thread sanitizer on the parallel-inflate helper (its workers, queue and hand-over): the
# vectors through the helper, under gcc's -fsanitize=thread
BT       = $(B)/tsan
$(BT)/run_vectors: tests/vectors/run_vectors.c $(SRC) $(TEST_HDR)
	@mkdir -p $(BT)
	$(CC) $(CSTD) -O1 -g $(WARN) $(WERROR) $(INC) $(FEAT_DEF) $(TEST_DEF) -fsanitize=thread -o $@ tests/vectors/run_vectors.c $(SRC) $(LDLIBS)
TEST_DEPS += $(BT)/run_vectors
# the API suite once more under clang's ASan+UBSan, where clang and its sanitizer runtimes are
# installed: clang's UBSan reports a null pointer plus 0 (an empty push without a buffer), gcc's
# does not
CLANG   ?= clang
BCL      = $(B)/clang-san
ifeq ($(origin CLANG_SAN),undefined)
CLANG_SAN := $(shell printf 'int main(void) { return 0; }\n' | $(CLANG) -x c - $(SAN) -o /dev/null 2>/dev/null && echo 1)
endif
$(BCL)/test_api: $(TEST_API_SRC) $(SRC) $(TEST_HDR)
	@mkdir -p $(BCL)
	$(CLANG) $(CSTD) -O1 -g $(WARN) $(WERROR) $(INC) $(FEAT_DEF) $(TEST_DEF) $(SAN) -Isrc -Ifuzz -o $@ $(TEST_API_SRC) $(SRC) $(LDLIBS)
ifeq ($(CLANG_SAN),1)
TEST_DEPS += $(BCL)/test_api
endif

# make demo: build, then check two shipped real files (one .npz, one .npy).
demo: all
	$(B)/npzstream check corpus/peers/whisper/mel_filters.npz
	$(B)/npzstream check --json corpus/peers/ndarray-npy/example_c64_big_endian_fortran.npy

# make test: every suite once (tests/run_all.py --tier test: about ten minutes); make test-all:
# and the exhaustive matrix (every reader, every sanitizer, the corpus replay, a longer fuzz
# smoke; TIER=rest runs only what make test has not, as .ci/run does after make test).
TIER ?= all
.PHONY: test-all
# The builds run $(NPROC) at a time (the machine's cores); the suites TEST_JOBS at a time
# (run_all.py --jobs: by default the cores, at most 2), those that use both cores or measure a time alone.
NPROC   ?= $(shell nproc 2>/dev/null || echo 2)
TEST_JOBS ?=
.PHONY: test-build test-all-build
# the environments the Python suites run in (pip's downloads, the network's work more than the
# cores': .ci/run makes them in the background while the cores build and prove)
TEST_ENVS = python-env ref-matrix web-env engines-env scanners-env venv-zlibng
test-build: all $(B)/test_api $(B)/run_vectors $(B)/test_policy $(B)/test_vlen_api $(B)/test_inv $(BS)/test_api \
            $(BS)/test_policy $(BS)/test_inv \
            $(BNC)/test_policy $(BNC)/npzstream $(B)/test_fastinf $(BS)/test_fastinf \
            examples python-env fuzz
test-all-build: test-build $(BS)/npzstream $(TEST_DEPS) fuzz-replay $(TEST_ENVS)
.PHONY: test-envs
test-envs: $(TEST_ENVS)
test:
	@$(MAKE) --no-print-directory -j$(NPROC) test-build
	$(PYTHON) tests/run_all.py --tier test --plain $(B) --san $(BS) $(if $(TEST_JOBS),--jobs $(TEST_JOBS))
test-all:
	@$(MAKE) --no-print-directory -j$(NPROC) test-all-build
	$(PYTHON) tests/run_all.py --tier $(TIER) --plain $(B) --san $(BS) $(if $(TEST_JOBS),--jobs $(TEST_JOBS))

# make check: what needs nothing but a C compiler and zlib (no Python): the list of fuzzing
# harnesses against the tree (fuzz/harnesses.sh), the API suite and the vectors, plain and under
# ASan+UBSan.
# the API suite over every committed input (corpus/: the real files and the fuzz corpora;
# tests/vectors): a run that finds fewer than CHECK_FILES files fails
CHECK_FILES ?= 5000
check: $(B)/test_api $(BS)/test_api $(B)/run_vectors $(BS)/run_vectors $(B)/test_policy $(BS)/test_policy \
       $(BNC)/test_policy $(BS)/test_contracts $(B)/test_fastinf $(BS)/test_fastinf $(B)/test_inv $(BS)/test_inv
	@$(MAKE) --no-print-directory purity
	sh fuzz/harnesses.sh check
	$(B)/test_api --need-files $(CHECK_FILES) corpus tests/vectors
	$(BS)/test_api --need-files 1000 corpus/peers tests/vectors
	$(B)/test_policy
	$(BS)/test_policy
	$(BNC)/test_policy --sha256-absent
	$(B)/test_fastinf
	$(BS)/test_fastinf
	$(B)/test_inv
	$(BS)/test_inv
	$(B)/run_vectors --par
	$(BS)/run_vectors
	$(BS)/run_vectors --par-only
	$(BS)/test_contracts

# make purity (run by make check): the sources that claim not to see the parser's layout --
# base/, bytes/, zrec/ (the record decoders the proof is about), the policy compiler, the
# inventory (inv/, a client of the public API), vlen/, the parallel helper but the parser's side
# of its seam (par/seam.c), and the sources that see the parser only as a handle for its
# services (src/view/: the duplicate-name table and the .npy header parser the proof is about,
# the buffer they grow) -- include no internal.h, directly or through another header (the
# compiler's -MM), and each carries the guard that makes including it a compile error (#error on
# NPZS_INTERNAL_H).
PURE_SRC = $(sort $(wildcard src/base/*.c src/bytes/*.c src/zrec/*.c src/inv/*.c src/vlen/*.c)) src/policy/compile.c \
           src/policy/keys.c src/policy/json.c src/policy/values.c src/zip/names.c src/npy/npyhdr.c \
           src/core/buffer.c $(filter-out src/par/seam.c,$(wildcard src/par/*.c))
.PHONY: purity
purity:
	@bad=; for f in $(PURE_SRC); do \
	  $(CC) $(INC) $(FEAT_DEF) -MM $$f | grep -q 'internal\.h' && bad="$$bad $$f"; \
	  grep -q '^#ifdef NPZS_INTERNAL_H' $$f || bad="$$bad $$f (no guard)"; \
	done; \
	if [ -n "$$bad" ]; then echo "purity: these see the parser (internal.h):$$bad"; exit 1; fi; \
	echo "purity: $(words $(PURE_SRC)) sources see no parser's layout"

# Regenerate the fuzz seeds corpus/fuzz_vlen/ (numcodecs VLenBytes when importable).
.PHONY: vlen-seeds
vlen-seeds:
	$(PYTHON) tests/vlen/gen_seeds.py corpus/fuzz_vlen

# make man: the generated parts of the man pages (the version, the RULES section)
.PHONY: man print-libs
man: $(B)/npzstream
	$(PYTHON) tests/docs/gen_man.py --bin $(B)/npzstream
# the libraries a program linked with libnpzstream.a needs (tests/docs)
print-libs:
	@echo $(LDLIBS)

clean:
	rm -rf build

-include fuzz/fuzz.mk
