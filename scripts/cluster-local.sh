#!/usr/bin/env bash
# A whole airlock cluster on this one machine, for trying it out:
#
#   eval "$(scripts/cluster-local.sh up 3)"   # PostgreSQL, one `airlock api`, 3 nodes
#   bin/airlock sandbox create -t base         # the usual CLI, SDKs and jobs
#   scripts/cluster-local.sh down              # stop everything, remove what up made
#
# up N starts a real PostgreSQL (initdb into the work directory; unix
# socket only), migrates it, makes a join token and a fresh tenant key,
# starts `airlock api` on 127.0.0.1 and N `airlock serve --cluster-api`
# node daemons (--kill-on-exit), each with its own state directory, run
# directory, socket, network instance and address ranges (--net). The
# shipped `base` template is baked once, in a builder state directory,
# published (`airlock template publish`) to a blob store in the work
# directory, and pulled by every node (`serve --cluster-blobs`), whose
# template registries start empty. It prints, as
# shell assignments, AIRLOCK_URL, AIRLOCK_API_KEY and NODE_PIDS (the node
# daemons' pids, in node order); progress goes to stderr.
#
# Needs root (--net and the VMM jail), PostgreSQL's binaries (scripts/setup.sh --test)
# and bin/airlock (built here when missing). Work directory:
# $AIRLOCK_CLUSTER_DIR, default /tmp/airlock-cluster-local; ports from
# $AIRLOCK_CLUSTER_PORT (default 18080: public; +1 internal; +10+i node i).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(realpath -m "${AIRLOCK_CLUSTER_DIR:-/tmp/airlock-cluster-local}")
port=${AIRLOCK_CLUSTER_PORT:-18080}
say() { echo "cluster-local: $*" >&2; }

pgbin() {
	local d
	for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5 -n -r); do
		[ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && { echo "$d"; return; }
	done
	say "no initdb/pg_ctl under /usr/lib/postgresql/*/bin (scripts/setup.sh --test installs them)"
	exit 1
}

# as_pg runs a PostgreSQL program as the postgres user when we are root.
as_pg() {
	if [ "$(id -u)" = 0 ]; then
		local u=postgres
		id -u postgres >/dev/null 2>&1 || u=nobody
		runuser -u "$u" -- "$@"
	else
		"$@"
	fi
}

wait_http() { # url what
	local i
	for i in $(seq 1 600); do
		curl -fsS -o /dev/null "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	say "$2 did not come up"
	tail -n 5 "$dir"/*.log "$dir"/node*/serve.log >&2 2>/dev/null || true
	return 1
}

