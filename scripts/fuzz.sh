#!/usr/bin/env bash
# Runs every Go fuzz target in the repository for FUZZTIME each, one after
# the other, and prints a table: target | execs | new interesting | result.
#
#   scripts/fuzz.sh [FUZZTIME]        # default 60s (make fuzz FUZZTIME=...)
#
# Environment:
#   FUZZ_FILTER    only targets whose "package/FuzzName" matches this regex
#   FUZZ_PARALLEL  fuzzing workers per target (go test -parallel; default GOMAXPROCS)
#   FUZZ_LOG_DIR   keep each target's output here (default: a temp dir)
#
# A crash makes `go test` write the failing input to the package's
# testdata/fuzz/<FuzzName>/ (commit it as a regression seed with the fix);
# the script then exits non-zero. Seed corpora are replayed by `go test`
# as ordinary tests, so `make test` keeps every regression fixed.
set -uo pipefail

FUZZTIME="${1:-${FUZZTIME:-60s}}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
LOG_DIR="${FUZZ_LOG_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/toolrag-fuzz.XXXXXX")}"
mkdir -p "$LOG_DIR"

# module_dir DIR: the nearest directory at or above DIR holding a go.mod.
module_dir() {
	local d="$1"
	while [[ "$d" != "." && "$d" != "/" && ! -f "$d/go.mod" ]]; do
		d="$(dirname "$d")"
	done
	echo "$d"
}

mapfile -t TARGETS < <(
	grep -rn --include='*_test.go' -E '^func Fuzz[A-Za-z0-9_]*\(' . \
		--exclude-dir=.tools --exclude-dir=node_modules --exclude-dir=vendor --exclude-dir=.git |
		sed -E 's|^\./||; s|^([^:]*)/[^/:]*:[0-9]+:func (Fuzz[A-Za-z0-9_]*)\(.*|\1 \2|' |
		sort -u
)
if [[ ${#TARGETS[@]} -eq 0 ]]; then
	echo "fuzz: no fuzz targets found" >&2
	exit 1
fi

parallel=()
[[ -n "${FUZZ_PARALLEL:-}" ]] && parallel=(-parallel "$FUZZ_PARALLEL")

rows=()
failed=0
ran=0
for t in "${TARGETS[@]}"; do
	dir="${t% *}"
	name="${t#* }"
	[[ -n "${FUZZ_FILTER:-}" && ! "$dir/$name" =~ $FUZZ_FILTER ]] && continue
	ran=$((ran + 1))
	mod="$(module_dir "$dir")"
	rel="${dir#"$mod"}"
	rel="./${rel#/}"
	log="$LOG_DIR/$(echo "$dir" | tr '/' '_')_$name.log"
	echo "== $dir $name ($FUZZTIME)"
	(cd "$mod" && go test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" "${parallel[@]}" "$rel") >"$log" 2>&1
	rc=$?
	# Last progress line: "fuzz: elapsed: 1m0s, execs: 123 (2/sec), new interesting: 4 (total: 9)"
	last="$(grep -E '^fuzz: elapsed: .*execs: ' "$log" | tail -n 1)"
	execs="$(sed -nE 's/.*execs: ([0-9]+).*/\1/p' <<<"$last")"
	interesting="$(sed -nE 's/.*new interesting: ([0-9]+).*/\1/p' <<<"$last")"
	if [[ $rc -eq 0 ]]; then
		result="ok"
	else
		failed=$((failed + 1))
		input="$(sed -nE 's/.*Failing input written to (.*)$/\1/p' "$log" | tail -n 1)"
		result="FAIL${input:+ ($dir/$input)}"
		echo "-- output of $dir $name:"
		tail -n 40 "$log"
	fi
	rows+=("$(printf '%-46s | %12s | %15s | %s' "$dir/$name" "${execs:-?}" "${interesting:-?}" "$result")")
done

echo
printf '%-46s | %12s | %15s | %s\n' "target (fuzztime $FUZZTIME)" "execs" "new interesting" "result"
printf '%s\n' "-----------------------------------------------+--------------+-----------------+-------"
printf '%s\n' "${rows[@]}"
echo "logs: $LOG_DIR"
if [[ $ran -eq 0 ]]; then
	echo "fuzz: FUZZ_FILTER=${FUZZ_FILTER:-} matched no target" >&2
	exit 1
fi
if [[ $failed -gt 0 ]]; then
	echo "fuzz: $failed target(s) crashed; the failing inputs are in the packages' testdata/fuzz/ folders" >&2
	exit 1
fi
