"""SHA-256 of a file, read in 1 MiB pieces (the set-up's downloads and extracted files are checked with it)."""
import hashlib


def sha256_file(path) -> str:
    """The file's SHA-256 as lowercase hex."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
