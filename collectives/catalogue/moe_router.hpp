// A mixture-of-experts router, simulated: which expert each token of each rank goes to. Scores
// are drawn as DeepEP's tests draw them, |N(0,1)| + 1 per (token, expert); with G > 0 a token
// first picks the G ranks whose best expert scores highest (DeepEP's group-limited routing with
// the rank as the group), then its top K experts among theirs. With a capacity factor CF, each
// rank keeps at most ceil(CF x t x K / E) of its t tokens' copies per expert, in token order
// (then score order within a token, as a cumulative count over tokens assigns positions), and
// drops the rest. Every (token, expert) pair kept is one copy of the token sent to the rank that
// holds the expert, as an all-to-all token dispatcher sends them.
//
// The draws come from a 64-bit Mersenne Twister seeded per sending rank from `seed` and the
// normal deviates from Box-Muller, both fixed by their definitions, so a seed gives the same
// routing on every rank and every run; a rank's first t tokens are the same whatever t.
#pragma once

#include <cstdint>
#include <vector>

#include "collectives/catalogue/split.hpp"

namespace cb {

struct MoeRoute {
  int nranks = 0;
  std::vector<std::uint64_t> copies;  // token copies rank i sends rank j, at [i * nranks + j]
  std::uint64_t routed = 0;           // (token, expert) pairs chosen: n x t x K
  std::uint64_t dropped = 0;          // of those, over an expert's capacity
};

// `tokens` per rank; the experts of rank r are r x E/n .. (r+1) x E/n - 1. The caller has
// checked the routing fits nranks (split_unfit).
MoeRoute route_tokens(const MoeRouting& m, int nranks, std::uint64_t tokens, std::uint64_t seed);

// The scores the router draws for `tokens` tokens on `nranks` ranks: what bounds its cost.
inline std::uint64_t router_draws(const MoeRouting& m, int nranks, std::uint64_t tokens) {
  return tokens * static_cast<std::uint64_t>(m.experts) * static_cast<std::uint64_t>(nranks);
}

}  // namespace cb
