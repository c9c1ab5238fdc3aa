# shellcheck shell=bash
# The shell side of the test kit, sourced by every script in scripts/, IntegrationTests/ and
# Benchmarks/ (docs/TESTING.md):
#
#   source "$(dirname "$0")/../testkit/kit.sh"     # then, from the repository's root:
#   as_root CMD…          run CMD as root (sudo when not root)
#   apt_install PKG…      install the Debian packages that are missing (apt-get update when needed)
#   kit_venv              the one venv, .build/venv: testkit/requirements.txt pinned and the kit
#                         (testkit/, package sheetkit) installed editable; its bin/ is put first on
#                         PATH, so `python3`, `locust`, `st`, `hadolint`… are the venv's from then on
#   sheetd_build [debug|release]   build sheetd (the configuration scripts/test built already is
#                         skipped: SHEETD_BUILT names them) and print the binary's path (under
#                         scripts/test, release is the image's build: .build-image, below)
#   sheetd_start [--prefix CMD] LOG BIN [FLAG…]   a sheetd started by the kit (port 0, the bound port found, ready)
#                         and left running: sets sheetd_pid and sheetd_port
#   sheetd_stop PID       stop it by PID (SIGTERM, then SIGKILL after 10 s)
#
# Checks that run one command against a sheetd use `python3 -m sheetkit.harness sheetd … COMMAND`.

KIT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

as_root() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi; }

# apt_install PKG…: those not installed yet, with apt-get (package lists fetched when there are none
# or when the install fails on stale ones).
apt_install() {
    local missing=() p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    ((${#missing[@]})) || return 0
    echo "kit: installing ${missing[*]} with apt-get" >&2
    if ! compgen -G "/var/lib/apt/lists/*_Packages*" >/dev/null; then as_root apt-get update -qq; fi
    if ! DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq -o DPkg::Lock::Timeout=600 "${missing[@]}" >/dev/null; then
        as_root apt-get update -qq # stale package lists
        DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq -o DPkg::Lock::Timeout=600 "${missing[@]}" >/dev/null
    fi
}

# sheetd_build [debug|release]: prints .build/CONFIG/sheetd's path, after `swift build` (quick when
# nothing changed: a stale binary would test old code) unless scripts/test built CONFIG for this run.
# scripts/test's release build is the one the container image ships (the Dockerfile's build command,
# -c release --static-swift-stdlib, made by `IntegrationTests/image-check --build-only` in
# .build-image): the release checks and image-check share that one build, and test what ships.
sheetd_build() {
    local config=${1:-debug}
    [[ $config == debug || $config == release ]] || { echo "sheetd_build: debug or release, not $config" >&2; return 2; }
    if [[ " ${SHEETD_BUILT:-} " == *" $config "* ]]; then
        if [[ $config == release ]]; then echo "$KIT_ROOT/.build-image/release/sheetd"; else echo "$KIT_ROOT/.build/debug/sheetd"; fi
        return 0
    fi
    swift build --package-path "$KIT_ROOT" -c "$config" --product sheetd >&2 || return 1
    echo "$KIT_ROOT/.build/$config/sheetd"
}

# kit_venv: .build/venv with the pins and the kit; rebuilt when requirements.txt or pyproject.toml
# change (their checksum is kept in the venv). Several scripts may ask at once: one builds, under a lock.
# The pinned packages come from a wheelhouse outside the clone ($SHEETD_WHEELS, default
# ~/.cache/sheetd/wheels/CHECKSUM), filled from PyPI the first time: a fresh clone (CI clones anew
# each run) then installs without the network, in seconds rather than minutes.
kit_venv() {
    local venv=$KIT_ROOT/.build/venv stamp wheels
    stamp=$(cat "$KIT_ROOT/testkit/requirements.txt" "$KIT_ROOT/testkit/pyproject.toml" | sha256sum | cut -c1-16)
    wheels=${SHEETD_WHEELS:-$HOME/.cache/sheetd/wheels}/$(sha256sum <"$KIT_ROOT/testkit/requirements.txt" | cut -c1-16)
    if [[ "$(cat "$venv/.kit" 2>/dev/null)" != "$stamp" ]]; then
        mkdir -p "$KIT_ROOT/.build" "$(dirname "$wheels")"
        (
            flock 9
            [[ "$(cat "$venv/.kit" 2>/dev/null)" == "$stamp" ]] && exit 0
            echo "kit: installing testkit/requirements.txt and the kit into $venv" >&2
            rm -rf "$venv"
            # Debian's python3 keeps venv (ensurepip) in a package of its own.
            python3 -m venv "$venv" >/dev/null 2>&1 || { rm -rf "$venv"; apt_install python3-venv; python3 -m venv "$venv"; }
            (
                flock 8
                if [[ ! -f $wheels/.complete ]]; then
                    echo "kit: downloading the pinned wheels into $wheels (once per machine)" >&2
                    rm -rf "$wheels"
                    "$venv/bin/python" -m pip wheel -q -w "$wheels" -r "$KIT_ROOT/testkit/requirements.txt" setuptools
                    touch "$wheels/.complete"
                fi
            ) 8>"$wheels.lock" || exit 1
            "$venv/bin/python" -m pip install -q --no-index --find-links "$wheels" -r "$KIT_ROOT/testkit/requirements.txt"
            "$venv/bin/python" -m pip install -q --no-index --find-links "$wheels" --no-deps -e "$KIT_ROOT/testkit"
            echo "$stamp" >"$venv/.kit"
        ) 9>"$KIT_ROOT/.build/venv.lock" || return 1
    fi
    case ":$PATH:" in *":$venv/bin:"*) ;; *) PATH="$venv/bin:$PATH" ;; esac
    export PATH VIRTUAL_ENV=$venv
}

# sheetd_start [--prefix "CMD…"] LOG BIN [FLAG…]: sets sheetd_pid and sheetd_port (needs kit_venv
# first). --prefix: a command that execs sheetd (valgrind …, taskset -c 1), so the PID stays its.
# SHEETD_READY_SECONDS: how long it may take to answer /readyz (30; more under valgrind).
sheetd_start() {
    local prefix="" log bin out
    if [[ $1 == --prefix ]]; then prefix=$2; shift 2; fi
    log=$1 bin=$2
    shift 2
    out=$(python3 -m sheetkit.harness start --log "$log" --bin "$bin" --prefix "$prefix" \
        --ready-seconds "${SHEETD_READY_SECONDS:-30}" \
        --flags "$(printf '%q ' "$@")") || return 1
    read -r sheetd_pid sheetd_port <<<"$out"
}

sheetd_stop() { python3 -m sheetkit.harness stop "$@"; }
