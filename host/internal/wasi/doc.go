// Package wasi implements WASI preview 1 (module wasi_snapshot_preview1) for
// Durabox guests, once, independent of the wasm runtime that calls it: a
// runtime registers Functions and passes each call the calling instance's
// Env and memory.
//
// An Env is deterministic (orchestrations: every answer is a function of a
// seed and of the logical time the host sets before each step) or real
// (activities). The answers, function by function:
//
//	function                  deterministic (orchestration)              real (activity)
//	------------------------  -----------------------------------------  ------------------------------------
//	args_sizes_get, args_get  no arguments                               no arguments
//	environ_sizes_get,        no variables                               the variables configured for the
//	  environ_get                                                          module's deployment
//	clock_time_get realtime   the logical time of the event being        the real time
//	                            applied (Env.SetTime)
//	clock_time_get monotonic  max(last answer, logical time), starting   real, from the instance's start
//	  (and process/thread       at 1; never reads the real clock
//	  CPU time)
//	clock_res_get             1 ns                                       1 ns
//	random_get                a ChaCha8 stream seeded from the instance  crypto/rand
//	                            id and execution
//	poll_oneoff               fd subscriptions: EBADF at once. Clocks    fd subscriptions: EBADF at once.
//	                            due now fire at once; otherwise the        Clocks: really waits for the first
//	                            monotonic clock jumps to the first one     due, or until the call's context
//	                            and the wait is recorded (Env.TakeSleep),  ends (EINTR)
//	                            which the host reports as a blocking
//	                            sleep
//	fd_write                  fd 1, 2: the instance's log (silent while  fd 1, 2: the host's log; others EBADF
//	                            replaying); others EBADF
//	fd_read                   fd 0: end of file; others EBADF            same
//	fd_fdstat_get             fd 0-2: a character device; others EBADF   same
//	fd_close,                 fd 0-2: success; others EBADF              same
//	  fd_fdstat_set_flags
//	fd_prestat_get            EBADF: no preopened directories, so no     same
//	                            file can be opened
//	every other fd_*          EBADF                                      same
//	every path_*              ENOTCAPABLE                                same
//	sock_accept, sock_recv,   EBADF: there are no sockets (Go's net on   same
//	  sock_send,                wasip1 is an in-process fake network)
//	  sock_shutdown
//	sched_yield               success                                    success
//	proc_exit                 stops the instance (ExitError)             stops the instance (ExitError)
//	proc_raise                ENOTSUP                                    ENOTSUP
//
// A Go guest imports 37 of these; Functions has all 46 so that any WASI
// preview 1 module links.
package wasi
