# fuzz/fuzz.mk -- fuzzing targets, included by the top-level Makefile.
#   make fuzz                 libFuzzer builds (clang, ASan+UBSan) of every harness -> build/fuzz/
#   make afl                  AFL++ builds (afl-clang-fast, ASan+UBSan, libAFLDriver) -> build/afl/
#   make fuzz-run SECONDS=N   run every libFuzzer harness N seconds on its corpus with the dict
#   make fuzz-smoke SMOKE_SECONDS=N [SMOKE_JOBS=J]  every libFuzzer harness N s (default 20) on a
#                             copy of its corpus, J at once (default 2: the cores CI has); fails on
#                             any crash, leak, timeout or broken invariant (CI runs it)
#   make regress              replay corpus/** (incl. corpus/regress) through every harness, ASan+UBSan
#   make state-gate           fail unless the corpus reaches every state of src/base/states.h
#   make corpus               regenerate corpus/<harness>/ and fuzz/state_prefixes.h
# See fuzz/README.md.

# The harnesses are the rows of fuzz/harnesses.tsv (with each one's -max_len, dictionary and seed
# folders), read through fuzz/harnesses.sh: those built with the library and the shared driver, and
# those built alone (fuzz_inflate_diff: make fuzz-isal).
FUZZ_HARNESSES      := $(shell sh fuzz/harnesses.sh names driver)
FUZZ_ISAL_HARNESSES := $(shell sh fuzz/harnesses.sh names isal)
FUZZ_CLANG    ?= clang
FUZZ_AFLCC    ?= afl-clang-fast
FUZZ_AFLDRV   ?= /usr/lib/afl/libAFLDriver.a
FUZZ_REPLAYCC ?= cc
SECONDS       ?= 60
FUZZ_FLAGS    ?=
FUZZ_SRC       = $(SRC) fuzz/common.c fuzz/zfview.c fuzz/fastinf_diff.c
FUZZ_DEPS      = $(SRC) $(HDR) fuzz/common.c fuzz/zfview.c fuzz/fastinf_diff.c fuzz/common.h fuzz/fastinf_diff.h \
                 fuzz/state_prefixes.h fuzz/fuzz.mk
FUZZ_INC       = -Iinclude -Isrc -Ifuzz
FUZZ_SAN       = -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_CFLAGS    = -std=c11 -g -O1 -Wall -Wextra $(FUZZ_INC) $(SSL_DEF) $(TEST_DEF)
FUZZ_LIBS      = $(SSL_LIB) -lz -lm -pthread
FB             = build/fuzz
AB             = build/afl
RB             = build/fuzz-replay

.PHONY: fuzz afl fuzz-replay fuzz-run fuzz-smoke regress state-gate corpus fuzz-clean

fuzz: $(FUZZ_HARNESSES:%=$(FB)/%)
afl: $(FUZZ_HARNESSES:%=$(AB)/%)
fuzz-replay: $(FUZZ_HARNESSES:%=$(RB)/%) $(RB)/state_gate

