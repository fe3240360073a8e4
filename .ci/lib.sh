# Sourced by every CI script (`. "$(dirname "$0")/lib.sh"`): the pieces
# they share, stated once. Not a script of its own.
#
#   step NAME       a step of .ci/run: prints its name and start time, and
#                   the time the step before it took
#   sub NAME        a sub-step of another script, likewise
#   steps_summary   the time every step took, as a table (at the end)
#   target_dir [cargo metadata args]   the target directory cargo uses
#                   (CARGO_TARGET_DIR, a config's build.target-dir, or the
#                   default): nothing assumes target/
#   need_targets T...            rustup targets, added when missing
#   need_toolchain V             a toolchain (minimal profile), when missing
#   need_component TOOLCHAIN C   a rustup component, when missing
#   need_cargo_tool CMD CRATE    `cargo install --locked CRATE` when
#                                `cargo CMD --version` fails
#   need_apt PKG...              Debian packages, when missing (one
#                                `apt-get update` per run)
#
# and the feature sets and test lists used in more than one place.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# The RustCrypto KEM backend (ml-kem, x25519-dalek), as a dependent selects it.
RUSTCRYPTO=(--no-default-features --features std,pem,rustcrypto)
# The tests that exercise the KEM and the packet paths on a backend or a
# code path other than the default one.
KEM_TESTS=(--test conformance --test roundtrip --test no_alloc --test kem --test kem_backends --test upstream --test hpqc --test unwrap_batch --test batch_vectors)

_ci_name=${0##*/}
_ci_step=""
_ci_step_start=$SECONDS
_ci_steps=()

_ci_close_step() {
    if [ -n "$_ci_step" ]; then
        local took=$((SECONDS - _ci_step_start))
        _ci_steps+=("$(printf '%6d s  %s' "$took" "$_ci_step")")
        printf '    (%s: %d s)\n' "$_ci_step" "$took"
    fi
}

step() {
    _ci_close_step
    _ci_step="$*"
    _ci_step_start=$SECONDS
    printf '\n=== %s (at %d s)\n' "$*" "$SECONDS"
}

sub() {
    _ci_close_step
    _ci_step="$*"
    _ci_step_start=$SECONDS
    printf -- '--- %s: %s (at %d s)\n' "$_ci_name" "$*" "$SECONDS"
}

steps_summary() {
    _ci_close_step
    _ci_step=""
    printf '\n%s: %d s in all\n' "$_ci_name" "$SECONDS"
    printf '%s\n' "${_ci_steps[@]}"
}

target_dir() {
    local dir
    dir=$(cargo metadata --format-version 1 --no-deps "$@" |
        sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
    test -n "$dir"
    echo "$dir"
}

need_targets() {
    local missing=() t
    for t in "$@"; do
        rustup target list --installed | grep -qx "$t" || missing+=("$t")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        rustup target add "${missing[@]}"
    fi
}

need_toolchain() {
    rustup run "$1" rustc --version >/dev/null 2>&1 ||
        rustup toolchain install "$1" --profile minimal
}

need_component() {
    rustup component list --toolchain "$1" --installed 2>/dev/null | grep -q "^$2" ||
        rustup component add --toolchain "$1" "$2"
}

need_cargo_tool() {
    cargo "$1" --version >/dev/null 2>&1 || cargo install "$2" --locked
}

_ci_apt_updated=""
need_apt() {
    local missing=() p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        if [ -z "$_ci_apt_updated" ]; then
            apt-get update -qq
            _ci_apt_updated=1
        fi
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            "${missing[@]}" >/dev/null
    fi
}
