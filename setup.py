"""The package of python/, built from the repository's root: pre-commit installs a hook of language
python (.pre-commit-hooks.yaml: npzstream-check) with `pip install .` here.  It runs python/setup.py
in python/ (its pyproject.toml's metadata, the extension built from ../src and ../include): the
same package as `pip install ./python`, which everything else (make python-env, the wheel) builds."""
import os
import sys

PKG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python")
SETUP = os.path.join(PKG, "setup.py")
os.chdir(PKG)
sys.path.insert(0, PKG)
with open(SETUP) as f:
    exec(compile(f.read(), SETUP, "exec"), {"__name__": "__main__", "__file__": SETUP})
