/*
 * place.h - moved to addr/place.h (the address-space model lives below replay
 * now).  This forwarding header is kept only for reducer/diagnose.c, whose
 * includes change with issue 16's reducer split; delete it then.
 */
#include "../addr/place.h"
