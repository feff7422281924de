/*
 * flusher.h - a detached thread that calls fn every ms milliseconds, for
 * the buffered trace writer (see flusher.c).  Returns 0, or -1 (no thread:
 * the caller writes unbuffered).
 */
#ifndef GPUREDUCE_CAPTURE_FLUSHER_H
#define GPUREDUCE_CAPTURE_FLUSHER_H

int cap_flusher_start(unsigned ms, void (*fn)(void));

#endif
