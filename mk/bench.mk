# make bench: npzstream against its peers and the physical limits (bench/README.md).  Not part
# of `make test` (it takes minutes).  make bench SIZE=64 for a quick run; BENCH_ARGS for more
# (e.g. BENCH_ARGS="--rounds 5 --keep /tmp/npzs-bench").
# make NPZS_CRC_PORTABLE=1: build the library with the portable CRC-32 only (zlib's).

ifdef NPZS_CRC_PORTABLE
NPZS_FLAGS += -DNPZS_CRC_PORTABLE
endif

SIZE ?= 512
BENCH_ARGS ?=
# libdeflate's crc32 is an extra limit row when its header is installed (optional)
BENCH_LD := $(if $(wildcard /usr/include/libdeflate.h),-DHAVE_LIBDEFLATE,)
BENCH_LDLIBS := $(if $(BENCH_LD),-ldeflate,)

.PHONY: bench
$(B)/bench/limit: bench/limit.c $(B)/libnpzstream.a
	@mkdir -p $(B)/bench
	$(CC) $(NPZS_FLAGS) $(CFLAGS) $(BENCH_LD) -Isrc -o $@ bench/limit.c $(B)/libnpzstream.a $(LDLIBS) $(BENCH_LDLIBS)

bench: $(B)/npzstream $(B)/bench/limit
	$(PYTHON) bench/run.py --bin $(B)/npzstream --limit $(B)/bench/limit --size $(SIZE) $(BENCH_ARGS)

# make bench-hashflood: crafted colliding member names against random ones (bench/hashflood.py)
$(B)/bench/hashflood: bench/hashflood.c
	@mkdir -p $(B)/bench
	$(CC) $(NPZS_FLAGS) $(CFLAGS) -o $@ bench/hashflood.c
.PHONY: bench-hashflood
bench-hashflood: $(B)/npzstream $(B)/bench/hashflood
	$(PYTHON) bench/hashflood.py --bin $(B)/npzstream --tool $(B)/bench/hashflood

# make bench-policy: a policy's compile and its pattern matching at scale (bench/policy_scale.py)
.PHONY: bench-policy
bench-policy: $(B)/npzstream
	$(PYTHON) bench/policy_scale.py --bin $(B)/npzstream $(BENCH_ARGS)

# make bench-round5: the budgets of the policy, hashing, -P and --inflate-threads (bench/round5.py)
.PHONY: bench-round5
bench-round5: $(B)/npzstream
	$(PYTHON) bench/round5.py --bin $(B)/npzstream --size $(SIZE) $(BENCH_ARGS)

# make bench-round6: the parallel helper's and -P's budgets (bench/round6.py)
.PHONY: bench-round6
bench-round6: $(B)/npzstream $(B)/bench/limit
	$(PYTHON) bench/round6.py --bin $(B)/npzstream --limit $(B)/bench/limit --size $(SIZE) $(BENCH_ARGS)

# make bench-budgets: the command line's fixed costs (issue 44: a plain .npy against read-discard,
# callgrind's instructions a member, the peak RSS of a small file; bench/budgets.py).  The member
# and RSS figures hold on a loaded machine; the .npy ratio needs an idle one.
# BENCH_ARGS="--base OLD/build/npzstream" measures an earlier build in the same run.
.PHONY: bench-budgets
bench-budgets: $(B)/npzstream $(B)/bench/limit
	$(PYTHON) bench/budgets.py --bin $(B)/npzstream --limit $(B)/bench/limit --size $(SIZE) $(BENCH_ARGS)

# make bench-fastinf [FASTINF_SIZE=64]: the fast decoder against zlib on savez_compressed data of
# three kinds, FASTINF_SIZE MiB each (bench/fastinf.py); BENCH_ARGS="--python .venv-pkg/bin/python"
# adds the load() rows
.PHONY: bench-fastinf
FASTINF_SIZE ?= 64
bench-fastinf: $(B)/npzstream $(B)/bench/limit
	$(PYTHON) bench/fastinf.py --bin $(B)/npzstream --limit $(B)/bench/limit --size $(FASTINF_SIZE) $(BENCH_ARGS)
