// memplan's files: the formats (memplan/formats.h: graph JSON, buffer CSV,
// plan JSON and CSV, compressed files) and loading an input or a plan file
// (memplan/load.h).

#ifndef MEMPLAN_IO_H_
#define MEMPLAN_IO_H_

#include "memplan/formats.h"
#include "memplan/load.h"

#endif  // MEMPLAN_IO_H_
