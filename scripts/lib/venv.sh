# shellcheck shell=bash
# A Python virtualenv holding exactly the pinned packages of a requirements
# file (sourced by the scripts that run Python: scripts/client-py,
# scripts/console, scripts/webhooks, scripts/deploy-check).

# venv_pinned VENV REQUIREMENTS: make VENV (under .venv/, gitignored) with
# the machine's python3 and REQUIREMENTS installed, unless it holds them
# already; Debian's python3-venv is installed first when missing (as root).
venv_pinned() {
    local venv=$1 requirements=$2
    if ! python3 -m venv --help >/dev/null 2>&1; then
        if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
            echo "installing Debian's python3-venv" >&2
            apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
        else
            echo "python3's venv is missing: apt-get install python3-venv" >&2
            return 1
        fi
    fi
    if ! cmp -s "$requirements" "$venv/requirements.txt" 2>/dev/null; then
        echo "installing the pinned packages ($requirements) into $venv" >&2
        rm -rf "$venv"
        python3 -m venv "$venv"
        "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps -r "$requirements"
        cp "$requirements" "$venv/requirements.txt"
    fi
}
