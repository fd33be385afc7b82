// Symbolic graphs the tests share, and the fuzz harnesses (fuzz_checks.cc).

#ifndef MEMPLAN_TESTS_SYMBOLIC_GRAPHS_H_
#define MEMPLAN_TESTS_SYMBOLIC_GRAPHS_H_

namespace memplan::testing {

// q and k (512*seq bytes each) feed scores (32*seq*seq + 64), read by out.
inline constexpr char kAttention[] =
    R"({"format": "memplan-graph-v1", "name": "attn",
 "dims": {"seq": {"min": 1, "max": 2048}},
 "tensors": [{"name": "x", "size": "512*seq", "kind": "input", "shape": ["seq", 128]},
             {"name": "q", "size": "512*seq"},
             {"name": "k", "size": "512 * seq"},
             {"name": "scores", "size": "32*seq*seq + 64"},
             {"name": "out", "size": 4096, "kind": "output"}],
 "ops": [{"name": "proj_q", "inputs": ["x"], "outputs": ["q"]},
         {"name": "proj_k", "inputs": ["x"], "outputs": ["k"]},
         {"name": "attend", "inputs": ["q", "k"], "outputs": ["scores"]},
         {"name": "reduce", "inputs": ["scores"], "outputs": ["out"]}]})";

}  // namespace memplan::testing

#endif  // MEMPLAN_TESTS_SYMBOLIC_GRAPHS_H_
