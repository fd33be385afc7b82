// Rematerialization: the public API is memplan/remat.h; this header is the
// layer's own name for it.

#ifndef MEMPLAN_REMAT_REMAT_H_
#define MEMPLAN_REMAT_REMAT_H_

#include "memplan/remat.h"

#endif  // MEMPLAN_REMAT_REMAT_H_