# The library and the shared driver are compiled once for all harnesses (an archive each for
# libFuzzer, with -fsanitize=fuzzer-no-link, and for the replays); a harness is its one file.
FUZZ_OBJ_SRC   = $(SRC) fuzz/common.c fuzz/zfview.c fuzz/fastinf_diff.c
FUZZ_OBJ_DEPS  = $(HDR) fuzz/common.h fuzz/fastinf_diff.h fuzz/fuzz.mk
$(FB)/obj/%.o: %.c $(FUZZ_OBJ_DEPS)
	@mkdir -p $(dir $@)
	$(FUZZ_CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link $(FUZZ_SAN) -c $< -o $@
$(FB)/libfz.a: $(FUZZ_OBJ_SRC:%.c=$(FB)/obj/%.o)
	rm -f $@ && ar rcs $@ $^
$(RB)/obj/%.o: %.c $(FUZZ_OBJ_DEPS)
	@mkdir -p $(dir $@)
	$(FUZZ_REPLAYCC) $(FUZZ_CFLAGS) $(FUZZ_SAN) -c $< -o $@
$(RB)/libfz.a: $(FUZZ_OBJ_SRC:%.c=$(RB)/obj/%.o)
	rm -f $@ && ar rcs $@ $^

$(FB)/%: fuzz/%.c $(FB)/libfz.a fuzz/common.h fuzz/state_prefixes.h
	@mkdir -p $(FB)
	$(FUZZ_CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $< $(FB)/libfz.a $(FUZZ_LIBS)

$(AB)/%: fuzz/%.c $(FUZZ_DEPS)
	@mkdir -p $(AB)
	$(FUZZ_AFLCC) $(FUZZ_CFLAGS) $(FUZZ_SAN) -o $@ $< $(FUZZ_SRC) $(FUZZ_AFLDRV) $(FUZZ_LIBS)

$(RB)/%: fuzz/%.c fuzz/replay_main.c $(RB)/libfz.a fuzz/common.h fuzz/state_prefixes.h tests/c/check.h
	@mkdir -p $(RB)
	$(FUZZ_REPLAYCC) $(FUZZ_CFLAGS) $(FUZZ_SAN) -o $@ $< fuzz/replay_main.c $(RB)/libfz.a $(FUZZ_LIBS)

$(RB)/state_gate: fuzz/state_gate.c tests/c/check.h $(SRC) $(HDR)
	@mkdir -p $(RB)
	$(FUZZ_REPLAYCC) $(FUZZ_CFLAGS) -o $@ fuzz/state_gate.c $(SRC) $(FUZZ_LIBS)

# Every corpus file through every harness (a crash in one file is counted, the rest still run).
regress: $(FUZZ_HARNESSES:%=$(RB)/%)
	@rm -f $(RB)/regress.log; fail=0; \
	for h in $(FUZZ_HARNESSES); do \
	  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	    $(RB)/$$h corpus >>$(RB)/regress.log 2>&1 || fail=1; \
	  tail -n 1 $(RB)/regress.log; \
	done; \
	grep '^FAIL ' $(RB)/regress.log || true; \
	awk '/: [0-9]+ passed, [0-9]+ failed$$/ { p += $$(NF-3); f += $$(NF-1) } \
	     END { printf "regress: %d passed, %d failed\n", p, f; exit (f > 0) }' $(RB)/regress.log

# The union of states reached by every harness over the whole corpus.
state-gate: $(FUZZ_HARNESSES:%=$(RB)/%) $(RB)/state_gate
	@rm -f $(RB)/states.txt; \
	for h in $(FUZZ_HARNESSES); do \
	  ASAN_OPTIONS=detect_leaks=0 $(RB)/$$h --states $(RB)/states.txt corpus >/dev/null 2>&1; \
	done; \
	$(RB)/state_gate $(RB)/states.txt

# Fuzz every harness SECONDS seconds; new inputs go to build/fuzz-work/<h> (merge them into
# corpus/<h> with `make fuzz-merge`), crashes to build/fuzz-artifacts/.
fuzz-run: fuzz
	@mkdir -p build/fuzz-work build/fuzz-artifacts build/fuzz-logs; \
	for h in $(FUZZ_HARNESSES); do \
	  mkdir -p build/fuzz-work/$$h; \
	  flags=$$(sh fuzz/harnesses.sh flags $$h) && seeds=$$(sh fuzz/harnesses.sh seeds $$h) || exit 2; \
	  echo "== $$h ($(SECONDS) s, $$flags)"; \
	  $(FB)/$$h -max_total_time=$(SECONDS) $$flags -timeout=10 -rss_limit_mb=2048 \
	    -print_final_stats=1 $(FUZZ_FLAGS) \
	    -artifact_prefix=build/fuzz-artifacts/$$h- \
	    build/fuzz-work/$$h $$seeds >build/fuzz-logs/$$h.log 2>&1; \
	  rc=$$?; \
	  echo "   exit $$rc: $$(grep -hE '^(Done|stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb))' build/fuzz-logs/$$h.log | tr -s ' ' | tr '\n' ' ')"; \
	  echo "   $$(grep -E '^#[0-9]+' build/fuzz-logs/$$h.log | tail -n 1 | grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [^ ]+')"; \
	  grep -hE 'ERROR:|fuzz invariant|Test unit written|crash-|leak-|timeout-' build/fuzz-logs/$$h.log | sort -u | head -n 8; \
	done

# Minimise what fuzz-run found into the committed corpus.
fuzz-merge: fuzz
	@for h in $(FUZZ_HARNESSES); do \
	  [ -d build/fuzz-work/$$h ] || continue; \
	  $(FB)/$$h -merge=1 -max_len=4096 corpus/$$h build/fuzz-work/$$h >/dev/null 2>&1; \
	done; du -sh corpus

corpus:
	$(PYTHON) fuzz/make_corpus.py

fuzz-clean:
	rm -rf $(FB) $(AB) $(RB) build/fuzz-work build/fuzz-artifacts build/fuzz-logs

# A short run of every harness, for CI: new inputs go to a scratch folder (the committed corpus is
# only read), any finding fails the target and is left in build/fuzz-smoke/ with its log.
SMOKE_SECONDS ?= 20
SMOKE_JOBS ?= 2
fuzz-smoke: fuzz
	@sh fuzz/smoke.sh $(SMOKE_SECONDS) $(SMOKE_JOBS) $(FB) $(FUZZ_HARNESSES)

# make fuzz-isal: the harnesses of build "isal" (fuzz_inflate_diff, ISA-L's inflate against zlib's;
# built where isa-l is installed: Debian's libisal-dev); make fuzz-isal-seeds writes
# corpus/fuzz_inflate_diff/.
.PHONY: fuzz-isal fuzz-isal-seeds
fuzz-isal: $(FUZZ_ISAL_HARNESSES:%=$(FB)/%)
$(FUZZ_ISAL_HARNESSES:%=$(FB)/%): $(FB)/%: fuzz/%.c fuzz/fuzz.mk
	@mkdir -p $(FB)
	$(FUZZ_CLANG) -std=c11 -g -O1 -Wall -Wextra -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $< -lisal -lz
fuzz-isal-seeds:
	$(PYTHON) fuzz/gen_inflate_seeds.py corpus/fuzz_inflate_diff

# make fastinf-seeds: corpus/fuzz_fastinf/ (fuzz/gen_fastinf_seeds.py: savez_compressed members of
# three kinds of arrays, and the hand-made streams of gen_inflate_seeds.py).
# make fastinf-campaign [STREAMS=N] [CAMPAIGN_SEED=K] [MUTATORS=a,b] [NICE=19]: the differential
# campaign of the default decoder against zlib (fuzz/fastinf_campaign.c: one process, -O2, no
# sanitizers, at NICE), from corpus/fuzz_fastinf and the larger seeds of build/fastinf-seeds; a
# stream that differs is written to build/fastinf-diff/.  $(B)/san/fastinf_campaign: the same
# under ASan+UBSan.
.PHONY: fastinf-seeds fastinf-campaign
STREAMS ?= 1000000
CAMPAIGN_SEED ?= 1
MUTATORS ?=
FI_CAMPAIGN_SRC = fuzz/fastinf_campaign.c fuzz/fastinf_diff.c fuzz/deflate_model.c src/zip/fastinf.c
FI_CAMPAIGN_DEPS = $(FI_CAMPAIGN_SRC) fuzz/fastinf_diff.h fuzz/deflate_model.h src/zip/fastinf.h
$(B)/fastinf_campaign: $(FI_CAMPAIGN_DEPS)
	@mkdir -p $(B)
	$(CC) $(CSTD) -O2 -g -Wall -Wextra $(TEST_DEF) -Isrc -Ifuzz -o $@ $(FI_CAMPAIGN_SRC) -lz
$(BS)/fastinf_campaign: $(FI_CAMPAIGN_DEPS)
	@mkdir -p $(BS)
	$(CC) $(CSTD) -O1 -g -Wall -Wextra $(SAN) $(TEST_DEF) -Isrc -Ifuzz -o $@ $(FI_CAMPAIGN_SRC) -lz
fastinf-seeds:
	$(PYTHON) fuzz/gen_fastinf_seeds.py corpus/fuzz_fastinf
build/fastinf-seeds/.done: fuzz/gen_fastinf_seeds.py fuzz/gen_inflate_seeds.py
	$(PYTHON) fuzz/gen_fastinf_seeds.py --campaign build/fastinf-seeds && touch $@
fastinf-campaign: $(B)/fastinf_campaign build/fastinf-seeds/.done
	@mkdir -p build/fastinf-diff
	nice -n $(NICE) $(B)/fastinf_campaign -n $(STREAMS) -s $(CAMPAIGN_SEED) $(if $(MUTATORS),-m $(MUTATORS),) \
	    -o build/fastinf-diff corpus/fuzz_fastinf build/fastinf-seeds

# make fuzz-campaign HOURS=N [JOBS=J] [NICE=19]: every harness in turn, HOURS of CPU time shared
# among them, on the free cores; each run appends its row (harness, commit, CPU time, execs, seeds, findings)
# to the ledger in fuzz/README.md (fuzz/campaign.sh).
.PHONY: fuzz-campaign
HOURS ?= 1
NICE ?= 19
fuzz-campaign: fuzz
	HOURS=$(HOURS) JOBS=$(JOBS) NICE=$(NICE) FUZZ_HARNESSES="$(FUZZ_HARNESSES)" bash fuzz/campaign.sh
