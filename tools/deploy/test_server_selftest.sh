#!/usr/bin/env bash
# Self-test of tools/deploy/test_server.py: start it on a throwaway tree, check every location
# with curl, stop it, and check that no nginx of it is left.
#
#     tools/deploy/test_server_selftest.sh
#
# Needs python3, nginx, openssl and curl. Prints one PASS/FAIL line per check and exits 1 if any
# check failed. Takes about 6 s (most of it the /slow/ download).

set -u

HERE=$(cd "$(dirname "$0")" && pwd)
SERVER_PY="$HERE/test_server.py"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/deploy-selftest.XXXXXX")
FAILED=0
TOKEN="selftest-token.$RANDOM$RANDOM"
SLOW_RATE=262144

pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; FAILED=1; }
# check NAME COMMAND...: PASS if the command succeeds.
check() { local name=$1; shift; if "$@"; then pass "$name"; else fail "$name"; fi; }

# Field NAME of a JSON object (the server's line).
json_field() { python3 -c 'import json, sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }

# wait_gone PID SECONDS: true once PID no longer exists (polls every 0.1 s).
wait_gone() {
    local i
    for ((i = 0; i < $2 * 10; i++)); do
        kill -0 "$1" 2>/dev/null || return 0
        sleep 0.1
    done
    return 1
}

# No process runs nginx with the prefix WORK (a read-only look at the process table).
no_nginx_of() { ! ps -eo args= | grep -F -- "-p $1/" | grep -v grep | grep -q nginx; }

cleanup() {
    # Only what this script started: the coprocess (if still there), then the files.
    [[ -n "${SRV_PID:-}" ]] && kill "$SRV_PID" 2>/dev/null && wait_gone "$SRV_PID" 5
    rm -rf "$TMP"
}
trap cleanup EXIT

# ---- The tree, the keys and a second ("stale") tree -----------------------------------------
mkdir -p "$TMP/tree/models" "$TMP/keys" "$TMP/stale"
head -c 1048576 /dev/urandom > "$TMP/tree/models/big.bin"
echo "manifest v2" > "$TMP/tree/small.txt"
echo "manifest v1" > "$TMP/stale/small.txt"
head -c 32 /dev/urandom > "$TMP/keys/key-1"
BIG="$TMP/tree/models/big.bin"
BIG_SIZE=$(wc -c < "$BIG")

# ---- Start the server as a coprocess and read its JSON line ---------------------------------
coproc SERVER { exec python3 "$SERVER_PY" serve --tree "$TMP/tree" --keys "$TMP/keys" --token "$TOKEN" \
    --slow-rate "$SLOW_RATE" --alias "stale=$TMP/stale" 2>"$TMP/server.stderr"; }
SRV_PID=$SERVER_PID   # bash unsets SERVER_PID when the coprocess ends: keep a copy
if ! read -r -t 20 LINE <&"${SERVER[0]}"; then
    fail "server printed no JSON line within 20 s: $(cat "$TMP/server.stderr")"
    exit 1
fi
echo "server: $LINE"
HTTPS=$(json_field "$LINE" https)
HTTP=$(json_field "$LINE" http)
CA=$(json_field "$LINE" ca)
NGINX_PID=$(json_field "$LINE" pid)
WORK=$(json_field "$LINE" work)

CURL=(curl -sS --max-time 30 --cacert "$CA")
OUT="$TMP/out"

# ---- / : exact bytes, Content-Length, Range --------------------------------------------------
check "/ serves the exact bytes of a 1 MiB file" \
    eval '"${CURL[@]}" -o "$OUT" "${HTTPS}models/big.bin" && cmp -s "$OUT" "$BIG"'
check "/ sends Content-Length: $BIG_SIZE" \
    eval '"${CURL[@]}" -I "${HTTPS}models/big.bin" | tr -d "\r" | grep -qix "content-length: $BIG_SIZE"'
code=$("${CURL[@]}" -r 100- -o "$OUT" -w '%{http_code}' "${HTTPS}models/big.bin")
check "a Range request (-r 100-) gives 206 and the tail (got $code)" \
    eval '[[ $code == 206 ]] && cmp -s "$OUT" <(tail -c +101 "$BIG")'
check "the server certificate is valid for DNS:localhost too" \
    eval '"${CURL[@]}" -o "$OUT" "https://localhost:${HTTPS##*:}small.txt" && cmp -s "$OUT" "$TMP/tree/small.txt"'

# ---- /slow/ ----------------------------------------------------------------------------------
start=$(date +%s.%N)
"${CURL[@]}" -o "$OUT" "${HTTPS}slow/models/big.bin"
secs=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$start" "$(date +%s.%N)")
check "/slow/ of 1 MiB at $SLOW_RATE B/s took ${secs} s (>= 2.5) with the exact bytes" \
    eval 'cmp -s "$OUT" "$BIG" && python3 -c "import sys; sys.exit(float(sys.argv[1]) < 2.5)" "$secs"'

# ---- /fail/ ----------------------------------------------------------------------------------
code=$("${CURL[@]}" -o /dev/null -w '%{http_code}' "${HTTPS}fail/models/big.bin")
check "/fail/ answers 500 (got $code)" test "$code" = 500

# ---- /cut/ -----------------------------------------------------------------------------------
start=$(date +%s.%N)
"${CURL[@]}" -o "$OUT" "${HTTPS}cut/models/big.bin" 2>"$TMP/cut.stderr"
rc=$?
secs=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$start" "$(date +%s.%N)")
got=$(wc -c < "$OUT")
check "/cut/ ends with curl exit 18 or 56 and fewer bytes (exit $rc, $got of $BIG_SIZE bytes, ${secs} s: $(tr -d '\n' < "$TMP/cut.stderr"))" \
    eval '[[ $rc == 18 || $rc == 56 ]] && (( got < BIG_SIZE )) && cmp -s "$OUT" <(head -c "$got" "$BIG")'
check "/cut/ of a small file comes whole" \
    eval '"${CURL[@]}" -o "$OUT" "${HTTPS}cut/small.txt" && cmp -s "$OUT" "$TMP/tree/small.txt"'

# ---- /keys/ ----------------------------------------------------------------------------------
code=$("${CURL[@]}" -o /dev/null -w '%{http_code}' "${HTTPS}keys/key-1")
check "/keys/key-1 without a token gives 401 (got $code)" test "$code" = 401
code=$("${CURL[@]}" -o /dev/null -w '%{http_code}' -H "Authorization: Bearer wrong-$TOKEN" "${HTTPS}keys/key-1")
check "/keys/key-1 with a wrong token gives 401 (got $code)" test "$code" = 401
code=$("${CURL[@]}" -o "$OUT" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "${HTTPS}keys/key-1")
check "/keys/key-1 with the token gives 200 and the exact bytes (got $code)" \
    eval '[[ $code == 200 ]] && cmp -s "$OUT" "$TMP/keys/key-1"'
code=$("${CURL[@]}" -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "${HTTPS}keys/no-such-key")
check "/keys/no-such-key with the token gives 404 (got $code)" test "$code" = 404

# ---- /alt/NAME/, plain HTTP, real TLS verification ---------------------------------------------
check "/alt/stale/ serves the --alias folder" \
    eval '"${CURL[@]}" -o "$OUT" "${HTTPS}alt/stale/small.txt" && cmp -s "$OUT" "$TMP/stale/small.txt"'
check "the HTTP port serves / too" \
    eval 'curl -sS --max-time 30 -o "$OUT" "${HTTP}models/big.bin" && cmp -s "$OUT" "$BIG"'
curl -sS --max-time 30 -o /dev/null "${HTTPS}small.txt" 2>/dev/null
rc=$?
check "HTTPS verified against the system CAs instead of ca.pem fails (curl exit $rc)" test "$rc" -ne 0

# ---- Stop: EOF on stdin ------------------------------------------------------------------------
eval "exec ${SERVER[1]}>&-"   # close the coprocess's stdin: EOF for the server
wait_gone "$SRV_PID" 10
wait "$SRV_PID"
rc=$?
SRV_PID=
check "the server exits 0 at EOF on stdin (got $rc)" test "$rc" = 0
check "nginx (pid $NGINX_PID) is gone" eval '! kill -0 "$NGINX_PID" 2>/dev/null && no_nginx_of "$WORK"'
check "the temporary work folder is deleted" test ! -e "$WORK"

# ---- Stop: SIGTERM, with --work (kept) ---------------------------------------------------------
coproc SERVER { exec python3 "$SERVER_PY" serve --tree "$TMP/tree" --keys "$TMP/keys" --token "$TOKEN" \
    --work "$TMP/work" 2>"$TMP/server.stderr"; }
SRV_PID=$SERVER_PID   # bash unsets SERVER_PID when the coprocess ends: keep a copy
if read -r -t 20 LINE <&"${SERVER[0]}"; then
    NGINX_PID=$(json_field "$LINE" pid)
    kill -TERM "$SRV_PID"
    wait_gone "$SRV_PID" 10
    wait "$SRV_PID"
    rc=$?
    SRV_PID=
    check "the server exits 0 on SIGTERM (got $rc)" test "$rc" = 0
    check "nginx (pid $NGINX_PID) is gone after SIGTERM" eval '! kill -0 "$NGINX_PID" 2>/dev/null && no_nginx_of "$TMP/work"'
    check "a --work folder is kept" test -f "$TMP/work/nginx.conf"
else
    fail "second server printed no JSON line: $(cat "$TMP/server.stderr")"
fi

# ---- nginx dies on its own: non-zero exit, error.log on stderr -------------------------------
coproc SERVER { exec python3 "$SERVER_PY" serve --tree "$TMP/tree" --keys "$TMP/keys" --token "$TOKEN" \
    2>"$TMP/server.stderr"; }
SRV_PID=$SERVER_PID   # bash unsets SERVER_PID when the coprocess ends: keep a copy
if read -r -t 20 LINE <&"${SERVER[0]}"; then
    NGINX_PID=$(json_field "$LINE" pid)
    kill -KILL "$NGINX_PID"   # the nginx this script's server started
    wait_gone "$SRV_PID" 10
    wait "$SRV_PID"
    rc=$?
    SRV_PID=
    check "the server exits non-zero when nginx dies (got $rc) and says so on stderr" \
        eval '[[ $rc != 0 ]] && grep -q "exited on its own" "$TMP/server.stderr"'
else
    fail "third server printed no JSON line: $(cat "$TMP/server.stderr")"
fi

# ---- Setup errors: one line, exit 2 ----------------------------------------------------------
python3 "$SERVER_PY" serve --tree "$TMP/no-such-tree" --keys "$TMP/keys" --token "$TOKEN" \
    >"$OUT" 2>"$TMP/server.stderr" </dev/null
rc=$?
check "a missing --tree gives exit 2 and one line on stderr (got $rc: $(cat "$TMP/server.stderr"))" \
    eval '[[ $rc == 2 && $(wc -l < "$TMP/server.stderr") == 1 && ! -s $OUT ]]'

if ((FAILED)); then
    echo "FAIL: test_server self-test"
    exit 1
fi
echo "PASS: test_server self-test"
