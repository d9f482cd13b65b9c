#!/usr/bin/env bash
# The mutation check of engine/CONFORMANCE.md: each mutation below breaks
# one rule the table lists, in a scratch copy of this tree (the tree itself
# is never touched), and runs the tests that hold the rule, which must fail.
# It prints a line per mutation and a summary, and exits non-zero if a
# mutation survived (its tests passed) or no longer applies (the code it
# edits has changed: update the mutation here).
#
#   scripts/mutations.sh              every mutation (about 30 minutes on
#                                     two busy cores: each reruns a test
#                                     package)
#   scripts/mutations.sh NAME...      only those named
#   scripts/mutations.sh --list       the names and what each breaks
set -uo pipefail
shopt -u patsub_replacement 2>/dev/null || true

root=$(cd "$(dirname "$0")/.." && pwd)

# Each mutation: name | what it breaks | packages | tests (a -run pattern).
# Packages are run from the root module: the engine, a module of its own,
# by its import path (the root module takes it from the tree beside it).
mutations=(
	"now-yields|ctx.Now ends the unit's step, as if it paused|./host|^TestSchedulerThroughCtxGo$"
	"one-round|an activation runs one round: units made runnable during it wait for the next activation|./host|^TestSchedulerThroughCtxGo$"
	"no-rounds|no rounds: a unit made runnable joins the pass in progress, at its end|./host|^TestSchedulerThroughCtxGo$"
	"unsorted|a round runs its units in the order they became runnable, not by id|./host|^TestSchedulerThroughCtxGo$"
	"nested-reversed|a nested unit's id puts its own index first, reversing the order of nested units|./host|^TestSchedulerThroughCtxGo$"
	"wrong-waiter|an activity's result resolves the oldest open future, not the one of its sequence number|./host|^TestSchedulerThroughCtxGo$"
	"own-unchecked|a goroutine that is not a unit may use the Context|./host|^TestGoroutinesOutsideTheSDKFailTheInstance$"
	"input-unchecked|replay does not compare an activity's input|./host|^TestChangedModuleIsCaughtOnARecordedHistory$"
	"name-unchecked|replay does not compare an activity's name|./host|^TestChangedModuleIsCaughtOnARecordedHistory$"
	"detached-unchecked|replay does not compare whether a child is detached|./host|^TestChangedModuleIsCaughtOnARecordedHistory$"
	"child-input-unchecked|replay does not compare a child's input|./host|^TestChangedModuleIsCaughtOnARecordedHistory$"
	"early-end-accepted|a completing orchestration matches any schedule event history has|./host|^TestChangedModuleIsCaughtOnARecordedHistory$"
	"never-replaying|the engine never says an activation replays|./host|^TestReplayAwareCallsSeeTheEngineFlag$"
	"isreplaying-false|ctx.IsReplaying is always false|./host|^TestReplayAwareCallsSeeTheEngineFlag$"
	"log-replayed|the host logs what a guest prints while it replays|./host|^TestReplayAwareCallsSeeTheEngineFlag$"
	"guid-counted-live|NewGUID counts only the GUIDs made live|./host|^TestNewGUIDIsStableAcrossColdReplays$"
	"messages-reversed|a turn applies its messages newest first|./host|^TestCompletionsApplyInHistoryOrder$"
	"messages-sorted|a turn applies its completions in the order of their operations, not of arrival|./host|^TestCompletionsApplyInHistoryOrder$"
	"carry-uncapped|continue-as-new carries every untaken persistent event, past the limit|github.com/durabox/durabox/engine|^TestContinueAsNewCarriesAtMostTheLimit$"
	"carry-keeps-oldest|past the limit, continue-as-new drops the newest carried events, not the oldest|github.com/durabox/durabox/engine|^TestContinueAsNewCarriesAtMostTheLimit$"
	"cancel-wins|a cancellation requested makes any ending Canceled|github.com/durabox/durabox/engine ./host|^(TestCancellationIsARequest|TestCancellationIgnoredEndsCompleted)$"
	"event-name-unchecked|an ExternalEvent in history may complete a wait of another name|github.com/durabox/durabox/engine|^TestExternalEventInHistoryNeedsItsWait$"
	"corrupt-accepted|Turn does not check the history it is given|github.com/durabox/durabox/engine ./host|^(TestCorruptHistoryIsRefused|TestCorruptHistoryFailsTheInstanceAtOnce)$"
	"corrupt-retried|a host runs a turn on a corrupt history again until it counts as poison|./host|^TestCorruptHistoryFailsTheInstanceAtOnce$"
	"newest-wait|a raised event goes to the newest active wait of its name, not the oldest|github.com/durabox/durabox/engine ./host|^TestRaisedEventTakesTheOldestWait$"
	"status-unchecked|replay does not compare a custom status's text|github.com/durabox/durabox/engine ./host|^(TestNondeterminism|TestChangedModuleIsCaughtOnARecordedHistory)$"
	"reset-status-discarded|after a reset, the custom status is the one the discarded events set|./host|^TestResetKeepsTheCustomStatusOfTheKeptEvents$"
	"cancelled-runs-on|an activity the orchestration cancelled runs on until its instance ends|./host|^TestCancelledActivityStopsAtOnce$"
)

