#!/usr/bin/env python3
"""The command line of the nginx test server for model deployment; the code, and how to use it, is in
tools/fgtools/deploy_server.py.

The Swift tests run this with the system python3, which has no fgtools installed, so the module is
loaded from its file (it needs only the standard library).
"""
import importlib.util
import os
import sys

_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "fgtools", "deploy_server.py")
_spec = importlib.util.spec_from_file_location("deploy_server", _path)
deploy_server = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(deploy_server)

if __name__ == "__main__":
    sys.exit(deploy_server.main())
