"""The package of python/, built from the repository's root: pre-commit installs a hook of language
python (.pre-commit-hooks.yaml: npzstream-check) with `pip install .` here.  It runs python/setup.py
in python/ (its pyproject.toml's metadata, the extension built from ../src and ../include): the
same package as `pip install ./python`, which everything else (make python-env, the wheel) builds."""
import os
import sys

PKG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python")
os.chdir(PKG)
sys.path.insert(0, PKG)
with open(os.path.join(PKG, "setup.py")) as f:
    exec(compile(f.read(), os.path.join(PKG, "setup.py"), "exec"), {"__name__": "__main__", "__file__": os.path.join(PKG, "setup.py")})
