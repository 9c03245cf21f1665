# make ref-matrix: the reference readers of tests/readers.py, which `make test-all` compares npzstream
# with besides Debian's NumPy 1.24 on /usr/bin/python3 (each with pytest, which runs the suites there):
#   .venv-np2         the newest NumPy 2.x on the python3 first on PATH
#   .venv-np20        NumPy 2.0.x on the same Python
#   .venv-np2-py312   the newest NumPy 2.x on python3.12, where that Python exists
#   build/ref/zipfile-gh139700/zipfile.py   CPython 3.11's zipfile with the CVE-2025-8291 fix,
#                     taken from Debian 12's security update of libpython3.11-minimal
# A step that cannot be done (no network, no such Python) says so and is skipped; the suites
# then skip that reader with a message.  The virtual environments stay out of git (.gitignore).
REF_PY      ?= python3
# python3.12 on PATH, or pyenv's (whose shim answers `command -v` without running)
REF_PY312   ?= $(firstword $(foreach c,python3.12 $(wildcard $(HOME)/.pyenv/versions/3.12*/bin/python3.12),$(if $(shell $(c) -c 'import sys' 2>/dev/null && echo y),$(c))) python3.12)
REF_ZIPFIX   = build/ref/zipfile-gh139700/zipfile.py
REF_ZIPDEB  ?= libpython3.11-minimal=3.11.2-6+deb12u9

.PHONY: ref-matrix
ref-matrix:
	@set -u; \
	mk() { d=$$1; py=$$2; spec=$$3; \
	  if [ -x $$d/bin/python ] && $$d/bin/python -c 'import numpy' 2>/dev/null; then \
	    $$d/bin/python -c 'import pytest' 2>/dev/null || $$d/bin/pip install -q pytest || echo "ref-matrix: $$d: pip could not install pytest (offline?): its suites will be skipped"; \
	    echo "ref-matrix: $$d: $$($$d/bin/python -c 'import numpy,sys; print("NumPy", numpy.__version__, "on", sys.version.split()[0])')"; return; fi; \
	  $$py -c 'import sys' >/dev/null 2>&1 || { echo "ref-matrix: $$d skipped: no working $$py"; return; }; \
	  $$py -m venv $$d && $$d/bin/pip install -q "$$spec" pytest || { echo "ref-matrix: $$d skipped: pip could not install $$spec and pytest (offline?)"; rm -rf $$d; return; }; \
	  echo "ref-matrix: $$d: $$($$d/bin/python -c 'import numpy,sys; print("NumPy", numpy.__version__, "on", sys.version.split()[0])')"; }; \
	mk .venv-np2 $(REF_PY) 'numpy>=2'; \
	mk .venv-np20 $(REF_PY) 'numpy>=2.0,<2.1'; \
	mk .venv-np2-py312 $(REF_PY312) 'numpy>=2'; \
	if [ -f $(REF_ZIPFIX) ]; then echo "ref-matrix: $(REF_ZIPFIX) present"; \
	else d=$$(mktemp -d); \
	  if (cd $$d && apt-get download -q $(REF_ZIPDEB) >/dev/null 2>&1) && dpkg-deb -x $$d/*.deb $$d/x \
	     && grep -q 'Corrupt zip64 end of central directory locator' $$d/x/usr/lib/python3.11/zipfile.py; then \
	    mkdir -p $$(dirname $(REF_ZIPFIX)) && cp $$d/x/usr/lib/python3.11/zipfile.py $(REF_ZIPFIX) \
	    && echo "ref-matrix: $(REF_ZIPFIX) from $(REF_ZIPDEB)"; \
	  else echo "ref-matrix: $(REF_ZIPFIX) skipped: apt-get download $(REF_ZIPDEB) failed (offline, or not Debian 12)"; fi; \
	  rm -rf $$d; fi
