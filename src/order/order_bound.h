// LowerBoundOverOrders() with what it is made of (memplan/reorder.h), and
// "window"'s order given it.

#ifndef MEMPLAN_ORDER_ORDER_BOUND_H_
#define MEMPLAN_ORDER_ORDER_BOUND_H_

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "effort/budget.h"
#include "memplan/problem.h"
#include "memplan/reorder.h"

namespace memplan::internal {

struct OrderBounds {
  OrderLowerBound bound;  // LowerBoundOverOrders()'s
  // Before the cuts: the sums of what every order holds at one op, or the
  // graph outputs. "window"'s beams count running peaks up to it as equal
  // (up to the cuts' bound, its beams lose their way: randwire_wide_2500
  // went from 0.732 to 0.769 of the traced order's peak).
  Bytes sums = 0;
};

// nullopt and errors as LowerBoundOverOrders(), the work counted against
// `budget` (order/order_effort.h).
absl::StatusOr<std::optional<OrderBounds>> ComputeOrderBounds(
    const Graph& graph, const BuildOptions& options, Budget& budget);

// ComputeWindowOpOrder() within `budget`, with `bounds` (ComputeOrderBounds()
// of the graph and options) already known (window_order.cc), and
// "memory"'s order with its peak when `memory` is not null.
absl::StatusOr<WindowOrder> ComputeWindowOpOrder(
    const Graph& graph, const BuildOptions& options, Budget& budget,
    const std::optional<OrderBounds>& bounds,
    const std::pair<std::vector<int>, Bytes>* memory = nullptr);

}  // namespace memplan::internal

#endif  // MEMPLAN_ORDER_ORDER_BOUND_H_
