# make python-env: the Python package (python/) installed the way a user installs it, into two
# virtual environments the package tests (tests/python) run in:
#   .venv-pkg       Debian's python3 with its NumPy 1.24 and pytest (--system-site-packages);
#                   pip install --no-build-isolation ./python (Debian's setuptools, no network)
#   .venv-pkg-np2   the python3 first on PATH with NumPy 2.x, pytest, mypy and ruff from PyPI;
#                   pip install ./python (an isolated build: setuptools from PyPI)
# Each is reinstalled whenever a source of the package is newer than its last install, so the
# package is always today's sources.  A step that cannot be done (no python3-venv, no network)
# says so; the suite then skips that environment.
PKG_PY     ?= python3

# $(call pkg_install,VENV,PIP OPTIONS): pip install ./python into VENV (every environment of the
# package: python-env, web-env, engines-env, scanners-env, bench-env), unless VENV's copy is as new
# as every source of the package (VENV/.npzstream-stamp: the sources, the library's and the
# sandbox's that setup.py copies); one install at a time (flock), since pip builds in python/ (its
# csrc/ and build/), which two installs at once under make -j would both write.
PKG_SRC = python/setup.py python/pyproject.toml $(wildcard python/src/npzstream/*.py python/src/npzstream/*.pyi \
          python/src/npzstream/py.typed python/src/npzstream/ext/*.[ch]) $(SRC) $(HDR) $(wildcard cli/sandbox.[ch])
pkg_install = { { [ -f $(1)/.npzstream-stamp ] && [ -z "$$(find $(PKG_SRC) -newer $(1)/.npzstream-stamp | head -n 1)" ] \
                  && echo "$(1): npzstream is as new as its sources"; } || \
                { touch $(1)/.npzstream-new && flock build/.pip-python.lock $(1)/bin/pip install -q $(2) --force-reinstall \
                  --no-deps ./python && mv $(1)/.npzstream-new $(1)/.npzstream-stamp; }; }

# what the type checks import besides the package: the frameworks of npzstream.starlette and npzstream.aiohttp
TYPES_FRAMEWORKS ?= starlette aiohttp python-multipart
.PHONY: python-env
python-env:
	@set -u; mkdir -p build; \
	if [ -x .venv-pkg/bin/python ] || $(PYTHON) -m venv --system-site-packages .venv-pkg >/dev/null 2>&1; then \
	  if $(call pkg_install,.venv-pkg,--no-build-isolation) >build/pip-pkg.log 2>&1; then \
	    echo "python-env: .venv-pkg: npzstream on $$(.venv-pkg/bin/python -c 'import numpy,sys; print("NumPy", numpy.__version__, "Python", sys.version.split()[0])')"; \
	  else echo "python-env: .venv-pkg: pip install ./python failed (build/pip-pkg.log)"; tail -5 build/pip-pkg.log; fi; \
	else echo "python-env: .venv-pkg skipped: $(PYTHON) -m venv failed (install python3-venv)"; rm -rf .venv-pkg; fi; \
	if [ -x .venv-pkg-np2/bin/python ] || { $(PKG_PY) -m venv .venv-pkg-np2 >/dev/null 2>&1 && \
	     .venv-pkg-np2/bin/pip install -q 'numpy>=2' pytest >/dev/null 2>&1; }; then \
	  if $(call pkg_install,.venv-pkg-np2,) >build/pip-pkg-np2.log 2>&1; then \
	    echo "python-env: .venv-pkg-np2: npzstream on $$(.venv-pkg-np2/bin/python -c 'import numpy,sys; print("NumPy", numpy.__version__, "Python", sys.version.split()[0])')"; \
	  else echo "python-env: .venv-pkg-np2: pip install ./python failed (build/pip-pkg-np2.log)"; tail -5 build/pip-pkg-np2.log; fi; \
	else echo "python-env: .venv-pkg-np2 skipped: no venv with numpy>=2 and pytest (offline?)"; rm -rf .venv-pkg-np2; fi; \
	if [ -x .venv-pkg-np2/bin/python ] && ! .venv-pkg-np2/bin/python -c 'import mypy, ruff, starlette, aiohttp, python_multipart' 2>/dev/null; then \
	  .venv-pkg-np2/bin/pip install -q mypy ruff $(TYPES_FRAMEWORKS) >build/pip-types.log 2>&1 || \
	    echo "python-env: .venv-pkg-np2: no mypy and ruff (build/pip-types.log): the type checks will be skipped"; fi

# make web-env: .venv-web, the web recipes' environment (tests/web; make test-all): the python3
# first on PATH with NumPy, pytest and httpx from PyPI, then FastAPI, uvicorn, aiohttp, Django and
# Flask (all at once, or one by one when that fails: a framework that cannot be installed is named,
# and its tests skip), and the package.  Made once (rm -rf .venv-web to start again); the package is reinstalled when its sources change.
WEB_BASE       ?= numpy pytest httpx
WEB_FRAMEWORKS ?= fastapi uvicorn aiohttp django flask python-multipart
.PHONY: web-env
web-env:
	@set -u; mkdir -p build; \
	if [ -x .venv-web/bin/python ] || { $(PKG_PY) -m venv .venv-web >/dev/null 2>&1 && \
	     .venv-web/bin/pip install -q $(WEB_BASE) >build/pip-web.log 2>&1 && \
	     { .venv-web/bin/pip install -q $(WEB_FRAMEWORKS) >>build/pip-web.log 2>&1 || \
	       for p in $(WEB_FRAMEWORKS); do .venv-web/bin/pip install -q "$$p" >>build/pip-web.log 2>&1 || \
	         echo "python-env: .venv-web: $$p could not be installed from PyPI (build/pip-web.log): its tests will be skipped"; done; }; }; then \
	  if $(call pkg_install,.venv-web,) >>build/pip-web.log 2>&1; then \
	    echo "python-env: .venv-web: npzstream with $$(.venv-web/bin/python -c 'import importlib.metadata as m; have = {d.metadata["Name"].lower() for d in m.distributions()}; print(", ".join(n + " " + (m.version(n) if n in have else "missing") for n in ("fastapi", "uvicorn", "aiohttp", "django", "flask", "httpx")))' 2>&1 | tail -1)"; \
	  else echo "python-env: .venv-web: pip install ./python failed (build/pip-web.log)"; tail -5 build/pip-web.log; fi; \
	else echo "python-env: .venv-web skipped: NumPy, pytest and httpx could not be installed from PyPI (build/pip-web.log)"; rm -rf .venv-web; fi

# make bench-python: open(), load's direct reads and deflated load against their budgets
# (bench/python_io.py; bench/README.md); issue 15's figures are bench/python_load.py's
.PHONY: bench-python
bench-python: python-env
	.venv-pkg/bin/python bench/python_io.py --size $(SIZE) $(BENCH_ARGS)
