#!/usr/bin/env python3
"""Runs the docs' ```sh runnable blocks: tools/run-doc-blocks.py [--list] [--keep] [--only FILE[:LINE]]… [FILE.md…]

The code is tools/fgtools/docblocks.py (its docstring has the convention and what a block runs
with). Python puts this script's folder, tools/, first on its path, so fgtools imports without
being installed; standard library only.
"""
import sys

from fgtools.docblocks import main

if __name__ == "__main__":
    sys.exit(main())
