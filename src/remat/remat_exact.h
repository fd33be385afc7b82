// Exact rematerialization: the public API is memplan/remat_exact.h; this
// header is the layer's own name for it.

#ifndef MEMPLAN_REMAT_REMAT_EXACT_H_
#define MEMPLAN_REMAT_REMAT_EXACT_H_

#include "memplan/remat_exact.h"

#endif  // MEMPLAN_REMAT_REMAT_EXACT_H_
