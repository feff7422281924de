/*
 * graphapi.h - graphapi.c's entry point, for inject.c's dispatch: the
 * graph calls (stream capture begun and ended, instantiation, updates of
 * an instantiated graph, destruction) at their exit once they succeeded.
 * Include after <cupti.h>.
 */
#ifndef GPUREDUCE_CAPTURE_GRAPHAPI_H
#define GPUREDUCE_CAPTURE_GRAPHAPI_H

void cap_graph_exit(CUpti_CallbackId cbid, const void *p);

#endif
