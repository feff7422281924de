/*
 * devsel.h - which GPU a replay runs on, from the environment: one reader
 * of GPUREDUCE_DEVICE (the ordinal a worker uses; set by the user to pin
 * replay and shrink to one GPU) and GPUREDUCE_DEVICES (how many GPUs shrink
 * spreads its workers over).  Both the parent (replay/pool.c) and the
 * worker (replay/engine.c) use it, so a value is read the same way on both
 * sides and a bad one is a clear one-line error, never ignored or wrapped.
 */
#ifndef GPUREDUCE_DEVSEL_H
#define GPUREDUCE_DEVSEL_H

struct strbuf;

#define DEVSEL_MAX 1024          /* more ordinals than any node has */

/* GPUREDUCE_DEVICE: 0 with *ordinal set (-1 when unset or empty), or -1
 * with err saying what is wrong ("GPUREDUCE_DEVICE=abc: ..."). */
int devsel_device(int *ordinal, struct strbuf *err);
/* GPUREDUCE_DEVICES: 0 with *count set (0 when unset or empty), or -1. */
int devsel_devices(int *count, struct strbuf *err);
/* The ordinal a worker uses: GPUREDUCE_DEVICE checked against the `ndev`
 * devices the driver reports (0 when unset).  0, or -1 with err. */
int devsel_worker_ordinal(int ndev, int *ordinal, struct strbuf *err);

#endif
