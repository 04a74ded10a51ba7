#!/usr/bin/env bash
# Runs every cargo-fuzz target in fuzz/fuzz_targets for a bounded time, on the stable toolchain
# (RUSTC_BOOTSTRAP=1 lets cargo-fuzz pass its -Z flags). Seeds each target's corpus from the
# repository's real inputs first. Usage: bash fuzz/run.sh [SECONDS_FOR_PARSE] [SECONDS_EACH_OTHER]
# (defaults 60 and 15). Prints one line per target: executions, corpus size, and the result;
# exits 1 if any target found a crash (its input is in fuzz/artifacts/<target>/).
set -euo pipefail
cd "$(dirname "$0")"
parse_secs=${1:-60}
other_secs=${2:-15}
export RUSTC_BOOTSTRAP=1
fuzz=(cargo fuzz)
command -v cargo-fuzz >/dev/null || fuzz=("$HOME/.cargo/bin/cargo-fuzz")

seed() { # seed TARGET FILE...
  mkdir -p "corpus/$1"
  shift_target=$1
  shift
  for f in "$@"; do
    [ -f "$f" ] && cp "$f" "corpus/$shift_target/seed-$(basename "$(dirname "$f")")-$(basename "$f")"
  done
  return 0
}
seed claims ../examples/claims/*.toml ../bench-*/claims.toml
seed jmh_json ../results/*/*.json ../present/tests/fixtures/*.json
seed verdicts ../results/*/verdicts*.json
mkdir -p corpus/settings
printf '\x00500ms' >corpus/settings/seed-duration
printf '\x011,max,4x' >corpus/settings/seed-threads
printf '\x02thrpt' >corpus/settings/seed-mode
printf '\x0312.5,ops/s\n# comment\n13,ops/s\n' >corpus/settings/seed-lines
printf '\x04backtrace=0,1' >corpus/settings/seed-param

# The CI profile: one release build with debug assertions, no sanitizer (the targets are safe
# Rust; a panic is what we look for, and an ASan build costs minutes more on 2 cores).
build=(--sanitizer none --debug-assertions)
"${fuzz[@]}" build "${build[@]}"
failed=0
for target in $("${fuzz[@]}" list); do
  secs=$other_secs
  [ "$target" = parse ] && secs=$parse_secs
  mkdir -p "corpus/$target"
  log="target/fuzz-$target.log"
  if "${fuzz[@]}" run "${build[@]}" "$target" "corpus/$target" -- \
      -max_total_time="$secs" -max_len=8192 -timeout=10 -rss_limit_mb=2048 >"$log" 2>&1; then
    result=ok
  else
    result="FAILED (see fuzz/$log and fuzz/artifacts/$target/)"
    failed=1
  fi
  execs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$log" | tail -1)
  [ -n "$execs" ] || execs=$(grep -o '^#[0-9]*' "$log" | tail -1 | tr -d '#')
  printf 'fuzz %-10s %4ss  %10s execs  %5s corpus  %s\n' "$target" "$secs" "${execs:-?}" \
    "$(ls "corpus/$target" | wc -l)" "$result"
done
exit $failed
