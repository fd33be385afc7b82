// The main() of the unit tests that see every planner the tool offers: it
// registers the optional planners this build links (RegisterCpPlanner(),
// RegisterCpsatPlanner()),
// as the tool does, then runs the tests.

#include "gtest/gtest.h"
#if MEMPLAN_HAVE_CP
#include "memplan/planners/cp.h"
#endif
#if MEMPLAN_HAVE_CPSAT
#include "memplan/planners/cpsat.h"
#endif

int main(int argc, char** argv) {
  // Before InitGoogleTest(), which instantiates the tests parameterized over
  // RegisteredPlanners().
#if MEMPLAN_HAVE_CP
  if (!memplan::RegisterCpPlanner().ok()) return 1;
#endif
#if MEMPLAN_HAVE_CPSAT
  if (!memplan::RegisterCpsatPlanner().ok()) return 1;
#endif
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
