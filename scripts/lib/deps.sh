# scripts/lib/deps.sh — Debian package dependencies of dblock, as one sourced function.
#
#   . scripts/lib/deps.sh
#   dblock_install_deps            # what building dblock (library, CLI, tests, bench) needs
#   dblock_install_deps --servers  # ... plus the PostgreSQL/MariaDB servers scripts/servers runs
#
# It only calls apt-get when a package is missing, so it is cheap and needs no root on a
# machine that is already set up. Not root and something missing: it names the packages
# and returns 1 (the callers run under `set -e`, so they exit 1).
#
# No `set -euo pipefail` here: this file is sourced, and options set here would leak into
# the caller's shell. The functions are written to be correct under those options.
# shellcheck shell=bash

# Keep in sync with what CMakeLists.txt finds; CI starts from a bare Debian 12.
DBLOCK_BUILD_PACKAGES=(
    g++ cmake make pkg-config git
    libpqxx-dev libpq-dev          # PostgreSQL backend (libpqxx)
    libmysqlcppconn-dev libmariadb-dev  # MySQL/MariaDB backend (Connector/C++)
    libsoci-dev libsqlite3-dev sqlite3  # SOCI backend; SQLite is the embedded default
    libssl-dev                     # SHA-256 fingerprints, random owner tokens
    libcli11-dev nlohmann-json3-dev  # CLI parsing, `dblock locks --json`
    libgtest-dev libbenchmark-dev gnuplot-nox  # tests, bench/ and its plots
    libhiredis-dev redis-server    # bench/: Redis beside dblock (the peers part)
    procps                         # pgrep/ps, used by tests that kill processes
    faketime                       # tests/faults: a worker whose wall clock jumps (libfaketime)
    dpkg-dev file                  # cpack -G DEB: dpkg-shlibdeps computes Depends (CPack runs file)
    groff-base man-db              # the man page, checked by the dblock_deb test
)
# iproute2 gives `ss`, which scripts/servers uses to pick free ports (a bare image lacks it).
# pgbouncer: the transaction pooler that the pooler-mode tests run through.
# galera-4 + rsync: the 3-node MariaDB Galera cluster of the Galera tests (rsync state transfer).
DBLOCK_SERVER_PACKAGES=(postgresql mariadb-server mariadb-client iproute2 pgbouncer galera-4 rsync)

# Prints, one per line, the packages among "$@" that dpkg does not list as installed.
dblock_missing_packages() {
    local pkg status
    for pkg in "$@"; do
        # "installed" only; half-installed/config-files states need apt too.
        status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
        if [[ $status != installed ]]; then
            printf '%s\n' "$pkg"
        fi
    done
}

dblock_install_deps() {
    local servers=0 arg
    for arg in "$@"; do
        case $arg in
            --servers) servers=1 ;;
            *) echo "dblock_install_deps: unknown argument '$arg' (only --servers)" >&2; return 64 ;;
        esac
    done

    if ! command -v dpkg-query >/dev/null 2>&1; then
        echo "dblock: dpkg-query not found; these scripts expect Debian 12" >&2
        return 1
    fi

    local pkgs=("${DBLOCK_BUILD_PACKAGES[@]}")
    if ((servers)); then
        pkgs+=("${DBLOCK_SERVER_PACKAGES[@]}")
    fi

    local missing=()
    mapfile -t missing < <(dblock_missing_packages "${pkgs[@]}")
    if ((${#missing[@]} == 0)); then
        return 0
    fi

    if ((EUID != 0)); then
        echo "dblock: missing Debian packages: ${missing[*]}" >&2
        echo "dblock: install them as root: apt-get install --no-install-recommends ${missing[*]}" >&2
        return 1
    fi

    echo "dblock: installing missing Debian packages: ${missing[*]}" >&2
    # Lock::Timeout: wait for a concurrent apt/dpkg (e.g. unattended-upgrades on a fresh VM)
    # instead of failing at once.
    DEBIAN_FRONTEND=noninteractive apt-get -q -o DPkg::Lock::Timeout=300 update
    DEBIAN_FRONTEND=noninteractive apt-get -q -y -o DPkg::Lock::Timeout=300 \
        install --no-install-recommends "${missing[@]}"

    # apt-get can exit 0 without installing everything (e.g. a held package); say so here
    # rather than as a confusing CMake error later.
    mapfile -t missing < <(dblock_missing_packages "${missing[@]}")
    if ((${#missing[@]} != 0)); then
        echo "dblock: still not installed after apt-get: ${missing[*]}" >&2
        return 1
    fi
}
