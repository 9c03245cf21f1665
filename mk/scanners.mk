# make scanners-env: the environments of the scanner adapters' suite (tests/scanners, make test-all):
# the python3 first on PATH (modelscan 0.8.8 wants Python 3.10-3.12, picklescan 3.11+) with
# modelscan and picklescan from PyPI, pre-commit and pytest, once with NumPy 2.x and once with
# NumPy 1.x (modelscan 0.8.8 asks numpy>=1.24.3, which Debian's 1.24.2 is not: 1.26 from PyPI):
#   .venv-scanners       NumPy 2.x
#   .venv-scanners-np1   NumPy 1.26
# Made once (rm -rf .venv-scanners* to start again); the package is reinstalled when its sources change.
# An environment PyPI cannot make is said so and removed: its suite then reports itself skipped.
SCANNERS_PKGS ?= modelscan==0.8.8 picklescan==1.0.5 pre-commit pytest
.PHONY: scanners-env
scanners-env:
	@set -u; mkdir -p build; \
	for env in ".venv-scanners numpy>=2" ".venv-scanners-np1 numpy<2"; do \
	  set -- $$env; d=$$1; np=$$2; \
	  if [ -x $$d/bin/python ] || { $(PKG_PY) -m venv $$d >/dev/null 2>&1 && \
	       $$d/bin/pip install -q "$$np" $(SCANNERS_PKGS) >build/pip-$${d#.}.log 2>&1; }; then \
	    if $(call pkg_install,$$d,) >>build/pip-$${d#.}.log 2>&1; then \
	      echo "scanners-env: $$d: npzstream with $$($$d/bin/python -c 'import importlib.metadata as m; print(", ".join(n + " " + m.version(n) for n in ("numpy", "modelscan", "picklescan", "pre-commit")))' 2>&1 | tail -1)"; \
	    else echo "scanners-env: $$d: pip install ./python failed (build/pip-$${d#.}.log)"; tail -5 build/pip-$${d#.}.log; fi; \
	  else echo "scanners-env: $$d skipped: $$np and $(SCANNERS_PKGS) could not be installed from PyPI (build/pip-$${d#.}.log)"; \
	    tail -5 build/pip-$${d#.}.log; rm -rf $$d; fi; \
	done
