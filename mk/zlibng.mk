# make inflate-diff-zlibng: zlib (CPython's zlib module, the inflater np.load uses here) against
# zlib-ng (the `zlib-ng` package on PyPI, which bundles it) on the same mutated raw deflate
# streams (fuzz/inflate_diff_zlibng.py; SECURITY.md, "The inflater").  The venv .venv-zlibng
# (not in git) is made on first use.  ZNG_CPU: CPU seconds of the run; ZNG_SEED: its random seed.
ZNG_VENV ?= .venv-zlibng
ZNG_CPU  ?= 60
ZNG_SEED ?= 1
.PHONY: venv-zlibng inflate-diff-zlibng
venv-zlibng:
	@if [ -x $(ZNG_VENV)/bin/python ] && $(ZNG_VENV)/bin/python -c 'import zlib_ng' 2>/dev/null; then :; \
	elif $(PYTHON) -m venv $(ZNG_VENV) >/dev/null 2>&1 && $(ZNG_VENV)/bin/pip install -q zlib-ng >/dev/null 2>&1; then \
	  echo "venv-zlibng: $(ZNG_VENV): $$($(ZNG_VENV)/bin/python -c 'import zlib, sys; from zlib_ng import zlib_ng; print("zlib", zlib.ZLIB_RUNTIME_VERSION, "zlib-ng", zlib_ng.ZLIBNG_VERSION, "Python", sys.version.split()[0])')"; \
	else echo "venv-zlibng: skipped: no venv with zlib-ng (python3-venv missing, or offline)"; rm -rf $(ZNG_VENV); fi
inflate-diff-zlibng: venv-zlibng
	@mkdir -p $(B)/zlibng-diff
	@if [ -x $(ZNG_VENV)/bin/python ]; then \
	  nice -n 10 $(ZNG_VENV)/bin/python fuzz/inflate_diff_zlibng.py --cpu-seconds $(ZNG_CPU) --seed $(ZNG_SEED) \
	    --json $(B)/zlibng-diff/seed-$(ZNG_SEED).json; \
	else $(PYTHON) fuzz/inflate_diff_zlibng.py --count 1; fi
