#!/usr/bin/env bash
# Installs FrameGraph like a tool: the framegraph binary, the shipped pipelines, the models they use,
# the sample clip their default input names, a man page and bash/zsh completions.
#
#   scripts/install.sh [--prefix DIR] [--static]      install (default prefix /usr/local)
#   scripts/install.sh --binary PATH [--prefix DIR]   install a framegraph binary built already
#   scripts/install.sh --uninstall [--prefix DIR]     remove exactly what an install put there
#
#   PREFIX/bin/framegraph
#   PREFIX/share/framegraph/pipelines/*.fg            `framegraph run face-detect` finds them by name
#   PREFIX/share/framegraph/models/…                  found by name from any folder (the search path's "installed data")
#   PREFIX/share/framegraph/samples/media/portrait.mp4   the shipped pipelines' default input
#   PREFIX/share/man/man1/framegraph.1                `man framegraph` (made from the same help text as --help)
#   PREFIX/share/bash-completion/completions/framegraph, PREFIX/share/zsh/site-functions/_framegraph
#   PREFIX/share/framegraph/installed-files.txt       what --uninstall removes
#
# The binary is the release build (built first if needed). It loads the Swift runtime from the
# toolchain it was built with; --static builds one with the Swift runtime inside (a separate build
# folder, .build-static), for machines without the toolchain. Models come from models/cache, which
# scripts/test.sh (or scripts/demo.sh) fills: run one of them first.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=/usr/local
static=0
uninstall=0
binary=""
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix="${2:?--prefix needs a folder}"; shift 2 ;;
    --prefix=*) prefix="${1#--prefix=}"; shift ;;
    --static) static=1; shift ;;
    --binary) binary="${2:?--binary needs a file}"; shift 2 ;;
    --uninstall) uninstall=1; shift ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "install.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
prefix="$(mkdir -p "$prefix" && cd "$prefix" && pwd)"
data="$prefix/share/framegraph"
manifest="$data/installed-files.txt"

if [ "$uninstall" = 1 ]; then
  [ -f "$manifest" ] || { echo "install.sh: nothing installed in $prefix (no $manifest)" >&2; exit 1; }
  while IFS= read -r f; do rm -f "$prefix/$f"; done < "$manifest"
  rm -f "$manifest"
  # Folders the install made, if now empty.
  for d in share/framegraph/samples/media share/framegraph/samples share/framegraph/models/colorizer share/framegraph/models \
           share/framegraph/pipelines share/framegraph share/man/man1 share/bash-completion/completions share/bash-completion \
           share/zsh/site-functions share/zsh share/man share bin lib; do
    rmdir "$prefix/$d" 2>/dev/null || true
  done
  echo "removed FrameGraph from $prefix"
  exit 0
fi

library=""
if [ -n "$binary" ]; then
  [ -f "$(dirname "$binary")/libFrameGraphC.so" ] && library="$(dirname "$binary")/libFrameGraphC.so"
elif [ "$static" = 1 ]; then
  swift build -c release --product framegraph --static-swift-stdlib --build-path .build-static 2>&1 | tail -n 2
  binary=.build-static/release/framegraph
else
  swift build -c release --product framegraph 2>&1 | tail -n 2
  # The Python package's engine (python/: pip install ./python finds it in PREFIX/lib, or set FRAMEGRAPH_PREFIX).
  swift build -c release --product FrameGraphC 2>&1 | tail -n 2
  binary=.build/release/framegraph
  library=.build/release/libFrameGraphC.so
fi
[ -x "$binary" ] || { echo "install.sh: $binary was not built" >&2; exit 1; }

installed=()
put() {  # put SOURCE DEST-RELATIVE-TO-PREFIX [MODE]
  install -D -m "${3:-0644}" "$1" "$prefix/$2"
  installed+=("$2")
}
put "$binary" bin/framegraph 0755
[ -n "$library" ] && [ -f "$library" ] && put "$library" lib/libFrameGraphC.so 0755
for p in pipelines/*.fg; do put "$p" "share/framegraph/$p"; done
shopt -s nullglob
models=(models/cache/*.tflite models/cache/*.onnx models/cache/*.json)
[ ${#models[@]} -gt 0 ] || echo "install.sh: warning: models/cache is empty: run scripts/test.sh first (it fetches the models)" >&2
for m in "${models[@]}"; do put "$m" "share/framegraph/models/$(basename "$m")"; done
for m in models/colorizer/colorizer.onnx models/colorizer/*.json; do put "$m" "share/framegraph/$m"; done
[ -f samples/media/portrait.mp4 ] && put samples/media/portrait.mp4 share/framegraph/samples/media/portrait.mp4

# The man page and the completions, made by the installed binary from its own command table.
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$prefix/bin/framegraph" help --man > "$tmp/framegraph.1"
"$prefix/bin/framegraph" completions bash > "$tmp/framegraph.bash"
"$prefix/bin/framegraph" completions zsh > "$tmp/_framegraph"
put "$tmp/framegraph.1" share/man/man1/framegraph.1
put "$tmp/framegraph.bash" share/bash-completion/completions/framegraph
put "$tmp/_framegraph" share/zsh/site-functions/_framegraph

printf '%s\n' "${installed[@]}" > "$tmp/manifest"
install -D -m 0644 "$tmp/manifest" "$manifest"
echo "installed FrameGraph in $prefix (${#installed[@]} files; scripts/install.sh --uninstall --prefix $prefix removes them)"
