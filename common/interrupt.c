/*
 * interrupt.c - the stop-request flag behind SIGINT/SIGTERM/SIGHUP (interrupt.h).
 * SIGHUP (the terminal closed, ssh dropped) is a stop request like the
 * others: the work folder is removed and the best state kept.
 * The handler stores the signal number and nothing else; a second signal
 * gets the default action, so a stuck cleanup can still be ended.
 */
#include <signal.h>
#include <string.h>

#include "interrupt.h"

static volatile sig_atomic_t got;

static void on_signal(int sig)
{
	struct sigaction dfl;
	if (!got)
		got = sig;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigaction(sig, &dfl, NULL);   /* the next one ends the process */
}

void interrupt_install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;   /* no SA_RESTART: a blocking wait returns EINTR */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

int interrupt_signal(void)
{
	return got;
}

const char *interrupt_name(int sig)
{
	return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "a signal";
}
