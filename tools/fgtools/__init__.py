"""Code that FrameGraph's Python tools share across their folders (tools/*/).

A script imports what it needs from here (`from fgtools import hostinfo`); a module used only by the
scripts of its own folder stays in that folder, where Python finds it (a script's folder comes first
on its path). The package is installed, editable, into the venvs the project makes:
`tools/setup-python.sh` (.venv-tools) and `tools/cluster/setup.sh` (.venv-ray); for another venv:

    VENV/bin/python -m pip install -e tools     (pip fetches setuptools and wheel from PyPI to build it)

Modules:
    hostinfo       what machine a benchmark ran on (cpu_name)
    deploy_server  the nginx test server for model deployment (tools/deploy/test_server.py runs it)
    raycluster     a throwaway Ray cluster on this machine, clips, processes (tools/cluster's tests,
                   tools/bench/cluster_throughput.py)
    mt_reference   MetalTensor's networks run in numpy from the spec (tools/metaltensor)
    mt_demos       MetalTensor's example apps' input preparation and checks (tools/metaltensor)
    efficientnet_wheel  the pinned EfficientNet-Lite0 wheel and its restricted .pth reader
                   (tools/labeling, tools/colorizer)
    docblocks      runs the docs' ```sh runnable blocks as the tests do (tools/run-doc-blocks.py;
                   docs/CONTRIBUTING.md)
"""
