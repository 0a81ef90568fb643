#!/usr/bin/env bash
# testprogress.sh TOTAL: numbers the per-package result lines of `go test`
# read from stdin ("[ 12/60] ok  pkg 3.2s  (4m10s)") and passes every other
# line through, so a long suite shows how far it is; ends with a summary.
total=${1:-?}
start=$SECONDS
n=0 failed=0
elapsed() { local s=$((SECONDS - start)); printf '%dm%02ds' $((s / 60)) $((s % 60)); }
while IFS= read -r line; do
  if [[ $line =~ ^(ok|FAIL|\?)[[:space:]]+[^[:space:]]+ ]] && [[ $line != "FAIL" ]]; then
    n=$((n + 1))
    [[ $line == FAIL* ]] && failed=$((failed + 1))
    printf '[%3d/%s] %s  (%s)\n' "$n" "$total" "$line" "$(elapsed)"
  else
    printf '%s\n' "$line"
  fi
done
echo "tests: $n of $total packages done in $(elapsed), $failed failed"
