#!/usr/bin/env bash
# distribute.two_hosts: two ranks on two "hosts" of this machine, each in its
# own network namespace joined by a veth pair, with MPI over TCP as across
# machines (a hostfile, `btl tcp,self`, the interface selected by subnet).
# mpirun starts the remote rank with an rsh agent that enters the other
# namespace instead of ssh-ing to another machine. The program is
# distribute_tests' training cases: the ranks' weights against one process
# on the whole batch. Skipped (exit 77) where namespaces cannot be made.
#   two_hosts_test.sh <mpiexec> <program> [program arguments...]
set -euo pipefail
mpiexec=$1
shift
subnet=10.231.0
ns_a=ag_dist_a_$$ ns_b=ag_dist_b_$$
work=$(mktemp -d)
cleanup() {
  ip netns del "$ns_a" 2>/dev/null || true
  ip netns del "$ns_b" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
if ! ip netns add "$ns_a" 2>"$work/netns.err"; then
  echo "SKIP: cannot make a network namespace here ($(cat "$work/netns.err")); the test needs" \
    "root and CAP_SYS_ADMIN (ip netns add)"
  exit 77
fi
ip netns add "$ns_b"
ip link add "veth_$$a" netns "$ns_a" type veth peer name "veth_$$b" netns "$ns_b"
ip -n "$ns_a" addr add "$subnet.1/24" dev "veth_$$a"
ip -n "$ns_b" addr add "$subnet.2/24" dev "veth_$$b"
for ns in "$ns_a" "$ns_b"; do
  ip -n "$ns" link set lo up
done
ip -n "$ns_a" link set "veth_$$a" up
ip -n "$ns_b" link set "veth_$$b" up

# The hosts by address, one slot each; the agent runs mpirun's remote
# command in the namespace of the host it names, as ssh would on that host.
printf '%s slots=1\n%s slots=1\n' "$subnet.1" "$subnet.2" >"$work/hosts"
cat >"$work/agent" <<AGENT
#!/bin/sh
host=\$1
shift
case "\$host" in
  $subnet.1) ns=$ns_a ;;
  $subnet.2) ns=$ns_b ;;
  *) echo "agent: unknown host \$host" >&2; exit 1 ;;
esac
exec ip netns exec "\$ns" /bin/sh -c "\$*"
AGENT
chmod +x "$work/agent"

run() {
  ip netns exec "$ns_a" "$mpiexec" --hostfile "$work/hosts" -np 2 \
    --mca plm_rsh_agent "$work/agent" \
    --mca btl tcp,self --mca btl_tcp_if_include "$subnet.0/24" \
    --mca oob_tcp_if_include "$subnet.0/24" \
    -x OPENBLAS_NUM_THREADS=1 "$@"
}
# Each rank sees its own host's address only.
addresses=$(run /bin/sh -c 'ip -o -4 addr show scope global' | awk '{print $4}' | sort | tr '\n' ' ')
if [ "$addresses" != "$subnet.1/24 $subnet.2/24 " ]; then
  echo "FAIL: the ranks' addresses are '$addresses', not one on each host"
  exit 1
fi
echo "the ranks run on $addresses"
run "$@"
