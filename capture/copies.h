/*
 * copies.h - copies.c's entry points, for inject.c's dispatch: the copy
 * and memset calls at their entry callback.  Include after <cupti.h>.
 */
#ifndef GPUREDUCE_CAPTURE_COPIES_H
#define GPUREDUCE_CAPTURE_COPIES_H

/* A copy call (any form): its records written.  1 if cbid is one. */
int cap_copy_enter(CUpti_CallbackId cbid, const CUpti_CallbackData *cb);
/* A memset call: its MEMSET record.  1 if cbid is one. */
int cap_memset_enter(CUpti_CallbackId cbid, const CUpti_CallbackData *cb);

#endif
