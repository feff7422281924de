/*
 * interrupt.h - SIGINT/SIGTERM/SIGHUP as a request to stop, not a death.
 *
 * `shrink` installs the handler; it only records the signal.  The loops
 * that wait on children (the worker pool, compute-sanitizer collection,
 * child_wait_timeout) check interrupt_signal() and stop their children
 * (their own process groups: a terminal's ^C does not reach them), so the
 * command ends through its normal cleanup path, keeps what it has, and
 * exits 128 + the signal.  A second signal of the same kind ends the
 * process at once (the default action).
 */
#ifndef GPUREDUCE_INTERRUPT_H
#define GPUREDUCE_INTERRUPT_H

/* Catch SIGINT, SIGTERM and SIGHUP from now on. */
void interrupt_install(void);
/* The signal that asked us to stop (SIGINT, SIGTERM, SIGHUP), or 0. */
int interrupt_signal(void);
/* "SIGINT", "SIGTERM", "SIGHUP" (for messages). */
const char *interrupt_name(int sig);

#endif