# replace FILE OLD NEW replaces the first OLD in FILE of the scratch tree
# with NEW, or says the mutation is stale.
replace() {
	local file="$scratch/$1" content
	content=$(<"$file")
	if [[ "$content" != *"$2"* ]]; then
		echo "$1 no longer contains: $2" >"$scratch.why"
		return 1
	fi
	printf '%s\n' "${content/"$2"/"$3"}" >"$file"
	touched+=("$1")
}

mutate() {
	case $1 in
	now-yields) replace guest-sdk/durabox/context.go $'\tc.rt.own("ctx.Now")\n' \
		$'\tc.rt.own("ctx.Now")\n\tif s := c.rt.sched; s.current != nil {\n\t\tu := s.current\n\t\ts.runnable = append(s.runnable, u)\n\t\ts.back <- struct{}{}\n\t\t<-u.wake\n\t}\n' ;;
	one-round) replace guest-sdk/durabox/scheduler.go 'for len(s.runnable) > 0 && !s.ended {' 'if len(s.runnable) > 0 && !s.ended {' ;;
	no-rounds) replace guest-sdk/durabox/scheduler.go 'for _, u := range round {' $'for len(round) > 0 {\n\t\t\tu := round[0]\n\t\t\tround = round[1:]' &&
		replace guest-sdk/durabox/scheduler.go $'\t\t\t<-s.back\n' $'\t\t\t<-s.back\n\t\t\tround, s.runnable = append(round, s.runnable...), nil\n' ;;
	unsorted) replace guest-sdk/durabox/scheduler.go 'sort.SliceStable(round, ' '_ = sort.SliceStable; _ = (' ;;
	nested-reversed) replace guest-sdk/durabox/scheduler.go 'u.id = append(slices.Clip(p.id), p.branches)' 'u.id = append([]int{p.branches}, p.id...)' ;;
	wrong-waiter) replace guest-sdk/durabox/runtime.go 'rt.take(j.Seq).resolve(j.Result, j.Failure)' 'rt.take(slices.Min(slices.Collect(maps.Keys(rt.futures)))).resolve(j.Result, j.Failure)' ;;
	own-unchecked) replace guest-sdk/durabox/runtime.go $'\t\treturn\n\t}\n\trt.misused(what)\n' $'\t\treturn\n\t}\n' ;;
	input-unchecked) replace engine/command.go 'c.Name == ev.Name && bytes.Equal(c.Input, ev.Input)' 'c.Name == ev.Name' ;;
	name-unchecked) replace engine/command.go 'c.Name == ev.Name && bytes.Equal(c.Input, ev.Input)' 'bytes.Equal(c.Input, ev.Input)' ;;
	detached-unchecked) replace engine/command.go 'c.Detached == (ev.Kind == OrchestrationChained) &&' '' ;;
	child-input-unchecked) replace engine/command.go $'c.Name == ev.Name && bytes.Equal(c.Input, ev.Input) && (c.InstanceID' $'c.Name == ev.Name && (c.InstanceID' ;;
	early-end-accepted) replace engine/turn.go 'if !matches(cmd, target, ev) {' 'if !matches(cmd, target, ev) && cmd.Kind != abi.CommandComplete {' ;;
	never-replaying) replace engine/turn.go 'replaying := i < t.liveFrom' 'replaying := false' ;;
	isreplaying-false) replace guest-sdk/durabox/context.go $'\treturn c.rt.replaying\n' $'\treturn false\n' ;;
	log-replayed) replace host/guestlog.go 'if g.replaying {' 'if false {' ;;
	guid-counted-live) replace guest-sdk/durabox/helpers.go 'c.rt.guids++' 'if !c.rt.replaying { c.rt.guids++ }' ;;
	messages-reversed) replace engine/turn.go 'm := messages[t.next]' 'm := messages[len(messages)-1-t.next]' ;;
	messages-sorted) replace engine/turn.go $'\tfor t.next < len(messages) {\n' \
		$'\tmessages = slices.Clone(messages)\n\tslices.SortStableFunc(messages, func(a, b Event) int { return int(a.ScheduleID - b.ScheduleID) })\n\tfor t.next < len(messages) {\n' ;;
	carry-uncapped) replace engine/turn.go $'\tt.limitCarried()\n' '' ;;
	carry-keeps-oldest) replace engine/turn.go 'c.Carried = slices.DeleteFunc(c.Carried, func(m Event) bool {' \
		$'slices.Reverse(c.Carried)\n\tdefer func() { slices.Reverse(c.Carried) }()\n\tc.Carried = slices.DeleteFunc(c.Carried, func(m Event) bool {' ;;
	cancel-wins) replace engine/turn.go 'case ev.Kind == OrchestrationFailed && x.cancelRequested:' 'case x.cancelRequested:' ;;
	event-name-unchecked) replace engine/turn.go ' || (ev.Kind == ExternalEvent && o.name != ev.Name)' '' ;;
	corrupt-accepted) replace engine/execution.go 'if err := checkHistory(in.History, x.applied, x.lastID, x.status != StatusPending); err != nil {' 'if err := checkHistory(in.History, x.applied, x.lastID, x.status != StatusPending); false {' ;;
	corrupt-retried) replace host/dispatch.go 'if errors.Is(err, engine.ErrCorruptHistory) {' 'if false {' ;;
	newest-wait) replace engine/turn.go 'for _, id := range x.waits {' 'for _, id := range slices.Backward(x.waits) {' ;;
	status-unchecked) replace engine/command.go 'c.Kind == abi.CommandSetCustomStatus && c.Name == ev.CustomStatus' 'c.Kind == abi.CommandSetCustomStatus' ;;
	reset-status-discarded) replace host/reset.go 'for _, ev := range plan.Kept {' 'for _, ev := range plan.Discarded {' ;;
	cancelled-runs-on) replace host/dispatch.go 'h.attempts.stop(attemptKey{inst.ID, inst.ExecutionID, ev.ScheduleID}, "the orchestration cancelled it")' '' ;;
	*) echo "no mutation $1" >"$scratch.why"; return 1 ;;
	esac
}

