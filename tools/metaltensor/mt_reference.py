#!/usr/bin/env python3
"""The command line of tools/fgtools/mt_reference.py (its docstring says how to use it); needs fgtools
installed (tools/setup-python.sh does that for .venv-tools)."""
import sys

from fgtools.mt_reference import main

if __name__ == "__main__":
    sys.exit(main())
