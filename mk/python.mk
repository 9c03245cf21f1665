# make python-env: the Python package (python/) installed the way a user installs it, into two
# virtual environments the package tests (tests/python) run in:
#   .venv-pkg       Debian's python3 with its NumPy 1.24 and pytest (--system-site-packages);
#                   pip install --no-build-isolation ./python (Debian's setuptools, no network)
#   .venv-pkg-np2   the python3 first on PATH with NumPy 2.x and pytest from PyPI;
#                   pip install ./python (an isolated build: setuptools from PyPI)
# Each is (re)installed on every run, so the package is always today's sources.  A step that
# cannot be done (no python3-venv, no network) says so; the suite then skips that environment.
PKG_PY     ?= python3

.PHONY: python-env
python-env:
	@set -u; mkdir -p build; \
	if [ -x .venv-pkg/bin/python ] || $(PYTHON) -m venv --system-site-packages .venv-pkg >/dev/null 2>&1; then \
	  if .venv-pkg/bin/pip install -q --no-build-isolation --force-reinstall --no-deps ./python >build/pip-pkg.log 2>&1; then \
	    echo "python-env: .venv-pkg: npzstream on $$(.venv-pkg/bin/python -c 'import numpy,sys; print("NumPy", numpy.__version__, "Python", sys.version.split()[0])')"; \
	  else echo "python-env: .venv-pkg: pip install ./python failed (build/pip-pkg.log)"; tail -5 build/pip-pkg.log; fi; \
	else echo "python-env: .venv-pkg skipped: $(PYTHON) -m venv failed (install python3-venv)"; rm -rf .venv-pkg; fi; \
	if [ -x .venv-pkg-np2/bin/python ] || { $(PKG_PY) -m venv .venv-pkg-np2 >/dev/null 2>&1 && \
	     .venv-pkg-np2/bin/pip install -q 'numpy>=2' pytest >/dev/null 2>&1; }; then \
	  if .venv-pkg-np2/bin/pip install -q --force-reinstall --no-deps ./python >build/pip-pkg-np2.log 2>&1; then \
	    echo "python-env: .venv-pkg-np2: npzstream on $$(.venv-pkg-np2/bin/python -c 'import numpy,sys; print("NumPy", numpy.__version__, "Python", sys.version.split()[0])')"; \
	  else echo "python-env: .venv-pkg-np2: pip install ./python failed (build/pip-pkg-np2.log)"; tail -5 build/pip-pkg-np2.log; fi; \
	else echo "python-env: .venv-pkg-np2 skipped: no venv with numpy>=2 and pytest (offline?)"; rm -rf .venv-pkg-np2; fi
