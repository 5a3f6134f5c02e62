#!/bin/sh
# ranks_agree.sh RUN_NP: runs the example through `RUN_NP <ranks>` on 1 and
# on 3 ranks; each epoch's loss and test accuracy must agree (the ranks take
# the steps one process takes on the whole batches). The float32 sums run in
# another order (per shard, then over the ranks), and the kernels may pick
# other blockings for batches of 16 than of 48, so the weights differ in
# their last bits: the losses may differ by 2 in their 4th decimal and the
# accuracies by one test image (0.3%); on the machines measured they were
# the same, digit for digit.
run_np="$1"
one="$("$run_np" 1)" || { echo "FAIL: the run on 1 rank exited with $?"; exit 1; }
three="$("$run_np" 3)" || { echo "FAIL: the run on 3 ranks exited with $?"; exit 1; }
printf '1 rank:\n%s\n3 ranks:\n%s\n' "$one" "$three"
epochs_one="$(printf '%s\n' "$one" | grep '^epoch')"
epochs_three="$(printf '%s\n' "$three" | grep '^epoch')"
if [ -z "$epochs_one" ]; then echo "FAIL: no epochs on 1 rank"; exit 1; fi
# "epoch 3: loss 0.1439, test accuracy 87.1%" -> "3 0.1439 87.1"
numbers() { printf '%s\n' "$1" | sed 's/^epoch \([0-9]*\): loss \([0-9.]*\), test accuracy \([0-9.]*\)%$/\1 \2 \3/'; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
numbers "$epochs_one" >"$work/one"
numbers "$epochs_three" >"$work/three"
if [ "$(wc -l <"$work/one")" != "$(wc -l <"$work/three")" ] || ! paste "$work/one" "$work/three" | awk '
  NF != 6 || $1 != $4 { bad = 1; next }
  { dl = $2 - $5; da = $3 - $6; if (dl < 0) dl = -dl; if (da < 0) da = -da
    if (dl > 0.00025 || da > 0.3) bad = 1 }
  END { exit bad }'; then
  echo "FAIL: 1 and 3 ranks trained differently"
  exit 1
fi
printf '%s\n' "$three" | grep -q '^the same weights on all 3 ranks: yes$' ||
  { echo "FAIL: the 3 ranks' weights differ"; exit 1; }
echo "PASS: the same epochs on 1 and 3 ranks"
