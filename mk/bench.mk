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

# make bench-env: .venv-bench, the environment of the peers' benchmarks (bench/spdl.py): the python3
# first on PATH with NumPy 2.x and spdl (Meta's data loader: spdl.io.load_npz, 0.8 or later) from
# PyPI, and the package built from this checkout as `make python-env` builds it (reinstalled when
# its sources change).  spdl is installed on its own: where it cannot be (no wheel for this Python or
# machine, no network) the environment is kept without it, says so, and bench-spdl skips.
BENCH_ENV_BASE ?= 'numpy>=2'
BENCH_ENV_PEERS ?= 'spdl>=0.8'
.PHONY: bench-env
bench-env:
	@set -u; mkdir -p build; \
	if [ -x .venv-bench/bin/python ] || { $(PKG_PY) -m venv .venv-bench >/dev/null 2>&1 && \
	     .venv-bench/bin/pip install -q $(BENCH_ENV_BASE) >build/pip-bench.log 2>&1; }; then \
	  .venv-bench/bin/python -c 'import spdl.io' 2>/dev/null || \
	    .venv-bench/bin/pip install -q $(BENCH_ENV_PEERS) >>build/pip-bench.log 2>&1 || \
	    echo "bench-env: .venv-bench: spdl could not be installed from PyPI (build/pip-bench.log): bench-spdl will skip"; \
	  if $(call pkg_install,.venv-bench,) >>build/pip-bench.log 2>&1; then \
	    echo "bench-env: .venv-bench: npzstream with $$(.venv-bench/bin/python -c 'import importlib.metadata as m; have = {d.metadata["Name"].lower() for d in m.distributions()}; print(", ".join(n + " " + (m.version(n) if n in have else "missing") for n in ("numpy", "spdl", "spdl_io")))' 2>&1 | tail -1)"; \
	  else echo "bench-env: .venv-bench: pip install ./python failed (build/pip-bench.log)"; tail -5 build/pip-bench.log; exit 1; fi; \
	else echo "bench-env: .venv-bench skipped: $(PKG_PY) -m venv or NumPy 2 from PyPI failed (build/pip-bench.log)"; \
	  tail -5 build/pip-bench.log; rm -rf .venv-bench; exit 1; fi

# make bench-spdl [SPDL_SIZE=64]: npzstream's load and open against spdl 0.8's load_npz and np.load,
# from bytes in memory, on savez_compressed data of three kinds (SPDL_SIZE MiB each) and a stored
# np.savez archive (bench/spdl.py; bench/README.md, "spdl").  Exit status 77: spdl is not installed
# (every spdl row says "skipped").  BENCH_ARGS="--rounds 9 --keep DIR"
SPDL_SIZE ?= 64
.PHONY: bench-spdl
bench-spdl: bench-env
	.venv-bench/bin/python bench/spdl.py --size $(SPDL_SIZE) $(BENCH_ARGS)

# make bench-sandbox: check confined against --no-sandbox (bench/sandbox.py; issue 42)
.PHONY: bench-sandbox
bench-sandbox: $(B)/npzstream
	$(PYTHON) bench/sandbox.py --bin $(B)/npzstream --size $(SIZE) $(BENCH_ARGS)

# issue 42: scan over 5,000 files against check on them (budget: 1.1x); needs an idle machine
.PHONY: bench-scan
bench-scan: $(B)/npzstream
	$(PYTHON) bench/scan.py --bin $(B)/npzstream --dir $(B)/bench-scan
# the same budget in instructions (valgrind's callgrind: the count a loaded machine does not change)
.PHONY: bench-scan-cg
bench-scan-cg: $(B)/npzstream
	$(PYTHON) bench/scan.py --bin $(B)/npzstream --dir $(B)/bench-scan --callgrind --files 500
	$(PYTHON) bench/scan.py --bin $(B)/npzstream --dir $(B)/bench-scan --callgrind --files 5000 --plain
