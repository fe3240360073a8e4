#!/usr/bin/env bash
# Run every fuzz target (or the ones named) for SECONDS each, with
# AddressSanitizer (cargo fuzz's default, on nightly; unwrap_header without,
# see below), and print per target
# the executions, the coverage of libFuzzer's last status line (cov: edges,
# ft: features) and the crashes. Exits non-zero if any target crashed.
#
#   fuzz/run.sh SECONDS [TARGET...]
#
# The committed seeds (fuzz/corpus/<target>) are read, never written: new
# inputs go to fuzz/work/corpus/<target>, which later runs start from.
# Crashing inputs land in fuzz/artifacts/<target>/; logs in fuzz/work/.
set -euo pipefail
seconds=${1:?usage: fuzz/run.sh SECONDS [TARGET...]}
shift
cd "$(dirname "$0")"

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(unwrap_raw unwrap_mutated commands surb_reply keys aez_roundtrip aez5_paths kem_differential)
    targets+=(node_receive x25519_batch)
    targets+=(unwrap_header)
fi
# Longest input per target: a packet and a bit (16,150), a SURB with keys
# and a payload, a key, an AEZ key, nonce and message of up to 16,150
# (aez5_paths: plus a τ byte, an AD byte and the AD).
declare -A max_len=(
    [unwrap_raw]=16200 [unwrap_mutated]=2048 [commands]=256
    [surb_reply]=20000 [keys]=2048 [aez_roundtrip]=16300 [aez5_paths]=16600
    [kem_differential]=4096 [node_receive]=4096 [x25519_batch]=600
)
# Flags, a shared secret and a packet.
max_len[unwrap_header]=16200
target_dir=$(cargo metadata --format-version 1 --no-deps |
    sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
# Build options per target. kem_differential compares every KEM backend,
# so it is built with the RustCrypto one as well (which the others must not
# be: with it, it is the backend they would run on), and without debug
# assertions (-O), since the library keeps X25519 off graviola's assembly
# in builds with them (SPEC.md §11).
# unwrap_header exists for speed (>= 10^4 executions per second): it runs
# without a sanitizer (a factor of four) and without tracing comparisons
# (which instruments every loop of the hash and cipher crates). What it
# drives is safe Rust (the library forbids unsafe code), and the other
# targets run the same primitives under AddressSanitizer. It is built in a
# target directory of its own, so that the two builds do not replace each
# other.
declare -A options=(
    [kem_differential]="-O --features rustcrypto"
    [unwrap_header]="--sanitizer none --no-trace-compares --target-dir $target_dir/no-sanitizer"
)

cargo +nightly fuzz build
mkdir -p work
printf '%-15s %8s %12s %7s %8s %8s  %s\n' target seconds executions cov ft crashes result
failed=0
for t in "${targets[@]}"; do
    mkdir -p "work/corpus/$t" "artifacts/$t"
    log="work/$t.log"
    stamp="work/$t.start"
    touch "$stamp"
    result=ok
    # shellcheck disable=SC2086 # the options are words
    cargo +nightly fuzz run ${options[$t]:-} "$t" "work/corpus/$t" "corpus/$t" -- \
        -max_total_time="$seconds" -max_len="${max_len[$t]}" -timeout=60 \
        -print_final_stats=1 >"$log" 2>&1 || result=FAILED
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    status=$(grep -E '^#[0-9]+.* cov: ' "$log" | tail -n 1 || true)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$status")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$status")
    crashes=$(find "artifacts/$t" -type f -newer "$stamp" | wc -l)
    if [ "$crashes" -ne 0 ]; then result=FAILED; fi
    if [ "$result" != ok ]; then
        failed=1
        tail -n 40 "$log" >&2
    fi
    printf '%-15s %8s %12s %7s %8s %8s  %s\n' "$t" "$seconds" "${execs:-?}" \
        "${cov:-?}" "${ft:-?}" "$crashes" "$result"
done
exit "$failed"
