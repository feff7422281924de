/*
 * tensormap.h - replay's side of TMA tensor maps: a launch's parameter
 * bytes carry a recorded CUtensorMap (addr/tensormap.h finds it); after
 * the pointer words were relocated, rebuild the map on the replay driver
 * for the relocated address with the recorded encode call, so fields the
 * driver derives from the address are the driver's own.  Used by
 * replay/engine.c's launches only.
 */
#ifndef GPUREDUCE_REPLAY_TENSORMAP_H
#define GPUREDUCE_REPLAY_TENSORMAP_H

#include <stddef.h>
#include <stdint.h>

#include "drv.h"

struct trace;
struct tr_launch;

struct rtmap_stats {
	size_t encoded;          /* maps rebuilt with the recorded encode call */
	size_t word0;            /* maps whose address word alone was relocated */
	size_t failed;           /* re-encodes the driver refused (address word kept) */
};

/*
 * For each recorded map in l's captured parameter bytes (records of t
 * before event ev), re-encode it into args (the relocated copy of l->args)
 * at the relocated address that word 0 of args now holds.  A map without
 * a recorded geometry, an im2col-wide map, or a driver without the encode
 * call keeps the relocated address word (counted in st->word0).
 */
void rtmap_reencode(const struct drv *d, const struct trace *t, size_t ev, const struct tr_launch *l,
		    uint8_t *args, struct rtmap_stats *st);

#endif