up() {
	local n=${1:-3}
	[ -e "$dir" ] && { say "$dir exists: run '$0 down' first"; exit 1; }
	[ -x bin/airlock ] && [ -x bin/airlock-jailer ] && [ -x bin/airlock-agent ] || make build >&2
	trap 'say "up failed: cleaning up"; down' ERR
	local airlock=$PWD/bin/airlock bin
	bin=$(pgbin)
	mkdir -p "$dir/pg"
	[ "$(id -u)" = 0 ] && chown "$(id -u postgres 2>/dev/null || id -u nobody)" "$dir/pg"
	say "PostgreSQL ($bin) in $dir/pg"
	as_pg "$bin/initdb" -D "$dir/pg/data" -A trust -N -E UTF8 --locale=C -U postgres >"$dir/initdb.log"
	printf "listen_addresses = ''\nunix_socket_directories = '%s'\nmax_connections = 200\n" "$dir/pg" >>"$dir/pg/data/postgresql.conf"
	as_pg "$bin/pg_ctl" start -w -D "$dir/pg/data" -l "$dir/pg/log" >/dev/null
	local dsn="host=$dir/pg port=5432 user=postgres dbname=postgres sslmode=disable"
	echo "$dsn" >"$dir/dsn"
	"$airlock" cluster migrate --dsn "$dsn" >&2
	local key
	key=$("$airlock" cluster key create local --name cluster-local --dsn "$dsn" | tail -n 1)
	head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$dir/token"
	chmod 600 "$dir/token"

	say "airlock api on 127.0.0.1:$port (internal :$((port + 1)))"
	"$airlock" api --dsn "$dsn" --listen "127.0.0.1:$port" --internal-listen "127.0.0.1:$((port + 1))" \
		--cluster-token-file "$dir/token" >"$dir/api.log" 2>&1 &
	echo $! >"$dir/api.pid"
	wait_http "http://127.0.0.1:$((port + 1))/healthz" "airlock api"

	say "baking base once, in $dir/builder, and publishing it to file://$dir/blobs"
	mkdir -p "$dir/builder/state" "$dir/builder/run"
	"$airlock" --run-dir "$dir/builder/run" template build base --state-dir "$dir/builder/state" >"$dir/builder/template.log" 2>&1 ||
		{ say "template build failed:"; tail -n 5 "$dir/builder/template.log" >&2; false; }
	"$airlock" template publish base --state-dir "$dir/builder/state" --blobs "file://$dir/blobs" --dsn "$dsn" >&2

	local pids=() i d
	for i in $(seq 1 "$n"); do
		d=$dir/node$i
		mkdir -p "$d/state" "$d/run"
		"$airlock" --run-dir "$d/run" serve --cluster-blobs "file://$dir/blobs" --state-dir "$d/state" --socket "$d/airlock.sock" \
			--net --net-instance "cl$i" --net-base-cidr "10.$((200 + i)).0.0/16" --proxy-addr "10.199.$((200 + i)).1" \
			--cluster-api "http://127.0.0.1:$((port + 1))" --cluster-token-file "$dir/token" \
			--node-id "node$i" --node-listen "127.0.0.1:$((port + 10 + i))" --kill-on-exit >"$d/serve.log" 2>&1 &
		pids+=($!)
		echo $! >"$d/pid"
	done
	say "waiting for $n nodes to be ready"
	local ready=0
	for i in $(seq 1 600); do
		ready=$(curl -fsS -H "Authorization: Bearer $(cat "$dir/token")" "http://127.0.0.1:$((port + 1))/internal/v1/view" 2>/dev/null |
			python3 -c 'import json,sys; print(sum(n["state"] == "ready" for n in json.load(sys.stdin)["nodes"] or []))' 2>/dev/null || echo 0)
		[ "$ready" = "$n" ] && break
		sleep 0.1
	done
	[ "$ready" = "$n" ] || { say "$ready of $n nodes ready"; tail -n 5 "$dir"/node*/serve.log >&2; false; }
	say "waiting for base to be pulled by $n nodes"
	local pulled=0
	for i in $(seq 1 3000); do
		pulled=$(as_pg "$bin/psql" -qtAX "$dsn" -c "SELECT count(*) FROM node_templates n JOIN templates t ON t.current_build = n.build_id WHERE t.name = 'base' AND n.state = 'ready'" 2>/dev/null || echo 0)
		[ "$pulled" = "$n" ] && break
		sleep 0.1
	done
	[ "$pulled" = "$n" ] || { say "base ready on $pulled of $n nodes"; as_pg "$bin/psql" -qtAX "$dsn" -c "SELECT * FROM node_templates" >&2; false; }
	wait_http "http://127.0.0.1:$port/readyz" "the cluster"
	echo "AIRLOCK_URL=http://127.0.0.1:$port"
	echo "AIRLOCK_API_KEY=$key"
	echo "NODE_PIDS=\"${pids[*]}\""
	echo "export AIRLOCK_URL AIRLOCK_API_KEY NODE_PIDS"
	trap - ERR
}

down() {
	[ -d "$dir" ] || { say "nothing at $dir"; return 0; }
	local f p i d
	# Nodes first (--kill-on-exit: they destroy their VMs and network
	# slots on SIGTERM), then the API, then PostgreSQL.
	for f in "$dir"/node*/pid "$dir/api.pid"; do
		[ -f "$f" ] || continue
		p=$(cat "$f")
		kill -TERM "$p" 2>/dev/null || continue
		for _ in $(seq 1 300); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null || true
	done
	# Whatever a node killed with SIGKILL left behind: VMMs started from
	# its directories, its network namespaces, links and nftables table.
	for p in /proc/[0-9]*; do
		tr '\0' ' ' 2>/dev/null <"$p/cmdline" | grep -qF -- "$dir/node" && kill -KILL "${p#/proc/}" 2>/dev/null || true
	done
	for d in "$dir"/node*/; do
		i=$(basename "$d")
		i=${i#node}
		for p in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^airlock-cl$i-s[0-9]*$"); do ip netns del "$p" || true; done
		for p in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1 | grep "^alcl$i-[0-9]*$\|^airlock-pcl$i$"); do ip link del "$p" || true; done
		nft delete table inet "airlock-cl$i" 2>/dev/null || true
		# The VMM jail's cgroups: airlock-<first 8 hex of sha256(run dir)>.
		p=$(printf %s "${d%/}/run" | sha256sum | cut -c1-8)
		find /sys/fs/cgroup -maxdepth 6 -depth -type d -path "*/airlock-$p*" -exec rmdir {} + 2>/dev/null || true
	done
	if [ -f "$dir/pg/data/postmaster.pid" ]; then
		as_pg "$(pgbin)/pg_ctl" stop -w -m fast -D "$dir/pg/data" >/dev/null || true
	fi
	# The audit anchor is append-only (chattr +a) where the file system allows.
	chattr -a "$dir"/node*/state/*.audit-anchor 2>/dev/null || true
	rm -rf "$dir"
	say "removed $dir"
}

case "${1:-}" in
up) shift; up "$@" ;;
down) down ;;
*) echo "usage: $0 up [N] | down" >&2; exit 2 ;;
esac
