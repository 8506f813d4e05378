# shellcheck shell=bash
# Starting `huit serve` on a database of its own, for the steps of
# scripts/test that drive a real server (scripts/fuzz, scripts/client-ts).
# Source it; it needs DATABASE_URL (a cluster on which it may create and
# drop a database) and HUIT_BIN.

# shellcheck source=pg.sh
. "$(dirname "${BASH_SOURCE[0]}")/pg.sh"

# serve_start DIR NAME [VAR=VALUE ...]: creates the database huit_NAME_<random>,
# starts the server on it (127.0.0.1, a free port, its log in DIR/server.log)
# with the extra environment given, and sets SERVE_PID, SERVE_BASE
# (http://127.0.0.1:PORT), SERVE_DATABASE and SERVE_DATABASE_URL. Fails,
# printing the server's log, when it does not listen within 60 s.
serve_start() {
    local dir=$1 name=$2
    shift 2
    SERVE_DATABASE=huit_${name}_$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')
    SERVE_DATABASE_URL=$(pg_url_of "$DATABASE_URL" "$SERVE_DATABASE")
    psql "$DATABASE_URL" -Xq -c "CREATE DATABASE \"$SERVE_DATABASE\""
    env DATABASE_URL="$SERVE_DATABASE_URL" BIND=127.0.0.1:0 RUST_LOG="${RUST_LOG:-warn,huit=info}" "$@" \
        "$HUIT_BIN" serve >"$dir/server.log" 2>&1 &
    SERVE_PID=$!
    local port=
    for _ in $(seq 1 600); do
        port=$(sed -n 's/.*listening.* port=\([0-9][0-9]*\).*/\1/p' "$dir/server.log" | head -n 1)
        [ -n "$port" ] && break
        kill -0 "$SERVE_PID" 2>/dev/null || break
        sleep 0.1
    done
    if [ -z "$port" ]; then
        echo "huit serve did not start:" >&2
        cat "$dir/server.log" >&2
        return 1
    fi
    SERVE_BASE=http://127.0.0.1:$port
}

# serve_stop: stops the server and drops its database (for an EXIT trap).
serve_stop() {
    if [ -n "${SERVE_PID:-}" ]; then
        kill "$SERVE_PID" 2>/dev/null || true
        wait "$SERVE_PID" 2>/dev/null || true
    fi
    if [ -n "${SERVE_DATABASE:-}" ]; then
        psql "$DATABASE_URL" -Xq -c "DROP DATABASE IF EXISTS \"$SERVE_DATABASE\" WITH (FORCE)" >/dev/null 2>&1 || true
    fi
}
