/*
 * cbids.h - the driver-API callbacks capture subscribes to (cbids.c): the
 * ids its dispatch handles and the fault watch, nothing else.
 */
#ifndef GPUREDUCE_CAPTURE_CBIDS_H
#define GPUREDUCE_CAPTURE_CBIDS_H

#include <stddef.h>
#include <cupti.h>

/* The list (*ids) and its length. */
size_t cap_cbids(const CUpti_CallbackId **ids);
/* cuptiEnableCallback for each id of the list on sub's driver domain.
 * *failed: how many CUPTI refused (an id this CUPTI does not know).
 * Returns 0, or -1 when it refused every one. */
int cap_cbids_enable(CUpti_SubscriberHandle sub, unsigned *failed);

#endif
