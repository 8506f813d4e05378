# shellcheck shell=bash
# Helpers to run a private PostgreSQL cluster on 127.0.0.1 (sourced by
# scripts/run and scripts/test). initdb/pg_ctl refuse to run as root: as root,
# they run as the `postgres` user, which then owns the cluster's folder.

PG_SUPERUSER=huit

pg_log() { printf '%s\n' "$*" >&2; }

# pg_as CMD...: run CMD as the cluster's owner.
pg_as() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

pg_check_tools() {
    local tool
    for tool in initdb pg_ctl postgres psql; do
        command -v "$tool" >/dev/null 2>&1 || { pg_log "error: $tool is not on PATH"; return 1; }
    done
    if [ "$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; then
        pg_log "creating the postgres system user"
        useradd --system --user-group --home-dir /nonexistent --shell /usr/sbin/nologin postgres
    fi
}

# pg_prepare_dir DIR: make DIR exist and be writable by the cluster's owner.
pg_prepare_dir() {
    local dir=$1
    mkdir -p "$dir"
    if [ "$(id -u)" -eq 0 ]; then
        chown postgres: "$dir"
        chmod 700 "$dir"
        runuser -u postgres -- test -w "$dir"
    fi
}

# pg_free_port: a TCP port on 127.0.0.1 nobody listens on (best effort),
# below the kernel's range for outgoing connections' ports: a run that
# made tens of thousands of connections leaves them in TIME_WAIT there,
# and some servers (nginx) cannot listen on such a port.
pg_free_port() {
    local port tries low
    low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
    [ "$low" -gt 12000 ] || low=32768
    for tries in $(seq 1 50); do
        port=$(( low - 12000 + (RANDOM % 12000) ))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            echo "$port"
            return 0
        fi
    done
    return 1
}

# pg_tls DIR: a certificate authority of this cluster's own (DIR/tls/ca.crt;
# its key is deleted once it signed) and the server's certificate for
# 127.0.0.1 and localhost, signed by it, valid for 30 days. Clients verify
# the server against ca.crt (sslmode=verify-full, see pg_url).
pg_tls() {
    local tls=$1/tls
    command -v openssl >/dev/null 2>&1 || { pg_log "error: openssl is not on PATH"; return 1; }
    mkdir -p "$tls"
    (
        cd "$tls"
        umask 077
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 \
            -subj "/CN=huit test cluster CA" -keyout ca.key -out ca.crt \
            -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
            -subj "/CN=127.0.0.1" -keyout server.key -out server.csr
        printf '%s\n' "subjectAltName=IP:127.0.0.1,DNS:localhost" \
            "basicConstraints=critical,CA:FALSE" "extendedKeyUsage=serverAuth" >server.ext
        openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 30 \
            -extfile server.ext -out server.crt
        rm -f ca.key ca.srl server.csr server.ext
        chmod 644 ca.crt server.crt
    ) >"$1/tls.log" 2>&1 || { cat "$1/tls.log" >&2; return 1; }
    chmod 755 "$tls"
    if [ "$(id -u)" -eq 0 ]; then
        chown -R postgres: "$tls"
    fi
}

# pg_init DIR [fast|nofsync] [plain]: initdb DIR/data (once) with a random password
# for the superuser `huit`, kept in DIR/password. With "fast", durability is
# traded for speed and disk (throwaway test clusters only). "nofsync" only skips the
# flushes to disk: a commit is still in the WAL (in the OS's cache) when it is
# acknowledged, so it survives PostgreSQL being killed, not the machine
# crashing (the fault tests' private clusters).
# The cluster takes TLS connections only (pg_tls), as a managed PostgreSQL
# does; "plain" makes it take plain ones only (the benchmarks, whose
# figures compare with runs made before TLS).
pg_init() {
    local dir=$1 mode=${2:-} transport=${3:-tls}
    [ -f "$dir/data/PG_VERSION" ] && return 0
    local password
    password=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
    printf '%s\n' "$password" | pg_as tee "$dir/password" >/dev/null
    pg_as chmod 600 "$dir/password"
    pg_as initdb --pgdata="$dir/data" --username="$PG_SUPERUSER" --pwfile="$dir/password" \
        --auth=scram-sha-256 --encoding=UTF8 --no-locale >"$dir/initdb.log" 2>&1 \
        || { cat "$dir/initdb.log" >&2; return 1; }
    if [ "$transport" = tls ]; then
        pg_tls "$dir"
        # Plain connections are refused, not merely not preferred.
        printf '%s\n' "hostssl all all 127.0.0.1/32 scram-sha-256" \
            "hostnossl all all 127.0.0.1/32 reject" | pg_as tee "$dir/data/pg_hba.conf" >/dev/null
    fi
    {
        if [ "$transport" = tls ]; then
            echo "ssl = on"
            echo "ssl_cert_file = '$dir/tls/server.crt'"
            echo "ssl_key_file = '$dir/tls/server.key'"
        fi
        echo "listen_addresses = '127.0.0.1'"
        echo "unix_socket_directories = ''"
        echo "max_connections = 300"
        if [ "$mode" = fast ] || [ "$mode" = nofsync ]; then
            echo "fsync = off"
            echo "full_page_writes = off"
        fi
        if [ "$mode" = fast ]; then
            echo "synchronous_commit = off"
            # Every test creates a database, which PostgreSQL 15 copies
            # through the WAL: without a cap the WAL grows towards 1 GB.
            echo "max_wal_size = 128MB"
            echo "min_wal_size = 32MB"
        fi
    } | pg_as tee -a "$dir/data/postgresql.conf" >/dev/null
}

# pg_start DIR [PORT]: start the cluster of DIR unless it runs; prints its
# port. Without PORT, a free one is picked (retried if taken meanwhile).
pg_start() {
    local dir=$1 fixed=${2:-} port
    if pg_as pg_ctl --pgdata="$dir/data" status >/dev/null 2>&1 && [ -f "$dir/port" ]; then
        cat "$dir/port"
        return 0
    fi
    local attempt
    for attempt in 1 2 3 4 5; do
        port=${fixed:-$(pg_free_port)}
        if pg_as pg_ctl --pgdata="$dir/data" --log="$dir/postgres.log" --wait --timeout=60 \
            --options="-p $port" start >/dev/null 2>&1; then
            printf '%s\n' "$port" | pg_as tee "$dir/port" >/dev/null
            echo "$port"
            return 0
        fi
    done
    pg_log "error: PostgreSQL did not start; see $dir/postgres.log"
    tail -n 20 "$dir/postgres.log" >&2 || true
    return 1
}

# pg_stop DIR [MODE]: stop the cluster of DIR (MODE: fast, the default,
# or immediate); nothing when it does not run.
pg_stop() {
    local dir=$1 mode=${2:-fast}
    pg_as pg_ctl --pgdata="$dir/data" --mode="$mode" --wait stop >/dev/null 2>&1 || true
}

# pg_url DIR PORT DATABASE: verifying the server's certificate and name
# (sslmode=verify-full) when the cluster takes TLS.
pg_url() {
    local dir=$1 port=$2 db=$3 password tls=
    password=$(cat "$dir/password")
    if [ -f "$dir/tls/ca.crt" ]; then
        tls="?sslmode=verify-full&sslrootcert=$dir/tls/ca.crt"
    fi
    echo "postgres://$PG_SUPERUSER:$password@127.0.0.1:$port/$db$tls"
}

# pg_url_of URL DATABASE: URL naming DATABASE instead, its parameters kept.
pg_url_of() {
    local url=$1 db=$2 query=
    case $url in *\?*)
        query="?${url#*\?}"
        url=${url%%\?*}
        ;;
    esac
    echo "${url%/*}/$db$query"
}

# pg_ensure_database DIR PORT DATABASE
pg_ensure_database() {
    local dir=$1 port=$2 db=$3
    local url
    url=$(pg_url "$dir" "$port" postgres)
    if [ -z "$(psql "$url" -XtAc "SELECT 1 FROM pg_database WHERE datname = '$db'")" ]; then
        psql "$url" -Xq -c "CREATE DATABASE \"$db\""
    fi
}
