#!/usr/bin/env bash
# gobuild.sh OUT PKG: go build -o OUT PKG with visible progress, for make run.
# It counts the packages that need compiling first (go list -deps), then
# shows [compiled/total], the elapsed time and the package being compiled,
# and keeps the clock moving while one large package compiles (a cold
# build compiles about 400 packages: several minutes on a busy 2-core
# machine; later builds take seconds).
set -euo pipefail
out=$1 pkg=$2
GO=${GO:-go}
start=$SECONDS
elapsed() { local s=$((SECONDS - start)); printf '%dm%02ds' $((s / 60)) $((s % 60)); }

echo "build: counting the packages $pkg needs (go list -deps; the first run downloads the Go modules)"
total=$($GO list -deps -f '{{if .Stale}}{{.ImportPath}}{{end}}' "$pkg" | grep -c . || true)
if [ "$total" -le 1 ]; then # at most the main package: a link
  if ! $GO build -o "$out" "$pkg"; then
    echo "build: failed after $(elapsed)" >&2
    exit 1
  fi
  echo "build: $out is up to date (linked in $(elapsed))"
  exit 0
fi
all=$($GO list -deps "$pkg" | grep -c .)
if [ "$total" -gt 100 ]; then
  echo "build: compiling $total of the $all packages $pkg needs: a first build takes 3 to 15 minutes (2 cores, more when busy); later ones take seconds"
else
  echo "build: compiling $total of the $all packages $pkg needs"
fi

state=$(mktemp)
trap 'rm -f "$state"; [ -n "${ticker:-}" ] && kill "$ticker" 2>/dev/null || true' EXIT
echo "0 (starting)" > "$state"
tty=0
[ -t 1 ] && tty=1
show() { # n name
  if [ $tty = 1 ]; then
    printf '\r  [%3d/%d] %s  %-64.64s' "$1" "$total" "$(elapsed)" "$2"
  else
    printf '  [%3d/%d] %s  %s\n' "$1" "$total" "$(elapsed)" "$2"
  fi
}
# The clock, while one package compiles: every 2 s on a terminal (one
# line, rewritten), every 30 s otherwise (a line each, as for each package).
(
  period=2
  [ $tty = 1 ] || period=30
  while sleep $period; do
    read -r n name < "$state" || continue
    show "$n" "$name"
  done
) &
ticker=$!

n=0
set +e
$GO build -v -o "$out" "$pkg" 2>&1 | {
  while IFS= read -r line; do
    if [[ $line =~ ^[^[:space:]#:]+$ ]]; then
      n=$((n + 1))
      echo "$n $line" > "$state"
      show "$n" "$line"
    else
      [ $tty = 1 ] && printf '\n'
      printf '%s\n' "$line"
    fi
  done
}
rc=${PIPESTATUS[0]}
set -e
kill "$ticker" 2>/dev/null || true
wait "$ticker" 2>/dev/null || true
ticker=
[ $tty = 1 ] && printf '\n'
if [ "$rc" -ne 0 ]; then
  echo "build: failed after $(elapsed)" >&2
  exit "$rc"
fi
echo "build: $out built in $(elapsed)"