if [ "${1:-}" = --list ]; then
	for m in "${mutations[@]}"; do IFS='|' read -r name what _ <<<"$m"; printf '%-22s %s\n' "$name" "$what"; done
	exit 0
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch" "$scratch.why" "$scratch.log"' EXIT
(cd "$root" && git ls-files -z -co --exclude-standard | xargs -0 cp --parents -t "$scratch") || exit 2

caught=0 survived=0 stale=0
for m in "${mutations[@]}"; do
	IFS='|' read -r name what pkgs tests <<<"$m"
	if [ $# -gt 0 ] && [[ " $* " != *" $name "* ]]; then continue; fi
	touched=()
	if ! mutate "$name"; then
		printf 'STALE     %-22s %s\n' "$name" "$(cat "$scratch.why")"
		stale=$((stale + 1))
	else
		# shellcheck disable=SC2086 # pkgs is a list
		(cd "$scratch" && go test -count=1 -timeout 5m -run "$tests" $pkgs) >"$scratch.log" 2>&1
		# The failed tests without the parents of failed subtests.
		failed=$(grep -o -- '--- FAIL: [^ ]*' "$scratch.log" | sed 's/--- FAIL: //' |
			awk '{ n[NR] = $0 } END { for (i = 1; i <= NR; i++) { leaf = 1; for (j = 1; j <= NR; j++) if (index(n[j], n[i] "/") == 1) leaf = 0; if (leaf) print n[i] } }' |
			awk 'NR <= 2 { printf "%s%s", (NR > 1 ? ", " : ""), $0 } END { if (NR > 2) printf " and %d more", NR - 2 }')
		if grep -q -e '\[build failed\]' -e 'to wasm: ' -e '\[setup failed\]' "$scratch.log"; then
			printf 'STALE     %-22s the mutated tree does not build:\n' "$name"
			grep -m5 -e 'error' -e '\.go:[0-9]' "$scratch.log" | sed 's/^/          /'
			stale=$((stale + 1))
		elif grep -q '^panic: test timed out' "$scratch.log"; then
			printf 'caught    %-22s %s: %s ran past 5 minutes\n' "$name" "$what" "$tests"
			caught=$((caught + 1))
		elif [ -n "$failed" ]; then
			printf 'caught    %-22s %s: %s\n' "$name" "$what" "$failed"
			caught=$((caught + 1))
		else
			printf 'SURVIVED  %-22s %s: %s passed\n' "$name" "$what" "$tests"
			survived=$((survived + 1))
		fi
	fi
	for f in "${touched[@]}"; do cp "$root/$f" "$scratch/$f"; done
done
echo "$((caught + survived + stale)) mutations: $caught caught, $survived survived, $stale stale"
[ $survived -eq 0 ] && [ $stale -eq 0 ]
