#!/bin/sh
# ranks_agree.sh RUN_NP: runs the example through `RUN_NP <ranks>` on 1 and
# on 3 ranks; each epoch's loss and test accuracy must be the same, digit for
# digit (the ranks take the steps one process takes on the whole batches).
run_np="$1"
one="$("$run_np" 1)" || { echo "FAIL: the run on 1 rank exited with $?"; exit 1; }
three="$("$run_np" 3)" || { echo "FAIL: the run on 3 ranks exited with $?"; exit 1; }
printf '1 rank:\n%s\n3 ranks:\n%s\n' "$one" "$three"
epochs_one="$(printf '%s\n' "$one" | grep '^epoch')"
epochs_three="$(printf '%s\n' "$three" | grep '^epoch')"
if [ -z "$epochs_one" ]; then echo "FAIL: no epochs on 1 rank"; exit 1; fi
if [ "$epochs_one" != "$epochs_three" ]; then echo "FAIL: 1 and 3 ranks trained differently"; exit 1; fi
printf '%s\n' "$three" | grep -q '^the same weights on all 3 ranks: yes$' ||
  { echo "FAIL: the 3 ranks' weights differ"; exit 1; }
echo "PASS: the same epochs on 1 and 3 ranks"
