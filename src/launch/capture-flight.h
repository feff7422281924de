/*
 * capture-flight.h - the checkpoint policy of `capture --flight-recorder`
 * (src/launch/capture-flight.c).
 */
#ifndef GPUREDUCE_CAPTURE_FLIGHT_H
#define GPUREDUCE_CAPTURE_FLIGHT_H

#include <stdint.h>

struct ckpt_opts;
struct strbuf;

#define FLIGHT_DEFAULT_BUDGET (8ull << 30)   /* --flight-recorder alone: 8 GiB */
#define FLIGHT_MIN_BUDGET (4ull << 20)

/* Fill o for a disk budget: val is "--flight-recorder=VAL"'s value (e.g.
 * "20G") or NULL for the default.  0, or -1 with err. */
int flight_policy(const char *val, struct ckpt_opts *o, struct strbuf *err);

/* A warning in warn when the file system holding dir has less free space
 * than o's budget (the flight recorder would stop recording there when it
 * filled up); nothing when it has enough or cannot be asked. */
void flight_check_space(const char *dir, const struct ckpt_opts *o, struct strbuf *warn);

#endif
