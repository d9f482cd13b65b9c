// Package wasi implements WASI preview 1 (module wasi_snapshot_preview1) for
// Durabox guests, once, independent of the wasm runtime that calls it: a
// runtime registers Functions (and the host's capability modules, see
// Modules) and passes each call the calling instance's Env and a Memory.
//
// An Env is deterministic (orchestrations: every answer is a function of a
// 32-byte seed, of the logical time the host sets before each call with
// SetTime, and of what the guest did before) or real (activities: the real
// clock, real randomness, the environment variables of the deployment).
// Neither has files, directories or sockets: an instance has stdin (always
// at its end), stdout and stderr (the Env's writers), and nothing else.
//
// The runtime's part of the contract:
//
//   - proc_exit panics with *ExitError; poll_oneoff may panic with
//     ErrBlockingSleep. The runtime turns either panic into the end of the
//     call, with that error.
//   - After every call into the guest it calls Env.TakeSleep: a call of a
//     deterministic guest that waited on the clock fails with
//     ErrBlockingSleep, even if the guest returned normally.
//
// Why not stop the call at the first wait? The Go runtime itself waits 1 ms
// twice (freezetheworld) while it dies of a panic or a fatal error such as a
// deadlock, before it prints why; stopping there would report every crash as
// a sleep and lose its message. So a deterministic wait never blocks: the
// monotonic clock jumps to its end and the guest carries on, and only a
// guest that waits more than 64 times in one call (a polling loop) is
// stopped at once.
//
// The answers, function by function ("Go" marks the 36 functions a Go 1.26
// guest may import, through its runtime, syscall, os, time, crypto/rand and
// net; the ones a given program imports depend on what it uses). Errnos are
// WASI's; "stdio" is fds 0-2, "EBADF" is the answer for every other fd.
//
//	function                 Go  deterministic (orchestration)                 real (activity)
//	-----------------------  --  --------------------------------------------  ---------------------------
//	args_get                 Go  success, writes nothing (no arguments)        same
//	args_sizes_get           Go  0 arguments, 0 bytes                          same
//	environ_get              Go  success, writes nothing (no variables)        the configured variables
//	environ_sizes_get        Go  0 variables, 0 bytes                          their count and size
//	clock_res_get                realtime, monotonic: 1 ns; CPU-time clocks:   same
//	                               ENOTSUP; other ids EINVAL
//	clock_time_get           Go  realtime: the logical time (Env.SetTime);     realtime: time.Now;
//	                               monotonic: starts at 1, follows the           monotonic: time since the
//	                               logical time, jumps over waits, never goes    Env was made, plus 1 ns;
//	                               back, never reads the real clock; CPU-time    CPU-time clocks ENOTSUP
//	                               clocks ENOTSUP; other ids EINVAL
//	fd_advise                    stdio: ESPIPE                                 same
//	fd_allocate                  stdio: ENOTSUP                                same
//	fd_close                 Go  stdio: success (it stays usable)              same
//	fd_datasync                  stdio: success (nothing is buffered)          same
//	fd_fdstat_get            Go  stdio: a blocking character device, every     same
//	                               right
//	fd_fdstat_set_flags      Go  stdio: success, changes nothing (stdio        same
//	                               stays blocking, so Go never polls it)
//	fd_fdstat_set_rights     Go  stdio: ENOTSUP                                same
//	fd_filestat_get          Go  stdio: a character device, all else zero      same
//	fd_filestat_set_size     Go  stdio: ENOTSUP                                same
//	fd_filestat_set_times        stdio: ENOTSUP                                same
//	fd_pread                 Go  stdio: ESPIPE                                 same
//	fd_prestat_get           Go  EBADF for every fd: no preopened              same
//	                               directories, so no path resolves
//	fd_prestat_dir_name      Go  EBADF for every fd                            same
//	fd_pwrite                Go  stdio: ESPIPE                                 same
//	fd_read                  Go  fd 0: end of file (0 bytes); fds 1, 2 EBADF   same
//	fd_readdir               Go  stdio: ENOTDIR                                same
//	fd_renumber                  stdio: ENOTSUP                                same
//	fd_seek                  Go  stdio: ESPIPE                                 same
//	fd_sync                  Go  stdio: success (nothing is buffered)          same
//	fd_tell                      stdio: ESPIPE                                 same
//	fd_write                 Go  fd 1, 2: the stdout, stderr writers (nil      same
//	                               discards; their errors are ignored); fd 0
//	                               EBADF
//	path_create_directory    Go  ENOTCAPABLE                                   same
//	path_filestat_get        Go  ENOTCAPABLE                                   same
//	path_filestat_set_times  Go  ENOTCAPABLE                                   same
//	path_link                Go  ENOTCAPABLE                                   same
//	path_open                Go  ENOTCAPABLE                                   same
//	path_readlink            Go  ENOTCAPABLE                                   same
//	path_remove_directory    Go  ENOTCAPABLE                                   same
//	path_rename              Go  ENOTCAPABLE                                   same
//	path_symlink             Go  ENOTCAPABLE                                   same
//	path_unlink_file         Go  ENOTCAPABLE                                   same
//	poll_oneoff              Go  fd subscriptions at once (stdin: end of       fd subscriptions and due
//	                               file; stdout, stderr: writable; others        clocks as deterministic;
//	                               EBADF) and clocks already due at once;        otherwise sleeps until the
//	                               otherwise the first clock fires at once, the  first clock is due, or
//	                               monotonic clock jumps there and the wait is   answers EINTR when the
//	                               recorded (TakeSleep, ErrBlockingSleep); the   call's context ends first
//	                               65th wait in one call panics with
//	                               ErrBlockingSleep
//	proc_exit                Go  panics with *ExitError (the exit code)        same
//	proc_raise                   ENOTSUP                                       same
//	random_get               Go  the next bytes of a ChaCha8 stream seeded     crypto/rand
//	                               with the Env's seed
//	sched_yield              Go  success, or panics with the call's context's  same
//	                               error once it has ended (every loop of a
//	                               rewritten module calls it now and then),
//	                               or with *BudgetError once the step is past
//	                               its budget (SetStepBudget)
//	sock_accept              Go  ENOTSUP: there are no sockets (Go's net on    same
//	                               wasip1 dials only an in-process fake
//	                               network, never these functions)
//	sock_recv                    ENOTSUP                                       same
//	sock_send                    ENOTSUP                                       same
//	sock_shutdown            Go  ENOTSUP                                       same
//
// Every function answers EFAULT when an address it must read or write is
// outside the guest's memory.
package wasi
