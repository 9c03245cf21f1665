# make engines-env: .venv-engines, the environment of the Ray and Dask readers' suite (tests/engines,
# make test-all) and of bench/engines.py: the python3 first on PATH with NumPy and pytest, then
# Ray Data, Dask (array, bag, distributed), pyarrow, fsspec, s3fs, zarr, kerchunk and moto's S3
# server from PyPI, and the package with its extras.  Made once (rm -rf .venv-engines to start
# again); the package is reinstalled when its sources change (pkg_install, mk/python.mk).
ENGINES_BASE ?= numpy pytest
ENGINES_PKGS ?= 'ray[data]>=2.50' 'dask[array,distributed]' pyarrow fsspec s3fs zarr kerchunk 'moto[server]' boto3
.PHONY: engines-env
engines-env:
	@set -u; mkdir -p build; \
	if [ -x .venv-engines/bin/python ] || { $(PKG_PY) -m venv .venv-engines >/dev/null 2>&1 && \
	     .venv-engines/bin/pip install -q $(ENGINES_BASE) >build/pip-engines.log 2>&1 && \
	     .venv-engines/bin/pip install -q $(ENGINES_PKGS) >>build/pip-engines.log 2>&1; }; then \
	  if $(call pkg_install,.venv-engines,) >>build/pip-engines.log 2>&1; then \
	    echo "engines-env: .venv-engines: npzstream with $$(.venv-engines/bin/python -c 'import importlib.metadata as m; have = {d.metadata["Name"].lower() for d in m.distributions()}; print(", ".join(n + " " + (m.version(n) if n in have else "missing") for n in ("numpy", "ray", "dask", "distributed", "pyarrow", "fsspec", "s3fs", "zarr", "kerchunk", "moto")))' 2>&1 | tail -1)"; \
	  else echo "engines-env: .venv-engines: pip install ./python failed (build/pip-engines.log)"; tail -5 build/pip-engines.log; fi; \
	else echo "engines-env: .venv-engines skipped: the packages could not be installed from PyPI (build/pip-engines.log)"; \
	  tail -5 build/pip-engines.log; rm -rf .venv-engines; fi

# make bench-engines: npzstream.ray.read_npz against Ray's read_numpy (local disk and moto's S3
# server), and npzstream.dask planning a 10,000-file graph from headers alone (bench/engines.py;
# bench/README.md, "Ray and Dask")
.PHONY: bench-engines
bench-engines: engines-env
	nice -n 10 .venv-engines/bin/python bench/engines.py $(BENCH_ARGS)
